import Iconr
import IconrCore
import Testing

@testable import IconrCLI

/// Each command's options, parsed in process from a command line into its `Options` without
/// running anything: what every flag turns into, and the mistakes found before any work.
@Suite struct CommandOptionsTests {
    @Test func renderOptions() throws {
        let options = try RenderCommand.parse([
            "icons/flag.svg", "-p", "flag_color=#800080", "--scale=2x", "--no-cache",
        ])
        #expect(options.templates == ["icons/flag.svg"] && !options.isBatch)
        #expect(options.params == (try IconParameters(parsing: ["flag_color": "#800080"])))
        #expect(options.scales == [2])
        #expect(options.singleOutput == "flag@2x.png")
        #expect(options.cache.isDisabled)
        #expect(options.render.limits == RenderLimits.default)
        let sized = try RenderCommand.parse(["a.svg", "--max-size", "10x20", "--timeout", "1.5", "-o", "-"])
        #expect(sized.render.limits.maxSize == PixelSize(width: 10, height: 20))
        #expect(sized.render.limits.timeout == 1.5)
        #expect(sized.output == "-")
        // Several templates or scales, or a list, are a batch: -o is its folder.
        let batch = try RenderCommand.parse(["a.svg", "b.svg", "-s", "1,2", "-s", "3", "-s", "2", "-o", "out"])
        #expect(batch.isBatch && batch.scales == [1, 2, 3])
        #expect(
            batch.jobs.map(\.output) == [
                "out/a.png", "out/a@2x.png", "out/a@3x.png", "out/b.png", "out/b@2x.png", "out/b@3x.png",
            ])
        #expect(try RenderCommand.parse(["--list", "jobs.txt"]).isBatch)
        #expect(
            RenderJob.splitWords(#"a.svg -p "x=rgb(1, 2, 3)" -o it\'s.png 'b c'"#) == [
                "a.svg", "-p", "x=rgb(1, 2, 3)", "-o", "it's.png", "b c",
            ])
        #expect(RenderJob.splitWords("a.svg 'open") == nil)
    }

    @Test func spriteOptions() throws {
        let options = try SpriteCommand.parse([
            "icons", "more", "-o", "out/", "--ratio", "1,2", "-r", "3", "--sdf", "pin-*", "--padding", "0",
            "--style", "style.json", "--config", "lightPreset=\"night\"", "--emit-style", "out/style.json",
            "--minify", "--hash-names", "--json", "--optimize",
        ])
        #expect(options.folders == ["icons", "more"])
        #expect(options.output == "out/")
        #expect(options.sprite.ratios == [1, 2, 3])
        #expect(options.sprite.sdf == ["pin-*"])
        #expect(options.sprite.padding == 0)
        #expect(options.style == "style.json" && options.emitStyle == "out/style.json")
        #expect(options.config == ["lightPreset": .string("night")])
        #expect(options.minify && options.hashNames && options.json && !options.check && options.sprite.optimize)
        #expect(try SpriteCommand.parse(["icons", "-o", "x", "--retina"]).sprite.ratios == [2])
    }

    /// spreet's spellings work as spreet users write them: `--spacing`, `-m` and
    /// `--minify-index-file`, a bare `--sdf` (every id; it used to swallow the next flag), a
    /// positional output, and `--retina -o sprite@2x` (no doubled `@2x`).
    @Test func spreetHabitsWork() throws {
        let spreet = try SpriteCommand.parse(["--spacing", "3", "-m", "--sdf", "--retina", "/", "out/sprite"])
        #expect(spreet.folders == ["/"] && spreet.output == "out/sprite")
        #expect(spreet.sprite.padding == 3 && spreet.minify && spreet.sprite.sdf == ["*"])
        #expect(try SpriteCommand.parse(["/", "-o", "x", "--minify-index-file", "--sdf"]).sprite.sdf == ["*"])
        #expect(try SpriteCommand.parse(["/", "-o", "x", "--sdf", "pin"]).sprite.sdf == ["pin"])
        // spreet's `--sdf icons out`: before an existing folder, a bare --sdf (it took the
        // folder as its value and said "missing -o").
        let sdf = try SpriteCommand.parse(["--sdf", "/tmp", "out/sprite"])
        #expect(sdf.sprite.sdf == ["*"] && sdf.folders == ["/tmp"] && sdf.output == "out/sprite")
        let retina = try SpriteCommand.parse(["/", "--retina", "-o", "build/sprite@2x"])
        #expect(retina.output == "build/sprite" && retina.sprite.ratios == [2])
        // Two folders that exist stay folders.
        #expect(try SpriteCommand.parse(["/", "/tmp", "-o", "x"]).folders == ["/", "/tmp"])
    }

    @Test func serveOptions() throws {
        let options = try ServeCommand.parse([
            "--icons", "icons=flags", "--icons", "more/", "--style", "maps/city.json", "--listen", "0.0.0.0:0",
            "--ratio", "1,3", "--threads", "4", "--max-age", "0", "--cors", "*",
        ])
        #expect(options.server.iconSets.map(\.name) == ["flags", "more"])
        #expect(options.server.iconSets.map(\.directory) == ["icons", "more"])
        #expect(options.server.styles.map(\.name) == ["city"])
        #expect(options.server.spriteRatios == [1, 3])
        #expect(options.server.maxAge == 0 && options.server.corsOrigin == "*")
        #expect(options.http.threads == 4 && options.address == "0.0.0.0:0")
    }

    @Test func cacheAndExpressionOptions() throws {
        #expect(try CacheCommand.parse(["clear", "--cache-dir", "/tmp/c"]).action == .clear)
        #expect(try CacheCommand.parse(["stats"]).cache.directory == nil)
        let expression = try ExpressionCommand.parse([#"["get", "x"]"#, "--type", "number", "--input", "[{}, {}]"])
        #expect(expression.specification.type == "number")
        #expect(expression.inputs.count == 1)
    }

    /// Mistakes are found while parsing, each with the message the usage line follows.
    @Test(arguments: [
        (["render"], "missing <template.svg>"),
        (["render", "a.svg", "b.svg", "-o", "-"], "-o - writes one PNG: give one template at one scale, or -o DIR"),
        (
            ["render", "a/flag.svg", "b/flag.svg"],
            "a/flag.svg and b/flag.svg would both write flag.png: name their outputs in a --list (-o on each line)"
        ),
        (["render", "a.svg", "-p", "red"], "invalid value 'red' for --param: expected NAME=COLOR"),
        (
            ["render", "a.svg", "--scale", "0x10"],
            "invalid value '0x10' for --scale: expected a number > 0 and at most 1000000, such as 2 or 2x"
        ),
        (["sprite", "icons"], "missing -o <out/prefix>"),
        (["sprite", "icons", "-o", "x", "--retina", "-r", "1"], "--retina and --ratio cannot go together"),
        (["sprite", "icons", "-o", "x", "--emit-style", "s.json"], "--emit-style needs --style"),
        (
            ["sprite", "icons", "-o", "build/sprite@2x"],
            "-o build/sprite@2x ends in @2x, which iconr adds to each ratio's files itself: give -o build/sprite"
        ),
        (["sprite", "icons", "-o", "x", "--retnia"], "unknown option '--retnia' (did you mean '--retina'?)"),
        (["sprite", "icons", "-o", "x", "--zz"], "unknown option '--zz'"),
        (["serve"], "missing --icons DIR"),
        (
            ["serve", "--icons", "a", "--icons", "b/a"],
            "--icons: the name 'a' is given twice (name them: --icons DIR=NAME)"
        ),
        (["cache", "purge"], "unknown action 'purge': expected stats or clear"),
        (
            ["expression", "[1", "--type", "number"],
            "the expression is not JSON: invalid JSON at line 1, column 3: expected ',' or ']' in an array"
        ),
    ])
    func mistakes(_ arguments: [String], message: String) {
        let command = CLI.commands.first { $0.name == arguments[0] }
        #expect(parseFailure(command, Array(arguments.dropFirst())) == message)
    }

    private func parseFailure(_ command: (any Command.Type)?, _ arguments: [String]) -> String? {
        do {
            _ = try command?.parse(arguments)
            return nil
        } catch {
            return error.message
        }
    }

    /// The top-level help lists every command with its own abstract (it cannot drift).
    @Test func rootHelpListsEachCommandsAbstract() {
        for command in CLI.commands {
            #expect(CLI.rootHelp.contains("  \(command.name)"), "\(command.name)")
            #expect(CLI.rootHelp.contains(command.abstract), "\(command.name)")
        }
    }
}
