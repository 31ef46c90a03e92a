import IconrCore

/// A part of a style that MapLibre would reject, or drop its layer for.
public struct MapLibreProblem: Sendable, Equatable, CustomStringConvertible {
    /// What `--lenient` removes for it.
    public enum Removal: Sendable, Equatable {
        /// The property (a layer's `layout.<name>`, `minzoom`, ...).
        case property
        /// The whole layer (its type, source, id or filter is wrong).
        case layer
        /// The root key (`light`, `center`, ...): no layer depends on it.
        case rootKey
        /// Nothing: the document itself is broken (`version`, `sources`, `glyphs`, a source).
        case none
    }

    /// The layer's index in `layers`; nil for a part of the document outside the layers.
    public var layer: Int?
    /// The layer's `id` ("" outside the layers, or for a layer without one).
    public var id: String
    /// In a layer: `filter`, `layout.<name>`, `paint.<name>`, `minzoom`, ..., or "" for the
    /// layer as a whole. Outside: the JSON path (`version`, `sources.osm.type`, `glyphs`).
    public var property: String
    /// What is wrong, in the specification's words (GL JS's validation messages).
    public var message: String
    /// What `--lenient` removes.
    public var removal: Removal

    /// A problem of layer `layer` (`property` "" for the layer as a whole).
    public init(layer: Int, id: String, property: String, message: String, removal: Removal? = nil) {
        self.layer = layer
        self.id = id
        self.property = property
        self.message = message
        self.removal = removal ?? (property == "type" || property == "filter" || property.isEmpty ? .layer : .property)
    }

    /// A problem of the document at JSON path `path`.
    public init(path: String, message: String, removal: Removal) {
        layer = nil
        id = ""
        property = path
        self.message = message
        self.removal = removal
    }

    /// `layers[3] ("poi").layout.icon-image: ...`, `layers[3] ("poi"): ...`, `sources.osm.type: ...`,
    /// or the message alone for the root object.
    public var description: String {
        guard let layer else { return property.isEmpty ? message : "\(property): \(message)" }
        return "layers[\(layer)] (\"\(id)\")\(property.isEmpty ? "" : "." + property): \(message)"
    }

    /// Whether the fix is to drop the layer (its `type`, `filter`, source or id), not one
    /// property: a layer without its filter would show every feature.
    public var dropsLayer: Bool { removal == .layer }
}

extension StyleDocument {
    /// The parts of `style` (an emitted copy) that MapLibre would not load as they are, by
    /// the MapLibre style specification, as GL JS validates a style before it loads it:
    /// - the document (`MapLibreDocument`): `version` 8, the required keys, the type of each
    ///   root property, each source by its type with its required fields, `sprite` (a URL, or
    ///   `{id, url}` entries with unique ids and URLs), `glyphs` with `{fontstack}` and
    ///   `{range}`, `light`, `sky`, `terrain`, `projection`, `transition`;
    /// - each layer: `id` present and unique, `type` or a `ref` to a layer that is no ref
    ///   (with none of the keys a ref layer takes from it), a source that exists and fits
    ///   the type (`source-layer` for a vector source), zooms within 0-24;
    /// - its properties (`MapLibreProperties`): a layout or paint property its layer type
    ///   lacks; an expression that does not parse or type-check for its property (data or zoom
    ///   where the property takes none, `zoom` only as the input of a top-level curve but
    ///   anywhere in a filter); Mapbox-only operators; a constant of the wrong type or not one
    ///   of an enum's values; `text-field` without `glyphs`.
    public static func mapLibreProblems(in style: JSONValue) -> [MapLibreProblem] {
        var check = DocumentCheck(style: style)
        check.root()
        guard case .array(let layers)? = style["layers"] else { return check.problems }
        var firstIndex: [String: Int] = [:]
        for (index, layer) in layers.enumerated() {
            guard case .object = layer else {
                check.problems.append(
                    MapLibreProblem(
                        layer: index, id: "", property: "",
                        message: "object expected, \(layer.specificationTypeName) found"))
                continue
            }
            let id = layer["id"]?.stringValue ?? ""
            let layerProblems = check.layer(layer, index: index, previous: firstIndex)
            if !id.isEmpty, firstIndex[id] == nil { firstIndex[id] = index }
            check.problems += layerProblems
            // A layer that is no layer for MapLibre (no type, a broken ref) has no properties to check.
            guard !layerProblems.contains(where: { $0.property == "type" || $0.property == "ref" }),
                layer["ref"] == nil
            else { continue }
            check.problems += properties(of: layer, index: index, id: id, glyphs: style["glyphs"] != nil)
        }
        return check.problems
    }

