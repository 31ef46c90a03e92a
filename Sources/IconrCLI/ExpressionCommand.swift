import Iconr
import IconrCore
import IconrStyle

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
            help:
                "A [globals, feature] pair, e.g. '[{\"zoom\": 5}, {\"properties\": {\"x\": 1}}]'. Repeatable "
                + "(default: one empty pair, [{}, {}]).",
            isRepeatable: true),
        OptionSpec(names: ["--global-state"], valueName: "JSON", help: "Values for global-state, as an object."),
    ]

    struct Options: CommandOptions {
        var expression: JSONValue
        var specification: PropertySpecification
        /// `[globals, feature]` pairs; one empty pair when none is given, so that
        /// `iconr expression '["+", 1, 2]'` prints its value.
        var inputs: [JSONValue]
        var globalState: [String: StyleValue] = [:]

        init(_ arguments: ScannedArguments) throws(UsageError) {
            expression = try json(arguments.onePositional("<expression JSON>"), what: "the expression")
            specification = PropertySpecification(
                json: try arguments.value("--spec").map { text throws(UsageError) in try json(text, what: "--spec") })
            if let type = arguments.value("--type") { specification.type = type }
            inputs = try arguments.all("--input").map { text throws(UsageError) in try json(text, what: "--input") }
            for input in inputs where input.arrayValue?.count != 2 {
                throw UsageError(message: "--input must be a [globals, feature] pair, found \(input.serialized)")
            }
            if inputs.isEmpty { inputs = [.array([.object([:]), .object([:])])] }
            if let text = arguments.value("--global-state") {
                guard let object = try json(text, what: "--global-state").objectValue else {
                    throw UsageError(message: "--global-state must be a JSON object")
                }
                globalState = object.mapValues(StyleValue.init)
            }
        }
    }

    static func run(_ options: Options, console: Console) throws -> Int32 {
        let report = ExpressionReport.make(
            expression: options.expression, specification: options.specification, inputs: options.inputs,
            globalState: options.globalState)
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
