import IconrCore

/// A style rewritten for MapLibre, and what the rewrite changed or dropped.
public struct EmittedStyle: Sendable {
    /// The style MapLibre loads: images as sprite ids, Mapbox-only parts resolved or removed.
    public let json: JSONValue
    /// One line per Mapbox-only part removed or resolved.
    public let warnings: [String]
    /// What MapLibre would still reject in `json`: with `lenient`, only what cannot be removed
    /// without changing other layers (`MapLibreProblem.Removal.none`).
    public let problems: [MapLibreProblem]
}

extension StyleDocument {
    /// Mapbox-only top-level keys MapLibre rejects or ignores.
    static let mapboxOnlyRoot = [
        "schema", "imports", "iconsets", "fog", "lights", "camera", "models", "featuresets",
        "color-theme", "indoor", "snow", "rain",
    ]
    /// Mapbox-only layer types.
    static let mapboxOnlyLayerTypes: Set<String> = ["model", "slot", "clip", "raster-particle", "building", "sky"]
    /// Mapbox-only layout and paint properties (and any ending in one of `mapboxOnlySuffixes`).
    static let mapboxOnlyProperties: Set<String> = [
        "icon-size-scale-range", "text-size-scale-range", "icon-image-cross-fade", "symbol-z-elevate",
        "symbol-elevation-reference", "symbol-z-offset", "icon-color-saturation", "icon-color-contrast",
        "icon-color-brightness-min", "icon-color-brightness-max", "fill-z-offset", "line-z-offset",
        "line-trim-offset", "line-trim-color", "line-trim-fade-range", "line-border-width", "line-border-color",
        "circle-elevation-reference", "line-elevation-reference", "fill-elevation-reference", "line-cross-slope",
        "line-width-unit", "fill-extrusion-rounded-roof", "fill-extrusion-edge-radius",
        "fill-extrusion-ambient-occlusion-intensity",
        "fill-extrusion-ambient-occlusion-radius", "fill-extrusion-flood-light-color",
        "fill-extrusion-flood-light-intensity",
        "fill-extrusion-cutoff-fade-range", "fill-extrusion-emissive-strength", "raster-color", "raster-color-mix",
        "raster-color-range", "raster-elevation", "raster-array-band", "background-pitch-alignment", "symbol-key",
    ]
    static let mapboxOnlySuffixes = ["-emissive-strength", "-use-theme", "-occlusion-opacity"]
    /// Mapbox-only expression operators that are resolved (from config) or rewritten.
    static let mapboxOnlyOperators: Set<String> = Set(
        ["config", "hsl", "hsla", "to-hsla"] + CompoundExpressions.mapboxEnvironmentOperators)

