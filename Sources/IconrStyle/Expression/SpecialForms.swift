import IconrCore

/// The operators whose parsing is their own (types inferred from arguments, literal labels,
/// bindings): everything but the fixed-signature `CompoundExpressions`.
enum SpecialForms {
    typealias Parser = @Sendable ([JSONValue], ParsingContext) -> (any ExpressionNode)?

    static let parsers: [String: Parser] = {
        var table: [String: Parser] = [
            "literal": literal, "at": at, "case": parseCase, "coalesce": coalesce, "collator": collator,
            "format": format, "image": image, "in": search, "index-of": search, "length": length, "let": parseLet,
            "match": match, "number-format": numberFormat, "semiliteral": semiliteral, "slice": slice,
            "step": step, "var": variable, "within": within, "distance": distance, "global-state": globalState,
            "config": config,
        ]
        for name in ["array", "boolean", "number", "string", "object"] { table[name] = assertion }
        for name in ["to-boolean", "to-color", "to-number", "to-string"] { table[name] = coercion }
        for name in ["interpolate", "interpolate-hcl", "interpolate-lab"] { table[name] = interpolate }
        for name in ["==", "!=", "<", ">", "<=", ">="] { table[name] = comparison }
        return table
    }()

    static func literal(_ items: [JSONValue], _ context: ParsingContext) -> (any ExpressionNode)? {
        guard items.count == 2 else {
            context.error("'literal' expression requires exactly one argument, but found \(items.count - 1) instead.")
            return nil
        }
        let value = StyleValue(items[1])
        var type = value.type
        if case .array(_, let count) = type, count == 0, let expected = context.expectedType,
            case .array(_, let expectedCount) = expected, expectedCount == nil || expectedCount == 0
        {
            type = expected
        }
        return LiteralNode(type: type, value: value, key: context.key)
    }

    static func assertion(_ items: [JSONValue], _ context: ParsingContext) -> (any ExpressionNode)? {
        guard items.count >= 2 else {
            context.error("Expected at least one argument.")
            return nil
        }
        let simple: [String: StyleType] = [
            "string": .string, "number": .number, "boolean": .boolean, "object": .object,
        ]
        var index = 1
        let type: StyleType
        if items[0].stringValue == "array" {
            var itemType = StyleType.value
            if items.count > 2 {
                guard case .string(let name) = items[1], let item = simple[name], name != "object" else {
                    context.error("The item type argument of \"array\" must be one of string, number, boolean", 1)
                    return nil
                }
                itemType = item
                index += 1
            }
            var count: Int?
            if items.count > 3 {
                switch items[2] {
                case .null: break
                case .number(let n) where n >= 0 && n == n.rounded(.down) && n < 1e9: count = Int(n)
                default:
                    context.error("The length argument to \"array\" must be a positive integer literal", 2)
                    return nil
                }
                index += 1
            }
            type = .array(itemType, count: count)
        } else {
            type = simple[items[0].stringValue ?? ""] ?? .value
        }
        var arguments: [any ExpressionNode] = []
        while index < items.count {
            guard let argument = context.parse(items[index], index: index, expected: .value) else { return nil }
            arguments.append(argument)
            index += 1
        }
        return AssertionNode(type: type, arguments: arguments, key: context.key)
    }

    static func coercion(_ items: [JSONValue], _ context: ParsingContext) -> (any ExpressionNode)? {
        guard items.count >= 2 else {
            context.error("Expected at least one argument.")
            return nil
        }
        let name = items[0].stringValue ?? ""
        if (name == "to-boolean" || name == "to-string") && items.count != 2 {
            context.error("Expected one argument.")
            return nil
        }
        let types: [String: StyleType] = [
            "to-boolean": .boolean, "to-color": .color, "to-number": .number, "to-string": .string,
        ]
        var arguments: [any ExpressionNode] = []
        for index in 1..<items.count {
            guard let argument = context.parse(items[index], index: index, expected: .value) else { return nil }
            arguments.append(argument)
        }
        return CoercionNode(type: types[name] ?? .string, arguments: arguments, key: context.key)
    }

