import Glibc

/// A GeoJSON geometry, longitude first.
public enum GeoJSONGeometry: Sendable, Equatable {
    case point([Double])
    case multiPoint([[Double]])
    case lineString([[Double]])
    case multiLineString([[[Double]]])
    case polygon([[[Double]]])
    case multiPolygon([[[[Double]]]])

    /// The geometry of a GeoJSON geometry object; nil for other objects.
    public init?(_ json: JSONValue) {
        func position(_ value: JSONValue) -> [Double]? {
            guard let items = value.arrayValue, items.count >= 2 else { return nil }
            let numbers = items.compactMap { item -> Double? in if case .number(let n) = item { n } else { nil } }
            return numbers.count == items.count ? numbers : nil
        }
        func list<T>(_ value: JSONValue?, _ item: (JSONValue) -> T?) -> [T]? {
            guard let items = value?.arrayValue else { return nil }
            let mapped = items.compactMap(item)
            return mapped.count == items.count ? mapped : nil
        }
        let coordinates = json["coordinates"]
        switch json["type"]?.stringValue {
        case "Point": guard let p = coordinates.flatMap(position) else { return nil }; self = .point(p)
        case "MultiPoint": guard let p = list(coordinates, position) else { return nil }; self = .multiPoint(p)
        case "LineString": guard let l = list(coordinates, position) else { return nil }; self = .lineString(l)
        case "MultiLineString":
            guard let l = list(coordinates, { list($0, position) }) else { return nil }
            self = .multiLineString(l)
        case "Polygon":
            guard let r = list(coordinates, { list($0, position) }) else { return nil }
            self = .polygon(r)
        case "MultiPolygon":
            guard let p = list(coordinates, { list($0, { list($0, position) }) }) else { return nil }
            self = .multiPolygon(p)
        default: return nil
        }
    }

    /// `Point`, `LineString`, ... as `geometry-type` reports it (one-part multis are simple).
    public var typeName: String {
        switch self {
        case .point: "Point"
        case .multiPoint(let points): points.count == 1 ? "Point" : "MultiPoint"
        case .lineString: "LineString"
        case .multiLineString(let lines): lines.count == 1 ? "LineString" : "MultiLineString"
        case .polygon: "Polygon"
        case .multiPolygon(let polygons): polygons.count == 1 ? "Polygon" : "MultiPolygon"
        }
    }

    /// The polygons of a GeoJSON Polygon, MultiPolygon, Feature or FeatureCollection.
    static func polygons(in json: JSONValue) -> [[[[Double]]]]? {
        switch json["type"]?.stringValue {
        case "FeatureCollection":
            let found = (json["features"]?.arrayValue ?? []).compactMap { json in json["geometry"].flatMap(polygons) }.flatMap { $0 }
            return found.isEmpty ? nil : found
        case "Feature": return json["geometry"].flatMap(polygons)
        default:
            switch GeoJSONGeometry(json) {
            case .polygon(let rings): return [rings]
            case .multiPolygon(let polygons): return polygons
            default: return nil
            }
        }
    }
}

/// Web Mercator in units of the world (0...1), where `within` compares positions.
private func mercator(_ position: [Double]) -> (x: Double, y: Double) {
    let x = (180 + position[0]) / 360
    let y = (180 - (180 / .pi) * log(tan(.pi / 4 + position[1] * .pi / 360))) / 360
    return (x, y)
}

/// `within`: whether the feature's points or lines lie inside the given polygons.
final class WithinNode: ExpressionNode {
    let polygons: [[[(x: Double, y: Double)]]]
    let key: String
    var type: StyleType { .boolean }

    init(polygons: [[[[Double]]]], key: String) {
        self.polygons = polygons.map { $0.map { $0.map(mercator) } }
        self.key = key
    }

    func evaluate(_ context: EvaluationContext) -> StyleValue {
        guard let geometry = context.feature?.geometry else { return .boolean(false) }
        switch geometry {
        case .point(let p): return .boolean(inside(mercator(p)))
        case .multiPoint(let points): return .boolean(points.allSatisfy { inside(mercator($0)) })
        case .lineString(let line): return .boolean(lineInside(line.map(mercator)))
        case .multiLineString(let lines): return .boolean(lines.allSatisfy { lineInside($0.map(mercator)) })
        default: return .boolean(false)
        }
    }

