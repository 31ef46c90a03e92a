/// `iconr help --man` (a roff man page) and `iconr help --completions bash|zsh|fish`: made
/// from the same tables as `--help` (the commands, their arguments and options), so that
/// the page, the completions and the help cannot drift apart.
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
            "Exit codes: 0 success, 1 failure, 64 a usage mistake.",
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
        lines += [
            ".SH FILES",
            ".TP", "\\fI$XDG_CACHE_HOME/iconr\\fR, else \\fI~/.cache/iconr\\fR",
            "The disk cache the commands share (\\fB\\-\\-cache\\-dir\\fR).",
            ".TP", "\\fI/etc/default/iconr\\fR",
            "What the systemd unit \\fBiconr.service\\fR serves: \\fBICONR_LISTEN\\fR and \\fBICONR_ARGS\\fR.",
            ".SH SEE ALSO",
            "\\fBrsvg\\-convert\\fR(1); the documentation in \\fI/usr/share/doc/iconr\\fR.",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// The completion script for `shell` (`bash`, `zsh` or `fish`), or nil for another.
    static func completions(shell: String) -> String? {
        let commands = CLI.commands.map { $0.name }
        switch shell {
        case "bash":
            var lines = [
                "# bash completion for iconr (made by `iconr help --completions bash`)",
                "_iconr() {",
                "    local current=${COMP_WORDS[COMP_CWORD]} options=\"\"",
                "    if [ \"$COMP_CWORD\" -eq 1 ]; then",
                "        COMPREPLY=($(compgen -W \"" + commands.joined(separator: " ")
                    + " help --help --version\" -- \"$current\"))",
                "        return",
                "    fi",
                "    case ${COMP_WORDS[1]} in",
            ]
            for command in CLI.commands {
                lines.append(
                    "        " + command.name + ") options=\"" + command.options.flatMap(\.names).joined(separator: " ")
                        + "\" ;;")
            }
            lines += [
                "    esac",
                "    if [[ $current == -* ]]; then",
                "        COMPREPLY=($(compgen -W \"$options --help\" -- \"$current\"))",
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
                "    if [[ ${words[CURRENT]} == -* ]]; then",
                "        case ${words[2]} in",
            ]
            for command in CLI.commands {
                lines.append(
                    "        " + command.name + ") compadd -- "
                        + command.options.flatMap(\.names).joined(separator: " ")
                        + " --help ;;")
            }
            lines += ["        esac", "    else", "        _files", "    fi", "}", "_iconr \"$@\""]
            return lines.joined(separator: "\n") + "\n"
        case "fish":
            var lines = [
                "# fish completion for iconr (made by `iconr help --completions fish`)",
                "complete -c iconr -f -n __fish_use_subcommand -a help -d 'Show help for a command'",
            ]
            for command in CLI.commands {
                lines.append(
                    "complete -c iconr -f -n __fish_use_subcommand -a \(command.name) -d \(fishQuoted(command.abstract))"
                )
                for option in command.options {
                    var line = "complete -c iconr -n '__fish_seen_subcommand_from \(command.name)'"
                    for name in option.names {
                        line += name.hasPrefix("--") ? " -l \(name.dropFirst(2))" : " -s \(name.dropFirst())"
                    }
                    if option.valueName != nil { line += " -r" }
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
