/// A symbol layer of a style: how it picks and sizes icons.
public struct StyleLayer: Sendable {
    public let id: String
    public let source: String?
    /// `layout.icon-image`, parsed; nil when the layer shows no icon.
    public let iconImage: StyleExpression?
    /// `layout.icon-size`, parsed; nil means 1.
    public let iconSize: StyleExpression?
    /// Where the layer stands in the style, for messages (`layers[1]`).
    public let path: String

    /// The icon a feature shows in this layer, or nil (no icon, or an evaluation error, when
    /// the property takes its default: no icon).
    public func image(for properties: [String: JSONValue], imageExists: @escaping (String) -> Bool = { _ in true }) -> ImageReference? {
        guard let iconImage else { return nil }
        switch try? iconImage.evaluate(StyleExpression.Context(properties: properties, imageExists: imageExists)) {
        case .image(let reference)?: return reference.name.isEmpty ? nil : reference
        case .string(let name)? where !name.isEmpty: return ImageReference(name: name)
        default: return nil
        }
    }

    /// The scale to rasterize this layer's icons at, times the pixel ratio: the constant
    /// `icon-size`, or the largest a data-driven one can reach (as Mapbox does), here the
    /// largest of its written outcomes, else of its values for `features`.
    public func rasterScale(features: [[String: JSONValue]]) -> Double {
        guard let iconSize else { return 1 }
        if let numbers = iconSize.reachableNumbers, let largest = numbers.max() { return max(largest, 0.01) }
        let values = features.compactMap { properties -> Double? in
            if case .number(let value)? = try? iconSize.evaluate(StyleExpression.Context(properties: properties)) { return value }
            return nil
        }
        return max(values.max() ?? 1, 0.01)
    }
}

/// A style's error: its JSON, a layer, or a source.
public struct StyleError: Error, Hashable, Sendable, CustomStringConvertible {
    public let message: String

    public init(message: String) {
        self.message = message
    }

    public var description: String { message }
}

/// A GeoJSON feature: its properties, and its position when it is a point.
public struct StyleFeature: Sendable {
    public let properties: [String: JSONValue]
    /// Longitude and latitude of a Point geometry.
    public let point: (longitude: Double, latitude: Double)?
}

/// The parts of a MapLibre/Mapbox style that decide which icons are drawn: its symbol
/// layers and the features of their GeoJSON sources.
public struct StyleDocument: Sendable {
    public let json: JSONValue
    public let layers: [StyleLayer]
    /// The features by GeoJSON source id.
    public let features: [String: [StyleFeature]]

    /// Parses a style. `data` gives the contents of GeoJSON sources whose `data` is a URL,
    /// by that URL's file name.
    public init(bytes: [UInt8], file: String, data: [String: JSONValue] = [:]) throws(StyleError) {
        do {
            json = try JSONValue.parse(bytes)
        } catch {
            throw StyleError(message: "\(file): not a JSON style: \(error)")
        }
        var features: [String: [StyleFeature]] = [:]
        for (id, source) in json["sources"]?.objectValue ?? [:] where source["type"]?.stringValue == "geojson" {
            switch source["data"] {
            case .string(let url)?:
                let name = url.split(separator: "/").last.map(String.init) ?? url
                guard let given = data[name] else {
                    throw StyleError(message: "\(file): source \"\(id)\" loads \(url): give it with --data \(name)")
                }
                features[id] = Self.features(of: given)
            case let inline?:
                features[id] = Self.features(of: inline)
            case nil:
                features[id] = []
            }
        }
        var layers: [StyleLayer] = []
        for (index, layer) in (json["layers"]?.arrayValue ?? []).enumerated() where layer["type"]?.stringValue == "symbol" {
            let path = "layers[\(index)]"
            let layout = layer["layout"]
            do {
                layers.append(StyleLayer(
                    id: layer["id"]?.stringValue ?? path, source: layer["source"]?.stringValue,
                    iconImage: try layout?["icon-image"].map { value throws(ExpressionError) in try StyleExpression.parse(value, path: "\(path).layout.icon-image") },
                    iconSize: try layout?["icon-size"].map { value throws(ExpressionError) in try StyleExpression.parse(value, path: "\(path).layout.icon-size") },
                    path: path))
            } catch {
                throw StyleError(message: "\(file): \(error)")
            }
        }
        self.layers = layers
        self.features = features
    }

    /// Every icon the style's layers show for their features: name, parameter colors, and the
    /// scale (times the pixel ratio) to rasterize at. Equal requests are merged, keeping the
    /// largest scale.
    public func neededIcons(imageExists: @escaping (String) -> Bool = { _ in true }) -> [(image: ImageReference, scale: Double)] {
        var scales: [ImageReference: Double] = [:]
        for layer in layers {
            let properties = (layer.source.flatMap { features[$0] } ?? []).map(\.properties)
            let scale = layer.rasterScale(features: properties)
            // A layer with no features may still name a constant icon.
            for feature in properties.isEmpty ? [[:]] : properties {
                guard let image = layer.image(for: feature, imageExists: imageExists) else { continue }
                scales[image] = max(scales[image] ?? 0, scale)
            }
        }
        return scales.map { ($0.key, $0.value) }.sorted { $0.image.sortKey < $1.image.sortKey }
    }

    private static func features(of geoJSON: JSONValue) -> [StyleFeature] {
        func feature(_ json: JSONValue) -> StyleFeature {
            var point: (Double, Double)?
            if json["geometry"]?["type"]?.stringValue == "Point", let coordinates = json["geometry"]?["coordinates"]?.arrayValue,
               coordinates.count >= 2, case .number(let longitude) = coordinates[0], case .number(let latitude) = coordinates[1] {
                point = (longitude, latitude)
            }
            return StyleFeature(properties: json["properties"]?.objectValue ?? [:], point: point)
        }
        switch geoJSON["type"]?.stringValue {
        case "FeatureCollection": return (geoJSON["features"]?.arrayValue ?? []).map(feature)
        case "Feature": return [feature(geoJSON)]
        default: return [StyleFeature(properties: [:], point: nil)]
        }
    }
}
