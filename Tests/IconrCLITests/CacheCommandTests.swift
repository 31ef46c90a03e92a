import Foundation
import IconrCore
import IconrRender
import IconrTestSupport
import Testing

/// `iconr render` with its disk cache, and `iconr cache`.
struct CacheCommandTests {
    let directory: URL
    /// Removed with the test.
    private let scratch: TemporaryFolder
    let cache: String
    let flag = TestSupport.icons.appendingPathComponent("flag.svg").path

    init() throws {
        scratch = try TemporaryFolder("iconr-cache-cli")
        directory = scratch.url
        cache = directory.appendingPathComponent("cache").path
    }

    private func iconr(_ arguments: [String]) throws -> IconrRun {
        try TestSupport.iconr(arguments, in: directory)
    }

    /// Every file in the cache's entry folders (`entries-v1/ab/ab....png`), as paths below `entries-v1`.
    private func entries() -> [String] {
        let root = cache + "/entries-v1"
        return ((try? FileManager.default.subpathsOfDirectory(atPath: root)) ?? []).filter { path in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDirectory)
                && !isDirectory.boolValue
        }
    }

    /// Whether the process `arguments` start opened librsvg: the dynamic linker's own log
    /// (`LD_DEBUG=files`, one file per process) names every library it loads.
    private func loadsLibrsvg(_ arguments: [String]) throws -> Bool {
        try loads("librsvg-2.so.2", arguments)
    }

    /// Whether `iconr arguments...` opened the library file `soname` (the dynamic linker's log says).
    private func loads(_ soname: String, _ arguments: [String]) throws -> Bool {
        let log = directory.appendingPathComponent("ld-\(UUID().uuidString)").path
        let result = try TestSupport.run(
            "/usr/bin/env", ["LD_DEBUG=files", "LD_DEBUG_OUTPUT=" + log, TestSupport.iconrExecutable] + arguments,
            directory: directory)
        #expect(result.status == 0, "\(String(decoding: result.stderr, as: UTF8.self))")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasPrefix(URL(fileURLWithPath: log).lastPathComponent)
        }
        #expect(!files.isEmpty, "the dynamic linker wrote no log")
        return try files.contains {
            String(decoding: try Data(contentsOf: directory.appendingPathComponent($0)), as: UTF8.self).contains(
                "file=\(soname)")
        }
    }

    /// Only a render opens librsvg: `--version`, `expression` and a cache hit never do
    /// (what makes them start in a few milliseconds; docs/benchmarks.md).
    @Test func onlyARenderOpensLibrsvg() throws {
        #expect(try !loadsLibrsvg(["--version"]))
        #expect(try !loadsLibrsvg(["expression", #"["+", 1, 2]"#]))
        #expect(
            try loadsLibrsvg(["render", flag, "-p", "flag_color=red", "--cache-dir", cache, "-o", "a.png"]),
            "a miss renders")
        #expect(
            try !loadsLibrsvg(["render", flag, "-p", "flag_color=#f00", "--cache-dir", cache, "-o", "b.png"]),
            "a hit loaded librsvg")
        // Only `iconr serve` opens libmicrohttpd (ServeCommandTests checks that it does).
        #expect(try !loads("libmicrohttpd.so.12", ["--version"]))
        #expect(
            try !loads(
                "libmicrohttpd.so.12", ["render", flag, "-p", "flag_color=blue", "--cache-dir", cache, "-o", "c.png"]))
    }

    @Test func aSecondRenderComesFromTheCacheWithTheSameBytes() throws {
        #expect(
            try iconr(["render", flag, "-p", "flag_color=red", "-s", "2", "--cache-dir", cache, "-o", "a.png"]).status
                == 0)
        #expect(entries().count == 1)
        let hit = try iconr(["render", flag, "-p", "flag_color=#f00", "-s", "2x", "--cache-dir", cache, "-o", "b.png"])
        #expect(hit.status == 0 && hit.stdout == "b.png\n")
        #expect(entries().count == 1)
        let a = try Data(contentsOf: directory.appendingPathComponent("a.png"))
        #expect(a == (try Data(contentsOf: directory.appendingPathComponent("b.png"))))
        // A cache hit still honours the size limit.
        let limited = try iconr([
            "render", flag, "-p", "flag_color=red", "-s", "2", "--cache-dir", cache, "--max-size", "10", "-o", "c.png",
        ])
        #expect(limited.status == 1 && limited.stderr.contains("a 48x48 raster exceeds the limit of 10x10"))
    }

    @Test func aCorruptedEntryIsRenderedAgain() throws {
        _ = try iconr(["render", flag, "--cache-dir", cache, "-o", "a.png"])
        let entry = cache + "/entries-v1/" + entries()[0]
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: entry))
        #expect(try iconr(["render", flag, "--cache-dir", cache, "-o", "b.png"]).status == 0)
        #expect(
            try PNGDecoder.decode([UInt8](Data(contentsOf: directory.appendingPathComponent("b.png")))).size.width == 24
        )
        #expect(try PNGDecoder.decode([UInt8](Data(contentsOf: URL(fileURLWithPath: entry)))).size.width == 24)
    }

    @Test func noCacheNeitherReadsNorWrites() throws {
        #expect(try iconr(["render", flag, "--no-cache", "--cache-dir", cache, "-o", "a.png"]).status == 0)
        #expect(entries().isEmpty)
    }

    @Test func statsAndClear() throws {
        for color in ["red", "green", "blue"] {
            _ = try iconr(["render", flag, "-p", "flag_color=\(color)", "--cache-dir", cache, "-o", "\(color).png"])
        }
        let stats = try iconr(["cache", "stats", "--cache-dir", cache])
        #expect(stats.status == 0)
        #expect(stats.stdout.hasPrefix("directory: \(cache)\nentries: 3\nbytes: "))
        let clear = try iconr(["cache", "clear", "--cache-dir", cache])
        #expect(clear.status == 0 && clear.stdout.hasPrefix("removed 3 entries ("))
        #expect(entries().isEmpty)
        #expect(try iconr(["cache", "purge"]).status == 64)
    }

    /// A cache that was never made is empty, and `stats` and `clear` do not make it.
    @Test func statsAndClearOfNoCacheMakeNone() throws {
        let missing = cache + "-never-made"
        let stats = try iconr(["cache", "stats", "--cache-dir", missing])
        #expect(stats.status == 0 && stats.stdout == "directory: \(missing)\nentries: 0\nbytes: 0\n")
        let clear = try iconr(["cache", "clear", "--cache-dir", missing])
        #expect(clear.status == 0 && clear.stdout == "removed 0 entries (0 bytes) from \(missing)\n")
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    @Test func theDefaultDirectoryFollowsXDG() throws {
        _ = try iconr(["render", flag, "-p", "flag_color=teal", "-o", "a.png"])
        let stats = try iconr(["cache", "stats"])
        #expect(stats.stdout.hasPrefix("directory: \(TestSupport.testCacheHome)/iconr\n"))
    }

    @Test func twoProcessesShareOneDirectory() throws {
        // Two concurrent runs of 20 variants each (10 shared), into one cache directory.
        let colors = (0..<30).map { String(format: "#%02x%02x80", $0 * 8, 255 - $0 * 8) }
        let script = { (range: Range<Int>, tag: String) -> String in
            range.map {
                "\"\(TestSupport.iconrExecutable)\" render \"\(flag)\" -p flag_color=\"\(colors[$0])\" -s 2 --cache-dir \"\(cache)\" -o \(tag)-\($0).png >/dev/null || exit 1"
            }
            .joined(separator: "\n")
        }
        let first = try RunningProgram("/bin/sh", ["-c", script(0..<20, "a")], directory: directory)
        let second = try RunningProgram("/bin/sh", ["-c", script(10..<30, "b")], directory: directory)
        #expect(first.wait() == 0 && second.wait() == 0)
        #expect(entries().count == 30)
        for index in 10..<20 {
            let a = try Data(contentsOf: directory.appendingPathComponent("a-\(index).png"))
            let b = try Data(contentsOf: directory.appendingPathComponent("b-\(index).png"))
            #expect(a == b)
        }
        // Every entry is sound, and no temporary file was left behind.
        for entry in entries() {
            #expect(entry.hasSuffix(".png"))
            #expect(throws: Never.self) {
                try PNGDecoder.decode([UInt8](Data(contentsOf: URL(fileURLWithPath: cache + "/entries-v1/" + entry))))
            }
        }
    }
}
