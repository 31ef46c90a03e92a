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
}

extension StyleDocument {
    /// The parts of `style` (an emitted copy) that MapLibre would not load as they are:
    /// expressions that do not parse or type-check as the style specification says (`zoom`
    /// only as the input of a top-level curve, but anywhere in a filter), Mapbox-only
    /// operators, and a `visibility` that is not "visible" or "none". Property types beyond
    /// what an expression says of itself are not checked.
    public static func mapLibreProblems(in style: JSONValue) -> [MapLibreProblem] {
        var problems: [MapLibreProblem] = []
        for (index, layer) in (style["layers"]?.arrayValue ?? []).enumerated() {
            let id = layer["id"]?.stringValue ?? ""
            func problem(_ property: String, _ message: String) {
                problems.append(MapLibreProblem(layer: index, id: id, property: property, message: message))
            }
            if let filter = layer["filter"],
                let message = expressionProblem(
                    LegacyFilter.convert(filter), specification: StyleLayer.filterSpecification)
            {
                problem("filter", message)
            }
            for group in ["layout", "paint"] {
                for (name, value) in (layer[group]?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
                    if name == "visibility" {
                        if value != .string("visible") && value != .string("none") {
                            problem("layout.visibility", "expected \"visible\" or \"none\", found \(value.serialized)")
                        }
                        continue
                    }
                    guard isExpression(value) else { continue }
                    if let message = expressionProblem(value, specification: PropertySpecification(type: "")) {
                        problem("\(group).\(name)", message)
                    }
                }
            }
        }
        return problems
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

    /// `style` without the properties of `problems`, and without the layers whose filter is
    /// one (a layer without its filter would show every feature).
    static func removing(_ problems: [MapLibreProblem], from style: JSONValue) -> JSONValue {
        guard case .object(var root) = style, case .array(var layers)? = root["layers"] else { return style }
        let dropped = Set(problems.filter { $0.property == "filter" }.map(\.layer))
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
