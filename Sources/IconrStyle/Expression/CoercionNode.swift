import IconrCore

/// `to-boolean`, `to-color`, `to-number`, `to-string`, and the conversions the parser adds
/// where a property expects a color, formatted text, an image, a padding, ...
final class CoercionNode: ExpressionNode {
    let type: StyleType
    let arguments: [any ExpressionNode]
    let key: String

    init(type: StyleType, arguments: [any ExpressionNode], key: String) {
        self.type = type
        self.arguments = arguments
        self.key = key
    }

    var children: [any ExpressionNode] { arguments }

    func evaluate(_ context: EvaluationContext) throws(ExpressionEvaluationError) -> StyleValue {
        switch type {
        case .boolean:
            return .boolean(try arguments[0].evaluate(context).isTruthy)
        case .color:
            var input = StyleValue.null
            var error: String?
            for argument in arguments {
                input = try argument.evaluate(context)
                error = nil
                switch input {
                case .color: return input
                case .string(let text):
                    if let color = StyleColor(css: text) { return .color(color) }
                case .array(let items):
                    if items.count < 3 || items.count > 4 {
                        error =
                            "Invalid rgba value \(input.jsonText): expected an array containing either three or four numeric values."
                    } else {
                        error = validateRGBA(items)
                    }
                    if error == nil, case .number(let r) = items[0], case .number(let g) = items[1],
                        case .number(let b) = items[2]
                    {
                        var alpha = 1.0
                        if items.count == 4, case .number(let a) = items[3] { alpha = a }
                        return .color(StyleColor(red: r / 255, green: g / 255, blue: b / 255, alpha: alpha))
                    }
                default: break
                }
            }
            throw fail(error ?? "Could not parse color from value '\(Self.quoted(input))'")
        case .number:
            var value = StyleValue.null
            for argument in arguments {
                value = try argument.evaluate(context)
                if value == .null { return .number(0) }
                if let number = Self.javaScriptNumber(value), !number.isNaN { return .number(number) }
            }
            throw fail("Could not convert \(value.jsonText) to number.")
        case .formatted:
            let value = try arguments[0].evaluate(context)
            if case .formatted = value { return value }
            return .formatted(FormattedText(plain: value.text))
        case .resolvedImage:
            let value = try arguments[0].evaluate(context)
            if case .image = value { return value }
            let name = value.text
            return .image(ResolvedImage(name: name, available: context.isAvailable(name)))
        case .padding:
            return try firstParsed("padding", context) { value in
                switch value {
                case .padding: return value
                case .number(let n): return .padding([n, n, n, n])
                case .array(let items):
                    let numbers = items.compactMap { item -> Double? in if case .number(let n) = item { n } else { nil }
                    }
                    guard numbers.count == items.count else { return nil }
                    switch numbers.count {
                    case 1: return .padding([numbers[0], numbers[0], numbers[0], numbers[0]])
                    case 2: return .padding([numbers[0], numbers[1], numbers[0], numbers[1]])
                    case 3: return .padding([numbers[0], numbers[1], numbers[2], numbers[1]])
                    case 4: return .padding(numbers)
                    default: return nil
                    }
                default: return nil
                }
            }
        case .numberArray:
            return try firstParsed("numberArray", context) { value in
                switch value {
                case .numberArray: return value
                case .number(let n): return .numberArray([n])
                case .array(let items):
                    let numbers = items.compactMap { item -> Double? in if case .number(let n) = item { n } else { nil }
                    }
                    return numbers.count == items.count ? .numberArray(numbers) : nil
                default: return nil
                }
            }
        case .colorArray:
            return try firstParsed("colorArray", context) { value in
                switch value {
                case .colorArray: return value
                case .color(let color): return .colorArray([color])
                case .string(let text): return StyleColor(css: text).map { .colorArray([$0]) }
                case .array(let items):
                    var colors: [StyleColor] = []
                    for item in items {
                        switch item {
                        case .color(let color): colors.append(color)
                        case .string(let text):
                            guard let color = StyleColor(css: text) else { return nil }
                            colors.append(color)
                        default: return nil
                        }
                    }
                    return .colorArray(colors)
                default: return nil
                }
            }
        case .variableAnchorOffsetCollection:
            return try firstParsed("variableAnchorOffsetCollection", context) { value in
                guard case .array(let items) = value, items.count % 2 == 0 else {
                    if case .variableAnchorOffsetCollection = value { return value }
                    return nil
                }
                let anchors: Set<String> = [
                    "center", "left", "right", "top", "bottom", "top-left", "top-right", "bottom-left", "bottom-right",
                ]
                for pair in stride(from: 0, to: items.count, by: 2) {
                    guard case .string(let anchor) = items[pair], anchors.contains(anchor),
                        case .array(let offset) = items[pair + 1], offset.count == 2,
                        case .number = offset[0], case .number = offset[1]
                    else { return nil }
                }
                return .variableAnchorOffsetCollection(items)
            }
        case .projectionDefinition:
            let input = try arguments[0].evaluate(context)
            switch input {
            case .string, .projection: return input
            case .array(let items) where items.count == 3:
                if case .string = items[0], case .string = items[1], case .number = items[2] { return input }
            default: break
            }
            throw fail("Could not parse projectionDefinition from value '\(Self.quoted(input))'")
        default:
            return .string(try arguments[0].evaluate(context).text)
        }
    }

