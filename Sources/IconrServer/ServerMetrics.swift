import Glibc
import Iconr
import IconrCore
import IconrSystem

/// Counters of a running server, as Prometheus' text format shows them at `/metrics`.
final class ServerMetrics: Sendable {
    /// Upper bounds (seconds) of the render latency histogram's buckets.
    static let bucketBounds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    /// A latency histogram over `bucketBounds`: what each bucket counted, the count, the sum.
    private struct Histogram {
        var buckets = Array(repeating: 0, count: ServerMetrics.bucketBounds.count)
        var count = 0
        var seconds = 0.0

        mutating func record(_ value: Double) {
            count += 1
            seconds += value
            for (index, bound) in ServerMetrics.bucketBounds.enumerated() where value <= bound { buckets[index] += 1 }
        }

        /// Its lines in Prometheus' text format, `labels` (`route="icons",`) before `le`.
        func lines(_ name: String, labels: String = "") -> [String] {
            let braced = labels.isEmpty ? "" : "{\(labels.dropLast())}"
            return ServerMetrics.bucketBounds.enumerated().map { index, bound in
                "\(name)_bucket{\(labels)le=\"\(bound.shortText)\"} \(buckets[index])"
            } + [
                "\(name)_bucket{\(labels)le=\"+Inf\"} \(count)", "\(name)_sum\(braced) \(seconds)",
                "\(name)_count\(braced) \(count)",
            ]
        }
    }

    /// A request's route and where its variant came from, as the duration histogram's labels.
    private struct RouteTier: Hashable, Comparable {
        let route: String
        let cache: String
        static func < (a: Self, b: Self) -> Bool { (a.route, a.cache) < (b.route, b.cache) }
    }

    /// A request's route and status, as the request counter's labels.
    private struct RouteStatus: Hashable, Comparable {
        let route: String
        let status: Int
        static func < (a: Self, b: Self) -> Bool { (a.route, a.status) < (b.route, b.status) }
    }

    private struct Counts {
        var requests: [RouteStatus: Int] = [:]
        /// Request durations by route and cache tier.
        var durations: [RouteTier: Histogram] = [:]
        var renders = Histogram()
        var workerCrashes = 0
        var spriteBuilds = 0
        var failedSpriteBuilds = 0
        /// The sprites whose last build had no icon (served as an empty sprite).
        var emptySprites: Set<String> = []
    }

    private let counts = Locked(Counts())
    /// When the server started, in seconds since 1970.
    private let started: Double = {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }()

    /// A request answered with `status` after `seconds`, by route and cache tier (`memory`,
    /// `disk`, `render`, or `none` where no variant was asked for): one lock, no text made.
    func answered(route: String, status: Int, cache: String, seconds: Double) {
        counts.withLock { counts in
            counts.requests[RouteStatus(route: route, status: status), default: 0] += 1
            counts.durations[RouteTier(route: route, cache: cache), default: Histogram()].record(seconds)
        }
    }

    /// The process's resident memory in bytes (`/proc/self/statm`), or 0.
    private static func residentBytes() -> Int {
        guard let text = try? FileReader.read("/proc/self/statm", maxSize: 4096) else { return 0 }
        let fields = text.split(separator: UInt8(ascii: " "))
        guard fields.count > 1, let pages = Int(String(decoding: fields[1], as: UTF8.self)) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// User and system CPU seconds of this process (`getrusage`).
    private static func cpuSeconds() -> Double {
        var usage = rusage()
        guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return 0 }
        let micros =
            (Int(usage.ru_utime.tv_sec) + Int(usage.ru_stime.tv_sec)) * 1_000_000 + Int(usage.ru_utime.tv_usec)
            + Int(usage.ru_stime.tv_usec)
        return Double(micros) / 1_000_000
    }

    /// The entries of `/proc/self/fd`, less the one reading it.
    private static func openDescriptors() -> Int {
        guard let folder = opendir("/proc/self/fd") else { return 0 }
        defer { closedir(folder) }
        var count = 0
        while let entry = readdir(folder) {
            let first = withUnsafeBytes(of: entry.pointee.d_name) { $0.first ?? 0 }
            if first != UInt8(ascii: ".") { count += 1 }
        }
        return max(0, count - 1)
    }