    static func at(_ items: [JSONValue], _ context: ParsingContext) -> (any ExpressionNode)? {
        guard items.count == 3 else {
            context.error("Expected 2 arguments, but found \(items.count - 1) instead.")
            return nil
        }
        let index = context.parse(items[1], index: 1, expected: .number)
        let input = context.parse(items[2], index: 2, expected: .array(context.expectedType ?? .value))
        guard let index, let input, case .array(let itemType, _) = input.type else { return nil }
        return AtNode(type: itemType, index: index, input: input, key: context.key)
    }

    static func parseCase(_ items: [JSONValue], _ context: ParsingContext) -> (any ExpressionNode)? {
        guard items.count >= 4 else {
            context.error("Expected at least 3 arguments, but found only \(items.count - 1).")
            return nil
        }
        guard items.count % 2 == 0 else {
            context.error("Expected an odd number of arguments.")
            return nil
        }
        var outputType = context.expectedType.flatMap { $0 == .value ? nil : $0 }
        var branches: [(test: any ExpressionNode, output: any ExpressionNode)] = []
        for index in stride(from: 1, to: items.count - 1, by: 2) {
            guard let test = context.parse(items[index], index: index, expected: .boolean),
                let output = context.parse(items[index + 1], index: index + 1, expected: outputType)
            else { return nil }
            branches.append((test, output))
            outputType = outputType ?? output.type
        }
        guard let otherwise = context.parse(items[items.count - 1], index: items.count - 1, expected: outputType) else {
            return nil
        }
        return CaseNode(type: outputType ?? otherwise.type, branches: branches, otherwise: otherwise, key: context.key)
    }

    static func coalesce(_ items: [JSONValue], _ context: ParsingContext) -> (any ExpressionNode)? {
        guard items.count >= 2 else {
            context.error("Expected at least one argument.")
            return nil
        }
        let expected = context.expectedType
        var outputType = expected.flatMap { $0 == .value ? nil : $0 }
        var arguments: [any ExpressionNode] = []
        for item in items.dropFirst() {
            guard
                let argument = context.parse(item, index: 1 + arguments.count, expected: outputType, annotation: .omit)
            else { return nil }
            outputType = outputType ?? argument.type
            arguments.append(argument)
        }
        // Arguments were parsed without the inferred annotation (so that null falls through);
        // if one needed it, the coalesce as a whole is a value the parent annotates.
        let needsAnnotation = expected.map { type in arguments.contains { type.mismatch($0.type) != nil } } ?? false
        return CoalesceNode(
            type: needsAnnotation ? .value : (outputType ?? .value), arguments: arguments, key: context.key)
    }

    static func collator(_ items: [JSONValue], _ context: ParsingContext) -> (any ExpressionNode)? {
        guard items.count == 2 else {
            context.error("Expected one argument.")
            return nil
        }
        guard case .object(let options) = items[1] else {
            context.error("Collator options argument must be an object.")
            return nil
        }
        guard
            let caseSensitive = context.parse(options["case-sensitive"] ?? .bool(false), index: 1, expected: .boolean),
            let diacriticSensitive = context.parse(
                options["diacritic-sensitive"] ?? .bool(false), index: 1, expected: .boolean)
        else { return nil }
        var locale: (any ExpressionNode)?
        if let value = options["locale"], value.isTruthyJSON {
            guard let parsed = context.parse(value, index: 1, expected: .string) else { return nil }
            locale = parsed
        }
        return CollatorNode(
            caseSensitive: caseSensitive, diacriticSensitive: diacriticSensitive, locale: locale, key: context.key)
    }

