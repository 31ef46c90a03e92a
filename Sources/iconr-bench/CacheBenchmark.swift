import Foundation
import Iconr
import IconrCore
import IconrSystem

/// The cache's figures: hit latencies in memory and on disk, a miss, and a renderer-like
/// workload of 100,000 requests from two threads.
enum CacheBenchmark {
    static let clock = ContinuousClock()

    static func run() {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let icons = repository.appendingPathComponent("icons").path
        let maki = repository.deletingLastPathComponent().appendingPathComponent("shared/corpora/maki").path
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("iconr-cache-bench-\(getpid())")
            .path
        defer { try? FileManager.default.removeItem(atPath: scratch) }

        print("iconr-bench cache: latencies in microseconds per request (median, 99th percentile)\n")
        let memory = IconLibrary(directory: icons)
        let params = ["flag_color": "#800080"]
        report(
            "memory hit (flag@2x)",
            measure(100_000) { _ = try memory.blockingIcon(named: "flag", params: params, scale: 2) })

        // A cache that keeps nothing in memory (a limit of 0) reads the disk on every request.
        guard let disk = try? DiskCache(directory: scratch) else { fatalError("cannot create \(scratch)") }
        let diskOnly = IconLibrary(directory: maki, cache: IconCache(memoryLimit: 0, disk: disk))
        report(
            "disk hit (airport@2x, 30x30)", measure(5_000) { _ = try diskOnly.blockingIcon(named: "airport", scale: 2) }
        )

        let nothingKept = IconLibrary(directory: maki, cache: IconCache(memoryLimit: 0))
        report(
            "miss = render (airport@2x)",
            measure(2_000) { _ = try nothingKept.blockingIcon(named: "airport", scale: 2) })

        workload(icons)
    }

    /// 100,000 requests drawn from 3 icons x 5 colors x 2 scales, from 2 threads.
    static func workload(_ icons: String) {
        let variants: [(String, [String: String], Double)] = [
            "flag": "flag_color", "marker": "fill_color", "badge": "badge_color",
        ]
        .sorted { $0.key < $1.key }
        .flatMap { icon, parameter in
            ["red", "#ffcc00", "#800080", "teal", "rgb(10, 20, 30)"].flatMap { color in
                [1.0, 2.0].map { (icon, [parameter: color], $0) }
            }
        }
        let library = IconLibrary(directory: icons)
        let requests = 100_000, threads = 2
        let failures = Locked(0)
        let start = clock.now
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var generator = SplitMix(seed: UInt64(thread + 1))
            for _ in 0..<(requests / threads) {
                let (name, params, scale) = variants[Int(generator.next() % UInt64(variants.count))]
                if (try? library.blockingIcon(named: name, params: params, scale: scale)) == nil {
                    failures.withLock { $0 += 1 }
                }
            }
        }
        let seconds =
            Double((clock.now - start).components.attoseconds) / 1e18 + Double((clock.now - start).components.seconds)
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let statistics = library.cache.statistics
        print(
            "\nworkload: \(requests) requests of \(variants.count) variants (3 icons x 5 colors x 2 scales), \(threads) threads"
        )
        print("  requests per second: \(Int(Double(requests) / seconds))")
        print(
            "  renders: \(statistics.renders) (distinct variants: \(variants.count)); failures: \(failures.withLock { $0 })"
        )
        print("  memory hits: \(statistics.memory.hits), misses: \(statistics.memory.misses)")
        print("  peak resident memory of the process: \(usage.ru_maxrss / 1024) MiB")
    }

    static func measure(_ count: Int, _ body: () throws -> Void) -> [Double] {
        do { try body() } catch { fatalError("\(error)") }  // warm up (and fill the caches)
        var samples: [Double] = []
        samples.reserveCapacity(count)
        for _ in 0..<count {
            let start = clock.now
            do { try body() } catch { fatalError("\(error)") }
            let elapsed = clock.now - start
            samples.append(Double(elapsed.components.attoseconds) / 1e12 + Double(elapsed.components.seconds) * 1e6)
        }
        return samples.sorted()
    }

    static func report(_ label: String, _ sorted: [Double]) {
        func format(_ value: Double) -> String { String((value * 100).rounded() / 100) }
        let median = sorted[sorted.count / 2], p99 = sorted[sorted.count * 99 / 100]
        print(
            label.padding(toLength: 32, withPad: " ", startingAt: 0)
                + "median \(format(median))  p99 \(format(p99))  (\(sorted.count) requests)")
    }
}

/// A small deterministic random number generator, so runs request the same sequence.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
