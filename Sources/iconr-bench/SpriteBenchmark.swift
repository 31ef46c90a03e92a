import Foundation
import IconrRender

/// `iconr sprite` on a folder at ratios 1 and 2, cold (empty cache) and warm, side by side
/// with a shell loop of `rsvg-convert` making the same images, and with the raw librsvg +
/// cairo + libpng cost of those images divided by the cores.
enum SpriteBenchmark {
    /// Runs `iconr sprite` cold and warm `runs` times each and the rsvg-convert loop
    /// `loopRuns` times (it takes seconds), and reports medians.
    static func run(folder: String, iconr: String, runs: Int = 7, loopRuns: Int = 3) {
        let clock = ContinuousClock()
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter {
            $0.hasSuffix(".svg")
        }.sorted()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("iconr-sprite-bench-\(getpid())")
            .path
        try? FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        func seconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        }
        func run(_ executable: String, _ arguments: [String]) -> (Double, String) {
            let output = scratch + "/stdout"
            let seconds = timedRun(executable, arguments, stdout: output)
            return (seconds, (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
        }
        // Medians of several runs, cold (a new cache folder each) and warm, taken in turns with
        // the rsvg-convert loop so that a slow phase of the machine hits all three alike.
        var colds: [Double] = [], warms: [Double] = [], loops: [Double] = []
        var coldOutput = ""
        let loop =
            "for f in \"\(folder)\"/*.svg; do rsvg-convert \"$f\" -o \"\(scratch)/one.png\" && "
            + "rsvg-convert --zoom 2 \"$f\" -o \"\(scratch)/two.png\" || exit 1; done"
        for round in 0..<runs {
            let cache = scratch + "/cache-\(round)"
            let (cold, output) = run(iconr, ["sprite", folder, "-o", scratch + "/sprite", "--cache-dir", cache])
            colds.append(cold)
            coldOutput = output
            warms.append(run(iconr, ["sprite", folder, "-o", scratch + "/sprite", "--cache-dir", cache]).0)
            if round < loopRuns { loops.append(run("/bin/sh", ["-c", loop]).0) }
        }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        let (cold, warm, rsvgLoop) = (median(colds), median(warms), median(loops))
        var raw = 0.0
        for file in files {
            let bytes = [UInt8](FileManager.default.contents(atPath: "\(folder)/\(file)") ?? Data())
            for scale in [1.0, 2.0] {
                let start = clock.now
                _ = ReferencePipeline.renderPNG(bytes, scale: scale)
                raw += seconds(clock.now - start)
            }
        }
        let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
        let summary = coldOutput.split(separator: "\n").last.map(String.init) ?? ""
        let images = Double(files.count * 2)
        func ms(_ value: Double) -> String { String((value * 10000).rounded() / 10) }
        print(
            "iconr-bench sprite: \(files.count) icons from \(folder) at ratios 1 and 2 (\(Int(images)) images), \(Int(cores)) cores\n"
        )
        func range(_ values: [Double]) -> String { "\(ms(values.min()!))-\(ms(values.max()!))" }
        print("medians of \(runs) runs (\(loopRuns) of the loop), whole processes:")
        print(
            "iconr sprite, cold cache: \(ms(cold)) ms (\(Int(Double(files.count) / cold)) icons/s; \(range(colds)) ms)")
        print(
            "iconr sprite, warm cache: \(ms(warm)) ms (\(Int(Double(files.count) / warm)) icons/s; \(range(warms)) ms)")
        print(
            "rsvg-convert shell loop:  \(ms(rsvgLoop)) ms (\(range(loops)) ms), \(String((rsvgLoop / cold * 10).rounded() / 10))x the cold sprite build"
        )
        print(
            "raw librsvg+cairo+libpng: \(ms(raw)) ms on one core; / \(Int(cores)) cores = \(ms(raw / cores)) ms; "
                + "cold build per image \(String((cold / (raw / cores) * 100).rounded() / 100))x that")
        print(summary)
        // The sheets against what optipng makes of them (the size goal: within 10%).
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/optipng") {
            for name in ["sprite.png", "sprite@2x.png"] {
                let ours = scratch + "/" + name, theirs = scratch + "/optipng-" + name
                try? FileManager.default.copyItem(atPath: ours, toPath: theirs)
                _ = run("/usr/bin/optipng", ["-quiet", "-o2", theirs])
                let size = { (path: String) in
                    (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
                }
                print(
                    "\(name): \(size(ours)) bytes, optipng -o2 \(size(theirs)) bytes "
                        + "(\(String((Double(size(ours)) / Double(max(1, size(theirs))) * 1000).rounded() / 10))%)")
            }
        } else {
            print("optipng is not installed: no PNG size comparison (apt-get install optipng)")
        }

        // Fill (icon pixels / sheet pixels) without padding, and on a set of mixed sizes:
        // Maki's 15 px icons, the bundled icons, and 20 of resvg's 200 x 200 tests.
        let (_, unpadded) = run(iconr, ["sprite", folder, "-o", scratch + "/unpadded", "--padding", "0", "--no-cache"])
        print("--padding 0: " + (unpadded.split(separator: "\n").last.map(String.init) ?? ""))
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let mixed = scratch + "/mixed"
        try? FileManager.default.createDirectory(atPath: mixed, withIntermediateDirectories: true)
        let rects = repository.deletingLastPathComponent().appendingPathComponent(
            "shared/corpora/resvg-svg/shapes/rect"
        ).path
        let sources =
            files.map { "\(folder)/\($0)" }
            + ["flag", "marker", "badge", "label"].map { repository.appendingPathComponent("icons/\($0).svg").path }
            + ((try? FileManager.default.contentsOfDirectory(atPath: rects)) ?? []).sorted().prefix(20).map {
                "\(rects)/\($0)"
            }
        for (index, source) in sources.enumerated() {
            try? FileManager.default.copyItem(
                atPath: source, toPath: "\(mixed)/\(index)-\((source as NSString).lastPathComponent)")
        }
        let (_, mixedOutput) = run(iconr, ["sprite", mixed, "-o", scratch + "/mixed-sprite", "--no-cache"])
        print(
            "mixed set of \(sources.count) icons: " + (mixedOutput.split(separator: "\n").last.map(String.init) ?? ""))
    }
}