    /// The problems of a layer's `filter`, `layout` and `paint`.
    private static func properties(of layer: JSONValue, index: Int, id: String, glyphs: Bool) -> [MapLibreProblem] {
        var problems: [MapLibreProblem] = []
        func problem(_ property: String, _ message: String) {
            problems.append(MapLibreProblem(layer: index, id: id, property: property, message: message))
        }
        let type = layer["type"]?.stringValue ?? ""
        guard MapLibreProperties.layerTypes.contains(type) else {
            problem("type", "MapLibre has no layer type \(layer["type"]?.serialized ?? "(none)")")
            return problems
        }
        if let filter = layer["filter"],
            let message = expressionProblem(
                LegacyFilter.convert(filter), specification: StyleLayer.filterSpecification)
        {
            problem("filter", message)
        }
        for group in ["layout", "paint"] {
            guard let properties = layer[group] else { continue }
            guard case .object(let members) = properties else {
                problem(group, "object expected, \(properties.specificationTypeName) found")
                continue
            }
            for (name, value) in members.sorted(by: { $0.key < $1.key }) {
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
                    } else if name == "text-field" && !glyphs {
                        "use of \"text-field\" requires a style \"glyphs\" property"
                    } else if isExpression(value) || LegacyFunction.isFunction(value) {
                        expressionProblem(value, specification: specification)
                    } else {
                        constantProblem(value, specification: specification)
                    }
                if let message { problem("\(group).\(name)", message) }
            }
        }
        return problems
    }

    /// Why MapLibre would reject the constant `value` for a property of `specification`, or nil.
    static func constantProblem(_ value: JSONValue, specification: PropertySpecification) -> String? {
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
    static func isExpression(_ value: JSONValue) -> Bool {
        guard case .array(let items) = value, case .string(let op)? = items.first else { return false }
        return CompoundExpressions.isOperator(op) || StyleDocument.mapboxOnlyOperators.contains(op)
    }

    /// Why MapLibre would reject `value`, or nil.
    static func expressionProblem(_ value: JSONValue, specification: PropertySpecification) -> String? {
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

    /// `style` without what `problems` name: a root key, a property, or a whole layer
    /// (`dropsLayer`). Problems whose removal is `.none` are left as they are.
    static func removing(_ problems: [MapLibreProblem], from style: JSONValue) -> JSONValue {
        guard case .object(var root) = style else { return style }
        for problem in problems where problem.layer == nil && problem.removal == .rootKey {
            root[String(problem.property.split(separator: ".").first ?? "")] = nil
        }
        guard case .array(var layers)? = root["layers"] else { return .object(root) }
        let dropped = Set(problems.filter(\.dropsLayer).compactMap(\.layer))
        for problem in problems where problem.removal == .property {
            guard let index = problem.layer, !dropped.contains(index), layers.indices.contains(index),
                case .object(var layer) = layers[index]
            else { continue }
            let parts = problem.property.split(separator: ".", maxSplits: 1).map(String.init)
            if parts.count == 2, case .object(var group)? = layer[parts[0]] {
                group[parts[1]] = nil
                layer[parts[0]] = .object(group)
            } else {
                layer[problem.property] = nil
            }
            layers[index] = .object(layer)
        }
        root["layers"] = .array(layers.indices.filter { !dropped.contains($0) }.map { layers[$0] })
        return .object(root)
    }
}
