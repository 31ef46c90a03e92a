import Glibc
import IconrCore

typealias CompoundEvaluator =
    @Sendable ([any ExpressionNode], EvaluationContext, String) throws(ExpressionEvaluationError) -> StyleValue

/// An operator with fixed signatures (`+`, `get`, `rgba`, ...): its arguments are parsed
/// against each overload in turn.
final class CompoundNode: ExpressionNode {
    let name: String
    let type: StyleType
    let arguments: [any ExpressionNode]
    let key: String
    private let evaluator: CompoundEvaluator

    init(
        name: String, type: StyleType, arguments: [any ExpressionNode], key: String,
        evaluator: @escaping CompoundEvaluator
    ) {
        self.name = name
        self.type = type
        self.arguments = arguments
        self.key = key
        self.evaluator = evaluator
    }

    func evaluate(_ context: EvaluationContext) throws(ExpressionEvaluationError) -> StyleValue {
        try evaluator(arguments, context, key)
    }

    var children: [any ExpressionNode] { arguments }
}

/// An overload's parameters: a fixed list, or any number of one type.
enum Signature: Sendable {
    case fixed([StyleType])
    case varargs(StyleType)

    var text: String {
        switch self {
        case .fixed(let types): "(" + types.map(\.description).joined(separator: ", ") + ")"
        case .varargs(let type): "(\(type)...)"
        }
    }
}

struct CompoundDefinition: Sendable {
    var type: StyleType
    var overloads: [(signature: Signature, evaluate: CompoundEvaluator)]
}

enum CompoundExpressions {
    /// Mapbox GL JS v3's operators that read the camera or the environment (`MapboxEnvironment`),
    /// which MapLibre has no expressions for.
    static let mapboxEnvironmentOperators = [
        "pitch", "distance-from-center", "worldview", "measure-light", "sky-radial-progress", "raster-value",
        "raster-particle-speed",
    ]

    /// Whether `name` is an operator the engine parses (a special form or a compound one).
    static func isOperator(_ name: String) -> Bool {
        SpecialForms.parsers[name] != nil || definitions[name] != nil
    }