    /// A copy of the style that MapLibre draws with the prebaked sprite: `sprite` set, each
    /// parameterized `image` replaced by one that names the sprite id of the variant the
    /// feature needs, and Mapbox-only parts resolved or removed (each with a warning).
    ///
    /// A variant is picked by its colors as numbers (`to-rgba`, rounded), not as a renderer
    /// prints them, so MapLibre GL JS and MapLibre Native pick the same; a color nobody
    /// prebaked shows the icon's defaults. `sheetOf` gives the sheet name (`sprite-2`) of ids
    /// not in the first sheet.
    /// `icons` names the icons the sprite has (nil: unknown): `coalesce` drops the images it
    /// lacks, and picks among names from data by that list, as Mapbox picks the first image
    /// it has. (MapLibre decides a `coalesce` of images when it lays a tile out, which may be
    /// before the sprite has loaded: it then keeps the first name, and draws nothing.)
    ///
    /// With `runtimeImages`, a color from data that no prebaked variant has names a runtime
    /// image instead of the icon's defaults: `iconr:flag?flag_color=rgba(255,0,0,1)`, which
    /// `iconr serve`'s `iconr.js` fetches when the renderer reports it missing.
    ///
    /// A style whose own `sprite` is an array keeps its entries: iconr's sheets are added after
    /// them (`sprites`), and only the ids iconr draws (`firstSheetIDs` and `sheetOf`) are
    /// rewritten. Sprite iconsets become entries too. `ownSprites` gives the ids of the
    /// style's own entries that could be read, by entry id: `coalesce` then knows they exist.
    /// With `merged`, `sprite` is one sheet that holds the style's own sprites too (their
    /// images under the ids the style names them by, `SpriteMerge`): it replaces the array.
    ///
    /// `halos` (by layer id, from `bakedHalos(of:)`) are baked into the sprite: each id such a
    /// layer shows names its haloed image (`SpriteID.haloed`; the one of the feature's halo
    /// when they differ), and its `icon-halo-*` go (a warning each layer). Runtime images
    /// and other sprites' images keep no halo.
    public func emitted(
        sprite: JSONValue, templates: [String: SVGTemplate], needed: [ImageReference],
        sheetOf: [String: String] = [:], firstSheetIDs: Set<String> = [], runtimeImages: Bool = false,
        lenient: Bool = false, icons: Set<String>? = nil, ownSprites: [String: Set<String>] = [:],
        merged: Bool = false, halos: [String: LayerHalos] = [:]
    ) -> EmittedStyle {
        guard case .object(var style) = json else {
            return EmittedStyle(json: json, warnings: [], problems: [])
        }
        var sprites = self.sprites(iconr: sprite, sheetOf: sheetOf, firstSheetIDs: firstSheetIDs)
        if merged { sprites = (sprite, sheetOf, sprites.iconsets, []) }
        // The names the style may use that some sheet holds: iconr's, and its own sprites' it read.
        let known = icons.map { icons in
            ownSprites.reduce(into: icons) { known, entry in
                known.formUnion(entry.key == "default" ? entry.value : Set(entry.value.map { entry.key + ":" + $0 }))
            }
        }
        var emitter = Emitter(
            style: self, templates: templates, needed: needed, sheetOf: sprites.sheetOf, icons: known)
        emitter.runtimeImages = runtimeImages
        emitter.halos = halos
        emitter.iconsets = sprites.iconsets
        emitter.foreignSprites = sprites.foreign.subtracting(ownSprites.keys)
        style["sprite"] = sprites.value
        for key in Self.mapboxOnlyRoot where style[key] != nil {
            style[key] = nil
            if key == "iconsets" { continue }
            emitter.warn("\(file): removed Mapbox-only \"\(key)\" (MapLibre has no equivalent)")
        }
        for (id, iconset) in (json["iconsets"]?.objectValue ?? [:]).sorted(by: { $0.key < $1.key })
        where sprites.iconsets[id] == nil {
            emitter.warn(
                "\(file): removed iconset \"\(id)\" of type \(iconset["type"]?.serialized ?? "(none)"): MapLibre reads "
                    + "sprites only (its icons are looked up on the sprite)")
        }
        // Mapbox's own URLs need Mapbox's API and a token: MapLibre does not resolve them.
        var mapboxURLs: [String] = []
        if style["glyphs"]?.stringValue?.hasPrefix("mapbox://") == true { mapboxURLs.append("\"glyphs\"") }
        for (id, source) in (style["sources"]?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
            let urls = [source["url"]] + (source["tiles"]?.arrayValue ?? []).map(Optional.some)
            if urls.contains(where: { $0?.stringValue?.hasPrefix("mapbox://") == true }) {
                mapboxURLs.append("source \"\(id)\"")
            }
        }
        for part in mapboxURLs {
            emitter.warn(
                "\(file): \(part) is a mapbox:// URL, which MapLibre cannot fetch: point it at tiles or glyphs of your own"
            )
        }
        if case .object(let projection)? = style["projection"], let name = projection["name"]?.stringValue {
            if ["mercator", "globe"].contains(name) {
                style["projection"] = .object(["type": .string(name)])
            } else {
                style["projection"] = nil
                emitter.warn("\(file): removed projection \"\(name)\" (MapLibre draws mercator and globe)")
            }
        }
        if case .array(let layers)? = style["layers"] {
            var kept: [JSONValue] = []
            for (index, layer) in layers.enumerated() {
                if let layer = emitter.layer(layer, path: "layers[\(index)]") { kept.append(layer) }
            }
            style["layers"] = .array(kept)
        }
        let problems = Self.mapLibreProblems(in: .object(style))
        guard lenient, !problems.isEmpty else {
            return EmittedStyle(json: .object(style), warnings: emitter.warnings, problems: problems)
        }
        // What the document needs (its version, sources, glyphs) cannot go: those stay problems.
        let removable = problems.filter { $0.removal != .none }
        for problem in removable {
            let removed = problem.dropsLayer ? "the layer" : "it"
            emitter.warn("\(file): \(problem): removed \(removed) (--lenient)")
        }
        return EmittedStyle(
            json: Self.removing(removable, from: .object(style)), warnings: emitter.warnings,
            problems: problems.filter { $0.removal == .none })
    }
}

