import Glibc
import IconrCore

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
        case "Point":
            guard let p = coordinates.flatMap(position) else { return nil }
            self = .point(p)
        case "MultiPoint":
            guard let p = list(coordinates, position) else { return nil }
            self = .multiPoint(p)
        case "LineString":
            guard let l = list(coordinates, position) else { return nil }
            self = .lineString(l)
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
            let found = (json["features"]?.arrayValue ?? []).compactMap { json in json["geometry"].flatMap(polygons) }
                .flatMap { $0 }
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

/// Positions as MapLibre measures them: tile coordinates (extent 8192) of the evaluation's
/// tile, rounded as vector tiles store them; without a tile, unrounded world coordinates.
struct TileProjection {
    static let extent = 8192.0
    let z: Int, x: Int, y: Int
    let rounds: Bool

    init(_ canonical: (z: Int, x: Int, y: Int)?) {
        z = canonical?.z ?? 0
        x = canonical?.x ?? 0
        y = canonical?.y ?? 0
        rounds = canonical != nil
    }

    private var tiles: Double { pow(2, Double(z)) }

    /// Web Mercator of a longitude and latitude, the world in 0...1.
    private func mercator(_ p: [Double]) -> (x: Double, y: Double) {
        ((180 + p[0]) / 360, (180 - (180 / .pi) * log(tan(.pi / 4 + p[1] * .pi / 360))) / 360)
    }

    private func rounded(_ value: Double) -> Double { rounds ? value.javaScriptRounded : value }

    /// World position (tile coordinates of the whole world at this zoom).
    func world(_ p: [Double]) -> [Double] {
        let m = mercator(p)
        return [rounded(m.x * tiles * Self.extent), rounded(m.y * tiles * Self.extent)]
    }

    /// A feature position as the tile stores it (relative to the tile, rounded).
    func tile(_ p: [Double]) -> [Double] {
        let m = mercator(p)
        return [rounded((m.x * tiles - Double(x)) * Self.extent), rounded((m.y * tiles - Double(y)) * Self.extent)]
    }

    /// Longitude and latitude of a tile position.
    func lngLat(_ t: [Double]) -> [Double] {
        let wx = (t[0] / Self.extent + Double(x)) / tiles
        let wy = (t[1] / Self.extent + Double(y)) / tiles
        return [wx * 360 - 180, 360 / .pi * atan(exp((180 - wy * 360) * .pi / 180)) - 90]
    }

    var worldSize: Double { tiles * Self.extent }
    var shift: [Double] { [Double(x) * Self.extent, Double(y) * Self.extent] }
}

/// The feature's geometry as a vector tile holds it: its parts in tile coordinates, and
/// whether it is points, lines or polygons.
struct TileGeometry {
    enum Kind { case point, line, polygon }
    let kind: Kind
    /// Points: one part per point; lines: one per line; polygons: rings (all polygons' rings).
    let parts: [[[Double]]]

    init(_ geometry: GeoJSONGeometry, _ projection: TileProjection) {
        func line(_ positions: [[Double]]) -> [[Double]] { positions.map(projection.tile) }
        switch geometry {
        case .point(let p):
            kind = .point
            parts = [[projection.tile(p)]]
        case .multiPoint(let points):
            kind = .point
            parts = points.map { [projection.tile($0)] }
        case .lineString(let l):
            kind = .line
            parts = [line(l)]
        case .multiLineString(let lines):
            kind = .line
            parts = lines.map(line)
        case .polygon(let rings):
            kind = .polygon
            parts = rings.map(line)
        case .multiPolygon(let polygons):
            kind = .polygon
            parts = polygons.flatMap { $0.map(line) }
        }
    }
}

private typealias BBox = (minX: Double, minY: Double, maxX: Double, maxY: Double)
private let emptyBox: BBox = (.infinity, .infinity, -.infinity, -.infinity)

private func extend(_ box: inout BBox, _ p: [Double]) {
    box = (min(box.minX, p[0]), min(box.minY, p[1]), max(box.maxX, p[0]), max(box.maxY, p[1]))
}

private func boxWithinBox(_ inner: BBox, _ outer: BBox) -> Bool {
    inner.minX > outer.minX && inner.maxX < outer.maxX && inner.minY > outer.minY && inner.maxY < outer.maxY
}

/// Geometry predicates shared by `within` and `distance` (the reference's rules: a point on
/// an edge is outside, unless asked otherwise; parallel segments never cross).
enum Planar {
    static func onBoundary(_ p: [Double], _ a: [Double], _ b: [Double]) -> Bool {
        let x1 = p[0] - a[0], y1 = p[1] - a[1], x2 = p[0] - b[0], y2 = p[1] - b[1]
        return x1 * y2 - x2 * y1 == 0 && x1 * x2 <= 0 && y1 * y2 <= 0
    }

