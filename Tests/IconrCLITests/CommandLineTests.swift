import Foundation
import IconrCore
import IconrServer
import IconrTestSupport
import Testing

/// Help, version, `inspect`, and the conventions every command shares.
struct CommandLineTests {
    private func iconr(_ arguments: String...) throws -> IconrRun {
        try TestSupport.iconr(arguments)
    }

    /// Parsing, help and usage mistakes: in process.
    private func inProcess(_ arguments: String...) -> (status: Int32, stdout: String, stderr: String) {
        InProcess.iconr(arguments)
    }

    @Test func versionAndHelp() throws {
        #expect(inProcess("--version") == (0, "\(IconrVersion.string)\n", ""))
        // One end to end: the binary prints the same.
        let version = try iconr("--version")
        #expect(version.status == 0 && version.stdout == "\(IconrVersion.string)\n" && version.stderr.isEmpty)
        let help = inProcess("--help")
        #expect(help.status == 0 && help.stdout.hasPrefix("OVERVIEW: ") && help.stdout.contains("COMMANDS:"))
        for command in ["render", "inspect"] {
            let commandHelp = inProcess(command, "--help")
            #expect(commandHelp.status == 0)
            for section in ["OVERVIEW:", "USAGE: iconr \(command) ", "ARGUMENTS:", "OPTIONS:"] {
                #expect(commandHelp.stdout.contains(section), "\(command) help lacks \(section)")
            }
        }
        #expect(inProcess("render", "-h").stdout.contains("-p, --param <NAME=COLOR>"))
    }

