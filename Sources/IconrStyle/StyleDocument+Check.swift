import IconrCore

/// A part of a style that MapLibre would reject, or drop its layer for.
public struct MapLibreProblem: Sendable, Equatable, CustomStringConvertible {
    /// The layer's index in `layers`.
    public var layer: Int
    /// The layer's `id`.
    public var id: String
    /// `filter`, or `layout.<name>` / `paint.<name>`.
    public var property: String
    /// What is wrong, in the specification's words where the expression engine has them.
    public var message: String

    /// `layers[3] ("poi").layout.icon-image: ...`.
    public var description: String { "layers[\(layer)] (\"\(id)\").\(property): \(message)" }

    /// Whether the fix is to drop the layer (its `type` or `filter`), not one property: a
    /// layer without its filter would show every feature.
    public var dropsLayer: Bool { property == "type" || property == "filter" }
}

extension StyleDocument {
    /// The parts of `style` (an emitted copy) that MapLibre would not load as they are, by
    /// the MapLibre style specification (`MapLibreProperties`): a layer type MapLibre lacks;
    /// a layout or paint property its layer type lacks; an expression that does not parse or
    /// type-check for its property (data or zoom where the property takes none, `zoom` only as
    /// the input of a top-level curve but anywhere in a filter); Mapbox-only operators; a
    /// constant of the wrong type or not one of an enum's values.
    public static func mapLibreProblems(in style: JSONValue) -> [MapLibreProblem] {
        var problems: [MapLibreProblem] = []
        for (index, layer) in (style["layers"]?.arrayValue ?? []).enumerated() {
            let id = layer["id"]?.stringValue ?? ""
            func problem(_ property: String, _ message: String) {
                problems.append(MapLibreProblem(layer: index, id: id, property: property, message: message))
            }
            let type = layer["type"]?.stringValue ?? ""
            guard MapLibreProperties.layerTypes.contains(type) else {
                problem("type", "MapLibre has no layer type \(layer["type"]?.serialized ?? "(none)")")
                continue
            }
            if let filter = layer["filter"],
                let message = expressionProblem(
                    LegacyFilter.convert(filter), specification: StyleLayer.filterSpecification)
            {
                problem("filter", message)
            }
            for group in ["layout", "paint"] {
                for (name, value) in (layer[group]?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
                    guard
                        let specification = MapLibreProperties.specification(layerType: type, group: group, name: name)
                    else {
                        problem("\(group).\(name)", "MapLibre's \(type) layers have no \(group) property \"\(name)\"")
                        continue
                    }
                    let message =
                        if name == "visibility" {
                            value == .string("visible") || value == .string("none")
                                ? nil : "expected \"visible\" or \"none\", found \(value.serialized)"
                        } else if isExpression(value) || LegacyFunction.isFunction(value) {
                            expressionProblem(value, specification: specification)
                        } else {
                            constantProblem(value, specification: specification)
                        }
                    if let message { problem("\(group).\(name)", message) }
                }
            }
        }
        return problems
    }

    /// Why MapLibre would reject the constant `value` for a property of `specification`, or nil.
    private static func constantProblem(_ value: JSONValue, specification: PropertySpecification) -> String? {
        func expected(_ what: String) -> String { "expected \(what), found \(value.serialized)" }
        func isNumber(_ value: JSONValue) -> Bool {
            if case .number = value { return true }
            return false
        }
        let values = specification.enumValues
        let oneOf = "one of " + values.map { "\"\($0)\"" }.joined(separator: ", ")
        switch (specification.type, value) {
        case ("number", .number), ("boolean", .bool), ("string", .string), ("formatted", .string),
            ("resolvedImage", .string):
            return nil
        case ("enum", .string(let text)):
            return values.contains(text) ? nil : expected(oneOf)
        case ("color", .string):
            return expressionProblem(value, specification: specification)
        case ("padding", .number): return nil
        case ("padding", .array(let items)):
            return (1...4).contains(items.count) && items.allSatisfy(isNumber) ? nil : expected("1 to 4 numbers")
        case ("variableAnchorOffsetCollection", .array): return nil
        case ("array", .array(let items)):
            if let length = specification.length, items.count != length {
                return expected("an array of \(length)")
            }
            let item = specification.value ?? ""
            let fits = items.allSatisfy { item in
                switch (specification.value, item) {
                case ("number", .number), ("string", .string): true
                case ("enum", .string(let text)): values.contains(text)
                default: false
                }
            }
            return fits ? nil : expected("an array of \(item == "enum" ? oneOf : item + "s")")
        default:
            let article = specification.type.first.map { "aeio".contains($0) } == true ? "an" : "a"
            return expected("\(article) \(specification.type)")
        }
    }

    /// Whether `value` is an expression (an array naming an operator), not a constant array
    /// such as `text-font`'s names or `icon-offset`'s numbers.
    private static func isExpression(_ value: JSONValue) -> Bool {
        guard case .array(let items) = value, case .string(let op)? = items.first else { return false }
        return CompoundExpressions.isOperator(op) || StyleDocument.mapboxOnlyOperators.contains(op)
    }

    /// Why MapLibre would reject `value`, or nil.
    private static func expressionProblem(_ value: JSONValue, specification: PropertySpecification) -> String? {
        switch CompiledExpression.compile(value, specification: specification) {
        case .failure(let failure):
            let first = failure.errors.first
            return (first.map { "\($0.key.isEmpty ? "" : $0.key + ": ")\($0.message)" }) ?? "invalid expression"
        case .success(let compiled):
            return mapboxOnlyOperator(in: compiled.root).map {
                "\"\($0)\" is Mapbox-only: MapLibre has no such operator"
            }
        }
    }

    private static func mapboxOnlyOperator(in node: any ExpressionNode) -> String? {
        if node is ConfigNode { return "config" }
        if let compound = node as? CompoundNode, StyleDocument.mapboxOnlyOperators.contains(compound.name) {
            return compound.name
        }
        for child in node.children {
            if let name = mapboxOnlyOperator(in: child) { return name }
        }
        return nil
    }

    /// `style` without the properties of `problems`, and without the layers whose type or
    /// filter is one (`dropsLayer`).
    static func removing(_ problems: [MapLibreProblem], from style: JSONValue) -> JSONValue {
        guard case .object(var root) = style, case .array(var layers)? = root["layers"] else { return style }
        let dropped = Set(problems.filter(\.dropsLayer).map(\.layer))
        for problem in problems where !dropped.contains(problem.layer) {
            guard layers.indices.contains(problem.layer), case .object(var layer) = layers[problem.layer] else {
                continue
            }
            let parts = problem.property.split(separator: ".", maxSplits: 1).map(String.init)
            if parts.count == 2, case .object(var group)? = layer[parts[0]] {
                group[parts[1]] = nil
                layer[parts[0]] = .object(group)
            } else {
                layer[problem.property] = nil
            }
            layers[problem.layer] = .object(layer)
        }
        root["layers"] = .array(layers.indices.filter { !dropped.contains($0) }.map { layers[$0] })
        return .object(root)
    }
}
