import Foundation
import Glibc
import IconrSystem

/// Peak memory of sprite builds against the pixels they hold (the goal: at most 3 times at
/// 50,000 images). `icons` copies of Maki's icons under new names make 2 x `icons` images at
/// ratios 1 and 2, built by `iconr sprite` without a cache and with a new one, and by the C
/// floor (Benchmarks/sprite-floor.c: raw librsvg + cairo + libpng, every sheet held at once).
/// Each runs in a process of its own, whose peak resident memory (with its children's)
/// `wait4` reports.
enum MemoryBenchmark {
    static func run(icons count: Int, maki: String, iconr: String) {
        let sources = ((try? FileManager.default.contentsOfDirectory(atPath: maki)) ?? []).filter {
            $0.hasSuffix(".svg")
        }.sorted()
        guard !sources.isEmpty else { fail("no SVG files in \(maki)") }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("iconr-memory-bench-\(getpid())")
            .path
        let icons = scratch + "/icons"
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        do {
            try FileManager.default.createDirectory(atPath: icons, withIntermediateDirectories: true)
            for index in 0..<count {
                let source = sources[index % sources.count]
                try FileManager.default.copyItem(
                    atPath: maki + "/" + source,
                    toPath: icons + "/" + source.dropLast(4) + "-\(index / sources.count).svg")
            }
        } catch {
            fail("cannot make the icon folder: \(error)")
        }
        print("iconr-bench memory: \(count) icons (Maki's, copied) at ratios 1 and 2, \(2 * count) images")
        let plain = peak(iconr, ["sprite", icons, "-o", scratch + "/plain/sprite", "--no-cache"])
        let cached = peak(
            iconr, ["sprite", icons, "-o", scratch + "/cached/sprite", "--cache-dir", scratch + "/cache"])
        // The pixels of every image, from the indexes the build wrote.
        var raster = 0
        var indexes: [String] = []
        for file in ((try? FileManager.default.contentsOfDirectory(atPath: scratch + "/plain")) ?? []).sorted()
        where file.hasSuffix(".json") {
            indexes.append(scratch + "/plain/" + file)
            let data = FileManager.default.contents(atPath: scratch + "/plain/" + file) ?? Data()
            let index = (try? JSONSerialization.jsonObject(with: data)) as? [String: [String: Any]] ?? [:]
            for entry in index.values {
                raster += ((entry["width"] as? Int) ?? 0) * ((entry["height"] as? Int) ?? 0) * 4
            }
        }
        func line(_ label: String, _ bytes: Int) -> String {
            let mib = Double(bytes) / Double(1 << 20)
            return "\(label): peak \(String((mib * 10).rounded() / 10)) MiB, "
                + "\(String((Double(bytes) / Double(max(1, raster)) * 100).rounded() / 100))x the pixels"
        }
        print("pixels of the images: \(String((Double(raster) / Double(1 << 20) * 10).rounded() / 10)) MiB")
        print(line("iconr sprite --no-cache", plain))
        print(line("iconr sprite, a new cache", cached))
        if let floor = compileFloorProgram("sprite-floor", into: scratch) {
            let cores = ProcessInfo.processInfo.activeProcessorCount
            print(line("C floor (every sheet held at once)", peak(floor, ["\(cores)", icons] + indexes)))
        } else {
            print("the C floor (Benchmarks/sprite-floor.c) needs cc, pkg-config and librsvg2-dev: not measured")
        }
    }

    /// Runs a program to its end and returns its peak resident memory in bytes, with that of
    /// the processes it waited for.
    private static func peak(_ executable: String, _ arguments: [String]) -> Int {
        let pid: pid_t
        do {
            pid = try ChildProcess.spawn(
                executable, arguments,
                fileActions: [
                    .open("/dev/null", flags: O_WRONLY, as: 1), .open("/dev/null", flags: O_WRONLY, as: 2),
                ])
        } catch {
            fail("cannot run \(executable): \(error)")
        }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else { fail("wait4: \(errno)") }
        }
        guard status == 0 else { fail("\(executable) \(arguments.joined(separator: " ")) failed") }
        return usage.ru_maxrss * 1024
    }
}
