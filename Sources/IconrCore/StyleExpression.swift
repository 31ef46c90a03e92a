/// The value of a style expression when it is evaluated for a feature.
public enum ExpressionValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case color(Color)
    case array([ExpressionValue])
    case image(ImageReference)

    init(_ json: JSONValue) {
        switch json {
        case .null, .object: self = .null
        case .bool(let value): self = .bool(value)
        case .number(let value): self = .number(value)
        case .string(let value): self = .string(value)
        case .array(let values): self = .array(values.map(ExpressionValue.init))
        }
    }

    /// The style specification's `to-string`: colors as `rgba(r,g,b,a)`, numbers in their
    /// shortest form, null as the empty string.
    public var text: String {
        switch self {
        case .null: ""
        case .bool(let value): value ? "true" : "false"
        case .number(let value): value.shortText
        case .string(let value): value
        case .color(let color): "rgba(\(color.red),\(color.green),\(color.blue),\(((color.alpha * 1000).rounded() / 1000).shortText))"
        case .array(let values): "[" + values.map { $0.jsonText }.joined(separator: ",") + "]"
        case .image(let image): image.name
        }
    }

    private var jsonText: String {
        if case .string(let value) = self { return SpriteIndex.quoted(value) }
        return text
    }
}

/// An icon and the parameter colors an `image` expression asks for.
public struct ImageReference: Hashable, Sendable {
    public var name: String
    public var params: [String: Color]

    public init(name: String, params: [String: Color] = [:]) {
        self.name = name
        self.params = params
    }

    /// `name?param=#rrggbb&...` with names sorted: the same for equal references in every
    /// run (a dictionary's own order is seeded per process), so lists sort the same.
    var sortKey: String {
        name + "?" + params.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.hexString)" }.joined(separator: "&")
    }
}

/// A style expression that cannot be used, with where it is in the style.
public struct ExpressionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Where in the style, e.g. `layers[1].layout.icon-image[2]`.
    public let path: String
    public let message: String

    public var description: String { "\(path): \(message)" }
}

/// The style specification's expressions that pick and size icons: `image` (with `params`,
/// and with a fallback image), `get`, `has`, `literal`, `case`, `match`, `coalesce`, `==`,
/// `!=`, `!`, `all`, `any`, `concat`, `to-string`, `to-color`, `to-number`, and legacy
/// `{token}` strings. Parsed once, evaluated per feature.
public indirect enum StyleExpression: Sendable {
    case literal(ExpressionValue)
    case token(String)
    case get(StyleExpression)
    case has(StyleExpression)
    case image([ImageCandidate])
    case `case`([(condition: StyleExpression, output: StyleExpression)], fallback: StyleExpression)
    case match(StyleExpression, [(labels: [ExpressionValue], output: StyleExpression)], fallback: StyleExpression)
    case coalesce([StyleExpression])
    case equal(StyleExpression, StyleExpression, negated: Bool)
    case not(StyleExpression)
    case all([StyleExpression])
    case any([StyleExpression])
    case concat([StyleExpression])
    case toString(StyleExpression)
    case toColor([StyleExpression])
    case toNumber([StyleExpression])

    /// One image an `image` expression may use, with its parameter expressions.
    public struct ImageCandidate: Sendable {
        public let name: StyleExpression
        public let params: [(name: String, value: StyleExpression)]
    }

    /// Where an expression is evaluated: a feature's properties, and which images exist.
    public struct Context {
        public var properties: [String: JSONValue]
        public var imageExists: (String) -> Bool

        public init(properties: [String: JSONValue], imageExists: @escaping (String) -> Bool = { _ in true }) {
            self.properties = properties
            self.imageExists = imageExists
        }
    }

    /// An evaluation that failed on this feature's data; the property takes its default.
    public struct EvaluationError: Error {
        public let message: String
    }
}

// MARK: - Parsing

extension StyleExpression {
    /// Parses `json` found at `path` in the style. `icon-image` strings with `{tokens}` are
    /// the legacy token form.
    public static func parse(_ json: JSONValue, path: String) throws(ExpressionError) -> StyleExpression {
        switch json {
        case .string(let text) where text.contains("{") && text.contains("}"):
            return .token(text)
        case .array(let items):
            guard let first = items.first else { throw ExpressionError(path: path, message: "expected an expression, found []") }
            guard case .string(let name) = first else {
                throw ExpressionError(path: path, message: "expected an operator name first; use [\"literal\", ...] for an array")
            }
            return try parseOperator(name, Array(items.dropFirst()), path: path)
        case .object:
            throw ExpressionError(path: path, message: "expected an expression, found an object; use [\"literal\", {...}]")
        default:
            return .literal(ExpressionValue(json))
        }
    }

