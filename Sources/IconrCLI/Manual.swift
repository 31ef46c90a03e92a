import IconrServer

/// `iconr help --man` (a roff man page) and `iconr help --completions bash|zsh|fish`: made
/// from the same tables as `--help` (the commands, their arguments and options), so that
/// the page, the completions and the help cannot drift apart; its HTTP ROUTES from
/// `ServedRoutes`, as the server's own index.
enum Manual {
    /// The man page of `iconr` and every command, in roff (`man -l` reads it).
    static func page(version: String) -> String {
        func escaped(_ text: String) -> String {
            text.replacingBackslashes.split(separator: "\n", omittingEmptySubsequences: false).map { line in
                line.hasPrefix(".") || line.hasPrefix("'") ? "\\&" + line : String(line)
            }.joined(separator: "\n")
        }
        var lines = [
            ".TH ICONR 1 \"\" \"iconr \(version)\" \"User Commands\"",
            ".SH NAME",
            "iconr \\- render parameterized SVG icons (Mapbox vector icons) to PNG, sprite sheets and styles",
            ".SH SYNOPSIS",
        ]
        for command in CLI.commands {
            lines += [".PP", ".nf", escaped(command.usageLines("")), ".fi"]
        }
        lines += [
            ".SH DESCRIPTION",
            "iconr applies a template's color parameters the way Mapbox does, draws icons with librsvg and cairo,",
            "builds MapLibre/Mapbox sprite sheets with every variant a style needs, rewrites such styles for",
            "MapLibre, and serves icons, sprites and styles over HTTP.",
            ".SH COMMANDS",
        ]
        for command in CLI.commands {
            lines += [".SS \(escaped(command.name))", escaped(command.abstract)]
            if !command.discussion.isEmpty { lines += [".PP", escaped(command.discussion)] }
            for argument in command.arguments {
                lines += [".TP", "\\fB\(escaped(argument.name))\\fR", escaped(argument.help)]
            }
            for option in command.options {
                // `\-`: a minus that man prints as one, so that the option can be copied.
                let names = option.names.map {
                    "\\fB"
                        + escaped($0).split(separator: "-", omittingEmptySubsequences: false).joined(separator: "\\-")
                        + "\\fR"
                }.joined(separator: ", ")
                lines += [
                    ".TP", names + (option.valueName.map { " \\fI\(escaped($0))\\fR" } ?? ""), escaped(option.help),
                ]
            }
        }
        lines.append(".SH HTTP ROUTES")
        lines.append(
            escaped(
                "iconr serve answers GET and HEAD (405 for other methods, 414 for a URL over 8192 bytes or 64 "
                    + "parameters, 431 for headers over 16 KB), errors as one line of JSON, {\"error\": \"...\"}."))
        for route in ServedRoutes.all {
            lines += [".TP", "\\fB\(escaped(route.path))\\fR", escaped(route.summary), ".br", escaped(route.statuses)]
        }
        lines += [".SH EXAMPLES"]
        for (what, command) in examples {
            // `\-`: minus signs, so that the commands can be copied.
            let text = escaped(command).split(separator: "-", omittingEmptySubsequences: false).joined(separator: "\\-")
            lines += [".PP", escaped(what), ".PP", ".nf", ".RS 4", text, ".RE", ".fi"]
        }
        lines += [
            ".SH EXIT STATUS",
            ".TP", "0", "Success (serve: stopped by SIGTERM or SIGINT after its requests in flight).",
            ".TP", "1",
            "A failure, named on an error: line (a file, a render, a build); check: something would be lost; "
                + "sprite \\-\\-check: an output would change.",
            ".TP", "64", "A usage mistake: an unknown option, a missing or invalid value (the usage line follows).",
            ".SH ENVIRONMENT",
            ".TP", "\\fBXDG_CACHE_HOME\\fR, \\fBHOME\\fR",
            "Where the disk cache is by default: \\fI$XDG_CACHE_HOME/iconr\\fR, else \\fI$HOME/.cache/iconr\\fR.",
            ".TP", "\\fBJOURNAL_STREAM\\fR",
            "Set by systemd: serve's log lines then carry no timestamp of their own (the journal adds one).",
            ".TP", "\\fBLD_LIBRARY_PATH\\fR",
            "Folders searched first for librsvg and cairo, which iconr opens when it first draws.",
            ".SH FILES",
            ".TP", "\\fI$XDG_CACHE_HOME/iconr\\fR, else \\fI~/.cache/iconr\\fR",
            "The disk cache the commands share (\\fB\\-\\-cache\\-dir\\fR; iconr cache stats|clear).",
            ".TP", "\\fI/etc/default/iconr\\fR (\\fIPREFIX/etc/default/iconr\\fR for make install outside /usr)",
            "What the systemd unit \\fBiconr.service\\fR serves: \\fBICONR_LISTEN\\fR and \\fBICONR_ARGS\\fR (shell syntax).",
            ".TP", "\\fI/usr/lib/systemd/system/iconr.service\\fR (\\fIPREFIX/lib/systemd/system\\fR for make install)",
            "The unit: systemctl enable \\-\\-now iconr; systemctl reload iconr sends SIGHUP.",
            ".TP", "\\fI/var/cache/iconr\\fR, \\fI/var/log/iconr\\fR",
            "The service's disk cache, and its request log when written to a file (rotated by "
                + "\\fI/etc/logrotate.d/iconr\\fR).",
            ".TP", "\\fI/usr/share/iconr/icons\\fR",
            "The bundled icons (flag, marker, badge, label).",
            ".SH SEE ALSO",
            "\\fBrsvg\\-convert\\fR(1), \\fBsystemd.service\\fR(5), \\fBlogrotate\\fR(8); "
                + "the README and docs in \\fI/usr/share/doc/iconr\\fR.",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// The EXAMPLES section: what each does, and the command.
    static let examples: [(String, String)] = [
        (
            "A flag in purple at 2x, then every icon of a folder at 1x and 2x into out/:",
            "iconr render icons/flag.svg --param flag_color=#800080 --scale 2\niconr render icons/*.svg -s 1,2 -o out"
        ),
        (
            "A sprite of a folder with every variant a style shows, and the style's copy for MapLibre:",
            "iconr sprite icons -o out/sprite --ratio 1,2 --style style.json --emit-style out/style.json"
        ),
        (
            "What Mapbox or MapLibre would drop, and the icons a style lacks:",
            "iconr check icons --style style.json\niconr style check style.json --icons icons --strict"
        ),
        (
            "Icons, sprites and a style over HTTP, and one icon from it:",
            "iconr serve --icons icons --style style.json --listen 127.0.0.1:8080\n"
                + "curl 'http://127.0.0.1:8080/icons/flag@2x.png?flag_color=%23800080' -o flag.png"
        ),
        (
            "As a systemd service (its settings in /etc/default/iconr):",
            "sudo apt install ./iconr_*.deb\nsudoedit /etc/default/iconr\nsudo systemctl enable --now iconr\n"
                + "sudo systemctl reload iconr"
        ),
    ]

    /// The completion script for `shell` (`bash`, `zsh` or `fish`), or nil for another: the
    /// commands, each command's options, the values of those that take a known one (`check
    /// --for mapbox|maplibre`, `--theme grayscale` or a file, `--ratio 1,2`), the words of a
    /// first argument (`cache stats|clear`, `style check`), and file names elsewhere.
    static func completions(shell: String) -> String? {
        let commands = CLI.commands.map { $0.name }
        // What `help` takes, and the shells `help --completions` knows.
        let helpWords = commands + ["--man", "--completions"]
        let shells = ["bash", "zsh", "fish"]
        // Each option with known values, by command: ("check", "--for", values, files too).
        var valued: [(command: String, names: [String], values: [String], files: Bool)] = []
        for command in CLI.commands {
            for option in command.options where !option.values.isEmpty {
                valued.append((command.name, option.names, option.values, option.valueIsFile))
            }
        }
        let words =
            CLI.commands.filter { !$0.positionalWords.isEmpty }.map { ($0.name, $0.positionalWords) }
            + [("help", helpWords)]
        switch shell {
        case "bash":
            var lines = [
                "# bash completion for iconr (made by `iconr help --completions bash`)",
                "_iconr() {",
                "    local current=${COMP_WORDS[COMP_CWORD]} previous=${COMP_WORDS[COMP_CWORD-1]} options=\"\" words=\"\"",
                "    if [ \"$COMP_CWORD\" -eq 1 ]; then",
                "        COMPREPLY=($(compgen -W \"" + commands.joined(separator: " ")
                    + " help --help --version\" -- \"$current\"))",
                "        return",
                "    fi",
                "    case \"${COMP_WORDS[1]} $previous\" in",
                "        \"help --completions\") COMPREPLY=($(compgen -W \"\(shells.joined(separator: " "))\" -- \"$current\")); return ;;",
            ]
            for option in valued {
                let patterns = option.names.map { "\"\(option.command) \($0)\"" }.joined(separator: "|")
                let files = option.files ? " $(compgen -f -- \"$current\")" : ""
                lines.append(
                    "        \(patterns)) COMPREPLY=($(compgen -W \"\(option.values.joined(separator: " "))\" -- \"$current\")\(files)); return ;;"
                )
            }
            lines.append("    esac")
            lines.append("    case ${COMP_WORDS[1]} in")
            for command in CLI.commands {
                lines.append(
                    "        " + command.name + ") options=\"" + command.options.flatMap(\.names).joined(separator: " ")
                        + "\" ;;")
            }
            lines.append("    esac")
            lines.append("    case ${COMP_WORDS[1]} in")
            for (command, list) in words {
                lines.append("        \(command)) words=\"\(list.joined(separator: " "))\" ;;")
            }
            lines += [
                "    esac",
                "    if [[ $current == -* ]]; then",
                "        COMPREPLY=($(compgen -W \"$options --help\" -- \"$current\"))",
                "    elif [ -n \"$words\" ] && [ \"$COMP_CWORD\" -eq 2 ]; then",
                "        COMPREPLY=($(compgen -W \"$words\" -- \"$current\"))",
                "    else",
                "        COMPREPLY=($(compgen -f -- \"$current\"))",
                "    fi",
                "}",
                "complete -o filenames -F _iconr iconr",
            ]
            return lines.joined(separator: "\n") + "\n"
        case "zsh":
            var lines = [
                "#compdef iconr",
                "# zsh completion for iconr (made by `iconr help --completions zsh`)",
                "_iconr() {",
                "    if (( CURRENT == 2 )); then",
                "        compadd -- " + commands.joined(separator: " ") + " help --help --version",
                "        return",
                "    fi",
                "    case \"${words[2]} ${words[CURRENT-1]}\" in",
                "        \"help --completions\") compadd -- \(shells.joined(separator: " ")); return ;;",
            ]
            for option in valued {
                let patterns = option.names.map { "\"\(option.command) \($0)\"" }.joined(separator: "|")
                lines.append(
                    "        \(patterns)) compadd -- \(option.values.joined(separator: " "))\(option.files ? "; _files" : ""); return ;;"
                )
            }
            lines += ["    esac", "    if [[ ${words[CURRENT]} == -* ]]; then", "        case ${words[2]} in"]
            for command in CLI.commands {
                lines.append(
                    "        " + command.name + ") compadd -- "
                        + command.options.flatMap(\.names).joined(separator: " ")
                        + " --help ;;")
            }
            lines += [
                "        esac", "        return", "    fi", "    if (( CURRENT == 3 )); then",
                "        case ${words[2]} in",
            ]
            for (command, list) in words {
                lines.append("        \(command)) compadd -- \(list.joined(separator: " ")); return ;;")
            }
            lines += ["        esac", "    fi", "    _files", "}", "_iconr \"$@\""]
            return lines.joined(separator: "\n") + "\n"
        case "fish":
            var lines = [
                "# fish completion for iconr (made by `iconr help --completions fish`)",
                "complete -c iconr -f -n __fish_use_subcommand -a help -d 'Show help for a command'",
                "complete -c iconr -f -n '__fish_seen_subcommand_from help' -a '\(helpWords.joined(separator: " "))'",
            ]
            for command in CLI.commands {
                lines.append(
                    "complete -c iconr -f -n __fish_use_subcommand -a \(command.name) -d \(fishQuoted(command.abstract))"
                )
                if !command.positionalWords.isEmpty {
                    lines.append(
                        "complete -c iconr -f -n '__fish_seen_subcommand_from \(command.name)' -a '"
                            + command.positionalWords.joined(separator: " ") + "'")
                }
                for option in command.options {
                    var line = "complete -c iconr -n '__fish_seen_subcommand_from \(command.name)'"
                    for name in option.names {
                        line += name.hasPrefix("--") ? " -l \(name.dropFirst(2))" : " -s \(name.dropFirst())"
                    }
                    if option.valueName != nil { line += " -r" }
                    if !option.values.isEmpty {
                        line += (option.valueIsFile ? " -F" : " -f") + " -a '\(option.values.joined(separator: " "))'"
                    }
                    lines.append(line + " -d \(fishQuoted(option.help))")
                }
            }
            return lines.joined(separator: "\n") + "\n"
        default:
            return nil
        }
    }

    /// `text` in single quotes as fish reads them (`\'` and `\\` escaped), its first line.
    private static func fishQuoted(_ text: String) -> String {
        let line = text.split(separator: "\n").first.map(String.init) ?? ""
        return "'"
            + line.replacingBackslashes.split(separator: "'", omittingEmptySubsequences: false).joined(
                separator: "\\'") + "'"
    }
}

extension String {
    /// Each `\` doubled (for roff and fish).
    fileprivate var replacingBackslashes: String {
        split(separator: "\\", omittingEmptySubsequences: false).joined(separator: "\\\\")
    }
}