    /// Usage lines come from the option tables: none can lack an option (sprite's lacked
    /// --preview, --sprite-url, --timeout and --cache-dir when they were written by hand).
    @Test func usageLinesNameEveryOption() throws {
        let sprite = inProcess("sprite", "--help").stdout
        let usage = sprite.components(separatedBy: "\n\n")[1]
        #expect(usage.hasPrefix("USAGE: iconr sprite <icons-dir[=NAME]>... -o <PREFIX> [--ratio <R>]... [--retina]"))
        for option in [
            "--preview <FILE>", "--sprite-url <URL>", "--timeout <SECONDS>", "--cache-dir <DIR>", "[--no-cache]",
            "[--sdf <ID>]...",
        ] {
            #expect(usage.contains(option), "\(option) in \(usage)")
        }
        #expect(usage.split(separator: "\n").allSatisfy { $0.count <= 100 })
        let mistake = inProcess("serve", "--bogus")
        #expect(
            mistake.stderr.contains("Usage: iconr serve --icons <DIR[=NAME]>... [--style <FILE[=NAME]>]..."),
            "\(mistake.stderr)")
    }

    /// The man page and the completions are made from the tables `--help` is made from: every
    /// command and every option of each is in them (a new option cannot be left out).
    @Test func theManPageAndCompletionsNameEveryCommandAndOption() throws {
        let page = inProcess("help", "--man")
        #expect(page.status == 0 && page.stdout.hasPrefix(".TH ICONR 1"))
        let bash = inProcess("help", "--completions", "bash").stdout
        let fish = inProcess("help", "--completions", "fish").stdout
        let zsh = inProcess("help", "--completions", "zsh").stdout
        #expect(zsh.hasPrefix("#compdef iconr"))
        for command in ["render", "inspect", "sprite", "cache", "expression", "style", "serve"] {
            #expect(page.stdout.contains(".SS \(command)\n") && bash.contains("    \(command)) options="), "\(command)")
            #expect(fish.contains("-a \(command) -d '"), "\(command)")
        }
        for option in ["--exact-icon-sizes", "--follow-links", "--request-log", "--max-file-size", "--quiet"] {
            #expect(page.stdout.contains("\\fB" + option.replacingOccurrences(of: "-", with: "\\-")), "\(option)")
            #expect(
                bash.contains(option) && zsh.contains(option) && fish.contains("-l \(option.dropFirst(2))"), "\(option)"
            )
        }
        #expect(inProcess("help", "--completions", "tcsh").status == 64)
        // bash reads its script.
        let script = FileManager.default.temporaryDirectory.appendingPathComponent(
            "iconr-completion-\(UUID().uuidString)")
        try bash.write(to: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: script) }
        #expect(try TestSupport.run("/bin/bash", ["-n", script.path]).status == 0)
        // Values as well as options, in bash as a shell completes: check --for, a theme (a
        // built-in or a file), a ratio, cache's and style's words, help --completions.
        func bashCompletes(_ words: [String]) throws -> [String] {
            let line = words.map { "'\($0)'" }.joined(separator: " ")
            let run = try TestSupport.run(
                "/bin/bash",
                [
                    "-c",
                    "source '\(script.path)'; COMP_WORDS=(\(line)); COMP_CWORD=\(words.count - 1); _iconr; "
                        + "printf '%s\\n' \"${COMPREPLY[@]}\"",
                ], directory: TestSupport.repository)
            return String(decoding: run.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
        }
        #expect(try bashCompletes(["iconr", "check", "--for", ""]) == ["mapbox", "maplibre"])
        #expect(try bashCompletes(["iconr", "check", "--for", "mapl"]) == ["maplibre"])
        #expect(try bashCompletes(["iconr", "sprite", "--theme", "gr"]) == ["grayscale"])
        #expect(
            try bashCompletes(["iconr", "render", "--theme", "examples/themes/d"]) == ["examples/themes/dark.json"])
        #expect(try bashCompletes(["iconr", "serve", "--ratio", "1,"]) == ["1,2", "1,2,3"])
        #expect(try bashCompletes(["iconr", "cache", ""]) == ["stats", "clear"])
        #expect(try bashCompletes(["iconr", "style", "ch"]) == ["check"])
        #expect(try bashCompletes(["iconr", "help", "--completions", ""]) == ["bash", "zsh", "fish"])
        #expect(try bashCompletes(["iconr", "check", "--f"]).contains("--for"))
        #expect(try bashCompletes(["iconr", "sprite", "icon"]) == ["icons"], "a folder where no value is known")
        #expect(zsh.contains(#""check --for") compadd -- mapbox maplibre; return ;;"#), "\(zsh)")
        #expect(zsh.contains("cache) compadd -- stats clear; return ;;"))
        #expect(fish.contains("-l for -r -f -a 'mapbox maplibre'") && fish.contains("-a 'stats clear'"))
    }

    /// The man page has every route with its statuses (the server's own table), examples,
    /// exit statuses, the environment and the files, and roff reads it.
    @Test func theManPageHasRoutesExamplesAndFiles() throws {
        let page = inProcess("help", "--man").stdout
        for section in ["HTTP ROUTES", "EXAMPLES", "EXIT STATUS", "ENVIRONMENT", "FILES", "SEE ALSO"] {
            #expect(page.contains("\n.SH \(section)\n"), "\(section)")
        }
        #expect(ServedRoutes.all.count >= 8)
        for route in ServedRoutes.all {
            #expect(page.contains(route.path.replacingOccurrences(of: "\\", with: "\\\\")), "\(route.path)")
        }
        for text in [
            "404 no such icon", "503 the render queue is full", "XDG_CACHE_HOME", "/etc/default/iconr",
            "iconr sprite icons \\-o out/sprite", "systemctl enable \\-\\-now iconr", ".TP\n64\n",
        ] {
            #expect(page.contains(text), "\(text)")
        }
        if let man = TestSupport.which("man") {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("iconr-\(UUID().uuidString).1")
            try page.write(to: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: file) }
            let shown = try TestSupport.run("/usr/bin/env", ["MANWIDTH=100", man, "-l", file.path])
            let text = String(decoding: shown.stdout, as: UTF8.self)
            #expect(shown.status == 0 && text.contains("HTTP ROUTES") && text.contains("/iconr.js, /iconr.mjs"))
            #expect(text.contains("iconr render icons/flag.svg --param flag_color=#800080 --scale 2"), "\(text)")
        }
    }

    @Test func unknownCommandsAndNoCommandAreUsageErrors() throws {
        let unknown = inProcess("draw")
        #expect(unknown.status == 64 && unknown.stderr.hasPrefix("error: unknown command 'draw'\n"))
        let near = inProcess("sprit")
        #expect(near.status == 64 && near.stderr.hasPrefix("error: unknown command 'sprit' (did you mean 'sprite'?)\n"))
        let none = inProcess()
        #expect(none.status == 64 && none.stderr.hasPrefix("error: missing command\n"))
    }

    @Test func inspectPrintsMetadata() throws {
        let label = TestSupport.icons.appendingPathComponent("label.svg").path
        let text = try iconr("inspect", label)
        #expect(text.status == 0)
        #expect(
            text.stdout == """
                \(label)
                  size: 40 x 24
                  parameters:
                    background_color  color  default #ffffff
                    border_color      color  default #333333
                  stretch x: [8, 32]
                  stretch y: [8, 16]
                  content: [6, 5, 34, 19]

                """)
        let json = try iconr("inspect", label, "--json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["width"] as? Double == 40 && object["height"] as? Double == 24)
        #expect(
            (object["parameters"] as? [[String: String]])?.first == [
                "name": "background_color", "type": "color", "default": "#ffffff",
            ])
        #expect(object["stretchX"] as? [[Double]] == [[8, 32]])
        #expect(object["content"] as? [Double] == [6, 5, 34, 19])
    }

    @Test func inspectReportsSharedDefaults() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "iconr-shared-\(UUID().uuidString).svg")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(
            """
            <svg xmlns="http://www.w3.org/2000/svg" xmlns:m="https://www.mapbox.com" width="4" height="4">
              <m:metadata><m:parameters>
                <m:parameter m:name="a" m:type="color" m:value="#000"/>
                <m:parameter m:name="b" m:type="color" m:value="black"/>
              </m:parameters></m:metadata>
            </svg>
            """.utf8
        ).write(to: file)
        let result = try iconr("inspect", file.path)
        #expect(result.status == 0)
        #expect(
            result.stdout.contains(
                "  warning: \(file.path):4:5: parameters \"a\" and \"b\" share the default color #000000"))
    }
}
