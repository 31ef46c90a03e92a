import Dispatch
import IconrCore
import IconrRender
import IconrSystem

/// Rendered variants in memory (an LRU bounded by bytes) and optionally on disk, with
/// single flight: concurrent requests for one missing variant render it once, the others
/// wait for that render.
public final class IconCache: Sendable {
    /// Counters since the cache was made.
    public struct Statistics: Hashable, Sendable {
        /// Hits, misses and evictions of the memory LRU.
        public var memory: MemoryStatistics
        /// Variants answered by the disk cache.
        public var diskHits: Int
        /// Renders performed: misses in memory and on disk.
        public var renders: Int
    }

    /// Counters of the memory cache.
    public struct MemoryStatistics: Hashable, Sendable {
        /// Lookups that found their variant.
        public var hits: Int
        /// Lookups that did not.
        public var misses: Int
        /// Variants removed to stay within the memory limit.
        public var evictions: Int
        /// Variants held now.
        public var entries: Int
        /// Their pixels and PNG bytes now.
        public var bytes: Int
    }

    /// The disk cache behind the memory one, if any.
    public let disk: DiskCache?
    /// How a disk write runs: as it is, or (the CLI) with interrupts held back around it.
    private let writingDisk: @Sendable (() -> Void) -> Void
    private let memory: LRUCache<VariantKey, IconVariant>
    private let inFlight = Locked<[VariantKey: Flight]>([:])
    private let counters = Locked((diskHits: 0, renders: 0))

    /// `memoryLimit` bounds pixels + PNG bytes kept in memory (default 64 MiB); `writingDisk`
    /// runs each disk write (the CLI holds interrupts back around it).
    public init(
        memoryLimit: Int = 64 << 20, disk: DiskCache? = nil,
        writingDisk: @escaping @Sendable (() -> Void) -> Void = { $0() }
    ) {
        memory = LRUCache(costLimit: memoryLimit)
        self.disk = disk
        self.writingDisk = writingDisk
    }

    /// The variant for `key` if memory holds it: no disk, no render, no waiting.
    public func memoryHit(for key: VariantKey) -> IconVariant? {
        memory.value(for: key)
    }

    /// The variant for `key` from memory, else from disk (then kept in memory), and whether
    /// memory had it: never a render, never a wait for one.
    package func storedVariant(
        for key: VariantKey, maxSize: PixelSize, make: (RasterImage, [UInt8]?) -> IconVariant
    ) -> (variant: IconVariant, fromMemory: Bool)? {
        if let hit = memory.value(for: key) { return (hit, true) }
        guard let stored = disk?.read(key, maxSize: maxSize) else { return nil }
        counters.withLock { $0.diskHits += 1 }
        let variant = make(stored.image, stored.file)
        memory.insert(variant, for: key, cost: variant.byteCost)
        return (variant, false)
    }

    /// Counters since the cache was made.
    public var statistics: Statistics {
        let counts = counters.withLock { $0 }
        let lru = memory.statistics
        return Statistics(
            memory: MemoryStatistics(
                hits: lru.hits, misses: lru.misses, evictions: lru.evictions, entries: lru.entries, bytes: lru.cost),
            diskHits: counts.diskHits, renders: counts.renders)
    }

    /// The variant for `key`: from memory, else from disk (an entry larger than `maxSize` is
    /// not read; not asked unless `lookingUp`), else from `render`, whose result is stored in
    /// both; `make` turns pixels (and the PNG they were read from) into the variant.
    package func variant(
        for key: VariantKey, maxSize: PixelSize = RenderLimits.default.maxSize, lookingUp: Bool = true,
        make: (RasterImage, [UInt8]?) -> IconVariant, render: () throws(IconrError) -> RasterImage
    ) throws(IconrError) -> IconVariant {
        if let hit = memory.value(for: key) { return hit }
        let (flight, isLeader) = inFlight.withLock { flights -> (Flight, Bool) in
            if let flight = flights[key] { return (flight, false) }
            let flight = Flight()
            flights[key] = flight
            return (flight, true)
        }
        guard isLeader else { return try flight.wait().get() }
        let result = Result { () throws(IconrError) -> IconVariant in
            try produce(key, maxSize: maxSize, lookingUp: lookingUp, make: make, render: render)
        }
        if case .success(let variant) = result { memory.insert(variant, for: key, cost: variant.byteCost) }
        inFlight.withLock { $0[key] = nil }
        flight.finish(result)
        return try result.get()
    }

    private func produce(
        _ key: VariantKey, maxSize: PixelSize, lookingUp: Bool, make: (RasterImage, [UInt8]?) -> IconVariant,
        render: () throws(IconrError) -> RasterImage
    ) throws(IconrError) -> IconVariant {
        if lookingUp, let stored = disk?.read(key, maxSize: maxSize) {
            counters.withLock { $0.diskHits += 1 }
            return make(stored.image, stored.file)
        }
        counters.withLock { $0.renders += 1 }
        let variant = make(try render(), nil)
        if let disk { writingDisk { disk.store(variant) } }
        return variant
    }
}

/// One render under way that other requests for the same key wait for.
private final class Flight: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let result = Locked<Result<IconVariant, IconrError>?>(nil)

    func finish(_ outcome: Result<IconVariant, IconrError>) {
        result.withLock { $0 = outcome }
        // Wake every waiter: each passes the signal on after it woke.
        done.signal()
    }

    func wait() -> Result<IconVariant, IconrError> {
        done.wait()
        done.signal()
        return result.withLock { $0! }
    }
}