extension StyleDocument {
    /// The emitted copy's `sprite`, from iconr's own (`iconr`: a URL, or sheet entries whose
    /// first is `default`; `sheetOf`: the sheet of each id outside the first;
    /// `firstSheetIDs`: the ids of the first). When the style's `sprite` is an array, its
    /// entries are kept and iconr's sheets added after them: the first keeps `default` unless
    /// the style has one, then it is named by its URL's last part (`sprite`, as later sheets
    /// are `sprite-2`; `sprite-2` if taken, ...), and every id it holds
    /// gets that prefix (`sheetOf`); a later sheet whose id is taken is renamed the same way.
    /// Each sprite iconset (`{"type": "sprite", "url": ...}`) becomes one more entry.
    /// `foreign`: the ids of the entries that are not iconr's (the style's own, iconsets).
    package func sprites(
        iconr: JSONValue, sheetOf: [String: String], firstSheetIDs: Set<String>
    ) -> (value: JSONValue, sheetOf: [String: String], iconsets: [String: String], foreign: Set<String>) {
        // A sprite that is neither a URL nor entries stays, for the check to report.
        if let own = json["sprite"], own.stringValue == nil, own.arrayValue == nil { return (own, sheetOf, [:], []) }
        var entries: [JSONValue] = json["sprite"]?.arrayValue ?? []
        var taken = Set(entries.compactMap { $0["id"]?.stringValue })
        let foreignDefault = taken.contains("default")
        func unique(_ id: String) -> String {
            var candidate = id, number = 1
            while taken.contains(candidate) {
                number += 1
                candidate = "\(id)-\(number)"
            }
            taken.insert(candidate)
            return candidate
        }
        var iconsets: [String: String] = [:]
        var iconsetEntries: [JSONValue] = []
        for (id, iconset) in (json["iconsets"]?.objectValue ?? [:]).sorted(by: { $0.key < $1.key })
        where iconset["type"] == .string("sprite") {
            guard let url = iconset["url"]?.stringValue else { continue }
            iconsets[id] = unique(id)
            iconsetEntries.append(.object(["id": .string(iconsets[id] ?? id), "url": .string(url)]))
        }
        let foreign = taken
        // A single URL of the style's own is replaced by iconr's sheets, as before.
        if entries.isEmpty && iconsetEntries.isEmpty { return (iconr, sheetOf, [:], []) }
        let ours: [JSONValue] =
            iconr.arrayValue ?? [.object(["id": .string("default"), "url": iconr])]
        // Later sheets keep their ids unless the style has them; the first is `default`
        // unless the style has one, then named as the later ones are, by its URL's last part.
        var names: [String] = []
        for entry in ours.dropFirst() {
            let id = entry["id"]?.stringValue ?? ""
            names.append(taken.contains(id) ? unique(id) : id)
            taken.insert(names[names.count - 1])
        }
        let base = ours.first?["url"]?.stringValue?.split(separator: "/").last.map(String.init) ?? "sprite"
        names.insert(foreignDefault ? unique(base) : "default", at: 0)
        var renamed: [String: String] = [:]
        for (index, entry) in ours.enumerated() {
            guard case .object(var fields) = entry, let id = fields["id"]?.stringValue else { continue }
            if names[index] != id { renamed[id] = names[index] }
            fields["id"] = .string(names[index])
            entries.append(.object(fields))
        }
        var sheets = sheetOf.mapValues { renamed[$0] ?? $0 }
        if let first = renamed["default"] {
            for id in firstSheetIDs { sheets[id] = first }
        }
        return (.array(entries + iconsetEntries), sheets, iconsets, foreign)
    }
}

/// The rewrite of one style (see `StyleDocument.emitted`).
private struct Emitter {
    let style: StyleDocument
    let templates: [String: SVGTemplate]
    let needed: [ImageReference]
    let sheetOf: [String: String]
    /// The icons the sprite has; nil when unknown.
    let icons: Set<String>?
    /// Whether colors from data that no variant has name a runtime image (`runtimeImage`).
    var runtimeImages = false
    /// The sprite id of each sprite iconset, by the iconset's id.
    var iconsets: [String: String] = [:]
    /// The sprite ids of the style's own entries and iconsets (not iconr's sheets).
    var foreignSprites: Set<String> = []
    /// The icon-size the runtime images of the layer being rewritten are drawn at (`runtimeImage`).
    private var runtimeSize = 1.0
    /// The halos baked into each layer's images, by layer id.
    var halos: [String: LayerHalos] = [:]
    /// Those of the layer being rewritten.
    private var layerHalos: LayerHalos?
    var warnings: [String] = []
    private var variableCount = 0

    init(
        style: StyleDocument, templates: [String: SVGTemplate], needed: [ImageReference], sheetOf: [String: String],
        icons: Set<String>?
    ) {
        self.style = style
        self.templates = templates
        self.needed = needed
        self.sheetOf = sheetOf
        self.icons = icons
    }

    mutating func warn(_ message: String) {
        if !warnings.contains(message) { warnings.append(message) }
    }

