import Foundation
import IconrSystem
import IconrTestSupport

/// `iconr render` of a whole folder at 1x in one process, side by side with the C floor
/// (Benchmarks/render-floor.c: raw librsvg + cairo + libpng on one thread) and with shell
/// loops of a process per icon (resvg, rsvg-convert, iconr); then one icon per process:
/// a cold render against rsvg-convert's and resvg's CPU, and a cache hit, `iconr --version` and
/// a Swift program that does nothing (empty-swift, built by `make bench`) against `true`'s;
/// then the same processes counted in instructions by callgrind, which the machine's noise does not move.
enum RenderBenchmark {
    static func run(folder: String, iconr: String, runs: Int = 7, loopRuns: Int = 2) {
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter {
            $0.hasSuffix(".svg")
        }.sorted().map { "\(folder)/\($0)" }
        guard !files.isEmpty else { fail("no SVG files in \(folder)") }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("iconr-render-bench-\(getpid())")
            .path
        try? FileManager.default.createDirectory(atPath: scratch + "/loop", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let floor = compileFloorProgram("render-floor", into: scratch)
        let rsvgConvert = executable("rsvg-convert")
        let resvg = executable("resvg")
        let emptySwift = (iconr as NSString).deletingLastPathComponent + "/empty-swift"
        let hasEmptySwift = FileManager.default.isExecutableFile(atPath: emptySwift)

        // Taken in turns, so that a slow phase of the machine hits every side alike. Each run
        // writes new files into a new folder (iconr leaves a file that holds its bytes already,
        // and only stamps it; and ext4 made new files slowly right after many were deleted);
        // `unchanged` renders again over the warm run's files.
        var batch: [TimedSample] = [], warm: [TimedSample] = [], unchanged: [TimedSample] = []
        var floors: [TimedSample] = []
        let cache = scratch + "/cache"
        func new(_ name: String, _ run: Int) -> String {
            let folder = scratch + "/\(name)-\(run)"
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            return folder
        }
        _ = timedRun(iconr, ["render"] + files + ["-o", new("warm", -1), "--cache-dir", cache])
        for run in 0..<runs {
            batch.append(timedRunWithCPU(iconr, ["render"] + files + ["-o", new("batch", run), "--no-cache"]))
            warm.append(timedRunWithCPU(iconr, ["render"] + files + ["-o", new("warm", run), "--cache-dir", cache]))
            unchanged.append(
                timedRunWithCPU(iconr, ["render"] + files + ["-o", new("warm", run), "--cache-dir", cache]))
            if let floor { floors.append(timedRunWithCPU(floor, [new("floor", run)] + files)) }
        }
        // A process per icon, as a shell loop runs them.
        func loop(_ command: String) -> [TimedSample] {
            let script =
                "for f in \"$@\"; do n=${f##*/}; \(command) || exit 1; done"
            return (0..<loopRuns).map { _ in timedRunWithCPU("/bin/sh", ["-c", script, "loop"] + files) }
        }
        let out = "\"\(scratch)/loop/${n%.svg}.png\""
        let iconrLoop = loop("\"\(iconr)\" render \"$f\" --no-cache -o \(out)")
        let resvgLoop = resvg.map { loop("\"\($0)\" \"$f\" \(out)") }
        let rsvgLoop = rsvgConvert.map { loop("\"\($0)\" \"$f\" -o \(out)") }

        print("iconr-bench render: \(files.count) icons from \(folder) at 1x, \(cores) cores")
        print("medians of \(runs) runs (\(loopRuns) of each loop); wall ms and CPU ms (user + system)\n")
        let floorWall = floors.isEmpty ? nil : median(floors.map(\.wall))
        func row(_ label: String, _ samples: [TimedSample]) {
            let wall = median(samples.map(\.wall)), cpu = median(samples.map(\.cpu))
            let ratio = floorWall.map { ", \(times(wall / $0)) the floor's wall" } ?? ""
            print(
                label.padding(toLength: 44, withPad: " ", startingAt: 0)
                    + "\(ms(wall)) wall, \(ms(cpu)) CPU\(ratio)")
        }
        print("A batch of \(files.count) (one process unless it says a loop):")
        row("  iconr render (--no-cache)", batch)
        row("  iconr render (warm disk cache)", warm)
        row("  the same again, the files unchanged", unchanged)
        if floors.isEmpty {
            print("  C floor: needs cc, pkg-config and librsvg2-dev (Benchmarks/render-floor.c); not measured")
        } else {
            row("  C floor (render-floor.c, one thread)", floors)
        }
        if let resvgLoop {
            row("  resvg loop", resvgLoop)
        } else {
            print("  resvg: not installed (pip install resvg-cli)")
        }
        if let rsvgLoop { row("  rsvg-convert loop", rsvgLoop) } else { print("  rsvg-convert: not installed") }
        row("  iconr render loop (--no-cache)", iconrLoop)

        // One icon per process: medians of many runs of a mid-sized icon, each program in turn
        // (so that the machine's drift touches all alike). A start costs 1-10 ms, and 21 runs
        // gave a hit 1.75-2.4x `true` over the runs of one day; 101 take some 3 s.
        // Each writes a new file (a new name each time: removing the last one first made the
        // next write slower), but `same`: a hit over the file it wrote the run before, which
        // iconr leaves as it is.
        let icon = files[files.count / 2]
        let sameOutput = scratch + "/same.png"
        let count = max(101, runs * 15)
        var cold: [TimedSample] = [], hit: [TimedSample] = [], same: [TimedSample] = []
        var rsvgOne: [TimedSample] = [], resvgOne: [TimedSample] = []
        var trueRuns: [TimedSample] = [], versionRuns: [TimedSample] = [], emptyRuns: [TimedSample] = []
        _ = timedRun(iconr, ["render", icon, "-o", sameOutput, "--cache-dir", cache])
        var written = 0
        func newFile() -> String {
            written += 1
            return scratch + "/single-\(written).png"
        }
        for _ in 0..<count {
            cold.append(timedRunWithCPU(iconr, ["render", icon, "-o", newFile(), "--no-cache"]))
            hit.append(timedRunWithCPU(iconr, ["render", icon, "-o", newFile(), "--cache-dir", cache]))
            same.append(timedRunWithCPU(iconr, ["render", icon, "-o", sameOutput, "--cache-dir", cache]))
            if let rsvgConvert { rsvgOne.append(timedRunWithCPU(rsvgConvert, [icon, "-o", newFile()])) }
            if let resvg { resvgOne.append(timedRunWithCPU(resvg, [icon, newFile()])) }
            trueRuns.append(timedRunWithCPU("/bin/true", []))
            versionRuns.append(timedRunWithCPU(iconr, ["--version"]))
            if hasEmptySwift { emptyRuns.append(timedRunWithCPU(emptySwift, [])) }
        }
        print("\nOne icon per process (\((icon as NSString).lastPathComponent), medians of \(count) runs):")
        func single(
            _ label: String, _ samples: [TimedSample], against peer: [TimedSample],
            _ peerName: String
        ) {
            let cpu = median(samples.map(\.cpu)), wall = median(samples.map(\.wall))
            let faults = Int(median(samples.map { Double($0.faults) }))
            let versus = peer.isEmpty ? "" : ", \(times(cpu / max(1e-6, median(peer.map(\.cpu))))) \(peerName)'s CPU"
            print(
                label.padding(toLength: 44, withPad: " ", startingAt: 0)
                    + "\(ms(wall)) wall, \(ms(cpu)) CPU, \(faults) page faults\(versus)")
        }
        single("  iconr render (--no-cache)", cold, against: rsvgOne, "rsvg-convert")
        if !rsvgOne.isEmpty { single("  rsvg-convert", rsvgOne, against: [], "") }
        if !resvgOne.isEmpty { single("  resvg", resvgOne, against: [], "") }
        single("  iconr render (cache hit)", hit, against: trueRuns, "true")
        single("  the same, over its unchanged file", same, against: trueRuns, "true")
        single("  iconr --version (starting iconr)", versionRuns, against: trueRuns, "true")
        if hasEmptySwift {
            single("  empty-swift (a Swift program's start)", emptyRuns, against: trueRuns, "true")
        } else {
            print("  empty-swift: not built (make bench builds it)")
        }
        single("  true", trueRuns, against: [], "")

        guard let valgrind = executable("valgrind") else {
            print("\nInstructions: needs valgrind (apt install valgrind); not counted")
            return
        }
        /// Instructions the process ran in user space (its loader included), by callgrind.
        func instructions(_ program: String, _ arguments: [String]) -> Double? {
            let result = try? TestSupport.run(
                valgrind, ["--tool=callgrind", "--callgrind-out-file=/dev/null", program] + arguments, timeout: 120)
            let text = String(decoding: result?.stderr ?? Data(), as: UTF8.self)
            guard let line = text.split(separator: "\n").first(where: { $0.contains("Collected :") }),
                let count = line.split(separator: " ").last.flatMap({ Double($0) })
            else { return nil }
            return count
        }
        print("\nThe same, in instructions (callgrind, one run each):")
        let coldCount = instructions(iconr, ["render", icon, "-o", newFile(), "--no-cache"])
        let rsvgCount = rsvgConvert.flatMap { instructions($0, [icon, "-o", newFile()]) }
        let resvgCount = resvg.flatMap { instructions($0, [icon, newFile()]) }
        let hitCount = instructions(iconr, ["render", icon, "-o", newFile(), "--cache-dir", cache])
        let sameCount = instructions(iconr, ["render", icon, "-o", sameOutput, "--cache-dir", cache])
        let versionCount = instructions(iconr, ["--version"]), trueCount = instructions("/bin/true", [])
        let emptyCount = hasEmptySwift ? instructions(emptySwift, []) : nil
        func counted(_ label: String, _ count: Double?, against peer: Double? = nil, _ peerName: String = "") {
            guard let count else { return }
            let versus = peer.map { ", \(times(count / $0)) \(peerName)'s" } ?? ""
            print(
                label.padding(toLength: 44, withPad: " ", startingAt: 0)
                    + "\(String((count / 1e5).rounded() / 10)) million\(versus)")
        }
        counted("  iconr render (--no-cache)", coldCount, against: rsvgCount, "rsvg-convert")
        counted("  rsvg-convert", rsvgCount)
        counted("  resvg", resvgCount)
        counted("  iconr render (cache hit)", hitCount, against: trueCount, "true")
        counted("  the same, over its unchanged file", sameCount, against: trueCount, "true")
        counted("  iconr --version (starting iconr)", versionCount, against: trueCount, "true")
        counted("  empty-swift (a Swift program's start)", emptyCount, against: trueCount, "true")
        counted("  true", trueCount)
    }

    /// `name` on PATH, skipping pyenv's shims (a shell script that would start a Python
    /// runtime per call), then in Python's scripts folder (where pip puts resvg-cli's `resvg`).
    private static func executable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("iconr-bench-scripts-\(getpid())")
            .path
        defer { try? FileManager.default.removeItem(atPath: output) }
        _ = try? ChildProcess.wait(
            for: ChildProcess.spawn(
                "/bin/sh",
                ["-c", "python3 -c 'import sysconfig; print(sysconfig.get_path(\"scripts\"))' > '\(output)'"]))
        let scripts = (try? String(contentsOfFile: output, encoding: .utf8))?.trimmingCharacters(
            in: .whitespacesAndNewlines)
        let folders = path.split(separator: ":").map(String.init).filter { !$0.hasSuffix("/shims") } + [scripts ?? ""]
        return folders.filter { !$0.isEmpty }.map { "\($0)/\(name)" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    private static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    private static func ms(_ seconds: Double) -> String { String((seconds * 10000).rounded() / 10) + " ms" }
    private static func times(_ ratio: Double) -> String { String((ratio * 100).rounded() / 100) + "x" }
}
