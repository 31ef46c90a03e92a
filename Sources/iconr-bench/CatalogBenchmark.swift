import Foundation
import IconrSystem
import IconrTestSupport
import Synchronization

/// `iconr-bench serve catalog`: `iconr serve` of Maki and openstreetmap-carto's symbols with
/// a theme and a style, over loopback. The catalog page's size and answer times (its first
/// request builds every sprite), then `sprite.json`'s latency alone and while 4 and 8 clients
/// reload the catalog, and the style's latency for one Host and for a new Host each request:
/// what the catalog and the styles' queue keep off the sprite files.
enum CatalogBenchmark {
    static func run(corpora relative: String) {
        // The server runs in a folder of its own.
        let corpora = URL(fileURLWithPath: relative).standardizedFileURL.path
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("iconr-catalog-bench-\(getpid())")
        try? FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let style = scratch.appendingPathComponent("style.json")
        let features = ["airport", "bus", "park", "cafe"].enumerated().map { index, icon in
            #"{"type": "Feature", "geometry": {"type": "Point", "coordinates": [\#(index), 0]}, "properties": {"icon": "\#(icon)"}}"#
        }
        let text = #"""
            {"version": 8, "sources": {"p": {"type": "geojson", "data": {"type": "FeatureCollection", "features": [\#(features.joined(separator: ","))]}}},
             "layers": [{"id": "poi", "type": "symbol", "source": "p", "layout": {"icon-image": ["get", "icon"]}}]}
            """#
        try? Data(text.utf8).write(to: style)
        let server: ServerProcess
        do {
            server = try ServerProcess(
                [
                    "--icons", corpora + "/maki=maki", "--icons", corpora + "/osm-carto-symbols=carto", "--theme",
                    repository.appendingPathComponent("examples/themes/dark.json").path, "--style",
                    style.path + "=poi", "--no-cache",
                ], directory: scratch)
        } catch {
            print("error: \(error.localizedDescription)")
            return
        }
        print("iconr-bench serve catalog: Maki and openstreetmap-carto's symbols, theme dark, a style; 2 cores\n")
        let clock = ContinuousClock()
        let port = server.port
        @Sendable func timed(_ target: String, host: String = "127.0.0.1") -> (ms: Double, bytes: Int)? {
            let started = clock.now
            guard let connection = try? HTTPConnection(port: port, timeout: 600),
                let reply = try? connection.request(target, headers: ["Host": host]), reply.status == 200
            else { return nil }
            return (ServeBenchmark.milliseconds(clock.now - started), reply.body.count)
        }
        guard let first = timed("/catalog") else {
            print("error: /catalog failed: \(server.stderr)")
            return
        }
        let again = (0..<20).compactMap { _ in timed("/catalog")?.ms }
        print("the catalog: \(first.bytes) bytes")
        print("  first request (builds 4 sprites)   \(ServeBenchmark.fixed(first.ms)) ms")
        print("  again (20 requests)                \(summary(again))")
        _ = timed("/sprites/carto/sprite@2x.json")

        print("\nGET /sprites/carto/sprite@2x.json, 100 requests one after another:")
        for clients in [0, 4, 8] {
            let stop = Atomic<Bool>(false)
            let reloads = Atomic<Int>(0)
            let group = DispatchGroup()
            for _ in 0..<clients {
                DispatchQueue.global().async(group: group) {
                    while !stop.load(ordering: .relaxed) {
                        if timed("/catalog") != nil { reloads.add(1, ordering: .relaxed) }
                    }
                }
            }
            // Let the readers fill the queue first.
            if clients > 0 { usleep(300_000) }
            let times = (0..<100).compactMap { _ in timed("/sprites/carto/sprite@2x.json")?.ms }
            stop.store(true, ordering: .relaxed)
            group.wait()
            let label = clients == 0 ? "alone" : "while \(clients) clients reload /catalog"
            print("  \(label.padding(toLength: 36, withPad: " ", startingAt: 0))\(summary(times))")
        }

        _ = timed("/styles/poi.json")
        let sameHost = (0..<50).compactMap { _ in timed("/styles/poi.json")?.ms }
        let newHosts = (0..<50).compactMap { index in timed("/styles/poi.json", host: "host\(index).test")?.ms }
        print("\nGET /styles/poi.json, 50 requests:")
        print("  one Host                            \(summary(sameHost))")
        print("  a new Host each                     \(summary(newHosts))")
    }

    /// `median M ms (min-max)` of `times`, in milliseconds.
    static func summary(_ times: [Double]) -> String {
        guard let low = times.min(), let high = times.max() else { return "no answers" }
        return "median \(ServeBenchmark.fixed(ServeBenchmark.median(times))) ms "
            + "(\(ServeBenchmark.fixed(low))-\(ServeBenchmark.fixed(high))), \(times.count) answers"
    }
}