    mutating func layer(_ layer: JSONValue, path: String) -> JSONValue? {
        guard case .object(var object) = layer else { return layer }
        let id = object["id"]?.stringValue ?? path
        let type = object["type"]?.stringValue ?? ""
        if StyleDocument.mapboxOnlyLayerTypes.contains(type) {
            warn("\(style.file): removed layer \"\(id)\": type \"\(type)\" is Mapbox-only")
            return nil
        }
        if object["slot"] != nil {
            object["slot"] = nil
            warn("\(style.file): layer \"\(id)\": removed Mapbox-only \"slot\"")
        }
        if let filter = object["filter"] { object["filter"] = resolved(filter, at: "\(path) (\"\(id)\").filter") }
        layerHalos = type == "symbol" ? halos[id] : nil
        if layerHalos != nil, case .object(var paint)? = object["paint"] {
            for name in ["icon-halo-color", "icon-halo-width", "icon-halo-blur"] { paint[name] = nil }
            object["paint"] = .object(paint)
            warn("\(style.file): layer \"\(id)\": icon-halo-* baked into its images (--bake-halos): removed")
        }
        for group in ["layout", "paint"] {
            guard case .object(var properties)? = object[group] else { continue }
            for (name, value) in properties.sorted(by: { $0.key < $1.key }) {
                if StyleDocument.mapboxOnlyProperties.contains(name)
                    || StyleDocument.mapboxOnlySuffixes.contains(where: name.hasSuffix)
                {
                    properties[name] = nil
                    warn("\(style.file): layer \"\(id)\": removed Mapbox-only \"\(name)\"")
                    continue
                }
                let place = "\(path) (\"\(id)\").\(group).\(name)"
                var value = resolved(value, at: place)
                // Mapbox shows a property's default where it evaluates to null (a config
                // option the schema lacks); MapLibre rejects a null.
                if value == .null {
                    properties[name] = nil
                    warn(
                        "\(style.file): \(place): resolved to null: removed, so that its default applies (as in Mapbox)"
                    )
                    continue
                }
                if group == "layout" && name == "icon-image" && type == "symbol" {
                    runtimeSize =
                        style.layers.first { $0.path == path }?.largestRasterSize(context: style.context) ?? 1
                    value = images(value, layer: id)
                }
                properties[name] = value
            }
            object[group] = .object(properties)
        }
        return .object(object)
    }

    // MARK: Mapbox-only operators

    /// `value` with `config` replaced by the option's value, and `hsl`/`hsla`/`to-hsla`
    /// folded to literals (or, with data, rewritten as `to-color` of an `hsla()` string).
    mutating func resolved(_ value: JSONValue, at path: String) -> JSONValue {
        // Objects hold expressions too: an image's params, format and number-format options.
        if case .object(var fields) = value {
            for (name, field) in fields { fields[name] = resolved(field, at: path) }
            return .object(fields)
        }
        // Mapbox reads `hsl(120, 100, 25)` with saturation and lightness in percent without
        // the sign; MapLibre reads no color there (black): written as rgba(), both agree.
        if case .string(let text) = value, text.lowercased().hasPrefix("hsl"), !text.contains("%"),
            let color = StyleColor(css: text)
        {
            return .string(color.text)
        }
        guard case .array(var items) = value, case .string(let op)? = items.first else { return value }
        if op == "literal" { return value }
        // One component of `to-hsla` from data, computed from `to-rgba` (MapLibre builds no
        // arrays, but Mapbox styles take the components with `at`).
        if op == "at", items.count == 3, case .number(let index) = items[1], [0, 1, 2, 3].contains(index),
            case .array(var inner) = items[2], inner.first == .string("to-hsla"), inner.count == 2
        {
            inner[1] = resolved(inner[1], at: path)
            if constantValue(.array(inner)) == nil { return hslaComponent(Int(index), of: inner[1]) }
        }
        for index in items.indices.dropFirst() { items[index] = resolved(items[index], at: path) }
        let json = JSONValue.array(items)
        guard StyleDocument.mapboxOnlyOperators.contains(op) else {
            // What a resolved part made constant is folded: `["<=", 0, 1]` would read as a
            // legacy filter (and an invalid one) in MapLibre.
            guard json != value, let constant = constantValue(json) else { return json }
            switch constant {
            case .boolean, .number, .string, .color, .null: return literal(constant)
            // Images and formatted text have no literal form: the expression stays.
            default: return json
            }
        }
        if op == "config" {
            let name = items.count > 1 ? items[1].stringValue ?? "" : ""
            // A default that is itself an expression (one that reads the feature) stays one.
            if let option = style.json["schema"]?[name]?["default"], case .array = option,
                StyleValue(option) == style.config[name]
            {
                warn(
                    "\(style.file): \(path): \"config\" \"\(name)\" is Mapbox-only: replaced by its default, an expression "
                        + "read per feature (--config \(name)=VALUE sets a value)")
                return resolved(option, at: path)
            }
            let value = style.config[name] ?? .null
            let source =
                style.config[name] == nil
                ? "the schema has no such option" : "--config \(name)=VALUE sets it, else the schema default"
            warn(
                "\(style.file): \(path): \"config\" \"\(name)\" is Mapbox-only: replaced by its value "
                    + "\(value.json.serialized) (\(source))")
            return literal(value)
        }
        if CompoundExpressions.mapboxEnvironmentOperators.contains(op) {
            let value = (try? CompiledExpression.compile(json, specification: PropertySpecification(type: "")).get())
                .flatMap { try? $0.evaluate(style.context) }
            warn(
                "\(style.file): \(path): \"\(op)\" is Mapbox-only: replaced by its value "
                    + "\(value.map(\.json.serialized) ?? "null") (\(environmentNote(op)))")
            return value.map(literal) ?? .null
        }
        if case .success(let compiled) = CompiledExpression.compile(
            json, specification: PropertySpecification(type: "")),
            compiled.isFeatureConstant, compiled.isZoomConstant, let value = try? compiled.evaluate(style.context)
        {
            return literal(value)
        }
        if op == "hsl" || op == "hsla", items.count >= 4 {
            var parts: [JSONValue] = [
                .string("concat"), .string("hsla("), items[1], .string(", "), items[2], .string("%, "), items[3],
                .string("%, "),
            ]
            parts += [items.count > 4 ? items[4] : .number(1), .string(")")]
            return .array([.string("to-color"), .array(parts)])
        }
        warn(
            "\(style.file): \(path): \"\(op)\" is Mapbox-only and depends on data: left as it is, MapLibre will reject it"
        )
        return json
    }