    static func format(_ items: [JSONValue], _ context: ParsingContext) -> (any ExpressionNode)? {
        guard items.count >= 2 else {
            context.error("Expected at least one argument.")
            return nil
        }
        if case .object = items[1] {
            context.error("First argument must be an image or text section.")
            return nil
        }
        var sections: [FormatNode.Section] = []
        var mayBeOptions = false
        for item in items.dropFirst() {
            if mayBeOptions, case .object(let options) = item {
                mayBeOptions = false
                guard var section = sections.popLast() else { return nil }
                if let value = options["font-scale"], value.isTruthyJSON {
                    guard let parsed = context.parse(value, index: 1, expected: .number) else { return nil }
                    section.scale = parsed
                }
                if let value = options["text-font"], value.isTruthyJSON {
                    guard let parsed = context.parse(value, index: 1, expected: .array(.string)) else { return nil }
                    section.font = parsed
                }
                if let value = options["text-color"], value.isTruthyJSON {
                    guard let parsed = context.parse(value, index: 1, expected: .color) else { return nil }
                    section.textColor = parsed
                }
                if let value = options["vertical-align"], value.isTruthyJSON {
                    if case .string(let align) = value, !["bottom", "center", "top"].contains(align) {
                        context.error(
                            "'vertical-align' must be one of: 'bottom', 'center', 'top' but found '\(align)' instead.")
                        return nil
                    }
                    guard let parsed = context.parse(value, index: 1, expected: .string) else { return nil }
                    section.verticalAlign = parsed
                }
                sections.append(section)
            } else {
                guard let content = context.parse(item, index: 1, expected: .value) else { return nil }
                guard [.string, .value, .null, .resolvedImage].contains(content.type.kindType) else {
                    context.error("Formatted text type must be 'string', 'value', 'image' or 'null'.")
                    return nil
                }
                mayBeOptions = true
                sections.append(FormatNode.Section(content: content))
            }
        }
        return FormatNode(sections: sections, key: context.key)
    }

    /// `["image", name]`, and Mapbox's `["image", name, {"params": {...}}]` with an optional
    /// second image (`name2`, options) that the icon cross-fades to.
    static func image(_ items: [JSONValue], _ context: ParsingContext) -> (any ExpressionNode)? {
        guard items.count >= 2 && items.count <= 5 else {
            context.error("Expected two arguments.")
            return nil
        }
        /// The image named at `nameIndex` with its options after it; nil (errors recorded) if invalid.
        func one(_ nameIndex: Int, secondary: ImageNode?) -> ImageNode? {
            guard let name = context.parse(items[nameIndex], index: nameIndex, expected: .string) else {
                context.error("No image name provided.")
                return nil
            }
            var params: [(name: String, value: any ExpressionNode)] = []
            if nameIndex + 1 < items.count, case .object(let options) = items[nameIndex + 1],
                let list = options["params"]
            {
                guard case .object(let values) = list else {
                    context.child(nameIndex + 1).member("params").error("Image options \"params\" should be an object")
                    return nil
                }
                for (param, value) in values.sorted(by: { $0.key < $1.key }) {
                    guard !param.isEmpty else {
                        context.child(nameIndex + 1).member("params").error("Image param names must not be empty")
                        return nil
                    }
                    guard
                        let parsed = context.child(nameIndex + 1).member("params.\(param)", expected: .color).parse(
                            value)
                    else {
                        return nil
                    }
                    params.append((param, parsed))
                }
            }
            let iconset =
                items.indices.contains(nameIndex + 1) ? items[nameIndex + 1]["iconset"]?["id"]?.stringValue : nil
            return ImageNode(name: name, params: params, secondary: secondary, iconset: iconset, key: context.key)
        }
        let partnerIndex = items.count > 2 && items[2].objectValue != nil ? 3 : 2
        var partner: ImageNode?
        if partnerIndex < items.count {
            guard let parsed = one(partnerIndex, secondary: nil) else { return nil }
            partner = parsed
        }
        return one(1, secondary: partner)
    }

    static func search(_ items: [JSONValue], _ context: ParsingContext) -> (any ExpressionNode)? {
        let isIndex = items[0].stringValue == "index-of"
        if isIndex {
            guard items.count == 3 || items.count == 4 else {
                context.error("Expected 2 or 3 arguments, but found \(items.count - 1) instead.")
                return nil
            }
        } else if items.count != 3 {
            context.error("Expected 2 arguments, but found \(items.count - 1) instead.")
            return nil
        }
        let needle = context.parse(items[1], index: 1, expected: .value)
        let haystack = context.parse(items[2], index: 2, expected: .value)
        guard let needle, let haystack else { return nil }
        guard [.boolean, .string, .number, .null, .value].contains(needle.type.kindType) else {
            context.error(
                "Expected first argument to be of type boolean, string, number or null, but found \(needle.type) instead"
            )
            return nil
        }
        var fromIndex: (any ExpressionNode)?
        if items.count == 4 {
            guard let parsed = context.parse(items[3], index: 3, expected: .number) else { return nil }
            fromIndex = parsed
        }
        return SearchNode(
            returnsIndex: isIndex, needle: needle, haystack: haystack, fromIndex: fromIndex, key: context.key)
    }

