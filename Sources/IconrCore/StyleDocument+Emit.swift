extension StyleDocument {
    /// A copy of the style that MapLibre renders with prebaked sprites: `sprite` set to
    /// `spriteURL`, and each parameterized `["image", name, {"params": ...}]` replaced by an
    /// expression that yields the sprite id of the variant the feature needs:
    /// `["match", <the parameter colors as to-string text, joined by "|">, <text>, <id>, ..., name]`.
    /// `templates` gives each icon's declared parameters; `needed` the variants in the sprite.
    public func emitted(spriteURL: String, templates: [String: SVGTemplate], needed: [ImageReference]) -> JSONValue {
        guard case .object(var style) = json else { return json }
        style["sprite"] = .string(spriteURL)
        if case .array(let layers)? = style["layers"] {
            style["layers"] = .array(layers.map { layer in
                guard layer["type"]?.stringValue == "symbol", case .object(var object) = layer,
                      case .object(var layout)? = object["layout"], let image = layout["icon-image"] else { return layer }
                layout["icon-image"] = Self.rewrite(image, templates: templates, needed: needed)
                object["layout"] = .object(layout)
                return .object(object)
            })
        }
        return .object(style)
    }

    private static func rewrite(_ json: JSONValue, templates: [String: SVGTemplate], needed: [ImageReference]) -> JSONValue {
        guard case .array(let items) = json, case .string(let name)? = items.first else { return json }
        if name == "literal" { return json }
        if name == "image", items.count >= 3, case .string(let icon) = items[1], case .object(let options) = items[2],
           case .object(let params)? = options["params"], let template = templates[icon] {
            return prebaked(icon, params: params, template: template, needed: needed.filter { $0.name == icon })
        }
        return .array(items.map { rewrite($0, templates: templates, needed: needed) })
    }

    /// The `match` expression choosing among the variants of `icon` by its parameter colors.
    private static func prebaked(_ icon: String, params: [String: JSONValue], template: SVGTemplate,
                                 needed: [ImageReference]) -> JSONValue {
        let declared = template.parameters.sorted { $0.name < $1.name }
        guard !declared.isEmpty else { return .string(icon) }
        var key: [JSONValue] = ["concat"].map(JSONValue.string)
        for (index, parameter) in declared.enumerated() {
            if index > 0 { key.append(.string("|")) }
            let value = params[parameter.name] ?? .string(parameter.defaultColor.hexString)
            key.append(.array([.string("to-string"), .array([.string("to-color"), value, .string(parameter.defaultColor.hexString)])]))
        }
        var branches: [JSONValue] = []
        var labels = Set<String>()
        for reference in needed {
            let label = declared.map { ExpressionValue.color(reference.params[$0.name] ?? $0.defaultColor).text }.joined(separator: "|")
            guard labels.insert(label).inserted else { continue }
            let id = SpriteID.variant(of: icon, template.resolve(colors: reference.params))
            branches += [.string(label), .string(id)]
        }
        guard !branches.isEmpty else { return .string(icon) }
        return .array([.string("match"), .array(key)] + branches + [.string(icon)])
    }
}
