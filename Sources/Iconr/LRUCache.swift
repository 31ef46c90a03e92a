import IconrCore
import IconrSystem

/// A thread-safe least-recently-used cache bounded by the total cost (bytes) of its values.
/// Lookups and inserts are O(1): a dictionary of slots in an array-backed doubly linked list.
package final class LRUCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// Counters since the cache was made.
    package struct Statistics: Hashable, Sendable {
        /// Lookups that found their value.
        package var hits = 0
        /// Lookups that did not.
        package var misses = 0
        /// Values removed to stay within the cost limit.
        package var evictions = 0
        /// Values held now.
        package var entries = 0
        /// Their total cost now.
        package var cost = 0
    }

    private struct Slot {
        var key: Key
        var value: Value
        var cost: Int
        var newer: Int?
        var older: Int?
    }

    private struct State {
        var slots: [Slot?] = []
        var index: [Key: Int] = [:]
        var free: [Int] = []
        var newest: Int?
        var oldest: Int?
        var statistics = Statistics()

        mutating func unlink(_ slot: Int) {
            let newer = slots[slot]!.newer, older = slots[slot]!.older
            if let newer { slots[newer]!.older = older } else { newest = older }
            if let older { slots[older]!.newer = newer } else { oldest = newer }
        }

        mutating func pushNewest(_ slot: Int) {
            slots[slot]!.newer = nil
            slots[slot]!.older = newest
            if let newest { slots[newest]!.newer = slot }
            newest = slot
            if oldest == nil { oldest = slot }
        }

        mutating func remove(_ slot: Int) {
            unlink(slot)
            let removed = slots[slot]!
            index[removed.key] = nil
            slots[slot] = nil
            free.append(slot)
            statistics.entries -= 1
            statistics.cost -= removed.cost
        }
    }

    /// The most the values may cost together; a value costing more is not kept.
    package let costLimit: Int
    private let state = Locked(State())

    /// An empty cache that holds values of at most `costLimit` total cost.
    package init(costLimit: Int) {
        self.costLimit = costLimit
    }

    /// The value for `key`, which becomes the most recently used; counts a hit or a miss.
    package func value(for key: Key) -> Value? {
        state.withLock { state in
            guard let slot = state.index[key] else {
                state.statistics.misses += 1
                return nil
            }
            state.statistics.hits += 1
            if state.newest != slot {
                state.unlink(slot)
                state.pushNewest(slot)
            }
            return state.slots[slot]!.value
        }
    }

    /// Stores `value` as the most recently used, evicting the least recently used values
    /// until the total cost fits.
    package func insert(_ value: Value, for key: Key, cost: Int) {
        state.withLock { state in
            if let existing = state.index[key] { state.remove(existing) }
            guard cost <= costLimit else { return }
            while state.statistics.cost + cost > costLimit, let oldest = state.oldest {
                state.remove(oldest)
                state.statistics.evictions += 1
            }
            let slot =
                state.free.popLast()
                ?? {
                    state.slots.append(nil)
                    return state.slots.count - 1
                }()
            state.slots[slot] = Slot(key: key, value: value, cost: cost)
            state.index[key] = slot
            state.pushNewest(slot)
            state.statistics.entries += 1
            state.statistics.cost += cost
        }
    }

    /// Keys from most to least recently used.
    package var keysByRecency: [Key] {
        state.withLock { state in
            var keys: [Key] = []
            var cursor = state.newest
            while let slot = cursor {
                keys.append(state.slots[slot]!.key)
                cursor = state.slots[slot]!.older
            }
            return keys
        }
    }

    /// Counters since the cache was made, and what it holds now.
    package var statistics: Statistics { state.withLock { $0.statistics } }
}