    static func pointInPolygon(_ p: [Double], _ rings: [[[Double]]], onBoundary boundary: Bool = false) -> Bool {
        var inside = false
        for ring in rings where ring.count > 1 {
            for j in 0..<ring.count - 1 {
                let a = ring[j], b = ring[j + 1]
                if onBoundary(p, a, b) { return boundary }
                if (a[1] > p[1]) != (b[1] > p[1]) && p[0] < (b[0] - a[0]) * (p[1] - a[1]) / (b[1] - a[1]) + a[0] {
                    inside.toggle()
                }
            }
        }
        return inside
    }

    private static func twoSided(_ p1: [Double], _ p2: [Double], _ q1: [Double], _ q2: [Double]) -> Bool {
        let x1 = q1[0] - p1[0], y1 = q1[1] - p1[1], x2 = q2[0] - p1[0], y2 = q2[1] - p1[1]
        let x3 = p2[0] - p1[0], y3 = p2[1] - p1[1]
        let det1 = x1 * y3 - x3 * y1, det2 = x2 * y3 - x3 * y2
        return (det1 > 0 && det2 < 0) || (det1 < 0 && det2 > 0)
    }

    static func segmentsCross(_ a: [Double], _ b: [Double], _ c: [Double], _ d: [Double]) -> Bool {
        let p = [b[0] - a[0], b[1] - a[1]], q = [d[0] - c[0], d[1] - c[1]]
        if q[0] * p[1] - q[1] * p[0] == 0 { return false }
        return twoSided(a, b, c, d) && twoSided(c, d, a, b)
    }

    static func lineInPolygon(_ line: [[Double]], _ rings: [[[Double]]]) -> Bool {
        guard line.allSatisfy({ pointInPolygon($0, rings) }) else { return false }
        for i in 0..<max(line.count - 1, 0) {
            for ring in rings where ring.count > 1 {
                for j in 0..<ring.count - 1 where segmentsCross(line[i], line[i + 1], ring[j], ring[j + 1]) {
                    return false
                }
            }
        }
        return true
    }
}

/// `within`: whether the feature's points or lines lie inside the given polygons.
final class WithinNode: ExpressionNode {
    let polygons: [[[[Double]]]]
    let key: String
    var type: StyleType { .boolean }

    init(polygons: [[[[Double]]]], key: String) {
        self.polygons = polygons
        self.key = key
    }

    func evaluate(_ context: EvaluationContext) -> StyleValue {
        guard let geometry = context.feature?.geometry else { return .boolean(false) }
        let projection = TileProjection(context.canonical)
        let feature = TileGeometry(geometry, projection)
        guard feature.kind != .polygon else { return .boolean(false) }
        var polygonBox = emptyBox
        let tilePolygons = polygons.map {
            $0.map {
                $0.map { p -> [Double] in
                    let w = projection.world(p)
                    extend(&polygonBox, w)
                    return w
                }
            }
        }
        let worldSize = projection.worldSize, shift = projection.shift
        func wrapped(_ p: [Double]) -> [Double] {
            var p = p
            if p[0] < polygonBox.minX || p[0] > polygonBox.maxX {
                let half = worldSize * 0.5
                var delta = p[0] - polygonBox.minX > half ? -worldSize : polygonBox.minX - p[0] > half ? worldSize : 0
                if delta == 0 {
                    delta = p[0] - polygonBox.maxX > half ? -worldSize : polygonBox.maxX - p[0] > half ? worldSize : 0
                }
                p[0] += delta
            }
            return p
        }
        var box = emptyBox
        var parts = feature.parts.map { $0.map { [$0[0] + shift[0], $0[1] + shift[1]] } }
        if feature.kind == .point {
            parts = parts.map { $0.map(wrapped) }
            parts.joined().forEach { extend(&box, $0) }
        } else {
            parts.joined().forEach { extend(&box, $0) }
            if box.maxX - box.minX <= worldSize / 2 {
                box = emptyBox
                parts = parts.map { $0.map(wrapped) }
                parts.joined().forEach { extend(&box, $0) }
            }
        }
        guard boxWithinBox(box, polygonBox) else { return .boolean(false) }
        if feature.kind == .point {
            return .boolean(parts.joined().allSatisfy { p in tilePolygons.contains { Planar.pointInPolygon(p, $0) } })
        }
        return .boolean(parts.allSatisfy { line in tilePolygons.contains { Planar.lineInPolygon(line, $0) } })
    }

    var children: [any ExpressionNode] { [] }
}

/// Distances on the ellipsoid, flat near one latitude (Mapbox's cheap ruler), in metres.
struct CheapRuler {
    let kx: Double, ky: Double