    /// Component `index` (hue in degrees, saturation and lightness in percent, alpha) of
    /// Mapbox's `to-hsla` of `color`, as an expression MapLibre evaluates (on `to-rgba`).
    private mutating func hslaComponent(_ index: Int, of color: JSONValue) -> JSONValue {
        variableCount += 1
        let name = "iconr_rgba\(variableCount)"
        func v(_ suffix: String) -> JSONValue { .array([.string("var"), .string(name + suffix)]) }
        func op(_ name: String, _ arguments: JSONValue...) -> JSONValue { .array([.string(name)] + arguments) }
        func channel(_ at: Int) -> JSONValue { op("/", op("at", .number(Double(at)), v("")), .number(255)) }
        let (r, g, b, high, low) = (v("r"), v("g"), v("b"), v("max"), v("min"))
        let delta = op("-", high, low)
        let lightness = op("/", op("+", high, low), .number(2))
        let body: JSONValue
        switch index {
        case 0:
            body = op(
                "case", op("==", delta, .number(0)), .number(0),
                op("==", high, r),
                op(
                    "*", .number(60),
                    op("+", op("/", op("-", g, b), delta), op("case", op("<", g, b), .number(6), .number(0)))),
                op("==", high, g), op("*", .number(60), op("+", op("/", op("-", b, r), delta), .number(2))),
                op("*", .number(60), op("+", op("/", op("-", r, g), delta), .number(4))))
        case 1:
            body = op(
                "case", op("==", delta, .number(0)), .number(0),
                op(">", lightness, .number(0.5)),
                op("*", .number(100), op("/", delta, op("-", op("-", .number(2), high), low))),
                op("*", .number(100), op("/", delta, op("+", high, low))))
        case 2: body = op("*", .number(100), lightness)
        default: return op("at", .number(3), op("to-rgba", color))
        }
        let extremes = op(
            "let", .string(name + "max"), op("max", r, g, b), .string(name + "min"), op("min", r, g, b), body)
        let channels = op(
            "let", .string(name + "r"), channel(0), .string(name + "g"), channel(1), .string(name + "b"), channel(2),
            extremes)
        return op("let", .string(name), op("to-rgba", color), channels)
    }

    /// The value of an expression that reads neither data nor zoom, if it evaluates.
    private func constantValue(_ json: JSONValue) -> StyleValue? {
        guard
            case .success(let compiled) = CompiledExpression.compile(
                json, specification: PropertySpecification(type: "")),
            compiled.isFeatureConstant, compiled.isZoomConstant
        else { return nil }
        return try? compiled.evaluate(style.context)
    }

    /// What a Mapbox-only camera or environment value was taken at, for its warning.
    private func environmentNote(_ op: String) -> String {
        let environment = style.context.mapbox
        switch op {
        case "pitch": return "the style's pitch, \(environment.pitch.shortText) degrees"
        case "distance-from-center": return "a symbol at the map's center"
        case "worldview": return "worldview \(environment.worldview); --worldview sets it"
        case "measure-light": return "brightness \(environment.lightBrightness.shortText); --light sets it"
        // Sky and raster-particle layers are Mapbox's own, removed from the copy: their inputs read 0.
        default: return "0: MapLibre has no \(op == "sky-radial-progress" ? "sky" : "raster-array") layers"
        }
    }

    /// A value as MapLibre reads it in an expression: colors as `rgba()` text, arrays and
    /// objects as literals.
    private func literal(_ value: StyleValue) -> JSONValue {
        switch value {
        case .color(let color): return .string(color.text)
        case .array, .object: return .array([.string("literal"), value.json])
        default: return value.json
        }
    }

    // MARK: Images

