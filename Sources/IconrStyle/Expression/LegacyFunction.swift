import IconrCore

/// Legacy property functions (`{"property": ..., "type": ..., "stops": [...]}`) and `{token}`
/// strings, rewritten as the expressions they mean (the specification's own conversion).
enum LegacyFunction {
    static func isFunction(_ json: JSONValue) -> Bool {
        if case .object = json { return true }
        return false
    }

    static func convert(_ parameters: JSONValue, _ spec: PropertySpecification) -> JSONValue {
        guard let rawStops = parameters["stops"]?.arrayValue else { return identity(parameters, spec) }
        let firstInput = rawStops.first?.arrayValue?.first
        let zoomAndFeature = firstInput.map { $0.javaScriptTypeName == "object" } ?? false
        let featureDependent = zoomAndFeature || parameters["property"] != nil
        let zoomDependent = zoomAndFeature || !featureDependent
        let stops: [(JSONValue, JSONValue)] = rawStops.map { stop in
            let pair = stop.arrayValue ?? []
            let input = pair.first ?? .null, output = pair.count > 1 ? pair[1] : .null
            if !featureDependent && spec.tokens, case .string(let text) = output { return (input, tokens(text)) }
            return (input, literal(output))
        }
        if zoomAndFeature { return zoomAndProperty(parameters, spec, stops) }
        if zoomDependent { return zoom(parameters, spec, stops) }
        return property(parameters, spec, stops)
    }

    /// `"Name: {name}"` as `["concat", "Name: ", ["get", "name"]]`; text without tokens as it is.
    static func tokens(_ text: String) -> JSONValue {
        var parts: [JSONValue] = [.string("concat")]
        var rest = Substring(text)
        var literalText = ""
        while let open = rest.firstIndex(of: "{") {
            let afterOpen = rest.index(after: open)
            guard let close = rest[afterOpen...].firstIndex(where: { $0 == "}" || $0 == "{" }) else { break }
            if rest[close] == "{" || close == afterOpen {
                literalText += rest[..<close]
                rest = rest[close...]
                if rest.first == "}" {
                    literalText += "}"
                    rest = rest.dropFirst()
                }
                continue
            }
            literalText += rest[..<open]
            if !literalText.isEmpty { parts.append(.string(literalText)) }
            literalText = ""
            parts.append(.array([.string("get"), .string(String(rest[afterOpen..<close]))]))
            rest = rest[rest.index(after: close)...]
        }
        literalText += rest
        if parts.count == 1 { return .string(text) }
        if !literalText.isEmpty {
            parts.append(.string(literalText))
        } else if parts.count == 2 {
            return .array([.string("to-string"), parts[1]])
        }
        return .array(parts)
    }

    private static func literal(_ value: JSONValue) -> JSONValue {
        value.javaScriptTypeName == "object" ? .array([.string("literal"), value]) : value
    }

    private static func identity(_ parameters: JSONValue, _ spec: PropertySpecification) -> JSONValue {
        let get = JSONValue.array([.string("get"), parameters["property"] ?? .null])
        guard let fallback = parameters["default"] else {
            return spec.type == "string" ? .array([.string("string"), get]) : get
        }
        if spec.type == "enum" {
            return .array([.string("match"), get, .array(spec.enumValues.map(JSONValue.string)), get, fallback])
        }
        var expression: [JSONValue] = [.string(spec.type == "color" ? "to-color" : spec.type), get, literal(fallback)]
        if spec.type == "array" {
            expression.insert(
                contentsOf: [
                    spec.value.map(JSONValue.string) ?? .null, spec.length.map { .number(Double($0)) } ?? .null,
                ], at: 1)
        }
        return .array(expression)
    }

    private static func interpolateOperator(_ parameters: JSONValue) -> JSONValue {
        switch parameters["colorSpace"]?.stringValue {
        case "hcl": .string("interpolate-hcl")
        case "lab": .string("interpolate-lab")
        default: .string("interpolate")
        }
    }

    private static func functionType(_ parameters: JSONValue, _ spec: PropertySpecification) -> String {
        if let type = parameters["type"]?.stringValue { return type }
        return spec.interpolated ? "exponential" : "interval"
    }

    private static func append(_ curve: inout [JSONValue], _ input: JSONValue, _ output: JSONValue, step: Bool) {
        // Duplicate stops were never validated for functions; expressions refuse them.
        if curve.count > 3 && input == curve[curve.count - 2] { return }
        if !(step && curve.count == 2) { curve.append(input) }
        curve.append(output)
    }