    static func length(_ items: [JSONValue], _ context: ParsingContext) -> (any ExpressionNode)? {
        guard items.count == 2 else {
            context.error("Expected 1 argument, but found \(items.count - 1) instead.")
            return nil
        }
        guard let input = context.parse(items[1], index: 1) else { return nil }
        guard ["array", "string", "value"].contains(input.type.kind) else {
            context.error("Expected argument of type string or array, but found \(input.type) instead.")
            return nil
        }
        return LengthNode(input: input, key: context.key)
    }

    static func parseLet(_ items: [JSONValue], _ context: ParsingContext) -> (any ExpressionNode)? {
        guard items.count >= 4 else {
            context.error("Expected at least 3 arguments, but found \(items.count - 1) instead.")
            return nil
        }
        var bindings: [(String, any ExpressionNode)] = []
        for index in stride(from: 1, to: items.count - 1, by: 2) {
            guard case .string(let name) = items[index] else {
                context.error("Expected string, but found \(items[index].javaScriptTypeName) instead.", index)
                return nil
            }
            guard
                name.unicodeScalars.allSatisfy({
                    ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || $0 == "_"
                })
            else {
                context.error("Variable names must contain only alphanumeric characters or '_'.", index)
                return nil
            }
            guard let value = context.parse(items[index + 1], index: index + 1) else { return nil }
            bindings.append((name, value))
        }
        guard
            let result = context.parse(
                items[items.count - 1], index: items.count - 1, expected: context.expectedType,
                bindings: bindings)
        else { return nil }
        return LetNode(bindings: bindings.map { (name: $0.0, value: $0.1) }, result: result, key: context.key)
    }

    static func variable(_ items: [JSONValue], _ context: ParsingContext) -> (any ExpressionNode)? {
        guard items.count == 2, case .string(let name) = items[1] else {
            context.error("'var' expression requires exactly one string literal argument.")
            return nil
        }
        guard let bound = context.scope?.lookup(name) else {
            context.error(
                "Unknown variable \"\(name)\". Make sure \"\(name)\" has been bound in an enclosing \"let\" expression before using it.",
                1)
            return nil
        }
        return VarNode(name: name, bound: bound, key: context.key)
    }

    static func match(_ items: [JSONValue], _ context: ParsingContext) -> (any ExpressionNode)? {
        guard items.count >= 5 else {
            context.error("Expected at least 4 arguments, but found only \(items.count - 1).")
            return nil
        }
        guard items.count % 2 == 1 else {
            context.error("Expected an even number of arguments.")
            return nil
        }
        var inputType: StyleType?
        var outputType = context.expectedType.flatMap { $0 == .value ? nil : $0 }
        var cases: [MatchLabel: Int] = [:]
        var outputs: [any ExpressionNode] = []
        for index in stride(from: 2, to: items.count - 1, by: 2) {
            let labels: [JSONValue] = items[index].arrayValue ?? [items[index]]
            let labelContext = context.child(index)
            if labels.isEmpty {
                labelContext.error("Expected at least one branch label.")
                return nil
            }
            for label in labels {
                let matchLabel: MatchLabel
                switch label {
                case .number(let n):
                    if abs(n) > 9_007_199_254_740_991 {
                        labelContext.error("Branch labels must be integers no larger than 9007199254740991.")
                        return nil
                    }
                    if n != n.rounded(.down) {
                        labelContext.error("Numeric branch labels must be integer values.")
                        return nil
                    }
                    matchLabel = .number(n)
                case .string(let s): matchLabel = .string(s)
                default:
                    labelContext.error("Branch labels must be numbers or strings.")
                    return nil
                }
                let labelType = StyleValue(label).type
                if let inputType {
                    if labelContext.checkSubtype(inputType, labelType) != nil { return nil }
                } else {
                    inputType = labelType
                }
                if cases[matchLabel] != nil {
                    labelContext.error("Branch labels must be unique.")
                    return nil
                }
                cases[matchLabel] = outputs.count
            }
            guard let output = context.parse(items[index + 1], index: index + 1, expected: outputType) else {
                return nil
            }
            outputType = outputType ?? output.type
            outputs.append(output)
        }
        guard let input = context.parse(items[1], index: 1, expected: .value),
            let otherwise = context.parse(items[items.count - 1], index: items.count - 1, expected: outputType)
        else { return nil }
        let labelType = inputType ?? .value
        if input.type != .value, context.child(1).checkSubtype(labelType, input.type) != nil { return nil }
        return MatchNode(
            type: outputType ?? otherwise.type, inputType: labelType, input: input, cases: cases,
            outputs: outputs, otherwise: otherwise, key: context.key)
    }