    /// `icon-image` with every parameterized `image` naming its prebaked variant.
    mutating func images(_ value: JSONValue, layer: String) -> JSONValue {
        switch value {
        case .string(let name):
            // Tokens are resolved by the renderer after the id is chosen: as an expression,
            // the ids of later sheets can be prefixed.
            let tokens = LegacyFunction.tokens(name)
            if tokens != value, !sheetOf.isEmpty || layerHalos != nil { return prefixedExpression(tokens) }
            return leaf(name)
        case .object where !sheetOf.isEmpty || layerHalos != nil:
            // A legacy function (`{"property": "icon", "type": "identity"}`) names icons from
            // data too: written as the expression it means, so later sheets' ids can be mapped.
            return images(
                LegacyFunction.convert(
                    value, PropertySpecification(type: "resolvedImage", interpolated: false, tokens: true)),
                layer: layer)
        case .array(let items):
            guard case .string(let op)? = items.first, op != "literal" else { return value }
            if op == "image" { return image(items, layer: layer) }
            if op == "coalesce" {
                // Images the sprite lacks are dropped: known now, they need no round trip.
                let kept = items.dropFirst().filter { !isMissing($0) }
                let arguments = kept.isEmpty ? Array(items.dropFirst().prefix(1)) : Array(kept)
                if let icons, !icons.isEmpty, arguments.contains(where: { Self.dataName(of: $0) != nil }),
                    arguments.allSatisfy({ $0.arrayValue?.first == .string("image") })
                {
                    return firstAvailable(arguments, icons: icons.sorted(), layer: layer)
                }
                return .array([items[0]] + arguments.map { images($0, layer: layer) })
            }
            // Strings are ids only where an expression returns them (not labels or tests).
            let outputs = Self.outputPositions(op, count: items.count)
            // A name computed otherwise (`get`, `concat`, `config`, ...) can be any id of the
            // sprite: those of later sheets are mapped to `sheet:id`.
            if outputs.isEmpty { return prefixedExpression(value) }
            return .array(
                items.indices.map { index in
                    guard index > 0, outputs.contains(index) else { return items[index] }
                    return images(items[index], layer: layer)
                })
        default: return value
        }
    }

    /// `coalesce` over `images` (`image` expressions, some naming icons from data) as one
    /// choice made by name against the sprite's `icons`: the first image whose icon the sprite
    /// has, else the first (which the renderer then reports missing, as Mapbox does).
    private mutating func firstAvailable(_ images: [JSONValue], icons: [String], layer: String) -> JSONValue {
        var choice = self.images(images[0], layer: layer)
        for image in images.reversed() {
            let rewritten = self.images(image, layer: layer)
            guard let name = Self.dataName(of: image) else {
                // A literal name left here is on the sheet: the images after it never show.
                choice = rewritten
                continue
            }
            choice = .array([
                .string("match"), .array([.string("to-string"), name]), .array(icons.map { .string($0) }), rewritten,
                choice,
            ])
        }
        return choice
    }

    /// The name expression of an `image` whose name comes from data; nil for a literal name.
    private static func dataName(of value: JSONValue) -> JSONValue? {
        guard case .array(let items) = value, items.first == .string("image"), items.count >= 2 else { return nil }
        if case .string(let name) = items[1], LegacyFunction.tokens(name) == items[1] { return nil }
        return items[1]
    }

    /// Whether `value` names, as a literal, an icon the sprite does not have.
    private func isMissing(_ value: JSONValue) -> Bool {
        var name = value
        if case .array(let items) = value, items.first == .string("image"), items.count >= 2 {
            // An iconset's image is the iconset's: iconr cannot know what it holds.
            if items.count > 2, items[2]["iconset"] != nil { return false }
            name = items[1]
        }
        guard case .string(let icon) = name, LegacyFunction.tokens(icon) == name else { return false }
        // An icon of the style's own sprites: iconr cannot know what they hold.
        if let colon = icon.firstIndex(of: ":"), foreignSprites.contains(String(icon[..<colon])) { return false }
        if foreignSprites.contains("default") && !icon.contains(":") { return false }
        return icons.map { !$0.contains(icon) } ?? false
    }

    /// The argument positions whose values an expression returns.
    static func outputPositions(_ op: String, count: Int) -> Set<Int> {
        switch op {
        case "match": Set(stride(from: 3, to: count - 1, by: 2)).union([count - 1])
        case "case": Set(stride(from: 2, to: count - 1, by: 2)).union([count - 1])
        case "step": Set(stride(from: 2, to: count, by: 2))
        case "coalesce": Set(1..<max(count, 1))
        case "let": [count - 1]
        default: []
        }
    }