    private static func fixDegenerateStep(_ curve: inout [JSONValue]) {
        if curve.first == .string("step") && curve.count == 3 {
            curve.append(.number(0))
            curve.append(curve[2])
        }
    }

    private static func fallback(_ parameters: JSONValue, _ spec: PropertySpecification) -> JSONValue {
        if let value = parameters["default"] ?? spec.defaultValue { return literal(value) }
        return spec.type == "resolvedImage" ? .string("") : .null
    }

    private static func withDefault(_ expression: JSONValue, _ parameters: JSONValue, _ get: JSONValue) -> JSONValue {
        guard let fallback = parameters["default"] else { return expression }
        return .array([
            .string("case"), .array([.string("=="), .array([.string("typeof"), get]), .string("number")]),
            expression, literal(fallback),
        ])
    }

    private static func property(
        _ parameters: JSONValue, _ spec: PropertySpecification,
        _ stops: [(JSONValue, JSONValue)]
    ) -> JSONValue {
        let type = functionType(parameters, spec)
        let get = JSONValue.array([.string("get"), parameters["property"] ?? .null])
        switch type {
        case "categorical":
            if case .bool? = stops.first?.0 {
                var expression: [JSONValue] = [.string("case")]
                for stop in stops { expression += [.array([.string("=="), get, stop.0]), stop.1] }
                expression.append(fallback(parameters, spec))
                return .array(expression)
            }
            var expression: [JSONValue] = [.string("match"), get]
            for stop in stops { append(&expression, stop.0, stop.1, step: false) }
            expression.append(fallback(parameters, spec))
            return .array(expression)
        case "interval":
            var expression: [JSONValue] = [.string("step"), .array([.string("number"), get])]
            for stop in stops { append(&expression, stop.0, stop.1, step: true) }
            fixDegenerateStep(&expression)
            return withDefault(.array(expression), parameters, get)
        default:
            let base = parameters["base"] ?? .number(1)
            var expression: [JSONValue] = [
                interpolateOperator(parameters),
                base == .number(1) ? .array([.string("linear")]) : .array([.string("exponential"), base]),
                .array([.string("number"), get]),
            ]
            for stop in stops { append(&expression, stop.0, stop.1, step: false) }
            return withDefault(.array(expression), parameters, get)
        }
    }

    private static func zoom(
        _ parameters: JSONValue, _ spec: PropertySpecification,
        _ stops: [(JSONValue, JSONValue)]
    ) -> JSONValue {
        let input = JSONValue.array([.string("zoom")])
        var expression: [JSONValue]
        let step = functionType(parameters, spec) == "interval"
        if step {
            expression = [.string("step"), input]
        } else {
            let base = parameters["base"] ?? .number(1)
            expression = [
                interpolateOperator(parameters),
                base == .number(1) ? .array([.string("linear")]) : .array([.string("exponential"), base]), input,
            ]
        }
        for stop in stops { append(&expression, stop.0, stop.1, step: step) }
        fixDegenerateStep(&expression)
        return .array(expression)
    }

    private static func zoomAndProperty(
        _ parameters: JSONValue, _ spec: PropertySpecification,
        _ stops: [(JSONValue, JSONValue)]
    ) -> JSONValue {
        var zooms: [JSONValue] = []
        var stopsByZoom: [JSONValue: [(JSONValue, JSONValue)]] = [:]
        for stop in stops {
            let zoom = stop.0["zoom"] ?? .null
            if stopsByZoom[zoom] == nil { zooms.append(zoom) }
            stopsByZoom[zoom, default: []].append((stop.0["value"] ?? .null, stop.1))
        }
        var inner: [String: JSONValue] = [:]
        for key in ["type", "property", "default"] { inner[key] = parameters[key] }
        let step = functionType(.object([:]), spec) != "exponential"
        var expression: [JSONValue] =
            step
            ? [.string("step"), .array([.string("zoom")])]
            : [interpolateOperator(parameters), .array([.string("linear")]), .array([.string("zoom")])]
        for zoom in zooms {
            var innerParameters = inner
            innerParameters["zoom"] = zoom
            let output = property(.object(innerParameters), spec, stopsByZoom[zoom] ?? [])
            append(&expression, zoom, output, step: step)
        }
        if step { fixDegenerateStep(&expression) }
        return .array(expression)
    }
}
