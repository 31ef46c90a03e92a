/// What a command was asked to do, parsed from its scanned arguments in one place: every usage
/// mistake is found here, before any work, and tests parse command lines without running them.
protocol CommandOptions {
    init(_ arguments: ScannedArguments) throws(UsageError)
}

/// A subcommand of `iconr`: its help text, its options, and what it does.
protocol Command: Sendable {
    associatedtype Options: CommandOptions

    static var name: String { get }
    static var abstract: String { get }
    /// More than the abstract, shown under it by `--help` (empty for none).
    static var discussion: String { get }
    /// The positional arguments in the usage line, e.g. `<template.svg>`; the options
    /// follow, from `options` (see `usageLines`).
    static var positionalUsage: String { get }
    static var arguments: [(name: String, help: String)] { get }
    static var options: [OptionSpec] { get }
    /// The words its first positional argument is one of (`stats`, `clear`), for the shell
    /// completions; empty for a file or free text.
    static var positionalWords: [String] { get }

    /// Does the work; returns the exit code.
    static func run(_ options: Options, console: Console) throws -> Int32
}

extension Command {
    static var discussion: String { "" }
    static var positionalWords: [String] { [] }

    /// `label` (`USAGE: `) and `iconr <name> <usage>`, folded at 100 columns, later lines
    /// indented under `iconr`. Made from the option table, so that it cannot drift:
    /// `<template.svg> [--param <NAME=COLOR>]... [--scale <S>] ...`, required options bare.
    static func usageLines(_ label: String) -> String {
        let lead = label + "iconr \(name) "
        let indent = String(repeating: " ", count: label.count + 6 + name.count + 1)
        var lines: [String] = []
        var line = lead
        for word in (positionalUsage.isEmpty ? [] : [positionalUsage]) + options.map(\.usage) {
            if line.count + word.count > 100 && line.count > lead.count {
                lines.append(String(line.dropLast()))
                line = indent
            }
            line += word + " "
        }
        lines.append(String(line.dropLast()))
        return lines.joined(separator: "\n")
    }

    /// Parses `arguments` (the command line after the command's name) and runs the command.
    static func run(arguments: [String], console: Console) throws -> Int32 {
        try run(parse(arguments), console: console)
    }

    /// The options `arguments` give, or the usage mistake in them.
    static func parse(_ arguments: [String]) throws(UsageError) -> Options {
        try Options(ArgumentScanner.scan(arguments, options: options + [helpOption]))
    }

    static var helpOption: OptionSpec { OptionSpec(names: ["--help", "-h"], help: "Show help information.") }

    static var helpText: String {
        var text = "OVERVIEW: \(abstract)\n\n"
        if !discussion.isEmpty { text += discussion + "\n\n" }
        text += usageLines("USAGE: ") + "\n"
        if !arguments.isEmpty {
            text += "\nARGUMENTS:\n"
            for argument in arguments { text += helpLine(argument.name, argument.help) }
        }
        text += "\nOPTIONS:\n"
        for option in options + [helpOption] {
            let shortFirst = option.names.sorted { ($0.hasPrefix("--") ? 1 : 0) < ($1.hasPrefix("--") ? 1 : 0) }
            let label = shortFirst.joined(separator: ", ") + (option.valueName.map { " <\($0)>" } ?? "")
            text += helpLine(label, option.help)
        }
        return text
    }

    private static func helpLine(_ label: String, _ help: String) -> String {
        let padded =
            label.count < 24
            ? label + String(repeating: " ", count: 24 - label.count) : label + "\n" + String(repeating: " ", count: 26)
        return "  \(padded)\(help)\n"
    }
}
