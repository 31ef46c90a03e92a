import IconrCore
import IconrSystem

/// An option a command accepts: `--scale 2`, `--scale=2`, `-o out.png`, or a flag like `--json`.
struct OptionSpec: Sendable {
    var names: [String]
    /// The value's placeholder in help (`S`, `NAME=COLOR`); nil for a flag.
    var valueName: String?
    var help: String
    var isRepeatable = false
    /// Shown bare in the usage line (the command checks that it is given).
    var isRequired = false
    /// For an option with a value: the flag it means when given without one (at the end,
    /// before another option, or before an existing folder), as another tool spells it
    /// (spreet's bare `--sdf`, as in `--sdf icons out`).
    var bareMeans: String?
    /// The values the shell completions offer for it (`mapbox`, `maplibre`); a value that
    /// names a file (a `FILE`, `DIR`, `PATH` or `PREFIX`) is completed as one too.
    var values: [String] = []

    var primaryName: String { names[0] }
    /// Whether its value names a file or folder, by its placeholder.
    var valueIsFile: Bool {
        guard let valueName else { return false }
        return ["FILE", "DIR", "PATH", "PREFIX"].contains { valueName.containsUTF8($0) }
    }

    /// How the usage line shows it: `[--scale <S>]`, `[--param <NAME=COLOR>]...`, `-o <PREFIX>`.
    var usage: String {
        let name = names.first { $0.hasPrefix("--") } ?? primaryName
        let shown =
            (isRequired ? (names.first { !$0.hasPrefix("--") } ?? name) : name) + (valueName.map { " <\($0)>" } ?? "")
        return (isRequired ? shown : "[\(shown)]") + (isRepeatable ? "..." : "")
    }
}

/// A mistake in how a command was called: exit 64 with the usage line.
struct UsageError: Error {
    var message: String
}

/// The scanned command line: positional arguments, and option values by primary name.
struct ScannedArguments {
    var positionals: [String] = []
    var values: [String: [String]] = [:]

    func value(_ name: String) -> String? { values[name]?.last }
    func all(_ name: String) -> [String] { values[name] ?? [] }
    func has(_ name: String) -> Bool { values[name] != nil }

    /// The one positional argument a command takes (`<template.svg>`), or the mistake.
    func onePositional(_ name: String) throws(UsageError) -> String {
        guard positionals.count == 1 else {
            throw UsageError(
                message: positionals.isEmpty ? "missing \(name)" : "unexpected argument '\(positionals[1])'")
        }
        return positionals[0]
    }

    /// Parses an option's value through a failable initializer, or explains what was expected.
    func value<T>(_ name: String, as parse: (String) -> T?, expected: String) throws(UsageError) -> T? {
        guard let text = value(name) else { return nil }
        guard let parsed = parse(text) else {
            throw UsageError(message: "invalid value '\(text)' for \(name): expected \(expected)")
        }
        return parsed
    }
}

enum ArgumentScanner {
    /// Scans `arguments` against `options`. `--` ends options; `-` alone is a positional.
    static func scan(_ arguments: [String], options: [OptionSpec]) throws(UsageError) -> ScannedArguments {
        var scanned = ScannedArguments()
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                scanned.positionals += arguments[index...]
                break
            }
            guard argument.hasPrefix("-"), argument != "-" else {
                scanned.positionals.append(argument)
                continue
            }
            var name = argument
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            guard var option = options.first(where: { $0.names.contains(name) }) else {
                throw UsageError(
                    message: "unknown option '\(name)'" + didYouMean(name, among: options.flatMap(\.names)))
            }
            // spreet's `--sdf icons out`: a folder after it is a positional, not the option's value.
            if let flag = option.bareMeans, inlineValue == nil,
                index >= arguments.count || (arguments[index].hasPrefix("-") && arguments[index] != "-")
                    || FileReader.isFolder(arguments[index]),
                let meant = options.first(where: { $0.names.contains(flag) })
            {
                option = meant
            }
            let value: String
            if option.valueName == nil {
                guard inlineValue == nil else { throw UsageError(message: "\(name) takes no value") }
                value = ""
            } else if let inlineValue {
                value = inlineValue
            } else {
                guard index < arguments.count else { throw UsageError(message: "missing value for \(name)") }
                value = arguments[index]
                index += 1
            }
            if !option.isRepeatable, option.valueName != nil, scanned.has(option.primaryName) {
                throw UsageError(message: "\(name) given more than once")
            }
            scanned.values[option.primaryName, default: []].append(value)
        }
        return scanned
    }
}