    init(latitude: Double) {
        let re = 6378.137, fe = 1 / 298.257223563
        let e2 = fe * (2 - fe), rad = Double.pi / 180
        let m = rad * re * 1000
        let coslat = cos(latitude * rad)
        let w2 = 1 / (1 - e2 * (1 - coslat * coslat))
        let w = w2.squareRoot()
        kx = m * w * coslat
        ky = m * w * w2 * (1 - e2)
    }

    private func wrap(_ degrees: Double) -> Double {
        var d = degrees
        while d < -180 { d += 360 }
        while d > 180 { d -= 360 }
        return d
    }

    func distance(_ a: [Double], _ b: [Double]) -> Double {
        let dx = wrap(a[0] - b[0]) * kx, dy = (a[1] - b[1]) * ky
        return (dx * dx + dy * dy).squareRoot()
    }

    /// The distance from `p` to the nearest point of `line`.
    func distance(_ p: [Double], toLine line: [[Double]]) -> Double {
        guard line.count > 1 else { return line.first.map { distance(p, $0) } ?? .infinity }
        var best = Double.infinity
        for i in 0..<line.count - 1 {
            var x = line[i][0], y = line[i][1]
            let dx = wrap(line[i + 1][0] - x) * kx, dy = (line[i + 1][1] - y) * ky
            if dx != 0 || dy != 0 {
                let t = (wrap(p[0] - x) * kx * dx + (p[1] - y) * ky * dy) / (dx * dx + dy * dy)
                if t > 1 {
                    x = line[i + 1][0]
                    y = line[i + 1][1]
                } else if t > 0 {
                    x += dx / kx * t
                    y += dy / ky * t
                }
            }
            best = min(best, distance(p, [x, y]))
        }
        return best
    }
}

/// `distance`: the shortest distance in metres from the feature to the given geometry.
final class DistanceNode: ExpressionNode {
    /// Points, lines and polygons (rings), longitude first.
    let targets: [GeoJSONGeometry]
    let key: String
    var type: StyleType { .number }

    init(targets: [GeoJSONGeometry], key: String) {
        self.targets = targets
        self.key = key
    }

    func evaluate(_ context: EvaluationContext) -> StyleValue {
        guard let geometry = context.feature?.geometry else { return .number(.nan) }
        let projection = TileProjection(context.canonical)
        let feature = TileGeometry(geometry, projection)
        let parts = feature.parts.map { $0.map(projection.lngLat) }
        guard let first = parts.first?.first else { return .number(.nan) }
        let ruler = CheapRuler(latitude: first[1])
        var best = Double.infinity
        let simple = targets.flatMap(Self.simple)
        switch feature.kind {
        case .point, .line:
            let isLine = feature.kind == .line
            // Lines one by one; points all together.
            let groups = isLine ? parts : [parts.flatMap { $0 }]
            for target in simple {
                for part in groups {
                    best = min(best, Self.distance(part, isLine: isLine, to: target, ruler))
                    if best == 0 { return .number(0) }
                }
            }
        case .polygon:
            for polygon in Self.classify(parts) {
                for target in simple {
                    let d: Double
                    switch target {
                    case .point(let p): d = Self.pointsToPolygon([p], isLine: false, polygon, ruler)
                    case .line(let l): d = Self.pointsToPolygon(l, isLine: true, polygon, ruler)
                    case .polygon(let rings): d = Self.polygonToPolygon(polygon, rings, ruler)
                    }
                    best = min(best, d)
                    if best == 0 { return .number(0) }
                }
            }
        }
        return .number(best)
    }

    enum Simple { case point([Double]), line([[Double]]), polygon([[[Double]]]) }

    static func simple(_ geometry: GeoJSONGeometry) -> [Simple] {
        switch geometry {
        case .point(let p): [.point(p)]
        case .multiPoint(let points): points.map { .point($0) }
        case .lineString(let l): [.line(l)]
        case .multiLineString(let lines): lines.map { .line($0) }
        case .polygon(let rings): [.polygon(rings)]
        case .multiPolygon(let polygons): polygons.map { .polygon($0) }
        }
    }

    private static func distance(_ part: [[Double]], isLine: Bool, to target: Simple, _ ruler: CheapRuler) -> Double {
        switch target {
        case .point(let p):
            return isLine ? ruler.distance(p, toLine: part) : part.map { ruler.distance($0, p) }.min() ?? .infinity
        case .line(let l):
            if isLine { return lineToLine(part, l, ruler) }
            return part.map { ruler.distance($0, toLine: l) }.min() ?? .infinity
        case .polygon(let rings):
            return pointsToPolygon(part, isLine: isLine, rings, ruler)
        }
    }

    private static func segmentToSegment(
        _ p1: [Double], _ p2: [Double], _ q1: [Double], _ q2: [Double], _ ruler: CheapRuler
    ) -> Double {
        min(
            ruler.distance(p1, toLine: [q1, q2]), ruler.distance(p2, toLine: [q1, q2]),
            ruler.distance(q1, toLine: [p1, p2]), ruler.distance(q2, toLine: [p1, p2]))
    }

