import Foundation
import IconrCore
import IconrRender
import IconrTestSupport
import Testing

/// Sprite sheets from `iconr sprite`, loaded by a real client: MapLibre Native (the PyPI
/// package pymgl, headless on Mesa with EGL_PLATFORM=surfaceless). Each sprite id is drawn
/// at a point; each must appear there, as the sheet has it. MapLibre places icons within a
/// pixel or so of where iconr computes, so each is looked for within +-2 pixels, and matches
/// when the mean difference of its channels (over white, both blurred 3x3) is under 16 of 255.
struct MapLibreTests {
    let directory: URL
    /// Removed with the test.
    private let scratch: TemporaryFolder

    init() throws {
        scratch = try TemporaryFolder("iconr-maplibre")
        directory = scratch.url
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("icons"), withIntermediateDirectories: true)
    }

    private func iconr(_ arguments: [String]) throws {
        let result = try TestSupport.iconr(arguments, in: directory)
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// Renders `points` (logical pixels) with MapLibre and returns the map's RGBA pixels.
    private func render(
        sprite: Any, ratio: Double, width: Int, height: Int,
        points: [(icon: String, x: Int, y: Int)]
    ) throws -> [UInt8] {
        try render(
            [
                "sprite": sprite, "ratio": ratio, "width": width, "height": height, "zoom": 1,
                "points": points.map { ["icon": $0.icon, "x": $0.x, "y": $0.y] },
            ], width: width, height: height, ratio: ratio)
    }

    /// Runs Tests/MapLibre/render.py with `request` and returns the map's RGBA pixels.
    private func render(_ request: [String: Any], width: Int, height: Int, ratio: Double) throws -> [UInt8] {
        let python = try #require(TestSupport.which("python3"), "python3 is needed for the MapLibre test")
        let requestFile = directory.appendingPathComponent("request.json")
        try JSONSerialization.data(withJSONObject: request).write(to: requestFile)
        let output = directory.appendingPathComponent("map.png")
        let script = TestSupport.repository.appendingPathComponent("Tests/MapLibre/render.py").path
        let result = try TestSupport.run(
            "/usr/bin/env", ["EGL_PLATFORM=surfaceless", python, script, requestFile.path, output.path])
        let failure =
            "MapLibre (pymgl) failed; pip install pymgl and the Mesa EGL packages (.ci/packages): "
            + String(decoding: result.stderr, as: UTF8.self)
        try #require(result.status == 0, Comment(rawValue: failure))
        let map = try PNGDecoder.decode([UInt8](try Data(contentsOf: output)))
        try #require(map.size == PixelSize(width: Int(Double(width) * ratio), height: Int(Double(height) * ratio)))
        return map.pixels
    }

    /// The smallest mean channel difference between `icon` (over white) and the map at any
    /// placement within 2 pixels of being centred on (`centreX`, `centreY`), in whole and
    /// half pixels: MapLibre may put an icon half a pixel off, and then filters it. Both are
    /// blurred with a 3x3 box, so the filtering itself does not count; colors and shapes do.
    private func difference(_ icon: RasterImage, in map: [UInt8], mapWidth: Int, centreX: Int, centreY: Int) -> Double {
        let (width, height) = (icon.size.width, icon.size.height)
        var overWhite = [Double](repeating: 255, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let pixel = icon[x, y]
                for (channel, value) in [pixel.red, pixel.green, pixel.blue].enumerated() {
                    overWhite[(y * width + x) * 3 + channel] =
                        Double(Int(value) * Int(pixel.alpha) + 255 * (255 - Int(pixel.alpha))) / 255
                }
            }
        }
        func sample(_ x: Int, _ y: Int, _ channel: Int) -> Double {
            x >= 0 && y >= 0 && x < width && y < height ? overWhite[(y * width + x) * 3 + channel] : 255
        }
        // The icon moved right and down by half a pixel or not, along each axis.
        let shifted = [(0, 0), (1, 0), (0, 1), (1, 1)].map { shiftX, shiftY in
            blurred(
                (0..<(width * height * 3)).map { index in
                    let (x, y, channel) = (index / 3 % width, index / 3 / width, index % 3)
                    let xs = shiftX == 0 ? [x] : [x - 1, x], ys = shiftY == 0 ? [y] : [y - 1, y]
                    let values = ys.flatMap { sy in xs.map { sample($0, sy, channel) } }
                    return values.reduce(0, +) / Double(values.count)
                }, width, height)
        }
        var best = Double.infinity
        for dy in -2...2 {
            for dx in -2...2 {
                let left = centreX - width / 2 + dx, top = centreY - height / 2 + dy
                let window = blurred(
                    (0..<(width * height * 3)).map { index in
                        let (x, y, channel) = (index / 3 % width, index / 3 / width, index % 3)
                        let offset = ((top + y) * mapWidth + (left + x)) * 4
                        return offset >= 0 && offset + 3 < map.count ? Double(map[offset + channel]) : 0
                    }, width, height)
                for expected in shifted {
                    let total = zip(expected, window).reduce(0.0) { $0 + abs($1.0 - $1.1) }
                    best = min(best, total / Double(width * height * 3))
                }
            }
        }
        return best
    }

    private func blurred(_ values: [Double], _ width: Int, _ height: Int) -> [Double] {
        var result = values
        for y in 0..<height {
            for x in 0..<width {
                for channel in 0..<3 {
                    var sum = 0.0, count = 0.0
                    for ny in max(0, y - 1)...min(height - 1, y + 1) {
                        for nx in max(0, x - 1)...min(width - 1, x + 1) {
                            sum += values[(ny * width + nx) * 3 + channel]
                            count += 1
                        }
                    }
                    result[(y * width + x) * 3 + channel] = sum / count
                }
            }
        }
        return result
    }

    /// A sheet's pixels and its index.
    private func sheet(_ prefix: String, ratio: Double) throws -> (image: RasterImage, index: [String: [String: Any]]) {
        let suffix = ratio == 1 ? "" : "@\(Int(ratio))x"
        let png = try Data(contentsOf: directory.appendingPathComponent(prefix + suffix + ".png"))
        let json = try Data(contentsOf: directory.appendingPathComponent(prefix + suffix + ".json"))
        return (
            try PNGDecoder.decode([UInt8](png)),
            try JSONSerialization.jsonObject(with: json) as! [String: [String: Any]]
        )
    }

    @Test func everySpriteIDAppearsAtItsPointAtRatios1And2() throws {
        try TestSupport.copyBundledIcons(to: directory.appendingPathComponent("icons"))
        try Data(
            """
            {"flag": [{"params": {"flag_color": "red"}}, {"id": "flag-selected", "params": {"flag_color": "#800080"}}],
             "marker": [{"params": {"fill_color": "#2a9d8f", "stroke_color": "navy"}}]}
            """.utf8
        ).write(to: directory.appendingPathComponent("variants.json"))
        try iconr(["sprite", "icons", "-o", "out/sprite", "--variants", "variants.json", "--no-cache"])

        for ratio in [1.0, 2.0] {
            let (sheetImage, index) = try sheet("out/sprite", ratio: ratio)
            let ids = index.keys.sorted()
            #expect(ids.count == 7)
            let points = ids.enumerated().map {
                (icon: $0.element, x: 40 + 60 * ($0.offset % 4), y: 40 + 60 * ($0.offset / 4))
            }
            let map = try render(
                sprite: "file://" + directory.appendingPathComponent("out/sprite").path, ratio: ratio,
                width: 260, height: 140, points: points)
            let mapWidth = Int(260 * ratio)
            for point in points {
                let icon = sheetImage.cropped(to: index[point.icon]!)
                let score = difference(
                    icon, in: map, mapWidth: mapWidth, centreX: Int(Double(point.x) * ratio),
                    centreY: Int(Double(point.y) * ratio))
                #expect(score < 16, "\(point.icon) at \(ratio)x: mean difference \(score)")
            }
            // The check can fail: the purple flag is not where the red one is drawn.
            let purple = sheetImage.cropped(to: index["flag-selected"]!)
            let red = points.first { $0.icon == "flag?flag_color=ff0000" }!
            #expect(
                difference(
                    purple, in: map, mapWidth: mapWidth, centreX: Int(Double(red.x) * ratio),
                    centreY: Int(Double(red.y) * ratio)) >= 16)
        }
    }

    @Test(.enabled(if: TestSupport.corporaAvailable, Comment(rawValue: TestSupport.corporaMissing)))
    func iconsSplitOverSeveralSheetsAllLoad() throws {
        let maki = try TestSupport.requiredSVGFiles(in: TestSupport.corpus("maki"), atLeast: 10).prefix(10)
        for file in maki {
            try FileManager.default.copyItem(
                at: file, to: directory.appendingPathComponent("icons/\(file.lastPathComponent)"))
        }
        // 30 px icons at 2x with 2 px padding: four fit a 64 px sheet.
        try iconr(["sprite", "icons", "-o", "out/multi", "--max-size", "64", "--no-cache"])
        let sheets = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("out").path)
            .filter { $0.hasSuffix("@2x.png") }
        #expect(sheets.count == 3)
        for ratio in [1.0, 2.0] {
            var sprite: [[String: String]] = []
            var points: [(icon: String, x: Int, y: Int)] = []
            var expected: [String: RasterImage] = [:]
            for number in 0..<sheets.count {
                let prefix = number == 0 ? "out/multi" : "out/multi-\(number + 1)"
                let id = number == 0 ? "default" : "multi-\(number + 1)"
                sprite.append(["id": id, "url": "file://" + directory.appendingPathComponent(prefix).path])
                let (image, index) = try sheet(prefix, ratio: ratio)
                for name in index.keys.sorted() {
                    let styleName = number == 0 ? name : "\(id):\(name)"
                    points.append((styleName, 30 + 40 * (points.count % 6), 30 + 40 * (points.count / 6)))
                    expected[styleName] = image.cropped(to: index[name]!)
                }
            }
            #expect(points.count == 10)
            let map = try render(sprite: sprite, ratio: ratio, width: 260, height: 100, points: points)
            for point in points {
                let score = difference(
                    expected[point.icon]!, in: map, mapWidth: Int(260 * ratio),
                    centreX: Int(Double(point.x) * ratio), centreY: Int(Double(point.y) * ratio))
                #expect(score < 16, "\(point.icon) at \(ratio)x: mean difference \(score)")
            }
        }
    }

    /// A style written the way Mapbox Streets v12 is (iconr's own fixture, not Mapbox's file):
    /// `hsl()` colors, filters that read the zoom inside `all`, `match` and arithmetic,
    /// `filterrank` against a zoom step, `coalesce` of images from data with a fallback,
    /// zoom steps on `line-cap`, literal arrays in curves, `icon-opacity` stepped on zoom and
    /// size, a transit layer whose filter is a top-level zoom step, `fog`, a globe `projection`,
    /// Studio's root `visibility`, layer `metadata` and a Mapbox-only property. Built over the
    /// whole Maki set, the emitted style loads in both clients with nothing logged (MapScript
    /// fails on any error or warning) and draws: the park its color, each POI its Maki icon
    /// (as the sheet has it, the mean difference under 16), the low-ranked, small and
    /// filtered-out ones nothing.
    @Test(.enabled(if: TestSupport.corporaAvailable, Comment(rawValue: TestSupport.corporaMissing)))
    func aStreetsLikeStyleComesOutValidAndDrawsInBothClients() throws {
        for file in try TestSupport.requiredSVGFiles(in: TestSupport.corpus("maki"), atLeast: 214) {
            try FileManager.default.copyItem(
                at: file, to: directory.appendingPathComponent("icons/\(file.lastPathComponent)"))
        }
        // At zoom 14 the globe MapLibre GL JS draws (the style's projection) is flat to a pixel.
        let (width, height, zoom) = (320, 160, 14.0)
        func lngLat(_ x: Double, _ y: Double) -> String {
            let world = 512 * pow(2, zoom)
            let longitude = (x - Double(width) / 2) / world * 360
            let latitude = atan(sinh((Double(height) / 2 - y) / world * 2 * .pi)) * 180 / .pi
            return "[\(longitude), \(latitude)]"
        }
        let pois = [
            (x: 40.0, y: 40.0, properties: #"{"maki": "cafe", "filterrank": 1, "sizerank": 10}"#, icon: "cafe"),
            (
                x: 100, y: 40,
                properties: #"{"maki": "museum", "maki_beta": "no-such-icon", "filterrank": 2, "sizerank": 10}"#,
                icon: "museum"
            ),
            (
                x: 160, y: 40,
                properties: #"{"maki": "hospital", "maki_beta": "bus", "filterrank": 3, "sizerank": 10}"#,
                icon: "bus"
            ),
            (x: 220, y: 40, properties: #"{"maki": "restaurant", "filterrank": 5, "sizerank": 10}"#, icon: ""),
            // A small POI is drawn fully transparent below zoom 17 (icon-opacity).
            (x: 280, y: 40, properties: #"{"maki": "cafe", "filterrank": 1, "sizerank": 2}"#, icon: ""),
            (
                x: 40, y: 80,
                properties: #"{"transit": true, "network": "rail", "mode": "rail", "stop_type": "station"}"#,
                icon: "rail"
            ),
            (
                x: 100, y: 80,
                properties: #"{"transit": true, "network": "ferry", "mode": "ferry", "stop_type": "entrance"}"#,
                icon: ""
            ),
        ]
        let features =
            pois.map {
                #"{"type": "Feature", "geometry": {"type": "Point", "coordinates": \#(lngLat($0.x, $0.y))}, "properties": \#($0.properties)}"#
            } + [
                #"{"type": "Feature", "geometry": {"type": "Polygon", "coordinates": [[\#(lngLat(200, 90)), \#(lngLat(300, 90)), \#(lngLat(300, 150)), \#(lngLat(200, 150)), \#(lngLat(200, 90))]]}, "properties": {"class": "park", "sizerank": 3}}"#,
                #"{"type": "Feature", "geometry": {"type": "LineString", "coordinates": [\#(lngLat(10, 120)), \#(lngLat(180, 120))]}, "properties": {"class": "primary"}}"#,
            ]
        let style = #"""
            {"version": 8, "name": "Streets-like", "visibility": "public", "center": [0, 0], "zoom": 14,
             "fog": {"range": [2, 20], "color": "hsl(0, 0%, 100%)", "horizon-blend": ["interpolate", ["exponential", 1.2], ["zoom"], 5, 0.02, 7, 0.08]},
             "projection": {"name": "globe"},
             "sources": {"composite": {"type": "geojson", "data": {"type": "FeatureCollection", "features": [\#(features.joined(separator: ","))]}}},
             "layers": [
              {"id": "land", "type": "background", "layout": {}, "metadata": {"mapbox:group": "Land"},
               "paint": {"background-color": ["interpolate", ["linear"], ["zoom"], 9, "hsl(20, 18%, 91%)", 11, "hsl(0, 0%, 100%)"]}},
              {"id": "landuse", "type": "fill", "source": "composite",
               "filter": ["all", [">=", ["to-number", ["get", "sizerank"]], 0],
                 ["match", ["get", "class"], ["park", "airport"], ["step", ["zoom"], true, 8, ["case", ["==", ["get", "sizerank"], 1], true, false], 10, true], false],
                 ["<=", ["-", ["to-number", ["get", "sizerank"]], ["interpolate", ["exponential", 1.5], ["zoom"], 12, 0, 18, 14]], 14]],
               "paint": {"fill-color": ["match", ["get", "class"], "park", "hsl(110, 60%, 80%)", "hsl(20, 22%, 86%)"], "fill-antialias": false}},
              {"id": "road", "type": "line", "source": "composite", "filter": ["match", ["get", "class"], ["primary", "trunk"], true, false],
               "layout": {"line-cap": ["step", ["zoom"], "butt", 11, "round"], "line-join": ["step", ["zoom"], "miter", 11, "round"]},
               "paint": {"line-color": "hsl(0, 0%, 40%)", "line-width": ["interpolate", ["exponential", 1.5], ["zoom"], 1, ["match", ["get", "class"], "primary", 6, 2], 18, 20],
                 "line-translate": ["interpolate", ["exponential", 1.2], ["zoom"], 7, ["literal", [0, 0]], 16, ["literal", [-1, -1]]]}},
              {"id": "poi-label", "type": "symbol", "source": "composite",
               "filter": ["all", ["!", ["has", "transit"]], ["<=", ["get", "filterrank"], ["+", ["step", ["zoom"], 0, 16, 1, 17, 2], 3]],
                 ["match", ["get", "worldview"], ["all", "US"], true, ["==", ["geometry-type"], "Point"]]],
               "paint": {"icon-opacity": ["step", ["zoom"], ["step", ["get", "sizerank"], 0, 5, 1], 17, ["step", ["get", "sizerank"], 0, 13, 1]]},
               "layout": {"icon-image": ["case", ["has", "maki_beta"], ["coalesce", ["image", ["get", "maki_beta"]], ["image", ["get", "maki"]]], ["image", ["get", "maki"]]],
                 "symbol-z-elevate": true, "icon-allow-overlap": true, "icon-ignore-placement": true}},
              {"id": "transit-label", "type": "symbol", "source": "composite", "minzoom": 12,
               "filter": ["step", ["zoom"], ["all", ["has", "transit"], ["match", ["get", "mode"], "rail", true, "metro_rail", true, false]],
                 15, ["all", ["has", "transit"], ["!=", ["get", "stop_type"], "entrance"]]],
               "layout": {"icon-image": ["get", "network"], "icon-allow-overlap": true, "icon-ignore-placement": true}}]}
            """#
        try Data(style.utf8).write(to: directory.appendingPathComponent("streets.json"))
        let build = try TestSupport.run(
            TestSupport.iconrExecutable,
            [
                "sprite", "icons", "-o", "out/sprite", "--style", "streets.json", "--emit-style", "out/style.json",
                "--no-cache",
            ],
            directory: directory)
        let stderr = String(decoding: build.stderr, as: UTF8.self)
        try #require(build.status == 0, "\(stderr)")
        #expect(
            stderr.contains(#"removed Mapbox-only "fog""#)
                && stderr.contains(#"removed Mapbox-only "symbol-z-elevate""#))
        for ratio in [1.0, 2.0] {
            let (sheet, index) = try sheet("out/sprite", ratio: ratio)
            for client in MapClient.allCases {
                let map = try client.render(
                    style: directory.appendingPathComponent("out/style.json"), root: directory, ratio: ratio,
                    width: width, height: height, zoom: zoom, longitude: 0, latitude: 0)
                let mapWidth = Int(Double(width) * ratio)
                func pixel(_ x: Double, _ y: Double) -> (Int, Int, Int) {
                    let offset = (Int(y * ratio) * mapWidth + Int(x * ratio)) * 4
                    return (Int(map[offset]), Int(map[offset + 1]), Int(map[offset + 2]))
                }
                let park = pixel(250, 130)
                #expect(
                    abs(park.0 - 184) <= 3 && abs(park.1 - 235) <= 3 && abs(park.2 - 173) <= 3,
                    "\(client) at \(ratio)x: the park is \(park)")
                let road = pixel(100, 120)
                #expect(road.0 < 120 && road.0 == road.2, "\(client) at \(ratio)x: the road is \(road)")
                for poi in pois {
                    if poi.icon.isEmpty {
                        #expect(
                            pixel(poi.x, poi.y) == (255, 255, 255),
                            "\(client) at \(ratio)x: \(poi.properties) shows nothing"
                        )
                        continue
                    }
                    let entry = try #require(index[poi.icon])
                    let score = difference(
                        sheet.cropped(to: entry), in: map, mapWidth: mapWidth, centreX: Int(poi.x * ratio),
                        centreY: Int(poi.y * ratio))
                    #expect(score < 16, "\(client) at \(ratio)x: \(poi.icon): mean difference \(score)")
                }
            }
        }
    }

    /// Pixels within 60 of `color` in a square of `radius` around (`x`, `y`): how many, and
    /// how wide their bounding box is.
    private func colored(
        _ pixels: [UInt8], width: Int, x: Int, y: Int, radius: Int, color: (Int, Int, Int)
    ) -> (count: Int, width: Int) {
        var count = 0, minX = Int.max, maxX = Int.min
        let height = pixels.count / 4 / width
        for py in max(0, y - radius)..<min(height, y + radius) {
            for px in max(0, x - radius)..<min(width, x + radius) {
                let offset = (py * width + px) * 4
                let distance =
                    abs(Int(pixels[offset]) - color.0) + abs(Int(pixels[offset + 1]) - color.1)
                    + abs(Int(pixels[offset + 2]) - color.2)
                if distance < 60 {
                    count += 1
                    minX = min(minX, px)
                    maxX = max(maxX, px)
                }
            }
        }
        return (count, count == 0 ? 0 : maxX - minX + 1)
    }

    /// Where a longitude and latitude fall in a `width` x `height` map centred on
    /// (24.6881, 60.185755) at zoom 16 (Web Mercator, 512-pixel tiles).
    private func helsinkiPixel(
        _ longitude: Double, _ latitude: Double, ratio: Double, width: Int, height: Int
    ) -> (Int, Int) {
        let world = 512 * pow(2, 16) * ratio
        func project(_ longitude: Double, _ latitude: Double) -> (Double, Double) {
            let radians = latitude * .pi / 180
            return ((longitude + 180) / 360 * world, (1 - log(tan(radians) + 1 / cos(radians)) / .pi) / 2 * world)
        }
        let point = project(longitude, latitude), centre = project(24.6881, 60.185755)
        return (Int(point.0 - centre.0 + Double(width) / 2), Int(point.1 - centre.1 + Double(height) / 2))
    }

    /// The Helsinki example: the emitted style and sprite in MapLibre Native and MapLibre GL
    /// JS (ratios 1 and 2), and
    /// iconr's own preview, each show every flag at its point in its color, the selected one
    /// twice as large.
    @Test func theHelsinkiFlagsRenderInMapLibreFromTheEmittedStyle() throws {
        let example = TestSupport.repository.appendingPathComponent("examples/helsinki-flags/style.json").path
        try iconr([
            "sprite", TestSupport.icons.path, "--style", example, "-o", "out/sprite", "--emit-style", "out/style.json",
            "--preview", "out/preview.png", "--preview-size", "320x280", "--no-cache",
        ])
        let flags: [(name: String, longitude: Double, latitude: Double, color: (Int, Int, Int))] = [
            ("flag-red", 24.68727, 60.185755, (255, 0, 0)),
            ("flag-yellow", 24.68827, 60.186255, (255, 255, 0)),
            ("flag-purple", 24.68927, 60.186055, (128, 0, 128)),
        ]
        let preview = try PNGDecoder.decode(
            [UInt8](try Data(contentsOf: directory.appendingPathComponent("out/preview.png"))))
        #expect(preview.size == PixelSize(width: 640, height: 560))
        var pictures: [(String, [UInt8], Double)] = [("iconr preview", preview.pixels, 2)]
        for ratio in [1.0, 2.0] {
            for client in MapClient.allCases {
                let map = try client.render(
                    style: directory.appendingPathComponent("out/style.json"), root: directory, ratio: ratio,
                    width: 320, height: 280, zoom: 16, longitude: 24.6881, latitude: 60.185755)
                pictures.append(("\(client) at \(Int(ratio))x", map, ratio))
            }
        }
        for (picture, pixels, ratio) in pictures {
            let width = Int(320 * ratio)
            var widths: [String: Int] = [:]
            for flag in flags {
                // The cloth is right of the pole and above the anchor (the icon's centre).
                let (x, y) = helsinkiPixel(
                    flag.longitude, flag.latitude, ratio: ratio, width: width, height: Int(280 * ratio))
                let found = colored(pixels, width: width, x: x, y: y, radius: Int(30 * ratio), color: flag.color)
                #expect(found.count > Int(40 * ratio * ratio), "\(picture): \(flag.name) not found near its point")
                widths[flag.name] = found.width
            }
            let selected = Double(widths["flag-red"]!),
                others = Double(widths["flag-yellow"]! + widths["flag-purple"]!) / 2
            #expect(
                selected / others > 1.7 && selected / others < 2.3, "\(picture): selected \(selected), others \(others)"
            )
        }
    }
}
