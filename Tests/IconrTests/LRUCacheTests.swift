import Iconr
import Testing

struct LRUCacheTests {
    @Test func evictsLeastRecentlyUsedToStayWithinTheByteBound() {
        let cache = LRUCache<String, Int>(costLimit: 100)
        cache.insert(1, for: "a", cost: 40)
        cache.insert(2, for: "b", cost: 40)
        #expect(cache.value(for: "a") == 1)  // a is now the most recent
        cache.insert(3, for: "c", cost: 40)  // 120 > 100: b goes
        #expect(cache.keysByRecency == ["c", "a"])
        #expect(cache.value(for: "b") == nil)
        let statistics = cache.statistics
        #expect(statistics.hits == 1 && statistics.misses == 1 && statistics.evictions == 1)
        #expect(statistics.entries == 2 && statistics.cost == 80)
    }

    @Test func replacingAndOversizedValues() {
        let cache = LRUCache<String, Int>(costLimit: 100)
        cache.insert(1, for: "a", cost: 30)
        cache.insert(2, for: "a", cost: 50)
        #expect(cache.statistics.cost == 50 && cache.value(for: "a") == 2)
        cache.insert(9, for: "huge", cost: 101)
        #expect(cache.value(for: "huge") == nil && cache.statistics.entries == 1)
        cache.insert(3, for: "b", cost: 60)  // 110 > 100: a goes
        #expect(cache.keysByRecency == ["b"])
        for index in 0..<1000 { cache.insert(index, for: "k\(index)", cost: 1) }
        #expect(cache.statistics.cost <= 100 && cache.statistics.entries == 100)
        #expect(cache.keysByRecency.first == "k999" && cache.keysByRecency.last == "k900")
    }
}
