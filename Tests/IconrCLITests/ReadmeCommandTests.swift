import Foundation
import IconrTestSupport
import Testing

/// The README's command-line examples run as written: each `$ iconr ...` line of its shell
/// blocks (not `serve`, which runs until stopped: ServeCommandTests), from a copy of the
/// checkout's layout (its `icons` and `examples`, `../shared` beside it), by bash, so that
/// globs expand as they do for a reader. Each exits 0 and prints what the README shows.
struct ReadmeCommandTests {
    /// The README's example commands with the lines it shows them print.
    static func examples() throws -> [(command: String, shown: [String])] {
        let readme = try String(
            contentsOf: TestSupport.repository.appendingPathComponent("README.md"), encoding: .utf8)
        var examples: [(command: String, shown: [String])] = []
        var inShell = false
        for line in readme.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("```") {
                inShell = line == "```sh"
                continue
            }
            guard inShell else { continue }
            if line.hasPrefix("$ ") {
                examples.append((String(line.dropFirst(2)), []))
            } else if !examples.isEmpty, !line.isEmpty {
                examples[examples.count - 1].shown.append(line)
            }
        }
        return examples.filter { $0.command.hasPrefix("iconr ") && !$0.command.hasPrefix("iconr serve") }
    }

    @Test func theCommandLineExamplesRunAsWritten() throws {
        let examples = try Self.examples()
        #expect(examples.count >= 5, "\(examples.map(\.command))")
        let scratch = try TemporaryFolder("iconr-readme")
        let checkout = scratch.url.appendingPathComponent("iconr")
        try FileManager.default.createDirectory(at: checkout, withIntermediateDirectories: true)
        for name in ["icons", "examples"] {
            try FileManager.default.createSymbolicLink(
                at: checkout.appendingPathComponent(name),
                withDestinationURL: TestSupport.repository.appendingPathComponent(name))
        }
        if TestSupport.corporaAvailable {
            try FileManager.default.createSymbolicLink(
                at: scratch.url.appendingPathComponent("shared"),
                withDestinationURL: TestSupport.corpora.deletingLastPathComponent())
        }
        var ran = 0
        for example in examples {
            // Without ../shared (a fresh clone), the examples on its icon sets are skipped.
            if example.command.contains("../shared"), !TestSupport.corporaAvailable { continue }
            let command = TestSupport.iconrExecutable + example.command.dropFirst("iconr".count)
            let run = try TestSupport.run(
                "/usr/bin/env", ["XDG_CACHE_HOME=" + scratch.path + "/cache", "bash", "-c", command],
                directory: checkout, timeout: 300)
            let stderr = String(decoding: run.stderr, as: UTF8.self)
            #expect(run.status == 0, "\(example.command): \(stderr)")
            if !example.shown.isEmpty {
                let printed = String(decoding: run.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
                #expect(printed == example.shown, "\(example.command) printed \(printed)")
            }
            ran += 1
        }
        #expect(ran >= (TestSupport.corporaAvailable ? 5 : 4), "\(ran) examples ran")
        // What they wrote: Maki at 1x and 2x, the list's renders, the variants, the style's copy.
        let out = checkout.appendingPathComponent("out")
        let written = Set(try FileManager.default.subpathsOfDirectory(atPath: out.path))
        for file in [
            "legend/flag-red.png", "legend/flag purple@2x.png", "sprite.json", "sprite@2x.png", "flags/style.json",
            "flags/sprite.json",
        ] {
            #expect(written.contains(file), "\(file) in \(written.filter { !$0.hasPrefix("icons/") }.sorted())")
        }
        if TestSupport.corporaAvailable {
            #expect(written.contains("icons/airport.png") && written.contains("icons/airport@2x.png"))
        }
        let index = try String(contentsOf: out.appendingPathComponent("sprite.json"), encoding: .utf8)
        #expect(index.contains("\"flag-selected\"") && index.contains("\"badge-dark\""), "\(index)")
    }
}