    private static func lineToLine(_ a: [[Double]], _ b: [[Double]], _ ruler: CheapRuler) -> Double {
        var best = Double.infinity
        for i in 0..<max(a.count - 1, 0) {
            for j in 0..<max(b.count - 1, 0) {
                if Planar.segmentsCross(a[i], a[i + 1], b[j], b[j + 1]) { return 0 }
                best = min(best, segmentToSegment(a[i], a[i + 1], b[j], b[j + 1], ruler))
            }
        }
        return best
    }

    private static func pointToPolygon(_ p: [Double], _ rings: [[[Double]]], _ ruler: CheapRuler) -> Double {
        if Planar.pointInPolygon(p, rings, onBoundary: true) { return 0 }
        var best = Double.infinity
        for ring in rings {
            if let first = ring.first, let last = ring.last, first != last {
                best = min(best, ruler.distance(p, toLine: [last, first]))
            }
            best = min(best, ruler.distance(p, toLine: ring))
            if best == 0 { return 0 }
        }
        return best
    }

    private static func pointsToPolygon(
        _ points: [[Double]], isLine: Bool, _ rings: [[[Double]]], _ ruler: CheapRuler
    ) -> Double {
        if !isLine { return points.map { pointToPolygon($0, rings, ruler) }.min() ?? .infinity }
        if points.contains(where: { Planar.pointInPolygon($0, rings, onBoundary: true) }) { return 0 }
        var best = Double.infinity
        for i in 0..<max(points.count - 1, 0) {
            for ring in rings where !ring.isEmpty {
                var k = ring.count - 1
                for j in 0..<ring.count {
                    if Planar.segmentsCross(points[i], points[i + 1], ring[k], ring[j]) { return 0 }
                    best = min(best, segmentToSegment(points[i], points[i + 1], ring[k], ring[j], ruler))
                    k = j
                }
            }
        }
        return best
    }

    private static func box(_ rings: [[[Double]]]) -> BBox {
        var b = emptyBox
        rings.joined().forEach { extend(&b, $0) }
        return b
    }

    private static func polygonToPolygon(_ a: [[[Double]]], _ b: [[[Double]]], _ ruler: CheapRuler) -> Double {
        func intersects(_ x: [[[Double]]], _ y: [[[Double]]]) -> Bool {
            x.joined().contains { Planar.pointInPolygon($0, y, onBoundary: true) }
        }
        if boxWithinBox(box(a), box(b)) ? intersects(a, b) : intersects(b, a) { return 0 }
        var best = Double.infinity
        for ring1 in a where !ring1.isEmpty {
            var l = ring1.count - 1
            for i in 0..<ring1.count {
                for ring2 in b where !ring2.isEmpty {
                    var k = ring2.count - 1
                    for j in 0..<ring2.count {
                        if Planar.segmentsCross(ring1[l], ring1[i], ring2[k], ring2[j]) { return 0 }
                        best = min(best, segmentToSegment(ring1[l], ring1[i], ring2[k], ring2[j], ruler))
                        k = j
                    }
                }
                l = i
            }
        }
        return best
    }

    /// Rings grouped into polygons by winding: an outer ring and the holes after it.
    private static func classify(_ rings: [[[Double]]]) -> [[[[Double]]]] {
        if rings.count <= 1 { return [rings] }
        var polygons: [[[[Double]]]] = [], current: [[[Double]]] = []
        var outerIsNegative: Bool?
        for ring in rings {
            var area = 0.0
            var j = ring.count - 1
            for i in 0..<ring.count {
                area += (ring[j][0] - ring[i][0]) * (ring[i][1] + ring[j][1])
                j = i
            }
            if area == 0 { continue }
            if outerIsNegative == nil { outerIsNegative = area < 0 }
            if outerIsNegative == (area < 0) {
                if !current.isEmpty { polygons.append(current) }
                current = [ring]
            } else {
                current.append(ring)
            }
        }
        if !current.isEmpty { polygons.append(current) }
        return polygons
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
        let json = items[1]
        var geometries: [GeoJSONGeometry] = []
        switch json["type"]?.stringValue {
        case "FeatureCollection":
            geometries = (json["features"]?.arrayValue ?? []).compactMap {
                $0["geometry"].flatMap(GeoJSONGeometry.init)
            }
        case "Feature": geometries = json["geometry"].flatMap(GeoJSONGeometry.init).map { [$0] } ?? []
        default: geometries = GeoJSONGeometry(json).map { [$0] } ?? []
        }
        guard !geometries.isEmpty else {
            context.error("'distance' expression requires valid geojson object that contains polygon geometry type.")
            return nil
        }
        return DistanceNode(targets: geometries, key: context.key)
    }
}
