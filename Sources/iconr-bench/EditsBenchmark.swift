import Foundation
import IconrTestSupport

/// `iconr-bench serve edits [N] [folder]` (issue 64): `iconr serve` with a disk cache under a limit
/// (`--cache-limit 16`) serving a set and its grayscale theme, while one of the set's icons is
/// redrawn N times (each edit a SIGHUP, then every sprite file asked for, so each edit is a
/// rebuild of both sprites). Prints the server's resident memory, the cache folder's disk
/// space against the limit and its largest pack, at the start, every fifth edit and the end:
/// what must stay flat.
enum EditsBenchmark {
    /// `given`: the icons (default: Maki beside the checkout, else the bundled icons).
    static func run(repository: URL, scratch: URL, edits: Int, folder given: String?) {
        let maki = repository.deletingLastPathComponent().appendingPathComponent("shared/corpora/maki")
        let source =
            given.map { URL(fileURLWithPath: $0) }
            ?? (FileManager.default.fileExists(atPath: maki.path) ? maki : repository.appendingPathComponent("icons"))
        let folder = scratch.appendingPathComponent("edited")
        try? FileManager.default.removeItem(at: folder)
        guard (try? FileManager.default.copyItem(at: source, to: folder)) != nil,
            let icon = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter({
                $0.hasSuffix(".svg")
            }).sorted().first.map({ folder.appendingPathComponent($0) }),
            let original = try? String(contentsOf: icon, encoding: .utf8),
            let end = original.range(of: "</svg>", options: .backwards)
        else {
            print("error: no icons to edit in \(source.path)")
            return
        }
        let cache = scratch.appendingPathComponent("cache-edits")
        let limit = 16
        guard
            let server = try? ServerProcess(
                [
                    "--icons", folder.path + "=set", "--theme", "grayscale", "--cache-dir", cache.path, "--cache-limit",
                    "\(limit)",
                ], directory: scratch)
        else {
            print("error: iconr serve did not start")
            return
        }
        defer {
            server.process.signal(SIGTERM)
            server.process.wait(timeout: 20)
        }
        let files = ["sprite.json", "sprite.png", "sprite@2x.json", "sprite@2x.png"]
        func askForEverySprite() -> Bool {
            ["/sprites/set/", "/sprites/set/grayscale/"].allSatisfy { base in
                files.allSatisfy { (try? server.get(base + $0))?.status == 200 }
            }
        }
        func residentMB() -> Double {
            let fields = TestSupport.processStat(server.process.pid)
            guard fields.count > 21, let pages = Double(fields[21]) else { return 0 }
            return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1e6
        }
        /// The disk space of every file under the cache folder, and of its largest pack.
        func diskSpace() -> (folder: Double, pack: Double) {
            var total = 0, largest = 0
            for path in FileManager.default.subpaths(atPath: cache.path) ?? [] {
                var info = stat()
                guard lstat(cache.path + "/" + path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
                let bytes = Int(info.st_blocks) * 512
                total += bytes
                if path.hasSuffix(".pack") { largest = max(largest, bytes) }
            }
            return (Double(total) / 1_048_576, Double(largest) / 1_048_576)
        }
        guard askForEverySprite() else {
            print("error: the sprites were not served")
            return
        }
        print(
            "\(edits) edits of a served folder (\(source.lastPathComponent), one icon redrawn each time, SIGHUP, "
                + "both sprites asked for), --cache-limit \(limit) MiB:")
        func report(_ label: String) -> (rss: Double, folder: Double) {
            let (folderMiB, pack) = diskSpace()
            let rss = residentMB()
            print(
                "  \(label): RSS \(String(format: "%.1f", rss)) MB, cache folder \(String(format: "%.1f", folderMiB)) MiB "
                    + "(limit \(limit) MiB), largest pack \(String(format: "%.1f", pack)) MiB")
            return (rss, folderMiB)
        }
        let start = report("start")
        var failed = 0
        for edit in 1...max(1, edits) {
            let mark = "<rect x=\"\(edit % 20)\" y=\"\(edit / 20)\" width=\"1\" height=\"1\"/>"
            try? (original[..<end.lowerBound] + mark + original[end.lowerBound...]).write(
                to: icon, atomically: true, encoding: .utf8)
            server.process.signal(SIGHUP)
            usleep(100_000)
            if !askForEverySprite() { failed += 1 }
            if edit % 5 == 0 && edit != edits { _ = report("edit \(edit)") }
        }
        let last = report("after \(edits) edits")
        print(
            "  RSS \(String(format: "%.1f", start.rss)) -> \(String(format: "%.1f", last.rss)) MB; cache folder "
                + "\(String(format: "%.1f", start.folder)) -> \(String(format: "%.1f", last.folder)) MiB against a limit of "
                + "\(limit) MiB; \(failed) edits whose sprites were not all served")
    }
}
