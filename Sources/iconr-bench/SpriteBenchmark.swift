import Foundation
import IconrRender
import IconrSystem

/// `iconr sprite` on a folder at ratios 1 and 2, cold (empty cache), warm, and with one icon
/// redrawn (a copy of the folder, a unit square added to one icon each run), side by side
/// with a shell loop of `rsvg-convert` making the same images, and with the raw librsvg +
/// cairo + libpng cost of those images divided by the cores.
enum SpriteBenchmark {
    /// Runs `iconr sprite` cold and warm `runs` times each and the rsvg-convert loop
    /// `loopRuns` times (it takes seconds), and reports medians. With `recursive` (a set
    /// in folders, as openstreetmap-carto's) the build takes `--recursive`, and the loop and
    /// the raw pipeline, which cover the folder's own SVG files only, are not run.
    static func run(folder: String, recursive: Bool = false, iconr: String, runs: Int = 7, loopRuns: Int = 3) {
        let loopRuns = recursive ? 0 : loopRuns
        let build = ["sprite", folder] + (recursive ? ["--recursive"] : [])
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
        var colds: [Double] = [], warms: [Double] = [], loops: [Double] = [], floors: [Double] = []
        var changes: [Double] = []
        // One icon of a copy of the folder gets a black square of one unit, at another place
        // each run: the same size, other pixels (of a color the sets use). The copy is built
        // once first, into its own cache.
        let copy = scratch + "/changed"
        _ = run("/bin/cp", ["-r", folder, copy])
        let changed =
            (FileManager.default.enumerator(atPath: copy)?.compactMap { $0 as? String } ?? [])
            .filter { $0.hasSuffix(".svg") }.sorted().first.map { copy + "/" + $0 }
        let original = changed.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) }
        let changedBuild =
            ["sprite", copy] + (recursive ? ["--recursive"] : []) + [
                "-o", scratch + "/changed-sprite", "--cache-dir", scratch + "/changed-cache",
            ]
        _ = run(iconr, changedBuild)
        // What a warm build cannot go below: starting iconr, and writing the same files.
        var starts: [Double] = [], writes: [Double] = []
        // What a changed build cannot go below while librsvg loads for it: a process that draws
        // one icon of the set (`iconr render --no-cache`), librsvg's ~45 libraries loaded.
        var oneIcon: [Double] = []
        try? FileManager.default.createDirectory(atPath: scratch + "/copy", withIntermediateDirectories: true)
        // The files a build writes, as it lists them on stdout (every sheet of every ratio).
        var outputs: [String] = []
        var coldOutput = ""
        let floor = compileFloorProgram("sprite-floor", into: scratch)
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let loop =
            "for f in \"\(folder)\"/*.svg; do rsvg-convert \"$f\" -o \"\(scratch)/one.png\" && "
            + "rsvg-convert --zoom 2 \"$f\" -o \"\(scratch)/two.png\" || exit 1; done"
        for round in 0..<runs {
            let cache = scratch + "/cache-\(round)"
            let (cold, output) = run(iconr, build + ["-o", scratch + "/sprite", "--cache-dir", cache])
            colds.append(cold)
            coldOutput = output
            outputs = output.split(separator: "\n").map(String.init).filter {
                $0.hasPrefix(scratch) && ($0.hasSuffix(".png") || $0.hasSuffix(".json"))
            }
            warms.append(run(iconr, build + ["-o", scratch + "/sprite", "--cache-dir", cache]).0)
            starts.append(run(iconr, ["--version"]).0)
            if let first = files.first {
                oneIcon.append(
                    run(iconr, ["render", folder + "/" + first, "-o", scratch + "/one-icon.png", "--no-cache"]).0)
            }
            writes.append(run("/bin/cp", outputs + [scratch + "/copy/"]).0)
            if let changed, let original, let end = original.range(of: "</svg>", options: .backwards) {
                let corner = "<rect x=\"\(round + 1)\" width=\"1\" height=\"1\"/>"
                try? (original[..<end.lowerBound] + corner + original[end.lowerBound...]).write(
                    toFile: changed, atomically: true, encoding: .utf8)
                changes.append(run(iconr, changedBuild).0)
            }
            if let floor {
                floors.append(run(floor, ["\(cores)", folder] + outputs.filter { $0.hasSuffix(".json") }).0)
            }
            if round < loopRuns { loops.append(run("/bin/sh", ["-c", loop]).0) }
        }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        let (cold, warm) = (median(colds), median(warms))
        var raw = 0.0
        for file in recursive ? [] : files {
            let bytes = [UInt8](FileManager.default.contents(atPath: "\(folder)/\(file)") ?? Data())
            for scale in [1.0, 2.0] {
                let start = clock.now
                _ = ReferencePipeline.renderPNG(bytes, scale: scale)
                raw += seconds(clock.now - start)
            }
        }
        let summary = coldOutput.split(separator: "\n").last.map(String.init) ?? ""
        // The summary's "sprite: N icons", which counts the icons of every folder.
        let icons = summary.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? files.count
        func ms(_ value: Double) -> String { String((value * 10000).rounded() / 10) }
        print(
            "iconr-bench sprite: \(icons) icons from \(folder)\(recursive ? " and its folders" : "") at ratios 1 and 2, "
                + "\(cores) cores\n")
        func range(_ values: [Double]) -> String { "\(ms(values.min()!))-\(ms(values.max()!))" }
        print("medians of \(runs) runs (\(loopRuns) of the loop), whole processes:")
        print(
            "iconr sprite, cold cache: \(ms(cold)) ms (\(Int(Double(icons) / cold)) icons/s; \(range(colds)) ms)")
        print(
            "iconr sprite, warm cache: \(ms(warm)) ms (\(Int(Double(icons) / warm)) icons/s; \(range(warms)) ms)")
        if changes.isEmpty {
            print("iconr sprite, one icon changed: not run (no SVG file to change)")
        } else {
            let change = median(changes)
            print(
                "iconr sprite, one icon changed: \(ms(change)) ms (\(range(changes)) ms), "
                    + "\(String((change / cold * 1000).rounded() / 10))% of the cold build (the goal: under 30%)")
        }
        if !oneIcon.isEmpty {
            let floor = median(oneIcon)
            print(
                "  floor of a changed build: one icon drawn by a new process (iconr render --no-cache) "
                    + "\(ms(floor)) ms (\(range(oneIcon)) ms), \(String((floor / cold * 1000).rounded() / 10))% of the cold build"
            )
        }
        let (start, write) = (median(starts), median(writes))
        print(
            "  floor of a warm build: starting iconr (--version) \(ms(start)) ms + writing its files (cp) "
                + "\(ms(write)) ms = \(ms(start + write)) ms; warm build \(String((warm / (start + write) * 100).rounded() / 100))x that"
        )
        if recursive {
            print("rsvg-convert loop and raw pipeline: not run (they cover the folder's own SVG files only)")
        } else {
            let rsvgLoop = median(loops)
            print(
                "rsvg-convert shell loop:  \(ms(rsvgLoop)) ms (\(range(loops)) ms), \(String((rsvgLoop / cold * 10).rounded() / 10))x the cold sprite build"
            )
            print(
                "raw librsvg+cairo+libpng: \(ms(raw)) ms on one core; / \(cores) cores = \(ms(raw / Double(cores))) ms; "
                    + "cold build per image \(String((cold / (raw / Double(cores)) * 100).rounded() / 100))x that")
        }
        if floors.isEmpty {
            print("the C floor (Benchmarks/sprite-floor.c) needs cc, pkg-config and librsvg2-dev: not measured")
        } else {
            let floorTime = median(floors)
            print(
                "C floor (same sheets, raw librsvg + cairo + libpng, \(cores) threads): \(ms(floorTime)) ms "
                    + "(\(range(floors)) ms); cold build \(String((cold / floorTime * 100).rounded() / 100))x the floor"
            )
        }
        print(summary)
        // The sheets against what oxipng -o2 (PyPI pyoxipng) makes of them, and how long it takes.
        let oxipng = """
            import oxipng, sys, time
            data = open(sys.argv[1], 'rb').read()
            started = time.perf_counter()
            smaller = oxipng.optimize_from_memory(data, level=2)
            print(len(smaller), time.perf_counter() - started)
            """
        for name in outputs.filter({ $0.hasSuffix(".png") }).map({ ($0 as NSString).lastPathComponent }) {
            let ours = scratch + "/" + name
            let (_, answer) = run("/usr/bin/env", ["python3", "-c", oxipng, ours])
            let fields = answer.split(separator: " ").compactMap {
                Double($0.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            guard fields.count == 2 else {
                print("oxipng is not installed: no PNG size comparison (pip install pyoxipng)")
                break
            }
            let size = (try? FileManager.default.attributesOfItem(atPath: ours)[.size] as? Int) ?? 0
            print(
                "\(name): \(size) bytes, oxipng -o2 \(Int(fields[0])) bytes in \(ms(fields[1])) ms "
                    + "(\(String((Double(size) / max(1, fields[0]) * 1000).rounded() / 10))%)")
        }
        // --optimize (libdeflate's highest levels) against the default build, both without a
        // cache, in turns (the goal: within 5x), and its sheets against zopflipng's on the
        // default ones (the goal: within 2%; not for a set in folders, where zopflipng takes
        // minutes on RGBA sheets).
        var plains: [Double] = [], optimizeds: [Double] = []
        var optimizedSummary = ""
        for _ in 0..<3 {
            plains.append(run(iconr, build + ["-o", scratch + "/plain/sprite", "--no-cache"]).0)
            let (seconds, output) = run(
                iconr, build + ["-o", scratch + "/optimized/sprite", "--optimize", "--no-cache"])
            optimizeds.append(seconds)
            optimizedSummary = output.split(separator: "\n").last.map(String.init) ?? ""
        }
        let (plain, optimized) = (median(plains), median(optimizeds))
        print(
            "--optimize: \(ms(optimized)) ms, \(String((optimized / plain * 10).rounded() / 10))x the default build "
                + "without a cache (\(ms(plain)) ms; the goal: within 5x): \(optimizedSummary)")
        let size = { (path: String) in (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0 }
        func percent(_ ours: Int, _ theirs: Int) -> String {
            String((Double(ours) / Double(max(1, theirs)) * 1000).rounded() / 10) + "%"
        }
        let sheets = ((try? FileManager.default.contentsOfDirectory(atPath: scratch + "/optimized")) ?? [])
            .filter { $0.hasSuffix(".png") }.sorted()
        let zopflipng = !recursive && FileManager.default.isExecutableFile(atPath: "/usr/bin/zopflipng")
        for name in sheets {
            let (ours, plainBytes) = (size(scratch + "/optimized/" + name), size(scratch + "/plain/" + name))
            var line = "\(name) --optimize: \(ours) bytes, \(percent(ours, plainBytes)) of the default's \(plainBytes)"
            if zopflipng {
                let theirs = scratch + "/zopflipng-" + name
                _ = run("/usr/bin/zopflipng", ["-y", scratch + "/plain/" + name, theirs])
                line += ", zopflipng \(size(theirs)) bytes (\(percent(ours, size(theirs))))"
            }
            print(line)
        }
        if !zopflipng {
            print(
                recursive
                    ? "zopflipng: not run for a set in folders (minutes on RGBA sheets)"
                    : "zopflipng is not installed: --optimize not compared (apt-get install zopfli)")
        }
        guard !recursive else {
            print("--padding 0 and the mixed set: not run for a set in folders")
            return
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