    static let definitions: [String: CompoundDefinition] = {
        var table: [String: CompoundDefinition] = [:]
        func define(_ name: String, _ type: StyleType, _ signature: Signature, _ evaluate: @escaping CompoundEvaluator)
        {
            table[name, default: CompoundDefinition(type: type, overloads: [])].overloads.append((signature, evaluate))
        }
        func math(_ name: String, _ function: @escaping @Sendable (Double) -> Double) {
            define(name, .number, .fixed([.number])) { args, context, _ throws(ExpressionEvaluationError) in
                .number(function(try args[0].number(context)))
            }
        }
        func constant(_ name: String, _ value: Double) {
            define(name, .number, .fixed([])) { _, _, _ in .number(value) }
        }

        define("error", .error, .fixed([.string])) { args, context, key throws(ExpressionEvaluationError) in
            throw ExpressionEvaluationError(key: key, message: try args[0].string(context))
        }
        define("typeof", .string, .fixed([.value])) { args, context, _ throws(ExpressionEvaluationError) in
            .string(try args[0].evaluate(context).type.description)
        }
        define("to-rgba", .array(.number, count: 4), .fixed([.color])) {
            args, context, _ throws(ExpressionEvaluationError) in
            guard case .color(let c) = try args[0].evaluate(context) else { return .null }
            return .array([.number(c.red * 255), .number(c.green * 255), .number(c.blue * 255), .number(c.alpha)])
        }
        let rgba: CompoundEvaluator = { args, context, key throws(ExpressionEvaluationError) in
            var values: [StyleValue] = []
            for arg in args { values.append(try arg.evaluate(context)) }
            if let error = validateRGBA(values) { throw ExpressionEvaluationError(key: key, message: error) }
            func n(_ i: Int) -> Double { if case .number(let v) = values[i] { v } else { .nan } }
            return .color(
                StyleColor(red: n(0) / 255, green: n(1) / 255, blue: n(2) / 255, alpha: values.count > 3 ? n(3) : 1))
        }
        define("rgb", .color, .fixed([.number, .number, .number]), rgba)
        define("rgba", .color, .fixed([.number, .number, .number, .number]), rgba)
        // Mapbox's hue, saturation and lightness (0-100, percent signs optional in strings).
        let hsla: CompoundEvaluator = { args, context, key throws(ExpressionEvaluationError) in
            var values: [Double] = []
            for arg in args { values.append(try arg.number(context)) }
            let alpha = values.count > 3 ? values[3] : 1
            // Mapbox's ranges: hue 0-360, saturation and lightness 0-100, alpha 0-1.
            guard (0...360).contains(values[0]), (0...100).contains(values[1]), (0...100).contains(values[2]),
                (0...1).contains(alpha),
                let color = StyleColor(
                    css:
                        "hsla(\(values[0].javaScriptText), \(values[1].javaScriptText)%, \(values[2].javaScriptText)%, \(alpha.javaScriptText))"
                )
            else {
                throw ExpressionEvaluationError(
                    key: key, message: "Invalid hsla value [\(values.map(\.javaScriptText).joined(separator: ", "))]")
            }
            return .color(color)
        }
        define("hsl", .color, .fixed([.number, .number, .number]), hsla)
        define("hsla", .color, .fixed([.number, .number, .number, .number]), hsla)
        define("to-hsla", .array(.number, count: 4), .fixed([.color])) {
            args, context, _ throws(ExpressionEvaluationError) in
            guard case .color(let c) = try args[0].evaluate(context) else { return .null }
            let high = max(c.red, c.green, c.blue), low = min(c.red, c.green, c.blue)
            let lightness = (high + low) / 2
            var hue = 0.0, saturation = 0.0
            if high != low {
                let d = high - low
                saturation = lightness > 0.5 ? d / (2 - high - low) : d / (high + low)
                switch high {
                case c.red: hue = (c.green - c.blue) / d + (c.green < c.blue ? 6 : 0)
                case c.green: hue = (c.blue - c.red) / d + 2
                default: hue = (c.red - c.green) / d + 4
                }
                hue *= 60
            }
            return .array([.number(hue), .number(saturation * 100), .number(lightness * 100), .number(c.alpha)])
        }
        define("has", .boolean, .fixed([.string])) { args, context, _ throws(ExpressionEvaluationError) in
            .boolean(context.properties[try args[0].string(context)] != nil)
        }
        define("has", .boolean, .fixed([.string, .object])) { args, context, _ throws(ExpressionEvaluationError) in
            let key = try args[0].string(context)
            guard case .object(let object) = try args[1].evaluate(context) else { return .boolean(false) }
            return .boolean(object[key] != nil)
        }
        define("get", .value, .fixed([.string])) { args, context, _ throws(ExpressionEvaluationError) in
            context.properties[try args[0].string(context)] ?? .null
        }
        define("get", .value, .fixed([.string, .object])) { args, context, _ throws(ExpressionEvaluationError) in
            let key = try args[0].string(context)
            guard case .object(let object) = try args[1].evaluate(context) else { return .null }
            return object[key] ?? .null
        }
        define("feature-state", .value, .fixed([.string])) { args, context, _ throws(ExpressionEvaluationError) in
            context.featureState[try args[0].string(context)] ?? .null
        }
        define("properties", .object, .fixed([])) { _, context, _ in .object(context.properties) }
        define("geometry-type", .string, .fixed([])) { _, context, _ in
            context.feature?.geometryType.map(StyleValue.string) ?? .null
        }
        define("id", .value, .fixed([])) { _, context, _ in context.feature?.id ?? .null }
        define("zoom", .number, .fixed([])) { _, context, _ in .number(context.zoom ?? .nan) }
        define("heatmap-density", .number, .fixed([])) { _, context, _ in .number(context.heatmapDensity ?? 0) }
        define("elevation", .number, .fixed([])) { _, context, _ in .number(context.elevation ?? 0) }
        define("line-progress", .number, .fixed([])) { _, context, _ in .number(context.lineProgress ?? 0) }
        define("accumulated", .value, .fixed([])) { _, context, _ in context.accumulated ?? .null }
        // Mapbox GL JS v3's camera and environment values, which MapLibre lacks: read from the
        // context (its defaults: a map seen from straight above, at its center, by day).
        define("pitch", .number, .fixed([])) { _, context, _ in .number(context.mapbox.pitch) }
        define("distance-from-center", .number, .fixed([])) { _, context, _ in
            .number(context.mapbox.distanceFromCenter)
        }
        define("worldview", .string, .fixed([])) { _, context, _ in .string(context.mapbox.worldview) }
        define("measure-light", .number, .fixed([.string])) { args, context, key throws(ExpressionEvaluationError) in
            let property = try args[0].string(context)
            guard property == "brightness" else {
                throw ExpressionEvaluationError(
                    key: key, message: "Unknown light property \"\(property)\": measure-light reads \"brightness\"")
            }
            return .number(context.mapbox.lightBrightness)
        }
        define("sky-radial-progress", .number, .fixed([])) { _, _, _ in .number(0) }
        define("raster-value", .number, .fixed([])) { _, _, _ in .number(0) }
        define("raster-particle-speed", .number, .fixed([])) { _, _, _ in .number(0) }
        define("+", .number, .varargs(.number)) { args, context, _ throws(ExpressionEvaluationError) in
            var sum = 0.0
            for arg in args { sum += try arg.number(context) }
            return .number(sum)
        }
        define("*", .number, .varargs(.number)) { args, context, _ throws(ExpressionEvaluationError) in
            var product = 1.0
            for arg in args { product *= try arg.number(context) }
            return .number(product)
        }
        define("-", .number, .fixed([.number, .number])) { args, context, _ throws(ExpressionEvaluationError) in
            .number(try args[0].number(context) - args[1].number(context))
        }
        define("-", .number, .fixed([.number])) { args, context, _ throws(ExpressionEvaluationError) in
            .number(-(try args[0].number(context)))
        }
        define("/", .number, .fixed([.number, .number])) { args, context, _ throws(ExpressionEvaluationError) in
            .number(try args[0].number(context) / args[1].number(context))
        }
        define("%", .number, .fixed([.number, .number])) { args, context, _ throws(ExpressionEvaluationError) in
            .number(try args[0].number(context).truncatingRemainder(dividingBy: args[1].number(context)))
        }
        constant("ln2", M_LN2)
        constant("pi", Double.pi)
        constant("e", M_E)
        define("^", .number, .fixed([.number, .number])) { args, context, _ throws(ExpressionEvaluationError) in
            .number(pow(try args[0].number(context), try args[1].number(context)))
        }
        math("sqrt") { $0.squareRoot() }
        math("log10") { log($0) / M_LN10 }
        math("ln") { log($0) }
        math("log2") { log($0) / M_LN2 }
        math("sin") { sin($0) }
        math("cos") { cos($0) }
        math("tan") { tan($0) }
        math("asin") { asin($0) }
        math("acos") { acos($0) }
        math("atan") { atan($0) }
        math("abs") { abs($0) }
        math("round") { $0 < 0 ? -(-$0).javaScriptRounded : $0.javaScriptRounded }
        math("floor") { $0.rounded(.down) }
        math("ceil") { $0.rounded(.up) }
        define("min", .number, .varargs(.number)) { args, context, _ throws(ExpressionEvaluationError) in
            var result = Double.infinity
            for arg in args {
                let value = try arg.number(context)
                if value.isNaN { return .number(.nan) }
                result = min(result, value)
            }
            return .number(result)
        }
        define("max", .number, .varargs(.number)) { args, context, _ throws(ExpressionEvaluationError) in
            var result = -Double.infinity
            for arg in args {
                let value = try arg.number(context)
                if value.isNaN { return .number(.nan) }
                result = max(result, value)
            }
            return .number(result)
        }
        define("all", .boolean, .fixed([.boolean, .boolean])) { args, context, _ throws(ExpressionEvaluationError) in
            let first = try args[0].evaluate(context).isTruthy
            return .boolean(first ? try args[1].evaluate(context).isTruthy : false)
        }
        define("all", .boolean, .varargs(.boolean)) { args, context, _ throws(ExpressionEvaluationError) in
            for arg in args where !(try arg.evaluate(context).isTruthy) { return .boolean(false) }
            return .boolean(true)
        }
        define("any", .boolean, .fixed([.boolean, .boolean])) { args, context, _ throws(ExpressionEvaluationError) in
            let first = try args[0].evaluate(context).isTruthy
            return .boolean(first ? true : try args[1].evaluate(context).isTruthy)
        }
        define("any", .boolean, .varargs(.boolean)) { args, context, _ throws(ExpressionEvaluationError) in
            for arg in args where try arg.evaluate(context).isTruthy { return .boolean(true) }
            return .boolean(false)
        }
        define("!", .boolean, .fixed([.boolean])) { args, context, _ throws(ExpressionEvaluationError) in
            .boolean(!(try args[0].evaluate(context).isTruthy))
        }
        define("is-supported-script", .boolean, .fixed([.string])) { _, _, _ in .boolean(true) }
        define("upcase", .string, .fixed([.string])) { args, context, _ throws(ExpressionEvaluationError) in
            .string(try args[0].string(context).uppercased())
        }
        define("downcase", .string, .fixed([.string])) { args, context, _ throws(ExpressionEvaluationError) in
            .string(try args[0].string(context).lowercased())
        }
        define("concat", .string, .varargs(.value)) { args, context, _ throws(ExpressionEvaluationError) in
            var text = ""
            for arg in args { text += try arg.evaluate(context).text }
            return .string(text)
        }
        define("split", .array(.string), .fixed([.string, .string])) {
            args, context, _ throws(ExpressionEvaluationError) in
            let text = try args[0].string(context), separator = try args[1].string(context)
            if separator.isEmpty { return .array(text.unicodeScalars.map { .string(String($0)) }) }
            return .array(text.splitUTF8(separator: separator).map { .string($0) })
        }
        define("join", .string, .fixed([.array(.string), .string])) {
            args, context, _ throws(ExpressionEvaluationError) in
            guard case .array(let items) = try args[0].evaluate(context) else { return .string("") }
            return .string(items.map(\.text).joined(separator: try args[1].string(context)))
        }
        define("resolved-locale", .string, .fixed([.collator])) { args, context, _ throws(ExpressionEvaluationError) in
            guard case .collator(let collator) = try args[0].evaluate(context) else { return .string("en") }
            return .string(collator.resolvedLocale)
        }
        return table
    }()

