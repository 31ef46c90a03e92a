import Iconr
import IconrCore
import IconrSystem

/// Counters of a running server, as Prometheus' text format shows them at `/metrics`.
final class ServerMetrics: Sendable {
    /// Upper bounds (seconds) of the render latency histogram's buckets.
    static let bucketBounds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    private struct Counts {
        var requests: [String: Int] = [:]
        var renderBuckets = Array(repeating: 0, count: ServerMetrics.bucketBounds.count)
        var renderCount = 0
        var renderSeconds = 0.0
        var workerCrashes = 0
        var spriteBuilds = 0
        var failedSpriteBuilds = 0
    }

    private let counts = Locked(Counts())

    func count(route: String, status: Int) {
        counts.withLock { $0.requests["route=\"\(route)\",status=\"\(status)\"", default: 0] += 1 }
    }

    func rendered(seconds: Double) {
        counts.withLock { counts in
            counts.renderCount += 1
            counts.renderSeconds += seconds
            for (index, bound) in Self.bucketBounds.enumerated() where seconds <= bound {
                counts.renderBuckets[index] += 1
            }
        }
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

    func text(cache: IconCache.Statistics, journalRepairs: Int, pendingRenders: Int) -> String {
        let counts = counts.withLock { $0 }
        var lines = [
            "# HELP iconr_requests_total HTTP requests answered, by route and status.",
            "# TYPE iconr_requests_total counter",
        ]
        lines += counts.requests.sorted { $0.key < $1.key }.map { "iconr_requests_total{\($0.key)} \($0.value)" }
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
        for (index, bound) in Self.bucketBounds.enumerated() {
            lines.append("iconr_render_seconds_bucket{le=\"\(bound.shortText)\"} \(counts.renderBuckets[index])")
        }
        lines += [
            "iconr_render_seconds_bucket{le=\"+Inf\"} \(counts.renderCount)",
            "iconr_render_seconds_sum \(counts.renderSeconds)",
            "iconr_render_seconds_count \(counts.renderCount)",
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
        ]
        return lines.joined(separator: "\n") + "\n"
    }
}