    private static func parseOperator(_ name: String, _ arguments: [JSONValue], path: String) throws(ExpressionError) -> StyleExpression {
        func argument(_ index: Int) throws(ExpressionError) -> StyleExpression {
            try parse(arguments[index], path: "\(path)[\(index + 1)]")
        }
        func all() throws(ExpressionError) -> [StyleExpression] {
            var result: [StyleExpression] = []
            for index in arguments.indices { result.append(try argument(index)) }
            return result
        }
        func expect(_ counts: ClosedRange<Int>) throws(ExpressionError) {
            guard counts.contains(arguments.count) else {
                let wanted = counts.lowerBound == counts.upperBound ? "\(counts.lowerBound)" : "\(counts.lowerBound) to \(counts.upperBound)"
                throw ExpressionError(path: path, message: "\"\(name)\" expects \(wanted) argument\(counts.upperBound == 1 ? "" : "s"), found \(arguments.count)")
            }
        }
        switch name {
        case "literal":
            try expect(1...1)
            if case .object = arguments[0] { return .literal(.null) }
            return .literal(ExpressionValue(arguments[0]))
        case "get":
            try expect(1...1)
            return .get(try argument(0))
        case "has":
            try expect(1...1)
            return .has(try argument(0))
        case "image":
            return .image(try parseImage(arguments, path: path))
        case "case":
            guard arguments.count >= 3, arguments.count % 2 == 1 else {
                throw ExpressionError(path: path, message: "\"case\" expects condition/output pairs and a fallback")
            }
            var branches: [(StyleExpression, StyleExpression)] = []
            for index in stride(from: 0, to: arguments.count - 1, by: 2) {
                branches.append((try argument(index), try argument(index + 1)))
            }
            return .case(branches, fallback: try argument(arguments.count - 1))
        case "match":
            guard arguments.count >= 4, arguments.count % 2 == 0 else {
                throw ExpressionError(path: path, message: "\"match\" expects an input, label/output pairs and a fallback")
            }
            var branches: [([ExpressionValue], StyleExpression)] = []
            for index in stride(from: 1, to: arguments.count - 1, by: 2) {
                let labels: [ExpressionValue]
                switch arguments[index] {
                case .array(let values): labels = values.map(ExpressionValue.init)
                case .string, .number: labels = [ExpressionValue(arguments[index])]
                default:
                    throw ExpressionError(path: "\(path)[\(index + 1)]", message: "match labels must be strings, numbers or arrays of them")
                }
                branches.append((labels, try argument(index + 1)))
            }
            return .match(try argument(0), branches, fallback: try argument(arguments.count - 1))
        case "coalesce": return .coalesce(try all())
        case "==", "!=":
            try expect(2...2)
            return .equal(try argument(0), try argument(1), negated: name == "!=")
        case "!":
            try expect(1...1)
            return .not(try argument(0))
        case "all": return .all(try all())
        case "any": return .any(try all())
        case "concat": return .concat(try all())
        case "to-string":
            try expect(1...1)
            return .toString(try argument(0))
        case "to-color":
            try expect(1...Int.max)
            let values = try all()
            // Literals that are no color can never convert: an error now, as Mapbox does.
            let literals = values.compactMap { value -> ExpressionValue? in if case .literal(let literal) = value { literal } else { nil } }
            if literals.count == values.count, !literals.contains(where: { Color(css: $0.text) != nil }) {
                throw ExpressionError(path: path, message: "Could not parse color from value '\(literals[0].text)'")
            }
            return .toColor(values)
        case "to-number":
            try expect(1...Int.max)
            return .toNumber(try all())
        default:
            throw ExpressionError(path: path, message: "unknown expression operator \"\(name)\"")
        }
    }

    /// `["image", name, {"params": {...}}?, name2, {...}?]`: the images in order of preference.
    private static func parseImage(_ arguments: [JSONValue], path: String) throws(ExpressionError) -> [ImageCandidate] {
        var candidates: [ImageCandidate] = []
        var index = 0
        while index < arguments.count {
            let name = try parse(arguments[index], path: "\(path)[\(index + 1)]")
            var params: [(String, StyleExpression)] = []
            if index + 1 < arguments.count, case .object(let options) = arguments[index + 1] {
                let optionsPath = "\(path)[\(index + 2)]"
                if let paramsValue = options["params"] {
                    guard case .object(let values) = paramsValue else {
                        throw ExpressionError(path: optionsPath + ".params", message: "params must be an object")
                    }
                    for (key, json) in values.sorted(by: { $0.key < $1.key }) {
                        let valuePath = "\(optionsPath).params.\(key)"
                        let value = try parse(json, path: valuePath)
                        if case .literal(.string(let text)) = value, Color(css: text) == nil {
                            throw ExpressionError(path: valuePath, message: "Could not parse color from value '\(text)'")
                        }
                        params.append((key, value))
                    }
                }
                index += 1
            }
            candidates.append(ImageCandidate(name: name, params: params))
            index += 1
        }
        guard !candidates.isEmpty, candidates.count <= 2 else {
            throw ExpressionError(path: path, message: "\"image\" expects an image name (with options), and at most one fallback image")
        }
        return candidates
    }
}