    /// The soft limit on open file descriptors.
    private static func descriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        return Int(clamping: limit.rlim_cur)
    }

    func rendered(seconds: Double) {
        counts.withLock { $0.renders.record(seconds) }
    }

    func workerCrashed() {
        counts.withLock { $0.workerCrashes += 1 }
    }

    /// A sprite (a set's or a style's) was built, or its build failed.
    func spriteBuilt(failed: Bool) {
        counts.withLock { counts in
            if failed { counts.failedSpriteBuilds += 1 } else { counts.spriteBuilds += 1 }
        }
    }

    /// Whether the sprite named `name` was last built with no icon.
    func spriteIsEmpty(_ name: String, _ empty: Bool) {
        counts.withLock { counts in
            if empty { counts.emptySprites.insert(name) } else { counts.emptySprites.remove(name) }
        }
    }

    /// The metrics' text; `openConnections` the HTTP server's open connections, when known.
    func text(cache: IconCache.Statistics, journalRepairs: Int, pendingRenders: Int, openConnections: Int?) -> String {
        let counts = counts.withLock { $0 }
        var lines = [
            "# HELP iconr_requests_total HTTP requests answered, by route and status.",
            "# TYPE iconr_requests_total counter",
        ]
        lines += counts.requests.sorted { $0.key < $1.key }.map {
            "iconr_requests_total{route=\"\($0.key.route)\",status=\"\($0.key.status)\"} \($0.value)"
        }
        lines += [
            "# HELP iconr_cache_hits_total Icon variants answered from the memory or disk cache.",
            "# TYPE iconr_cache_hits_total counter",
            "iconr_cache_hits_total{cache=\"memory\"} \(cache.memory.hits)",
            "iconr_cache_hits_total{cache=\"disk\"} \(cache.diskHits)",
            "# HELP iconr_cache_misses_total Icon variants that had to be rendered.",
            "# TYPE iconr_cache_misses_total counter",
            "iconr_cache_misses_total \(cache.renders)",
            "# HELP iconr_cache_journal_repairs_total Torn or damaged disk-cache journal tails found and cut off.",
            "# TYPE iconr_cache_journal_repairs_total counter",
            "iconr_cache_journal_repairs_total \(journalRepairs)",
            "# HELP iconr_render_seconds Time to produce an icon variant not in memory.",
            "# TYPE iconr_render_seconds histogram",
        ]
        lines += counts.renders.lines("iconr_render_seconds")
        lines += [
            "# HELP iconr_renders_in_flight Renders waiting or running.",
            "# TYPE iconr_renders_in_flight gauge",
            "iconr_renders_in_flight \(pendingRenders)",
            "# HELP iconr_worker_crashes_total Renders whose worker process crashed or ran out of time.",
            "# TYPE iconr_worker_crashes_total counter",
            "iconr_worker_crashes_total \(counts.workerCrashes)",
            "# HELP iconr_sprite_builds_total Sprite builds (a set's or a style's), by result.",
            "# TYPE iconr_sprite_builds_total counter",
            "iconr_sprite_builds_total{result=\"built\"} \(counts.spriteBuilds)",
            "iconr_sprite_builds_total{result=\"failed\"} \(counts.failedSpriteBuilds)",
            "# HELP iconr_sprites_empty Sprites served empty: no icons, or none valid.",
            "# TYPE iconr_sprites_empty gauge",
            "iconr_sprites_empty \(counts.emptySprites.count)",
            "# HELP iconr_request_duration_seconds Time from a request's head to its answer, by route and cache tier.",
            "# TYPE iconr_request_duration_seconds histogram",
        ]
        for (key, histogram) in counts.durations.sorted(by: { $0.key < $1.key }) {
            lines += histogram.lines(
                "iconr_request_duration_seconds", labels: "route=\"\(key.route)\",cache=\"\(key.cache)\",")
        }
        lines += [
            "# HELP iconr_build_info The iconr version serving, as a label.",
            "# TYPE iconr_build_info gauge",
            "iconr_build_info{version=\"\(IconrVersion.string)\"} 1",
            "# HELP process_start_time_seconds When the server started, in seconds since 1970.",
            "# TYPE process_start_time_seconds gauge",
            "process_start_time_seconds \(started)",
            "# HELP process_resident_memory_bytes The server process's resident memory (its render workers apart).",
            "# TYPE process_resident_memory_bytes gauge",
            "process_resident_memory_bytes \(Self.residentBytes())",
            "# HELP process_cpu_seconds_total User and system CPU time the server process spent (its render workers apart).",
            "# TYPE process_cpu_seconds_total counter",
            "process_cpu_seconds_total \(Self.cpuSeconds())",
            "# HELP process_open_fds Open file descriptors of the server process.",
            "# TYPE process_open_fds gauge",
            "process_open_fds \(Self.openDescriptors())",
            "# HELP process_max_fds The server process's file descriptor limit.",
            "# TYPE process_max_fds gauge",
            "process_max_fds \(Self.descriptorLimit())",
        ]
        if let openConnections {
            lines += [
                "# HELP iconr_http_connections_open HTTP connections open now.",
                "# TYPE iconr_http_connections_open gauge",
                "iconr_http_connections_open \(openConnections)",
            ]
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
