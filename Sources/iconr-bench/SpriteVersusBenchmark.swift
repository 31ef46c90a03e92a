import Foundation

/// `iconr-bench sprite-versus OTHER [folder] [runs]`: the iconr beside the bench against
/// another build of it (an earlier commit's, made with `make bench` in a worktree), run by
/// run in turns, so that the machine's drift (its speed moves by a half within minutes here)
/// hits both alike. Each binary builds its own copy of the folder into its own cache: cold
/// (a new cache each run), warm (nothing changed), and after one icon changed (a unit square
/// moved in its first SVG file, to a place not drawn before, each run). Prints each one's
/// medians with their range, and the second's against the first's.
enum SpriteVersusBenchmark {
    static func run(iconr: String, other: String, folder: String, runs: Int) {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("iconr-sprite-versus-\(getpid())")
            .path
        try? FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let binaries = [other, iconr]
        // Each binary's copy of the folder, its first SVG file and that file's text.
        var copies: [(folder: String, icon: String, original: String, end: String.Index)] = []
        for index in binaries.indices {
            let copy = scratch + "/icons-\(index)"
            _ = timedRun("/bin/cp", ["-r", folder, copy])
            let icons = ((try? FileManager.default.contentsOfDirectory(atPath: copy)) ?? []).filter {
                $0.hasSuffix(".svg")
            }.sorted()
            guard let first = icons.first,
                let original = try? String(contentsOfFile: copy + "/" + first, encoding: .utf8),
                let end = original.range(of: "</svg>", options: .backwards)?.lowerBound
            else {
                print("error: no SVG file to change in \(folder)")
                return
            }
            copies.append((copy, copy + "/" + first, original, end))
        }
        func build(_ index: Int, cache: String) -> Double {
            timedRun(
                binaries[index],
                ["sprite", copies[index].folder, "-o", scratch + "/out-\(index)/sprite", "--cache-dir", cache])
        }
        // The caches the warm and changed builds use, made once; the copies' stamps settle (2 s).
        for index in binaries.indices { _ = build(index, cache: scratch + "/cache-\(index)") }
        usleep(2_100_000)
        var cold = [[Double]](repeating: [], count: 2), warm = cold, changed = cold
        for round in 0..<runs {
            for index in binaries.indices {
                let (_, icon, original, end) = copies[index]
                let square = "<rect x=\"\(round % 14)\" y=\"\(round / 14 % 14)\" width=\"1\" height=\"1\"/>"
                try? (original[..<end] + square + original[end...]).write(
                    toFile: icon, atomically: false, encoding: .utf8)
                changed[index].append(build(index, cache: scratch + "/cache-\(index)"))
                warm[index].append(build(index, cache: scratch + "/cache-\(index)"))
                let fresh = scratch + "/cold-\(index)"
                try? FileManager.default.removeItem(atPath: fresh)
                cold[index].append(build(index, cache: fresh))
            }
        }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        func ms(_ value: Double) -> String { String((value * 10000).rounded() / 10) }
        func range(_ values: [Double]) -> String { "\(ms(values.min() ?? 0))-\(ms(values.max() ?? 0))" }
        print("iconr-bench sprite-versus: \(folder), \(runs) runs of each, in turns; medians (range), ms")
        print("  other: \(other)\n  this:  \(iconr)")
        for (label, times) in [("one icon changed", changed), ("warm", warm), ("cold", cold)] {
            guard times.allSatisfy({ !$0.isEmpty }) else { continue }
            let (before, after) = (median(times[0]), median(times[1]))
            print(
                "\(label): other \(ms(before)) (\(range(times[0]))), this \(ms(after)) (\(range(times[1]))), "
                    + "this/other \(String((after / before * 100).rounded() / 100))")
        }
    }
}
