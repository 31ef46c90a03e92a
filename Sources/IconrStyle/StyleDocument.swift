import IconrCore

/// An icon and the parameter colors a style asks for: one variant of a sprite.
public struct ImageReference: Hashable, Sendable {
    /// The icon's name (its id in the folders).
    public var name: String
    /// The colors the style sets its parameters to, by parameter name.
    public var params: [String: Color]

    /// A reference to icon `name` with `params` (none: its defaults).
    public init(name: String, params: [String: Color] = [:]) {
        self.name = name
        self.params = params
    }

    /// The variant an `image` value names (colors to 8 bits, as sprites store them).
    public init(_ image: ResolvedImage) {
        self.init(name: image.name, params: image.params.mapValues(\.color))
    }

    /// `name?param=#rrggbb&...` with names sorted: the same for equal references in every
    /// run (a dictionary's own order is seeded per process), so lists sort the same.
    var sortKey: String {
        name + "?" + params.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.hexString)" }.joined(separator: "&")
    }
}

/// A style's error: its JSON, a layer, or a source.
public struct StyleError: Error, Hashable, Sendable, CustomStringConvertible {
    /// One line saying what is wrong and where (`layers[2].layout.icon-image: ...`).
    public let message: String

    /// An error that says `message`.
    public init(message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

/// A symbol layer of a style: which features it shows (`filter`, zoom range) and how it
/// picks and sizes their icons.
public struct StyleLayer: Sendable {
    /// The layer's `id`.
    public let id: String
    /// The layer's `source`, if it has one.
    public let source: String?
    /// Where the layer stands in the style, for messages (`layers[1]`).
    public let path: String
    /// The tile zoom from which the layer is shown (`minzoom`, default 0).
    public let minZoom: Double
    /// The tile zoom below which the layer is shown (`maxzoom`, default 24).
    public let maxZoom: Double
    /// The layer's `filter` (legacy filters converted); nil shows every feature.
    public let filter: CompiledExpression?
    /// `layout.icon-image`; nil when the layer shows no icon.
    public let iconImage: CompiledExpression?
    /// `layout.icon-size`; nil means 1.
    public let iconSize: CompiledExpression?
    /// `layout.visibility` as written: "visible", "none", or (Mapbox) an expression on `config`.
    public var visibility: JSONValue? = nil

    /// Whether the layer is hidden: `visibility` is, or (on `config`) evaluates to, "none".
    func isHidden(in context: EvaluationContext) -> Bool {
        guard let visibility else { return false }
        if visibility == .string("none") { return true }
        guard case .array = visibility,
            case .success(let compiled) = CompiledExpression.compile(
                visibility, specification: PropertySpecification(type: "string")),
            compiled.isFeatureConstant, compiled.isZoomConstant
        else { return false }
        return (try? compiled.evaluate(context)) == .string("none")
    }

    static let imageSpecification = PropertySpecification(
        type: "resolvedImage", parameters: ["zoom", "feature"],
        interpolated: false, tokens: true)
    static let sizeSpecification = PropertySpecification(
        type: "number", parameters: ["zoom", "feature"], defaultValue: .number(1))
    static let filterSpecification: PropertySpecification = {
        var specification = PropertySpecification(
            type: "boolean", parameters: ["zoom", "feature"], interpolated: false)
        specification.zoomAnywhere = true
        return specification
    }()

    /// The zooms at which renderers lay the layer out: the whole tile zooms in its range.
    public var tileZooms: [Double] {
        let first = max(0, minZoom.rounded(.down)), last = min(24, (maxZoom - 1e-9).rounded(.down))
        return first <= last ? Array(stride(from: first, through: last, by: 1)) : []
    }

    /// One tile zoom of each stretch of `tileZooms` over which the layer's zoom curves stay
    /// between the same stops, so that every feature looks the same throughout it.
    public var distinctZooms: [Double] {
        func segment(_ stops: [Double], _ zoom: Double) -> Int { stops.lastIndex { $0 <= zoom } ?? -1 }
        var seen = Set<[Int]>(), result: [Double] = []
        for zoom in tileZooms {
            let sizeStops = iconSize?.zoomStops ?? []
            // A filter may read the zoom anywhere (no stops to go by): each tile zoom then counts.
            let filterSegment = filter.map { $0.isZoomConstant ? -1 : Int(zoom) } ?? -1
            let key = [
                segment(iconImage?.zoomStops ?? [], zoom), filterSegment,
                segment(sizeStops, zoom), sizeStops.firstIndex { $0 >= zoom + 1 } ?? sizeStops.count,
            ]
            if seen.insert(key).inserted { result.append(zoom) }
        }
        return result
    }

    /// Whether the layer draws `feature` at `zoom` (its filter; an error counts as no).
    public func shows(
        _ feature: ExpressionFeature, zoom: Double, context: EvaluationContext = EvaluationContext()
    ) -> Bool {
        var context = context
        context.zoom = zoom
        context.feature = feature
        return shows(in: context)
    }

    /// `shows` for the feature and zoom of `context`.
    func shows(in context: EvaluationContext) -> Bool {
        guard let filter else { return true }
        return (try? filter.evaluate(context)) == .boolean(true)
    }

    /// The icon `feature` shows at `zoom`, or nil (no icon, or an evaluation error: the
    /// property then takes its default, no icon).
    public func image(
        for feature: ExpressionFeature, zoom: Double, context: EvaluationContext = EvaluationContext()
    ) -> ResolvedImage? {
        var context = context
        context.zoom = zoom
        context.feature = feature
        return image(in: context)
    }

    /// `image` for the feature and zoom of `context`.
    func image(in context: EvaluationContext) -> ResolvedImage? {
        guard let iconImage else { return nil }
        switch try? iconImage.evaluate(context) {
        case .image(let image)?: return image.name.isEmpty ? nil : image
        case .string(let name)? where !name.isEmpty: return ResolvedImage(name: name, available: true)
        default: return nil
        }
    }

    /// The `icon-size` Mapbox rasterizes `feature`'s icon at on a tile of `tileZoom`
    /// (times the pixel ratio): the constant; per feature for a data-driven size; for a zoom
    /// curve its value at the upper zoom stop covering the tile; for zoom and data the larger
    /// of the feature's values at the two covering stops (mapbox-gl-js `symbol_size`).
    public func rasterSize(
        for feature: ExpressionFeature, tileZoom: Double, context: EvaluationContext = EvaluationContext()
    ) -> Double {
        var context = context
        context.feature = feature
        return rasterSize(tileZoom: tileZoom, in: &context)
    }

    /// `rasterSize` for the feature of `context` (whose zoom it changes).
    func rasterSize(tileZoom: Double, in context: inout EvaluationContext) -> Double {
        iconSize?.rasterSize(tileZoom: tileZoom, in: &context) ?? 1
    }

    /// The largest `icon-size` the layer can be rasterized at over its tile zooms, whatever
    /// its features: the largest literal output of every branch (`case`, `match`, `step`,
    /// `interpolate`) by Mapbox's rules for each tile zoom, rounded to 1/100 and at least
    /// 1/100. A size read from data counts as 1 here (the features decide it).
    public func largestRasterSize(context: EvaluationContext = EvaluationContext()) -> Double {
        let sizes = tileZooms.map { ExpressionOutputs.largestSize(iconSize, tileZoom: $0, context: context) }
        return max(((sizes.max() ?? 1) * 100).rounded() / 100, 0.01)
    }
}

extension CompiledExpression {
    /// This `icon-size` as Mapbox rasterizes it on a tile of `tileZoom`, for the feature of
    /// `context` (whose zoom it changes); see `StyleLayer.rasterSize(for:tileZoom:context:)`.
    func rasterSize(tileZoom: Double, in context: inout EvaluationContext) -> Double {
        func size(at zoom: Double) -> Double {
            context.zoom = zoom
            if case .number(let value)? = try? evaluate(context), value.isFinite { return max(value, 0) }
            return 1
        }
        let stops = zoomStops
        switch kind {
        case .constant, .source: return size(at: tileZoom)
        case .camera, .composite:
            guard !stops.isEmpty else { return size(at: tileZoom) }
            var lower = 0
            while lower < stops.count && stops[lower] <= tileZoom { lower += 1 }
            lower = max(0, lower - 1)
            var upper = lower
            while upper < stops.count && stops[upper] < tileZoom + 1 { upper += 1 }
            upper = min(stops.count - 1, upper)
            if kind == .camera { return size(at: stops[upper]) }
            return max(size(at: stops[lower]), size(at: stops[upper]))
        }
    }
}

/// A GeoJSON feature of a style's source: what expressions read, and its point position.
public struct StyleFeature: Sendable {
    /// Its properties, id and geometry, as expressions read them.
    public let feature: ExpressionFeature
    /// Longitude and latitude of a Point geometry.
    public let point: (longitude: Double, latitude: Double)?
}

/// The icons a style's layers need, and what could not be known at build time.
public struct NeededIcons: Sendable {
    /// Each variant with the scale (icon-size) it is drawn at: the largest a feature showing
    /// it needs, or (`IconSizes.layerLargest`) the largest its layer's icon-size can reach.
    public var icons: [(image: ImageReference, scale: Double)]
    /// The variants drawn larger than the features the build saw show them (their layer's
    /// icon-size can reach more, as when an app selects a feature), with the scale those
    /// features alone need.
    public var raised: [ImageReference: Double] = [:]
    /// One line per layer and property whose values come from data the build has not seen.
    public var warnings: [String]
    /// What each symbol layer that can show an icon shows, in the style's order.
    public var layers: [LayerIcons] = []
}

/// The icons one symbol layer can show.
public struct LayerIcons: Sendable {
    /// The layer's id.
    public var id: String
    /// The icon names its features show, or its expressions can give.
    public var names: Set<String>
    /// Whether some name comes from feature data the build has not seen (any icon may show).
    public var namesFromData: Bool
}

/// Which `icon-size` a prebaked variant is drawn at.
public enum IconSizes: Sendable {
    /// The largest its layer's icon-size can reach (`StyleLayer.largestRasterSize`), and at
    /// least what its features show: a feature an app switches to another branch (a tap that
    /// selects it, icon-size 2) stays as sharp as Mapbox draws it, which rasterizes again.
    case layerLargest
    /// Only what the features the build sees show (smaller sheets; a branch they do not
    /// reach is drawn scaled up from a smaller raster).
    case featuresSeen
}

/// The parts of a MapLibre/Mapbox style that decide which icons are drawn: its symbol
/// layers, the features of their GeoJSON sources, and its `config` options.
public struct StyleDocument: Sendable {
    /// The style as parsed, with its `ref` layers written whole.
    public let json: JSONValue
    /// The file it was read from, for messages.
    public let file: String
    /// Its symbol layers, in drawing order.
    public let layers: [StyleLayer]
    /// The features by source id, for sources whose data the build has (inline GeoJSON, or
    /// given with `--data`).
    public let features: [String: [StyleFeature]]
    /// Sample features (`--data` files not named by a source) for sources without data.
    public let samples: [StyleFeature]
    /// Mapbox `config` values: the `schema` defaults with the overrides given.
    public let config: [String: StyleValue]
    /// The `config` values written as expressions, compiled once.
    private let configExpressions: [String: CompiledExpression]
    /// The camera and lights Mapbox-only expressions (`pitch`, `measure-light`, ...) are
    /// evaluated at, since MapLibre cannot evaluate them.
    public let environment: MapboxEnvironment
    /// The style's own notes: GeoJSON URLs not given, and the like.
    public let warnings: [String]

    /// Parses a style. `data` gives GeoJSON (or newline-delimited JSON of feature properties)
    /// by file name: the data of a GeoJSON source whose `data` URL ends in that name, else
    /// samples for sources without data. `config` overrides the style's `schema` defaults.
    /// `imports` gives the styles of Mapbox `imports` by import id (`resolvingImports`).
    public init(
        bytes: [UInt8], file: String, data: [String: [UInt8]] = [:], config overrides: [String: JSONValue] = [:],
        environment: MapboxEnvironment = MapboxEnvironment(), imports: [String: [UInt8]] = [:]
    ) throws(StyleError) {
        self.environment = environment
        let parsed: JSONValue
        do {
            parsed = try JSONValue.parse(bytes)
        } catch {
            throw StyleError(message: "\(file): not a JSON style: \(error)")
        }
        self.file = file
        guard parsed.objectValue != nil else {
            throw StyleError(message: "\(file): not a style: expected a JSON object")
        }
        let merged = try Self.resolvingImports(parsed, given: imports, file: file)
        let (whole, dereferenced) = Self.dereferencingLayers(merged.json)
        let appearances = Self.resolvingAppearances(whole, file: file)
        let json = appearances.json
        self.json = json
        var config: [String: StyleValue] = [:]
        for (name, option) in json["schema"]?.objectValue ?? [:] {
            if let value = option["default"] { config[name] = StyleValue(value) }
        }
        for (name, value) in overrides {
            guard json["schema"]?[name] != nil else {
                throw StyleError(message: "\(file): --config \(name): the style's schema has no option \"\(name)\"")
            }
            config[name] = StyleValue(value)
        }
        self.config = config
        configExpressions = config.compactMapValues(ConfigNode.compiled)
        var parsedData: [String: [StyleFeature]] = [:]
        for (name, bytes) in data { parsedData[name] = try Self.features(in: bytes, name: name) }
        var used = Set<String>()
        var features: [String: [StyleFeature]] = [:]
        var warnings = merged.warnings + appearances.warnings
        if dereferenced > 0 {
            warnings.append(
                "\(file): \(dereferenced) ref layer\(dereferenced == 1 ? "" : "s") written whole: type, source, "
                    + "source-layer, zooms, filter and layout taken from the layer each names")
        }
        for (id, source) in (json["sources"]?.objectValue ?? [:]).sorted(by: { $0.key < $1.key })
        where source["type"]?.stringValue == "geojson" {
            switch source["data"] {
            case .string(let url)?:
                let name = url.split(separator: "/").last.map(String.init) ?? url
                if let given = parsedData[name] {
                    features[id] = given
                    used.insert(name)
                } else {
                    warnings.append(
                        "\(file): source \"\(id)\" loads \(url) at run time: its icons are taken from the style's "
                            + "literal values; give the data with --data \(name) to use its features")
                }
            case let inline?:
                features[id] = Self.features(of: inline)
            case nil:
                features[id] = []
            }
        }
        samples = parsedData.filter { !used.contains($0.key) }.sorted { $0.key < $1.key }.flatMap(\.value)
        self.features = features
        self.warnings = warnings
        var layers: [StyleLayer] = []
        for (index, layer) in (json["layers"]?.arrayValue ?? []).enumerated()
        where layer["type"]?.stringValue == "symbol" {
            let path = "layers[\(index)]"
            func compile(
                _ json: JSONValue?, _ property: String, _ specification: PropertySpecification
            ) throws(StyleError) -> CompiledExpression? {
                guard let json else { return nil }
                switch CompiledExpression.compile(json, specification: specification) {
                case .success(let compiled): return compiled
                case .failure(let failure):
                    let first = failure.errors.first ?? ExpressionParsingError(key: "", message: "invalid expression")
                    throw StyleError(message: "\(file): \(path).\(property)\(first.key): \(first.message)")
                }
            }
            func zoom(_ name: String, _ fallback: Double) -> Double {
                if case .number(let value)? = layer[name] { return value }
                return fallback
            }
            let layout = layer["layout"]
            var styleLayer =
                StyleLayer(
                    id: layer["id"]?.stringValue ?? path, source: layer["source"]?.stringValue, path: path,
                    minZoom: zoom("minzoom", 0), maxZoom: zoom("maxzoom", 24),
                    filter: try compile(
                        layer["filter"].map(LegacyFilter.convert), "filter", StyleLayer.filterSpecification),
                    iconImage: try compile(
                        layout?["icon-image"].map(Self.resolvingTokens), "layout.icon-image",
                        StyleLayer.imageSpecification),
                    iconSize: try compile(layout?["icon-size"], "layout.icon-size", StyleLayer.sizeSpecification))
            styleLayer.visibility = layout?["visibility"]
            layers.append(styleLayer)
        }
        self.layers = layers
    }

    /// The keys a `ref` layer takes from the layer it names (the style specification before
    /// version 8 had ref layers; MapLibre and Mapbox still read them).
    static let referencedKeys = ["type", "source", "source-layer", "minzoom", "maxzoom", "filter", "layout"]

    /// `style` with each valid `ref` layer written whole, as renderers dereference it, and how
    /// many there were. A ref to no layer, to another ref layer, or beside keys it would take
    /// is left as it is: the check reports it.
    static func dereferencingLayers(_ style: JSONValue) -> (JSONValue, Int) {
        guard case .object(var root) = style, case .array(var layers)? = root["layers"] else { return (style, 0) }
        var byID: [String: [String: JSONValue]] = [:]
        for case .object(let layer) in layers {
            // The last layer of an id, as GL JS and MapLibre Native dereference.
            if let id = layer["id"]?.stringValue { byID[id] = layer }
        }
        var count = 0
        for (index, item) in layers.enumerated() {
            guard case .object(var layer) = item, let ref = layer["ref"]?.stringValue, let target = byID[ref],
                target["ref"] == nil, !referencedKeys.contains(where: { layer[$0] != nil })
            else { continue }
            for key in referencedKeys { layer[key] = target[key] }
            layer["ref"] = nil
            layers[index] = .object(layer)
            count += 1
        }
        root["layers"] = .array(layers)
        return (.object(root), count)
    }

    /// A constant `icon-image` with `{token}`s (renderers replace them by the feature's
    /// properties only in constants, not in expressions) as the expression it means.
    static func resolvingTokens(_ value: JSONValue) -> JSONValue {
        if case .string(let text) = value { return LegacyFunction.tokens(text) }
        return value
    }

    /// The evaluation context of this style: its config values.
    public var context: EvaluationContext {
        var context = EvaluationContext()
        context.config = config
        context.configExpressions = configExpressions
        context.mapbox = environment
        // The map starts at the style's own pitch.
        if case .number(let pitch)? = json["pitch"], pitch.isFinite { context.mapbox.pitch = pitch }
        return context
    }

    /// Every icon the style's layers show, at the largest raster size any feature that shows
    /// it needs (Mapbox's rules, `StyleLayer.rasterSize`), over each layer's tile zooms:
    /// for the features the build has, and for sources without data the values the
    /// expressions can produce from their literal branches (then warning where a value comes
    /// from data). `imageExists` tells `coalesce` which icons there are. With `sizes`
    /// `.layerLargest` (the default), each variant is drawn at least at the largest size its
    /// layer's icon-size can reach.
    public func neededIcons(
        imageExists: @escaping @Sendable (String) -> Bool = { _ in true }, sizes: IconSizes = .layerLargest
    ) -> NeededIcons {
        var scales: [ImageReference: Double] = [:]
        var featureScales: [ImageReference: Double] = [:]
        var warnings = self.warnings
        var layerLargest = 0.0
        var layerNames: Set<String> = []
        var layerIcons: [LayerIcons] = []
        let spriteIconsets = Set(
            (json["iconsets"]?.objectValue ?? [:]).filter { $0.value["type"] == .string("sprite") }.keys)
        func need(_ image: ResolvedImage, _ scale: Double) {
            var image = image
            // A sprite iconset's image is drawn from that sprite, not from the icon folders; any
            // other iconset's is looked up on the sprite, as the emitted copy does.
            let parts = image.name.split(separator: "\u{1F}", maxSplits: 1, omittingEmptySubsequences: false)
            if parts.count == 2 {
                guard !spriteIconsets.contains(String(parts[1])) else { return }
                image.name = String(parts[0])
            }
            let reference = ImageReference(image)
            layerNames.insert(reference.name)
            featureScales[reference] = max(featureScales[reference] ?? 0, scale)
            scales[reference] = max(scales[reference] ?? 0, scale, layerLargest)
        }
        for layer in layers {
            // A layer that can never show (an empty zoom range, hidden) sets no size.
            guard let iconImage = layer.iconImage, !layer.tileZooms.isEmpty, !layer.isHidden(in: context) else {
                continue
            }
            let context = self.context
            layerNames = []
            var namesFromData = false
            defer { layerIcons.append(LayerIcons(id: layer.id, names: layerNames, namesFromData: namesFromData)) }
            layerLargest = sizes == .layerLargest ? layer.largestRasterSize(context: context) : 0
            let known = layer.source.flatMap { features[$0] }
            let zooms = layer.tileZooms
            let zoomDependent =
                !iconImage.isZoomConstant || !(layer.iconSize?.isZoomConstant ?? true)
                || !(layer.filter?.isZoomConstant ?? true)
            // Values change only where a zoom curve crosses a stop: one zoom of each stretch.
            let distinctZooms = layer.distinctZooms
            let featureList = known ?? samples
            var evaluation = Self.withImages(context, imageExists)
            for feature in featureList {
                evaluation.feature = feature.feature
                for zoom in zoomDependent ? distinctZooms : [zooms.first ?? 0] {
                    evaluation.zoom = zoom
                    guard layer.shows(in: evaluation), var image = layer.image(in: evaluation) else { continue }
                    image.available = true
                    need(image, layer.rasterSize(tileZoom: zoom, in: &evaluation))
                }
            }
            // A source without data (vector tiles, a GeoJSON URL): what the expressions can give.
            // A source with no features still shows nothing, unless the icon is the same for all.
            if known == nil || (known?.isEmpty == true && iconImage.isFeatureConstant) {
                var open: Set<String> = []
                for zoom in zooms.isEmpty ? [0] : zooms {
                    var zoomContext = context
                    zoomContext.zoom = zoom
                    let outputs = ExpressionOutputs.enumerate(
                        iconImage.root, context: Self.withImages(zoomContext, imageExists))
                    open.formUnion(outputs.open)
                    namesFromData = namesFromData || outputs.open.contains { !$0.containsUTF8(".params.") }
                    let size = ExpressionOutputs.largestSize(layer.iconSize, tileZoom: zoom, context: zoomContext)
                    for value in outputs.values {
                        switch value {
                        case .image(var image) where !image.name.isEmpty:
                            image.available = true
                            need(image, size)
                        case .string(let name) where !name.isEmpty:
                            need(ResolvedImage(name: name, available: true), size)
                        default: break
                        }
                    }
                }
                // A name from data needs no warning: every icon of the folders is on the sheet,
                // and one without parameters has no defaults to fall back to.
                for part in open.sorted() where known == nil && part.containsUTF8(".params.") {
                    warnings.append(
                        "\(file): layer \"\(layer.id)\": \(layer.path).layout.icon-image\(part) comes from feature data "
                            + "the build has not seen: those features show the icon's defaults (give samples with --data)"
                    )
                }
            }
        }
        let icons = scales.map { ($0.key, max($0.value, 0.01)) }.sorted { $0.0.sortKey < $1.0.sortKey }
        let raised = featureScales.filter { reference, scale in (scales[reference] ?? 0) > max(scale, 0.01) }
        return NeededIcons(
            icons: icons.map { (image: $0.0, scale: $0.1) }, raised: raised.mapValues { max($0, 0.01) },
            warnings: warnings, layers: layerIcons)
    }

    private static func withImages(
        _ context: EvaluationContext, _ imageExists: @escaping @Sendable (String) -> Bool
    ) -> EvaluationContext {
        var context = context
        context.imageExists = imageExists
        return context
    }

    /// Features of a GeoJSON document, or of newline-delimited JSON objects of properties.
    static func features(in bytes: [UInt8], name: String) throws(StyleError) -> [StyleFeature] {
        if let json = try? JSONValue.parse(bytes), json["type"] != nil { return features(of: json) }
        var result: [StyleFeature] = []
        for (number, line) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated()
        {
            let text = line.filter { $0 != UInt8(ascii: "\r") }
            guard !text.allSatisfy({ $0 == 32 || $0 == 9 }) else { continue }
            guard let properties = (try? JSONValue.parse(Array(text)))?.objectValue else {
                throw StyleError(
                    message:
                        "\(name): line \(number + 1): expected GeoJSON, or one JSON object of feature properties per line"
                )
            }
            result.append(
                StyleFeature(feature: ExpressionFeature(properties: properties.mapValues(StyleValue.init)), point: nil))
        }
        return result
    }

    static func features(of geoJSON: JSONValue) -> [StyleFeature] {
        func feature(_ json: JSONValue) -> StyleFeature {
            let geometry = json["geometry"].flatMap(GeoJSONGeometry.init)
            var point: (Double, Double)?
            if case .point(let position)? = geometry { point = (position[0], position[1]) }
            return StyleFeature(
                feature: ExpressionFeature(
                    properties: (json["properties"]?.objectValue ?? [:]).mapValues(StyleValue.init),
                    id: json["id"].map(StyleValue.init), geometry: geometry),
                point: point)
        }
        switch geoJSON["type"]?.stringValue {
        case "FeatureCollection": return (geoJSON["features"]?.arrayValue ?? []).map(feature)
        case "Feature": return [feature(geoJSON)]
        default: return [StyleFeature(feature: ExpressionFeature(), point: nil)]
        }
    }
}