    private mutating func image(_ items: [JSONValue], layer: String) -> JSONValue {
        guard items.count >= 2 else { return .array(items) }
        let name = items[1]
        let options = items.count > 2 ? items[2].objectValue : nil
        let partner = options == nil ? 2 : 3
        if items.count > partner {
            warn(
                "\(style.file): layer \"\(layer)\": icon-image's second image (Mapbox's cross-fade partner) is Mapbox-only: removed"
            )
        }
        let params = options?["params"]?.objectValue ?? [:]
        if let iconset = options?["iconset"] {
            // A sprite iconset is an entry of the sprite: its icons are `<entry id>:<name>`.
            if let id = iconset["id"]?.stringValue, let entry = iconsets[id] {
                let prefixed: JSONValue =
                    if case .string(let icon) = name { .string(entry + ":" + icon) } else {
                        .array([.string("concat"), .string(entry + ":"), .array([.string("to-string"), name])])
                    }
                return .array([.string("image"), prefixed])
            }
            warn(
                "\(style.file): layer \"\(layer)\": icon-image's \"iconset\" \(iconset["id"]?.serialized ?? "(none)") is no sprite iconset: removed (the icon is looked up on the sprite)"
            )
        }
        if case .string(let icon) = name { return .array([.string("image"), id(of: icon, params: params)]) }
        // A name from data: one branch per icon the sprite has variants of.
        let text = JSONValue.array([.string("to-string"), name])
        var branches: [JSONValue] = []
        for icon in Set(needed.map(\.name)).sorted() {
            let choice = id(of: icon, params: params)
            if choice != .string(icon) { branches += [.string(icon), choice] }
        }
        // A name the build did not see: with runtime images and params, the variant is drawn
        // at run time (the name and colors computed in the renderer), else the icon's defaults.
        let fallback =
            runtimeImages && !params.isEmpty ? computedRuntimeImage(text, params: params) : prefixedExpression(text)
        return .array([
            .string("image"), branches.isEmpty ? fallback : .array([.string("match"), text] + branches + [fallback]),
        ])
    }

    /// The runtime image id of an icon whose name is computed (`name`) and whose declared
    /// parameters iconr cannot know: `iconr:<name>?<param>=<color>&...` with each param whose
    /// value is a color (one that is no color is left out, so the default shows, as Mapbox
    /// does: it converts with two fallbacks and keeps the value where both agree).
    private func computedRuntimeImage(_ name: JSONValue, params: [String: JSONValue]) -> JSONValue {
        var parts: [JSONValue] = [.string("concat"), .string("iconr:"), name, .string("?")]
        for (index, (param, value)) in params.sorted(by: { $0.key < $1.key }).enumerated() {
            let color = JSONValue.array([.string("var"), .string("iconr_color")])
            let converted = { (fallback: String) in
                JSONValue.array([.string("to-string"), .array([.string("to-color"), value, .string(fallback)])])
            }
            parts.append(
                .array([
                    .string("let"), .string("iconr_color"), converted("#010203"),
                    .array([
                        .string("case"), .array([.string("=="), color, converted("#040506")]),
                        .array([.string("concat"), .string((index == 0 ? "" : "&") + param + "="), color]), .string(""),
                    ]),
                ]))
        }
        if runtimeSize != 1 { parts.append(.string("#size=" + runtimeSize.shortText)) }
        return .array(parts)
    }

    /// The sprite id of `icon` with `params`: a literal when the colors are constant, else a
    /// `match` on the colors as numbers.
    private mutating func id(of icon: String, params: [String: JSONValue]) -> JSONValue {
        guard let template = templates[icon], !template.parameters.isEmpty, !params.isEmpty else {
            return leaf(icon)
        }
        let declared = template.parameters.sorted { $0.name < $1.name }
        var keyParts: [JSONValue] = []
        var constantKey: [String]? = []
        for (index, parameter) in declared.enumerated() {
            if index > 0 { keyParts.append(.string("|")) }
            guard let value = params[parameter.name] else {
                keyParts.append(.string(Self.key(parameter.defaultColor)))
                constantKey?.append(Self.key(parameter.defaultColor))
                continue
            }
            if let color = constantColor(value) {
                keyParts.append(.string(Self.key(color)))
                constantKey?.append(Self.key(color))
            } else {
                keyParts.append(keyExpression(value, fallback: parameter.defaultColor))
                constantKey = nil
            }
        }
        var idByLabel: [(String, String)] = []
        for reference in needed where reference.name == icon {
            let label = declared.map { Self.key(reference.params[$0.name] ?? $0.defaultColor) }.joined(separator: "|")
            let variant = SpriteID.variant(of: icon, template.resolve(colors: reference.params))
            if !idByLabel.contains(where: { $0.0 == label }) { idByLabel.append((label, variant)) }
        }
        if let constantKey {
            let label = constantKey.joined(separator: "|")
            return leaf(idByLabel.first { $0.0 == label }?.1 ?? icon)
        }
        let fallback: JSONValue =
            runtimeImages ? runtimeImage(icon, declared: declared, params: params) : leaf(icon)
        let branches = idByLabel.sorted { $0.0 < $1.0 }.filter { leaf($0.1) != fallback }.flatMap {
            [JSONValue.string($0.0), leaf($0.1)]
        }
        guard !branches.isEmpty else { return fallback }
        let key: JSONValue = keyParts.count == 1 ? keyParts[0] : .array([.string("concat")] + keyParts)
        return .array([.string("match"), key] + branches + [fallback])
    }