    private func inside(_ point: (x: Double, y: Double)) -> Bool {
        polygons.contains { Self.pointInPolygon(point, $0) }
    }

    private func lineInside(_ line: [(x: Double, y: Double)]) -> Bool {
        polygons.contains { polygon in
            line.allSatisfy { Self.pointInPolygon($0, polygon) } && !Self.lineCrossesPolygon(line, polygon)
        }
    }

    /// Even-odd rule; a point on an edge is outside.
    static func pointInPolygon(_ p: (x: Double, y: Double), _ rings: [[(x: Double, y: Double)]]) -> Bool {
        var inside = false
        for ring in rings where ring.count > 1 {
            for j in 0..<ring.count - 1 {
                let a = ring[j], b = ring[j + 1]
                let cross = (p.x - a.x) * (b.y - a.y) - (p.y - a.y) * (b.x - a.x)
                if cross == 0 && (a.x - p.x) * (b.x - p.x) <= 0 && (a.y - p.y) * (b.y - p.y) <= 0 { return false }
                if (a.y > p.y) != (b.y > p.y) && p.x < (b.x - a.x) * (p.y - a.y) / (b.y - a.y) + a.x { inside.toggle() }
            }
        }
        return inside
    }

    static func lineCrossesPolygon(_ line: [(x: Double, y: Double)], _ rings: [[(x: Double, y: Double)]]) -> Bool {
        func orientation(_ a: (x: Double, y: Double), _ b: (x: Double, y: Double), _ c: (x: Double, y: Double)) -> Double {
            (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x)
        }
        guard line.count > 1 else { return false }
        for i in 0..<line.count - 1 {
            let p = line[i], q = line[i + 1]
            for ring in rings where ring.count > 1 {
                for j in 0..<ring.count - 1 {
                    let r = ring[j], s = ring[j + 1]
                    let d1 = orientation(r, s, p), d2 = orientation(r, s, q)
                    let d3 = orientation(p, q, r), d4 = orientation(p, q, s)
                    if d1 * d2 < 0 && d3 * d4 < 0 { return true }
                }
            }
        }
        return false
    }

    var children: [any ExpressionNode] { [] }
}

/// `distance`: parsed and type-checked; measuring needs tile geometry, which iconr's style
/// path does not have, so evaluating it is an error naming the operator.
final class DistanceNode: ExpressionNode {
    let key: String
    var type: StyleType { .number }

    init(key: String) { self.key = key }

    func evaluate(_ context: EvaluationContext) throws(ExpressionEvaluationError) -> StyleValue {
        throw fail("\"distance\" is not supported by iconr.")
    }

    var children: [any ExpressionNode] { [] }
}

extension SpecialForms {
    static func within(_ items: [JSONValue], _ context: ParsingContext) -> (any ExpressionNode)? {
        guard items.count == 2 else {
            context.error("'within' expression requires exactly one argument, but found \(items.count - 1) instead.")
            return nil
        }
        guard let polygons = GeoJSONGeometry.polygons(in: items[1]) else {
            context.error("'within' expression requires valid geojson object that contains polygon geometry type.")
            return nil
        }
        return WithinNode(polygons: polygons, key: context.key)
    }

    static func distance(_ items: [JSONValue], _ context: ParsingContext) -> (any ExpressionNode)? {
        guard items.count == 2 else {
            context.error("'distance' expression requires exactly one argument, but found \(items.count - 1) instead.")
            return nil
        }
        guard case .object = items[1], GeoJSONGeometry(items[1]) != nil || items[1]["type"]?.stringValue == "Feature"
                || items[1]["type"]?.stringValue == "FeatureCollection" else {
            context.error("'distance' expression requires valid geojson object that contains polygon geometry type.")
            return nil
        }
        return DistanceNode(key: context.key)
    }
}