    private func firstParsed(
        _ name: String, _ context: EvaluationContext,
        _ parse: (StyleValue) -> StyleValue?
    ) throws(ExpressionEvaluationError) -> StyleValue {
        var input = StyleValue.null
        for argument in arguments {
            input = try argument.evaluate(context)
            if let value = parse(input) { return value }
        }
        throw fail("Could not parse \(name) from value '\(Self.quoted(input))'")
    }

    /// A string as it is, anything else as JSON: how the reference quotes bad values.
    static func quoted(_ value: StyleValue) -> String {
        if case .string(let text) = value { return text }
        return value.jsonText
    }

    /// JavaScript's `Number(value)`.
    static func javaScriptNumber(_ value: StyleValue) -> Double? {
        switch value {
        case .null: return 0
        case .boolean(let b): return b ? 1 : 0
        case .number(let n): return n
        case .string(let text):
            let trimmed = text.trimmingJavaScriptWhitespace
            if trimmed.isEmpty { return 0 }
            if trimmed == "Infinity" || trimmed == "+Infinity" { return .infinity }
            if trimmed == "-Infinity" { return -.infinity }
            if trimmed.lowercased().hasPrefix("0x"), let n = UInt64(trimmed.dropFirst(2), radix: 16) {
                return Double(n)
            }
            let allowed = Set("0123456789+-.eE")
            guard trimmed.allSatisfy({ allowed.contains($0) }), let n = Double(trimmed) else { return .nan }
            return n
        case .array(let items):
            if items.isEmpty { return 0 }
            if items.count == 1 { return javaScriptNumber(.string(items[0].text)) }
            return .nan
        default: return .nan
        }
    }
}

/// Nil when r, g, b are numbers in 0...255 and a (if given) in 0...1, else the
/// specification's message.
func validateRGBA(_ items: [StyleValue]) -> String? {
    func number(_ index: Int) -> Double? {
        guard index < items.count, case .number(let n) = items[index] else { return nil }
        return n
    }
    let channels = (0..<3).map(number)
    if !channels.allSatisfy({ $0.map { $0 >= 0 && $0 <= 255 } ?? false }) {
        let shown = (items.count == 4 && number(3) != nil) ? items : Array(items.prefix(3))
        return
            "Invalid rgba value [\(shown.map(\.text).joined(separator: ", "))]: 'r', 'g', and 'b' must be between 0 and 255."
    }
    if items.count == 4 {
        guard let a = number(3), a >= 0, a <= 1 else {
            return "Invalid rgba value [\(items.map(\.text).joined(separator: ", "))]: 'a' must be between 0 and 1."
        }
    }
    return nil
}
