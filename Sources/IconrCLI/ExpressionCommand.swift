import Iconr
import IconrCore

/// `iconr expression '<json>' [--type T] [--spec JSON] [--input JSON]... [--global-state JSON]`:
/// compiles a style expression and evaluates it, printing the record the style
/// specification's own expression tests keep.
enum ExpressionCommand: Command {
    static let name = "expression"
    static let abstract = "Compile a style expression and evaluate it for inputs (for style authors)."
    static let positionalUsage = "'<expression JSON>'"
    static let arguments: [(name: String, help: String)] = [
        ("<expression JSON>", "The expression, e.g. '[\"interpolate\", [\"linear\"], [\"zoom\"], 0, 1, 10, 2]'.")
    ]
    static let options: [OptionSpec] = [
        OptionSpec(
            names: ["--type"], valueName: "T",
            help: "The property's type: number, string, boolean, color, resolvedImage, formatted, array, ..."),
        OptionSpec(
            names: ["--spec"], valueName: "JSON",
            help: "The property specification, as the suite's propertySpec (default: data-driven, interpolatable)."),
        OptionSpec(
            names: ["--input"], valueName: "JSON",
            help: "A [globals, feature] pair, e.g. '[{\"zoom\": 5}, {\"properties\": {\"x\": 1}}]'. Repeatable.",
            isRepeatable: true),
        OptionSpec(names: ["--global-state"], valueName: "JSON", help: "Values for global-state, as an object."),
    ]

    static func run(_ arguments: ScannedArguments, console: Console) throws -> Int32 {
        guard arguments.positionals.count == 1 else {
            throw UsageError(
                message: arguments.positionals.isEmpty
                    ? "missing <expression JSON>"
                    : "unexpected argument '\(arguments.positionals[1])'")
        }
        let expression = try json(arguments.positionals[0], what: "the expression")
        var specification = PropertySpecification(
            json: try arguments.value("--spec").map { try json($0, what: "--spec") })
        if let type = arguments.value("--type") { specification.type = type }
        let inputs = try (arguments.values["--input"] ?? []).map { try json($0, what: "--input") }
        for input in inputs where input.arrayValue?.count != 2 {
            throw UsageError(message: "--input must be a [globals, feature] pair, found \(input.serialized)")
        }
        var globalState: [String: StyleValue] = [:]
        if let text = arguments.value("--global-state") {
            guard let object = try json(text, what: "--global-state").objectValue else {
                throw UsageError(message: "--global-state must be a JSON object")
            }
            globalState = object.mapValues(StyleValue.init)
        }
        let report = ExpressionReport.make(
            expression: expression, specification: specification, inputs: inputs,
            globalState: globalState)
        console.out(report.serialized)
        return report["compiled"]?["result"] == .string("success") ? 0 : 1
    }

    private static func json(_ text: String, what: String) throws(UsageError) -> JSONValue {
        do {
            return try JSONValue.parse(Array(text.utf8))
        } catch {
            throw UsageError(message: "\(what) is not JSON: \(error)")
        }
    }
}