    static func numberFormat(_ items: [JSONValue], _ context: ParsingContext) -> (any ExpressionNode)? {
        guard items.count == 3 else {
            context.error("Expected two arguments.")
            return nil
        }
        guard let number = context.parse(items[1], index: 1, expected: .number) else { return nil }
        guard case .object(let options) = items[2] else {
            context.error("NumberFormat options argument must be an object.")
            return nil
        }
        if options["currency"] != nil && options["unit"] != nil {
            context.error("NumberFormat options `currency` and `unit` are mutually exclusive")
            return nil
        }
        // Parsed in order, stopping at the first that fails (so only its errors are reported).
        var failed = false
        func option(_ name: String, _ type: StyleType) -> (any ExpressionNode)? {
            guard !failed, let value = options[name], value.isTruthyJSON else { return nil }
            let parsed = context.parse(value, index: 1, expected: type)
            if parsed == nil { failed = true }
            return parsed
        }
        let locale = option("locale", .string), currency = option("currency", .string), unit = option("unit", .string)
        let minimum = option("min-fraction-digits", .number), maximum = option("max-fraction-digits", .number)
        guard !failed else { return nil }
        return NumberFormatNode(
            number: number, locale: locale, currency: currency, unit: unit, minFractionDigits: minimum,
            maxFractionDigits: maximum, key: context.key)
    }

    static func semiliteral(_ items: [JSONValue], _ context: ParsingContext) -> (any ExpressionNode)? {
        guard items.count == 2 else {
            context.error(
                "'semiliteral' expression requires exactly one argument, but found \(items.count - 1) instead.")
            return nil
        }
        switch items[1] {
        case .array(let values):
            var nodes: [any ExpressionNode] = []
            for value in values {
                guard let node = context.parse(value, expected: .value) else { return nil }
                nodes.append(node)
            }
            var itemType: StyleType?
            for node in nodes {
                if itemType == nil {
                    itemType = node.type
                } else if itemType != node.type || node.type.kind == "array" {
                    itemType = .value
                    break
                }
            }
            return SemiliteralNode(
                type: .array(itemType ?? .value, count: nodes.count), items: nodes, names: nil, key: context.key)
        case .object(let object):
            let names = object.keys.sorted()
            var nodes: [any ExpressionNode] = []
            for name in names {
                guard let value = object[name], let node = context.parse(value, expected: .value) else { return nil }
                nodes.append(node)
            }
            return SemiliteralNode(type: .object, items: nodes, names: names, key: context.key)
        default:
            return literal(items, context)
        }
    }

    static func slice(_ items: [JSONValue], _ context: ParsingContext) -> (any ExpressionNode)? {
        guard items.count == 3 || items.count == 4 else {
            context.error("Expected 2 or 3 arguments, but found \(items.count - 1) instead.")
            return nil
        }
        let input = context.parse(items[1], index: 1, expected: .value)
        let begin = context.parse(items[2], index: 2, expected: .number)
        guard let input, let begin else { return nil }
        guard ["array", "string", "value"].contains(input.type.kind) else {
            context.error("Expected first argument to be of type array or string, but found \(input.type) instead")
            return nil
        }
        var end: (any ExpressionNode)?
        if items.count == 4 {
            guard let parsed = context.parse(items[3], index: 3, expected: .number) else { return nil }
            end = parsed
        }
        return SliceNode(type: input.type, input: input, begin: begin, end: end, key: context.key)
    }

