/// A subcommand of `iconr`: its help text, its options, and what it does.
protocol Command: Sendable {
    static var name: String { get }
    static var abstract: String { get }
    /// Usage after `iconr <name> `, e.g. `<template.svg> [--scale S]`.
    static var usage: String { get }
    static var arguments: [(name: String, help: String)] { get }
    static var options: [OptionSpec] { get }

    /// Runs with scanned arguments; returns the exit code.
    static func run(_ arguments: ScannedArguments, console: Console) throws -> Int32
}

extension Command {
    static var helpOption: OptionSpec { OptionSpec(names: ["--help", "-h"], help: "Show help information.") }

    static var helpText: String {
        var text = "OVERVIEW: \(abstract)\n\nUSAGE: iconr \(name) \(usage)\n"
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
        let padded = label.count < 24 ? label + String(repeating: " ", count: 24 - label.count) : label + "\n" + String(repeating: " ", count: 26)
        return "  \(padded)\(help)\n"
    }
}