    /// The runtime image id of `icon` with `params` computed in the renderer:
    /// `iconr:<icon>?<name>=<color>&...`, each color as the renderer prints it (`rgba(...)`),
    /// parameters in name order; then `#size=<s>` when the layer's icons are drawn larger or
    /// smaller than 1, so that `iconr.js` rasterizes them at that size times the pixel ratio.
    private func runtimeImage(_ icon: String, declared: [TemplateParameter], params: [String: JSONValue]) -> JSONValue {
        var parts: [JSONValue] = [.string("iconr:\(icon)?")]
        for parameter in declared {
            guard let value = params[parameter.name] else { continue }
            if parts.count > 1 { parts.append(.string("&")) }
            parts.append(.string(parameter.name + "="))
            parts.append(
                .array([
                    .string("to-string"),
                    .array([.string("to-color"), value, .string(parameter.defaultColor.hexString)]),
                ]))
        }
        if runtimeSize != 1 { parts.append(.string("#size=" + runtimeSize.shortText)) }
        return .array([.string("concat")] + parts)
    }

    /// The color of a param value that does not depend on data or zoom.
    private func constantColor(_ value: JSONValue) -> Color? {
        let specification = PropertySpecification(type: "color", propertyType: "data-driven")
        guard case .success(let compiled) = CompiledExpression.compile(value, specification: specification),
            compiled.isFeatureConstant, compiled.isZoomConstant,
            case .color(let color)? = try? compiled.evaluate(style.context)
        else { return nil }
        return color.color
    }

    /// A color's label (`StyleDocument.colorKey`).
    static func key(_ color: Color) -> String { StyleDocument.colorKey(color) }

    /// The expression computing `key` of a param value in the renderer: its `to-rgba`, rounded.
    private mutating func keyExpression(_ value: JSONValue, fallback: Color) -> JSONValue {
        variableCount += 1
        return StyleDocument.colorKeyExpression(
            value, variable: "iconr_color\(variableCount)", fallback: fallback.hexString)
    }

    // MARK: Sheets

    /// `id`, or `sheet:id` when the id is in a later sheet.
    private func prefixed(_ id: String) -> String {
        sheetOf[id].map { $0 + ":" + id } ?? id
    }

    /// The image of sprite id `id` as the layer being rewritten shows it: `sheet:id` when the
    /// id is in a later sheet, and with the layer's baked halo (`SpriteID.haloed`), chosen by
    /// the feature's halo label when the layer has several (no halo for a label it lacks).
    private func leaf(_ id: String) -> JSONValue {
        guard let layerHalos,
            layerHalos.icons.map({ $0.contains(id) || $0.contains { id.hasPrefix($0 + "?") } }) ?? true
        else { return .string(prefixed(id)) }
        guard let label = layerHalos.label else {
            return .string(prefixed(SpriteID.haloed(id, layerHalos.halos[0].halo)))
        }
        return .array(
            [.string("match"), label]
                + layerHalos.halos.flatMap { [.string($0.label), .string(prefixed(SpriteID.haloed(id, $0.halo)))] }
                + [.string(prefixed(id))])
    }

    /// An id computed at run time, with the layer's baked halo (as `leaf`), mapped to
    /// `sheet:id` for the ids in later sheets.
    private func prefixedExpression(_ id: JSONValue) -> JSONValue {
        guard let layerHalos else { return sheetPrefixed(id) }
        let text = id.arrayValue?.first == .string("to-string") ? id : .array([.string("to-string"), id])
        func haloed(_ halo: Halo) -> JSONValue {
            let suffix = String(SpriteID.haloed("", halo))
            return sheetPrefixed(.array([.string("concat"), text, .string(suffix)]))
        }
        let chosen =
            layerHalos.label.map { label in
                JSONValue.array(
                    [.string("match"), label] + layerHalos.halos.flatMap { [.string($0.label), haloed($0.halo)] }
                        + [sheetPrefixed(id)])
            } ?? haloed(layerHalos.halos[0].halo)
        // Only the icons with haloed images are named by them.
        guard let icons = layerHalos.icons else { return chosen }
        guard !icons.isEmpty else { return sheetPrefixed(id) }
        return .array([.string("match"), text, .array(icons.sorted().map { .string($0) }), chosen, sheetPrefixed(id)])
    }

    /// An id computed at run time, mapped to `sheet:id` for the ids in later sheets.
    private func sheetPrefixed(_ id: JSONValue) -> JSONValue {
        guard !sheetOf.isEmpty else { return id }
        let branches = sheetOf.sorted { $0.key < $1.key }.flatMap {
            [JSONValue.string($0.key), .string($0.value + ":" + $0.key)]
        }
        let text = id.arrayValue?.first == .string("to-string") ? id : .array([.string("to-string"), id])
        return .array([.string("match"), text] + branches + [id])
    }
}