    /// `step` and `interpolate` take an input, then label/output pairs: at least 4 arguments,
    /// an even number of them.
    private static func hasStopPairs(_ items: [JSONValue], _ context: ParsingContext) -> Bool {
        guard items.count - 1 >= 4 else {
            context.error("Expected at least 4 arguments, but found only \(items.count - 1).")
            return false
        }
        guard (items.count - 1) % 2 == 0 else {
            context.error("Expected an even number of arguments.")
            return false
        }
        return true
    }

    static func step(_ items: [JSONValue], _ context: ParsingContext) -> (any ExpressionNode)? {
        guard hasStopPairs(items, context) else { return nil }
        guard let input = context.parse(items[1], index: 1, expected: .number) else { return nil }
        var outputType = context.expectedType.flatMap { $0 == .value ? nil : $0 }
        var labels: [Double] = [], outputs: [any ExpressionNode] = []
        for index in stride(from: 1, to: items.count, by: 2) {
            let label: Double
            if index == 1 {
                label = -.infinity
            } else {
                guard case .number(let value) = items[index] else {
                    context.error(
                        "Input/output pairs for \"step\" expressions must be defined using literal numeric values (not computed expressions) for the input values.",
                        index)
                    return nil
                }
                label = value
            }
            if let last = labels.last, last >= label {
                context.error(
                    "Input/output pairs for \"step\" expressions must be arranged with input values in strictly ascending order.",
                    index)
                return nil
            }
            guard let output = context.parse(items[index + 1], index: index + 1, expected: outputType) else {
                return nil
            }
            outputType = outputType ?? output.type
            labels.append(label)
            outputs.append(output)
        }
        return StepNode(type: outputType ?? .value, input: input, labels: labels, outputs: outputs, key: context.key)
    }

    static func interpolate(_ items: [JSONValue], _ context: ParsingContext) -> (any ExpressionNode)? {
        let op = items[0].stringValue ?? "interpolate"
        guard items.count > 1, case .array(let kind) = items[1], let name = kind.first else {
            context.error("Expected an interpolation type expression.", 1)
            return nil
        }
        let interpolation: Interpolation
        switch name.stringValue {
        case "linear": interpolation = .linear
        case "exponential":
            guard kind.count > 1, case .number(let base) = kind[1] else {
                context.error("Exponential interpolation requires a numeric base.", 1, 1)
                return nil
            }
            interpolation = .exponential(base: base)
        case "cubic-bezier":
            let points = kind.dropFirst().compactMap { value -> Double? in
                if case .number(let n) = value, n >= 0, n <= 1 { return n }
                return nil
            }
            guard points.count == 4, kind.count == 5 else {
                context.error(
                    "Cubic bezier interpolation requires four numeric arguments with values between 0 and 1.", 1)
                return nil
            }
            interpolation = .cubicBezier(points[0], points[1], points[2], points[3])
        default:
            context.error("Unknown interpolation type \(name.stringValue ?? name.serialized)", 1, 0)
            return nil
        }
        guard hasStopPairs(items, context) else { return nil }
        guard let input = context.parse(items[2], index: 2, expected: .number) else { return nil }
        var outputType: StyleType?
        if (op == "interpolate-hcl" || op == "interpolate-lab") && context.expectedType != .colorArray {
            outputType = .color
        } else if let expected = context.expectedType, expected != .value {
            outputType = expected
        }
        var labels: [Double] = [], outputs: [any ExpressionNode] = []
        for index in stride(from: 3, to: items.count, by: 2) {
            guard case .number(let label) = items[index] else {
                context.error(
                    "Input/output pairs for \"interpolate\" expressions must be defined using literal numeric values (not computed expressions) for the input values.",
                    index)
                return nil
            }
            if let last = labels.last, last >= label {
                context.error(
                    "Input/output pairs for \"interpolate\" expressions must be arranged with input values in strictly ascending order.",
                    index)
                return nil
            }
            guard index + 1 < items.count,
                let output = context.parse(items[index + 1], index: index + 1, expected: outputType)
            else { return nil }
            outputType = outputType ?? output.type
            labels.append(label)
            outputs.append(output)
        }
        let type = outputType ?? .value
        let interpolatable: Bool =
            switch type {
            case .number, .projectionDefinition, .color, .padding, .numberArray, .colorArray,
                .variableAnchorOffsetCollection:
                true
            case .array(.number, let count): count != nil
            default: false
            }
        guard interpolatable else {
            context.error("Type \(type) is not interpolatable.")
            return nil
        }
        let space: InterpolateNode.Space = op == "interpolate-hcl" ? .hcl : op == "interpolate-lab" ? .lab : .rgb
        return InterpolateNode(
            type: type, space: space, interpolation: interpolation, input: input, labels: labels,
            outputs: outputs, key: context.key)
    }

