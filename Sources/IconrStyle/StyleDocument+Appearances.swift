import IconrCore

/// Mapbox's layer `appearances` (GL JS 3.16): named sets of properties that apply where their
/// condition holds, written into the layer's own properties, which MapLibre reads.
extension StyleDocument {
    /// `style` with each layer's `appearances` written into its properties: a property an
    /// appearance sets becomes `["case", condition1, value1, condition2, ..., own value]` (the
    /// first appearance whose condition holds wins, as in Mapbox). A condition that reads the
    /// zoom becomes a `step` on the zoom with the condition taken at each whole zoom (MapLibre
    /// takes the zoom only as a curve's input). `measure-light` is resolved later, with the
    /// other Mapbox-only operators. What MapLibre cannot express is left out with a warning:
    /// `feature-state` in a layout property's condition, a zoom condition over values that
    /// are zoom curves themselves, a property with neither a value of the layer's own nor a default to fall back to.
    static func resolvingAppearances(_ style: JSONValue, file: String) -> (json: JSONValue, warnings: [String]) {
        guard case .object(var root) = style, case .array(var layers)? = root["layers"] else { return (style, []) }
        var warnings: [String] = []
        for (index, item) in layers.enumerated() {
            guard case .object(var layer) = item, case .array(let appearances)? = layer["appearances"] else {
                continue
            }
            layer["appearances"] = nil
            let id = layer["id"]?.stringValue ?? "layers[\(index)]"
            let type = layer["type"]?.stringValue ?? ""
            var names: [String] = []
            for appearance in appearances {
                for name in (appearance["properties"]?.objectValue ?? [:]).keys.sorted() where !names.contains(name) {
                    names.append(name)
                }
            }
            var written: [String] = []
            for name in names {
                let group =
                    MapLibreProperties.specification(layerType: type, group: "layout", name: name) != nil
                    ? "layout" : "paint"
                var properties = layer[group]?.objectValue ?? [:]
                // Where no appearance applies: the layer's value, else the property's default.
                let own =
                    properties[name]
                    ?? MapLibreProperties.specification(layerType: type, group: group, name: name)?.defaultValue
                    ?? (name == "icon-image" ? .string("") : nil)
                var branches: [(condition: JSONValue, value: JSONValue)] = []
                for (number, appearance) in appearances.enumerated() {
                    guard let value = appearance["properties"]?[name] else { continue }
                    let label = "layer \"\(id)\": appearance \"\(appearance["name"]?.stringValue ?? "#\(number)")\""
                    let condition = appearance["condition"] ?? .bool(true)
                    if group == "layout" && condition.serialized.containsUTF8("\"feature-state\"") {
                        warnings.append(
                            "\(file): \(label): its condition reads feature-state, which MapLibre's layout property "
                                + "\(name) cannot: left out")
                        continue
                    }
                    branches.append((condition, value))
                }
                guard !branches.isEmpty else { continue }
                guard let own else {
                    warnings.append(
                        "\(file): layer \"\(id)\": \(name) is set by appearances only, and MapLibre has no default "
                            + "for where none applies: left out")
                    continue
                }
                guard let value = Self.choosing(branches, otherwise: own) else {
                    warnings.append(
                        "\(file): layer \"\(id)\": the appearances' \(name) depends on the zoom in its condition and "
                            + "in its values, which MapLibre cannot express: left out")
                    continue
                }
                properties[name] = value
                layer[group] = .object(properties)
                written.append(name)
            }
            if !written.isEmpty {
                let named = appearances.compactMap { $0["name"]?.stringValue }.map { "\"\($0)\"" }
                warnings.append(
                    "\(file): layer \"\(id)\": Mapbox-only appearances \(named.joined(separator: ", ")) written into "
                        + written.joined(separator: ", ") + " on their conditions")
            }
            layers[index] = .object(layer)
        }
        root["layers"] = .array(layers)
        return (.object(root), warnings)
    }

    /// `case` over `branches`, else `otherwise`; a `step` on the zoom of such cases (the
    /// zoom put in each condition) when a condition reads it; nil when values are zoom curves
    /// too (a curve may not nest in a curve).
    private static func choosing(
        _ branches: [(condition: JSONValue, value: JSONValue)], otherwise: JSONValue
    )
        -> JSONValue?
    {
        func choice(_ branches: [(condition: JSONValue, value: JSONValue)]) -> JSONValue {
            .array([.string("case")] + branches.flatMap { [$0.condition, $0.value] } + [otherwise])
        }
        guard branches.contains(where: { readsZoom($0.condition) }) else { return choice(branches) }
        guard !readsZoom(otherwise), !branches.contains(where: { readsZoom($0.value) }) else { return nil }
        var step: [JSONValue] = [.string("step"), .array([.string("zoom")])]
        var last: JSONValue?
        for zoom in 0...24 {
            // Each condition at this zoom, decided now where it reads nothing else.
            var atThisZoom: [(condition: JSONValue, value: JSONValue)] = []
            for branch in branches {
                let condition = replacingZoom(in: branch.condition, by: Double(zoom))
                switch decided(condition) {
                case false?: continue
                case true?: atThisZoom.append((.bool(true), branch.value))
                case nil: atThisZoom.append((condition, branch.value))
                }
                if atThisZoom.last?.condition == .bool(true) { break }
            }
            let atZoom =
                atThisZoom.first?.condition == .bool(true)
                ? atThisZoom[0].value
                : atThisZoom.isEmpty ? otherwise : choice(atThisZoom)
            guard atZoom != last else { continue }
            if last != nil { step.append(.number(Double(zoom))) }
            step.append(atZoom)
            last = atZoom
        }
        return .array(step)
    }

    /// The value of a condition that reads no data (nor any Mapbox-only input, which is
    /// resolved later with the build's settings), or nil.
    private static func decided(_ condition: JSONValue) -> Bool? {
        guard !mapboxOnlyOperators.contains(where: { condition.serialized.containsUTF8("\"\($0)\"") }),
            case .success(let compiled) = CompiledExpression.compile(
                condition, specification: PropertySpecification(type: "boolean")),
            compiled.isFeatureConstant, compiled.isZoomConstant,
            case .boolean(let value)? = try? compiled.evaluate(EvaluationContext())
        else { return nil }
        return value
    }

    private static func readsZoom(_ value: JSONValue) -> Bool {
        value.serialized.containsUTF8(#"["zoom"]"#)
    }

    /// `value` with every `["zoom"]` replaced by `zoom`.
    private static func replacingZoom(in value: JSONValue, by zoom: Double) -> JSONValue {
        switch value {
        case .array(let items) where items == [.string("zoom")]: .number(zoom)
        case .array(let items): .array(items.map { replacingZoom(in: $0, by: zoom) })
        case .object(let fields): .object(fields.mapValues { replacingZoom(in: $0, by: zoom) })
        default: value
        }
    }
}
