import IconrCore

/// The halos a symbol layer's `icon-halo-width`, `icon-halo-color` and `icon-halo-blur` ask
/// for, to bake into its images (`iconr sprite --bake-halos`): MapLibre and Mapbox draw them
/// around SDF icons only.
public struct LayerHalos: Sendable {
    /// Each halo a feature of the layer can have, with the label `label` computes for it.
    public var halos: [(label: String, halo: Halo)]
    /// The expression that computes a feature's label in the renderer; nil when every feature
    /// has the one halo in `halos`.
    public var label: JSONValue?
    /// The icons whose images have the halos baked in (nil: every icon the layer shows);
    /// the others keep none.
    public var icons: Set<String>?
}

extension StyleDocument {
    /// At most this many halos a layer (widths x colors x blurs): past it, none is baked.
    static let maximumHalos = 64

    /// The halos to bake for the symbol layer `layer` (its JSON), and a warning when it asks
    /// for halos that cannot be baked. None when it asks for none: no `icon-halo-width` or
    /// `icon-halo-color` (their defaults draw nothing), or a width of 0 or a transparent
    /// color for every feature. Halos that change with zoom or feature state cannot be baked:
    /// an image is chosen per feature, once. Values from data are the literal outputs of the
    /// expressions (`match`, `case`, ...) and those of the features the build has
    /// (`--data`); a feature whose halo is none of them shows no halo.
    public func bakedHalos(of layer: JSONValue) -> (halos: LayerHalos?, warning: String?) {
        let id = layer["id"]?.stringValue ?? ""
        guard layer["type"] == .string("symbol"), let paint = layer["paint"],
            let widthJSON = paint["icon-halo-width"], let colorJSON = paint["icon-halo-color"]
        else { return (nil, nil) }
        let place = "\(file): layer \"\(id)\""
        let number = PropertySpecification(type: "number")
        let blurJSON = paint["icon-halo-blur"] ?? .number(0)
        guard case .success(let width) = CompiledExpression.compile(widthJSON, specification: number),
            case .success(let color) = CompiledExpression.compile(
                colorJSON, specification: PropertySpecification(type: "color")),
            case .success(let blur) = CompiledExpression.compile(blurJSON, specification: number)
        else { return (nil, "\(place): its icon-halo-* do not compile: no halo baked") }
        let parts = [
            ("icon-halo-width", width, widthJSON), ("icon-halo-color", color, colorJSON),
            ("icon-halo-blur", blur, blurJSON),
        ]
        for (name, compiled, json) in parts {
            if !compiled.isZoomConstant || json.serialized.containsUTF8("\"feature-state\"") {
                return (
                    nil,
                    "\(place): \(name) changes with zoom or feature state: no halo baked (an image is chosen once per feature)"
                )
            }
        }
        // Each property's values: one, or the expression's literal outputs and the features'.
        var open: [String] = []
        func values(_ name: String, _ compiled: CompiledExpression) -> [StyleValue] {
            if compiled.isFeatureConstant { return (try? compiled.evaluate(context)).map { [$0] } ?? [] }
            let outputs = ExpressionOutputs.enumerate(compiled.root, context: context)
            if !outputs.open.isEmpty { open.append(name) }
            var found = outputs.values
            let source = layers.first { $0.id == id }?.source
            for feature in source.flatMap({ features[$0] }) ?? [] {
                var evaluation = context
                evaluation.feature = feature.feature
                if let value = try? compiled.evaluate(evaluation) { found.append(value) }
            }
            return found
        }
        func numbers(_ values: [StyleValue]) -> [Double] {
            Set(
                values.compactMap { value -> Double? in
                    if case .number(let number) = value, number.isFinite { return Self.tenths(number) }
                    return nil
                }
            ).sorted()
        }
        let widths = numbers(values("icon-halo-width", width))
        let blurs = numbers(values("icon-halo-blur", blur))
        var colors: [Color] = []
        for value in values("icon-halo-color", color) {
            if case .color(let found) = value, !colors.contains(found.color) { colors.append(found.color) }
        }
        var halos: [(label: String, halo: Halo)] = []
        for width in widths where width > 0 {
            for color in colors where color.alpha8 > 0 {
                for blur in blurs.isEmpty ? [0] : blurs where blur >= 0 {
                    let halo = Halo(width: width, color: color, blur: blur)
                    halos.append((Self.label(of: halo), halo))
                }
            }
        }
        guard halos.count <= Self.maximumHalos else {
            return (nil, "\(place): more than \(Self.maximumHalos) different halos: none baked")
        }
        guard !halos.isEmpty else { return (nil, nil) }
        let warning =
            open.isEmpty
            ? nil
            : "\(place): \(open.joined(separator: ", ")) comes from feature data the build has not seen: "
                + "features whose halo is not among its \(halos.count) values show none (give samples with --data)"
        let constant = width.isFeatureConstant && color.isFeatureConstant && blur.isFeatureConstant
        guard !constant else { return (LayerHalos(halos: halos, label: nil), warning) }
        return (
            LayerHalos(halos: halos, label: Self.labelExpression(width: widthJSON, color: colorJSON, blur: blurJSON)),
            warning
        )
    }

    /// A width or blur to a tenth of a pixel, as labels compare them.
    private static func tenths(_ value: Double) -> Double { (value * 10).rounded() / 10 }

    /// `W,COLOR,B`: width and blur in tenths of a pixel, the color as `Emitter` keys colors.
    static func label(of halo: Halo) -> String {
        "\(Int((halo.width * 10).rounded())),\(colorKey(halo.color)),\(Int((halo.blur * 10).rounded()))"
    }

    /// A color's label: `r,g,b,a` in 0-255, or `t` for fully transparent (renderers disagree
    /// on the channels of a transparent color).
    static func colorKey(_ color: Color) -> String {
        color.alpha8 == 0 ? "t" : "\(color.red),\(color.green),\(color.blue),\(color.alpha8)"
    }

    /// The expression that computes `label(of:)` of a feature's halo in the renderer.
    private static func labelExpression(width: JSONValue, color: JSONValue, blur: JSONValue) -> JSONValue {
        func tenths(_ value: JSONValue) -> JSONValue {
            .array([.string("to-string"), .array([.string("round"), .array([.string("*"), value, .number(10)])])])
        }
        return .array([
            .string("concat"), tenths(width), .string(","),
            colorKeyExpression(color, variable: "iconr_halo", fallback: "rgba(0,0,0,0)"),
            .string(","), tenths(blur),
        ])
    }

    /// The expression computing `colorKey` of a color value in the renderer (`fallback` where
    /// it is no color): its `to-rgba`, rounded, bound to `variable`.
    static func colorKeyExpression(_ value: JSONValue, variable: String, fallback: String) -> JSONValue {
        func channel(_ index: Int, scale: Bool = false) -> JSONValue {
            let component = JSONValue.array([
                .string("at"), .number(Double(index)), .array([.string("var"), .string(variable)]),
            ])
            return .array([.string("round"), scale ? .array([.string("*"), component, .number(255)]) : component])
        }
        let rgba = JSONValue.array([
            .string("to-rgba"), .array([.string("to-color"), value, .string(fallback)]),
        ])
        let transparent = JSONValue.array([
            .string("=="), .array([.string("at"), .number(3), .array([.string("var"), .string(variable)])]),
            .number(0),
        ])
        let text = JSONValue.array([
            .string("concat"), channel(0), .string(","), channel(1), .string(","), channel(2), .string(","),
            channel(3, scale: true),
        ])
        return .array([
            .string("let"), .string(variable), rgba, .array([.string("case"), transparent, .string("t"), text]),
        ])
    }
}