    static func comparison(_ items: [JSONValue], _ context: ParsingContext) -> (any ExpressionNode)? {
        guard items.count == 3 || items.count == 4 else {
            context.error("Expected two or three arguments.")
            return nil
        }
        let op = items[0].stringValue ?? "=="
        let ordering = op != "==" && op != "!="
        func comparable(_ type: StyleType) -> Bool {
            ordering
                ? [.string, .number, .value].contains(type)
                : [.boolean, .string, .number, .null, .value].contains(type)
        }
        guard var lhs = context.parse(items[1], index: 1, expected: .value) else { return nil }
        guard comparable(lhs.type) else {
            context.child(1).error("\"\(op)\" comparisons are not supported for type '\(lhs.type)'.")
            return nil
        }
        guard var rhs = context.parse(items[2], index: 2, expected: .value) else { return nil }
        guard comparable(rhs.type) else {
            context.child(2).error("\"\(op)\" comparisons are not supported for type '\(rhs.type)'.")
            return nil
        }
        if lhs.type != rhs.type && lhs.type != .value && rhs.type != .value {
            context.error("Cannot compare types '\(lhs.type)' and '\(rhs.type)'.")
            return nil
        }
        if ordering {
            if lhs.type == .value && rhs.type != .value {
                lhs = AssertionNode(type: rhs.type, arguments: [lhs], key: context.key)
            } else if lhs.type != .value && rhs.type == .value {
                rhs = AssertionNode(type: lhs.type, arguments: [rhs], key: context.key)
            }
        }
        var collator: (any ExpressionNode)?
        if items.count == 4 {
            if ![lhs.type, rhs.type].contains(where: { $0 == .string || $0 == .value }) {
                context.error("Cannot use collator to compare non-string types.")
                return nil
            }
            guard let parsed = context.parse(items[3], index: 3, expected: .collator) else { return nil }
            collator = parsed
        }
        return ComparisonNode(op: op, lhs: lhs, rhs: rhs, collator: collator, key: context.key)
    }

    /// Mapbox's `["config", option]` (or `[..., option, scope]`).
    static func config(_ items: [JSONValue], _ context: ParsingContext) -> (any ExpressionNode)? {
        guard items.count == 2 || items.count == 3, case .string(let option) = items[1] else {
            context.error(
                "Invalid configuration key: \"config\" expects an option name (a string) and an optional scope.")
            return nil
        }
        return ConfigNode(option: option, key: context.key)
    }

    static func globalState(_ items: [JSONValue], _ context: ParsingContext) -> (any ExpressionNode)? {
        guard items.count == 2 else {
            context.error("Expected 1 argument, but found \(items.count - 1) instead.")
            return nil
        }
        switch items[1] {
        case .null:
            context.error("Global state property must be defined.")
            return nil
        case .string(let name):
            return GlobalStateNode(property: name, key: context.key)
        default:
            context.error("Global state property must be string, but found \(items[1].javaScriptTypeName) instead.")
            return nil
        }
    }
}

extension StyleType {
    /// Arrays as `array<value>`, for membership tests on kinds.
    var kindType: StyleType {
        if case .array = self { return .array(.value) }
        return self
    }
}

extension JSONValue {
    /// JavaScript truthiness of a JSON value (`0`, `""`, `false`, null are false).
    var isTruthyJSON: Bool {
        switch self {
        case .null: false
        case .bool(let value): value
        case .number(let value): value != 0 && !value.isNaN
        case .string(let value): !value.isEmpty
        case .array, .object: true
        }
    }
}