// MARK: - Evaluation

extension StyleExpression {
    public func evaluate(_ context: Context) throws(EvaluationError) -> ExpressionValue {
        switch self {
        case .literal(let value):
            return value
        case .token(let template):
            return .string(Self.substituteTokens(template, context.properties))
        case .get(let key):
            return context.properties[try key.evaluate(context).text].map(ExpressionValue.init) ?? .null
        case .has(let key):
            return .bool(context.properties[try key.evaluate(context).text] != nil)
        case .image(let candidates):
            var first: ImageReference?
            for candidate in candidates {
                let reference = try candidate.evaluate(context)
                if context.imageExists(reference.name) { return .image(reference) }
                first = first ?? reference
            }
            // None exists: the first, which a renderer reports as missing.
            return first.map(ExpressionValue.image) ?? .null
        case .case(let branches, let fallback):
            for branch in branches where try branch.condition.evaluate(context) == .bool(true) {
                return try branch.output.evaluate(context)
            }
            return try fallback.evaluate(context)
        case .match(let input, let branches, let fallback):
            let value = try input.evaluate(context)
            for branch in branches where branch.labels.contains(value) {
                return try branch.output.evaluate(context)
            }
            return try fallback.evaluate(context)
        case .coalesce(let values):
            for expression in values {
                let value = try expression.evaluate(context)
                if case .image(let image) = value, !context.imageExists(image.name) { continue }
                if value != .null { return value }
            }
            return .null
        case .equal(let left, let right, let negated):
            return .bool((try left.evaluate(context) == right.evaluate(context)) != negated)
        case .not(let value):
            return .bool(try value.evaluate(context) != .bool(true))
        case .all(let values):
            for value in values where try value.evaluate(context) != .bool(true) { return .bool(false) }
            return .bool(true)
        case .any(let values):
            for value in values where try value.evaluate(context) == .bool(true) { return .bool(true) }
            return .bool(false)
        case .concat(let values):
            var text = ""
            for value in values { text += try value.evaluate(context).text }
            return .string(text)
        case .toString(let value):
            return .string(try value.evaluate(context).text)
        case .toColor(let values):
            for expression in values {
                switch try expression.evaluate(context) {
                case .color(let color): return .color(color)
                case .string(let text): if let color = Color(css: text) { return .color(color) }
                default: break
                }
            }
            throw EvaluationError(message: "could not parse a color")
        case .toNumber(let values):
            for expression in values {
                switch try expression.evaluate(context) {
                case .null: return .number(0)
                case .bool(let value): return .number(value ? 1 : 0)
                case .number(let value): return .number(value)
                case .string(let text): if let number = Double(text.trimmingASCIIWhitespace) { return .number(number) }
                default: break
                }
            }
            throw EvaluationError(message: "could not convert to a number")
        }
    }

    /// Every number the expression can produce as a result, when they are all written in
    /// it (`1`, `["case", ..., 2, 1]`); nil when one comes from data.
    public var reachableNumbers: [Double]? {
        switch self {
        case .literal(.number(let value)): [value]
        case .case(let branches, let fallback):
            (branches.map(\.output) + [fallback]).reduce([Double]?([])) { result, output in
                guard let result, let numbers = output.reachableNumbers else { return nil }
                return result + numbers
            }
        case .match(_, let branches, let fallback):
            (branches.map(\.output) + [fallback]).reduce([Double]?([])) { result, output in
                guard let result, let numbers = output.reachableNumbers else { return nil }
                return result + numbers
            }
        case .coalesce(let values):
            values.reduce([Double]?([])) { result, value in
                guard let result, let numbers = value.reachableNumbers else { return nil }
                return result + numbers
            }
        default: nil
        }
    }

    /// `"flag-{color}"` with each `{name}` replaced by the property's text (empty if absent).
    static func substituteTokens(_ template: String, _ properties: [String: JSONValue]) -> String {
        var result = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            result += rest[..<open]
            let key = String(rest[rest.index(after: open)..<close])
            result += properties[key].map { ExpressionValue($0).text } ?? ""
            rest = rest[rest.index(after: close)...]
        }
        return result + rest
    }
}

extension StyleExpression.ImageCandidate {
    /// The image and the parameter colors this feature gives it. A value from data that is
    /// no color is left out, so the parameter's default shows.
    func evaluate(_ context: StyleExpression.Context) throws(StyleExpression.EvaluationError) -> ImageReference {
        let nameValue = try name.evaluate(context)
        var reference: ImageReference
        if case .image(let image) = nameValue { reference = image } else { reference = ImageReference(name: nameValue.text) }
        for param in params {
            switch try? param.value.evaluate(context) {
            case .color(let color)?: reference.params[param.name] = color
            case .string(let text)?: if let color = Color(css: text) { reference.params[param.name] = color }
            default: break
            }
        }
        return reference
    }
}