    /// Parses `[name, ...args]` against each overload; the first that type-checks wins.
    static func parse(_ items: [JSONValue], _ context: ParsingContext) -> (any ExpressionNode)? {
        guard case .string(let name) = items[0], let definition = definitions[name] else { return nil }
        let argumentCount = items.count - 1
        let overloads = definition.overloads.filter { overload in
            if case .fixed(let types) = overload.signature { return types.count == argumentCount }
            return true
        }
        var lastErrors: [ExpressionParsingError] = []
        for overload in overloads {
            let signatureContext = context.fresh()
            var parsed: [any ExpressionNode] = []
            var failed = false
            for index in 1..<max(items.count, 1) {
                let expected: StyleType =
                    switch overload.signature {
                    case .fixed(let types): types[index - 1]
                    case .varargs(let type): type
                    }
                guard let argument = signatureContext.parse(items[index], index: 1 + parsed.count, expected: expected)
                else {
                    failed = true
                    break
                }
                parsed.append(argument)
            }
            lastErrors = signatureContext.errors.items
            if failed { continue }
            for (index, argument) in parsed.enumerated() {
                let expected: StyleType =
                    switch overload.signature {
                    case .fixed(let types): types[index]
                    case .varargs(let type): type
                    }
                signatureContext.child(index + 1).checkSubtype(expected, argument.type)
            }
            lastErrors = signatureContext.errors.items
            if lastErrors.isEmpty {
                return CompoundNode(
                    name: name, type: definition.type, arguments: parsed, key: context.key,
                    evaluator: overload.evaluate)
            }
        }
        if overloads.count == 1 {
            context.errors.items += lastErrors
        } else {
            let shown = overloads.isEmpty ? definition.overloads : overloads
            let signatures = shown.map(\.signature.text).joined(separator: " | ")
            var actual: [String] = []
            for index in 1..<max(items.count, 1) {
                guard let argument = context.parse(items[index], index: 1 + actual.count) else { return nil }
                actual.append(argument.type.description)
            }
            context.error(
                "Expected arguments of type \(signatures), but found (\(actual.joined(separator: ", "))) instead.")
        }
        return nil
    }
}
