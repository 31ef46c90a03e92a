import Foundation
import IconrCore
import IconrRender
import IconrTestSupport
import Testing

/// The emitted style of `iconr sprite --style`, drawn by both MapLibre clients at pixel
/// ratios 1 and 2: one feature per scenario (Mapbox's render tests `icon-image/params/*`,
/// `scale-factor-icon-size`, and every way a style can reach an image), each checked at its
/// point for its color (3x3 average within 40 of 255 per channel) and its width (within 1
/// logical pixel). The sprite is split over several sheets (`--max-size 96`), and the style
/// has a sprite array of its own (its `default` sheet, drawn by iconr from another folder),
/// a sprite iconset, and a Mapbox import (`--import`): so every id iconr draws carries a sheet
/// prefix, and the style's own icons none.
struct StyleScenarioTests {
    /// A layer of the scenario style and the features it shows, with what each must look like.
    struct Scenario {
        var name: String
        var layer: String
        var features: [(properties: String, checks: [Check])]
        /// A filter of the layer's own, beside the one that picks the scenario's features.
        var filter: String? = nil
        /// More members of the layer (`"appearances": [...]`, `"paint": {...}`).
        var members: String? = nil
        /// Whether the layer is drawn by a `ref` layer after it (its own paint hides it).
        var drawnByRef = false
        /// Whether the layer is in the imported style, not the root.
        var imported = false
    }

    /// At `dx` logical pixels right of the feature's point: `color`, and (if given) an icon
    /// `width` logical pixels wide through that row.
    struct Check {
        var dx: Double = 0
        var color: (Int, Int, Int)
        var width: Double?
    }

    static let background = (128, 128, 128)
    static let width = 480, height = 440, zoom = 2.0

    static let scenarios: [Scenario] = [
        Scenario(
            name: "params/color (literal)", layer: ##""icon-image": ["image", "sq", {"params": {"fill": "red"}}]"##,
            features: [("{}", [Check(color: (255, 0, 0), width: 16)])]),
        Scenario(
            name: "data-driven param", layer: ##""icon-image": ["image", "sq", {"params": {"fill": ["get", "c"]}}]"##,
            features: [
                (##"{"c": "#800080"}"##, [Check(color: (128, 0, 128), width: 16)]),
                (##"{"c": "not a color"}"##, [Check(color: (0, 0, 0), width: 16)]),
                (##"{"c": "rgba(255, 0, 0, 0)"}"##, [Check(color: background)]),
            ]),
        Scenario(
            name: "params/transparent-color",
            layer: ##""icon-image": ["image", "sq", {"params": {"fill": "rgba(255, 255, 0, 0.5)"}}]"##,
            features: [("{}", [Check(color: (192, 192, 64), width: 16)])]),
        Scenario(
            name: "params/transparent-image",
            layer: ##""icon-image": ["image", "ghost", {"params": {"fill": "#0000ff"}}]"##,
            features: [("{}", [Check(color: (64, 64, 192), width: 16)])]),
        Scenario(
            name: "partly constant params",
            layer: ##""icon-image": ["image", "duo", {"params": {"left": "red", "right": ["get", "r"]}}]"##,
            features: [(##"{"r": "#00ff00"}"##, [Check(dx: -4, color: (255, 0, 0)), Check(dx: 4, color: (0, 255, 0))])]),
        Scenario(
            name: "coalesce",
            layer:
                ##""icon-image": ["coalesce", ["image", "nope"], ["image", "sq", {"params": {"fill": "#0000ff"}}]]"##,
            features: [("{}", [Check(color: (0, 0, 255), width: 16)])]),
        Scenario(
            name: "second image (cross-fade partner)",
            layer: ##""icon-image": ["image", "sq", {"params": {"fill": "#ff00ff"}}, "plain", {}]"##,
            features: [("{}", [Check(color: (255, 0, 255), width: 16)])]),
        Scenario(
            name: "data-driven name",
            layer: ##""icon-image": ["image", ["get", "icon"], {"params": {"fill": ["get", "c"]}}]"##,
            features: [
                (##"{"icon": "sq", "c": "#00ffff"}"##, [Check(color: (0, 255, 255), width: 16)]),
                (##"{"icon": "plain", "c": "#ff0000"}"##, [Check(color: (0, 170, 0), width: 16)]),
            ]),
        Scenario(
            name: "legacy token", layer: ##""icon-image": "{icon}""##,
            features: [(##"{"icon": "plain"}"##, [Check(color: (0, 170, 0), width: 16)])]),
        Scenario(
            name: "step around images",
            layer:
                ##""icon-image": ["step", ["zoom"], ["image", "sq", {"params": {"fill": "#ff8000"}}], 22, "plain"]"##,
            features: [("{}", [Check(color: (255, 128, 0), width: 16)])]),
        Scenario(
            name: "case around images",
            layer:
                ##""icon-image": ["case", ["==", ["get", "k"], "a"], ["image", "sq", {"params": {"fill": "#008000"}}], "plain"]"##,
            features: [(##"{"k": "a"}"##, [Check(color: (0, 128, 0), width: 16)])]),
        Scenario(
            name: "zoom-interpolated icon-size",
            layer:
                ##""icon-image": ["image", "sq", {"params": {"fill": "#004080"}}], "icon-size": ["interpolate", ["linear"], ["zoom"], 0, 1, 4, 3]"##,
            features: [("{}", [Check(color: (0, 64, 128), width: 32)])]),
        Scenario(
            name: "scale-factor-icon-size (data-driven size)",
            layer: ##""icon-image": ["image", "sq", {"params": {"fill": "#400040"}}], "icon-size": ["get", "s"]"##,
            features: [
                (##"{"s": 2}"##, [Check(color: (64, 0, 64), width: 32)]),
                (##"{"s": 0.5}"##, [Check(color: (64, 0, 64), width: 8)]),
            ]),
        Scenario(
            name: "Mapbox-only properties",
            layer:
                ##""icon-image": ["image", "sq", {"params": {"fill": "#804000"}}], "icon-size-scale-range": [0.8, 2]"##,
            features: [("{}", [Check(color: (128, 64, 0), width: 16)])]),
        Scenario(
            name: "Standard-like POI (config, match, hsla, step)",
            layer:
                ##""icon-image": ["image", ["match", ["get", "class"], "food", "sq", "plain"], {"params": {"fill": ["match", ["config", "theme"], "faded", "hsla(200, 100, 40, 1)", "hsl(0, 100%, 50%)"]}}], "icon-size": ["step", ["zoom"], 1, 1, 1.5]"##,
            features: [
                (##"{"class": "food"}"##, [Check(color: (0, 136, 204), width: 24)]),
                (##"{"class": "bar"}"##, [Check(color: (0, 170, 0), width: 24)]),
            ]),
        Scenario(
            name: "filter reads the zoom inside all (Streets v12)",
            layer: ##""icon-image": ["image", "sq", {"params": {"fill": "#ff0080"}}]"##,
            features: [
                (##"{"rank": 12}"##, [Check(color: (255, 0, 128), width: 16)]),
                (##"{"rank": 20}"##, [Check(color: background)]),
            ],
            filter: ##"["<=", ["get", "rank"], ["step", ["zoom"], 5, 2, 15]]"##),
        Scenario(
            name: "Mapbox v3 camera and light (pitch, distance-from-center, worldview, measure-light)",
            layer:
                ##""icon-image": ["image", "sq", {"params": {"fill": ["case", [">", ["measure-light", "brightness"], 0.5], "#ffff00", "#0000ff"]}}]"##,
            features: [("{}", [Check(color: (255, 255, 0), width: 16)])],
            filter:
                ##"["all", ["<=", ["distance-from-center"], 1], [">=", ["pitch"], 0], ["==", ["worldview"], "US"]]"##
        ),
        Scenario(
            name: "config default read per feature",
            layer: ##""icon-image": ["image", "sq", {"params": {"fill": ["config", "poiColor"]}}]"##,
            features: [
                (##"{"class": "food"}"##, [Check(color: (0, 255, 0), width: 16)]),
                (##"{"class": "shop"}"##, [Check(color: (255, 0, 0), width: 16)]),
            ]),
        Scenario(
            name: "to-hsla from data (a darker shade of the feature's color)",
            layer:
                ##""icon-image": ["image", "sq", {"params": {"fill": ["let", "c", ["to-color", ["get", "c"]], ["hsla", ["at", 0, ["to-hsla", ["var", "c"]]], ["at", 1, ["to-hsla", ["var", "c"]]], ["*", 0.5, ["at", 2, ["to-hsla", ["var", "c"]]]], 1]]}}]"##,
            features: [(##"{"c": "#ff0000"}"##, [Check(color: (128, 0, 0), width: 16)])]),
        Scenario(
            name: "hsla from data in params",
            layer: ##""icon-image": ["image", "sq", {"params": {"fill": ["hsla", ["get", "h"], 100, 50, 1]}}]"##,
            features: [(##"{"h": 240}"##, [Check(color: (0, 0, 255), width: 16)])]),
        Scenario(
            name: "ref layer (Mapbox Bright v9's road fills)",
            layer: ##""icon-image": ["image", "sq", {"params": {"fill": "#c00000"}}]"##,
            features: [("{}", [Check(color: (192, 0, 0), width: 16)])],
            members: ##""paint": {"icon-opacity": 0}"##, drawnByRef: true),
        Scenario(
            name: "appearances on data and zoom",
            layer: ##""icon-image": ["image", "sq", {"params": {"fill": "#0000c0"}}]"##,
            features: [
                (##"{"sel": true}"##, [Check(color: (255, 128, 128), width: 32)]),
                (##"{"sel": false}"##, [Check(color: (0, 0, 192), width: 16)]),
                (##"{"far": true}"##, [Check(color: (128, 255, 128), width: 16)]),
            ],
            members:
                ##""appearances": [{"name": "selected", "condition": ["==", ["get", "sel"], true], "properties": {"icon-image": ["image", "sq", {"params": {"fill": "#ff8080"}}], "icon-size": 2}}, {"name": "far", "condition": ["all", ["<", ["zoom"], 5], ["has", "far"]], "properties": {"icon-image": ["image", "sq", {"params": {"fill": "#80ff80"}}]}}]"##
        ),
        Scenario(
            name: "computed name with params (PinPoweredMap)",
            layer:
                ##""icon-image": ["image", ["concat", ["get", "icon"], "_rating_", ["to-string", ["get", "rating"]]], {"params": {"color-1": ["get", "c1"], "color-2": ["get", "c2"]}}]"##,
            features: [
                (
                    ##"{"icon": "pin", "rating": 2, "c1": "#ff0000", "c2": "#00ff00"}"##,
                    [Check(dx: -4, color: (255, 0, 0)), Check(dx: 4, color: (0, 255, 0))]
                ),
                (
                    ##"{"icon": "pin", "rating": 1, "c1": "#0000ff", "c2": "#ffff00"}"##,
                    [Check(dx: -4, color: (0, 0, 255)), Check(dx: 4, color: (255, 255, 0))]
                ),
            ]),
        Scenario(
            name: "sprite iconset", layer: ##""icon-image": ["image", "pin", {"iconset": {"id": "pins"}}]"##,
            features: [("{}", [Check(color: (255, 0, 255), width: 16)])]),
        Scenario(
            name: "the style's own sprite", layer: ##""icon-image": "star""##,
            features: [("{}", [Check(color: (0, 128, 255), width: 16)])]),
        Scenario(
            name: "imported layer (config from the import)",
            layer: ##""icon-image": ["image", "sq", {"params": {"fill": ["config", "baseColor"]}}]"##,
            features: [("{}", [Check(color: (0, 255, 255), width: 16)])], imported: true),
    ]

    let directory: URL
    /// Removed with the test.
    private let scratch: TemporaryFolder

    init() throws {
        scratch = try TemporaryFolder("iconr-scenarios")
        directory = scratch.url
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("icons"), withIntermediateDirectories: true)
        let header =
            #"<svg xmlns="http://www.w3.org/2000/svg" xmlns:m="https://www.mapbox.com" width="16" height="16">"#
        let icons = [
            "sq": header
                + ##"<m:metadata><m:parameters><m:parameter m:name="fill" m:type="color" m:value="#000000"/></m:parameters></m:metadata><rect width="16" height="16" fill="#000000"/></svg>"##,
            "ghost": header
                + ##"<m:metadata><m:parameters><m:parameter m:name="fill" m:type="color" m:value="#000000"/></m:parameters></m:metadata><rect width="16" height="16" fill="#000000" fill-opacity="0.5"/></svg>"##,
            "duo": header
                + ##"<m:metadata><m:parameters><m:parameter m:name="left" m:type="color" m:value="#000000"/><m:parameter m:name="right" m:type="color" m:value="#0000ff"/></m:parameters></m:metadata><rect width="8" height="16" fill="#000000"/><rect x="8" width="8" height="16" fill="#0000ff"/></svg>"##,
            "plain": header + ##"<rect width="16" height="16" fill="#00aa00"/></svg>"##,
        ]
        for (name, svg) in icons { try Data(svg.utf8).write(to: directory.appendingPathComponent("icons/\(name).svg")) }
        for rating in [1, 2] {
            let pin =
                header
                + ##"<m:metadata><m:parameters><m:parameter m:name="color-1" m:type="color" m:value="#000000"/><m:parameter m:name="color-2" m:type="color" m:value="#ffffff"/></m:parameters></m:metadata><rect width="8" height="16" fill="#000000"/><rect x="8" width="8" height="16" fill="#ffffff"/></svg>"##
            try Data(pin.utf8).write(to: directory.appendingPathComponent("icons/pin_rating_\(rating).svg"))
        }
        // The style's own sprite and its iconset's, each a folder iconr draws (other colors).
        for (folder, name, color) in [("theirs", "star", "#0080ff"), ("pins", "pin", "#ff00ff")] {
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent(folder), withIntermediateDirectories: true)
            try Data((header + ##"<rect width="16" height="16" fill="\##(color)"/></svg>"##).utf8).write(
                to: directory.appendingPathComponent("\(folder)/\(name).svg"))
        }
    }

    /// Where feature `index` is, in logical pixels of the map.
    static func position(_ index: Int) -> (x: Double, y: Double) {
        (Double(45 + 78 * (index % 6)), Double(45 + 78 * (index / 6)))
    }

    /// The longitude and latitude of a logical pixel of the map (centred on 0, 0).
    static func lngLat(_ x: Double, _ y: Double) -> (Double, Double) {
        let world = 512 * pow(2, zoom)
        let dx = x - Double(width) / 2, dy = Double(height) / 2 - y
        return (dx / world * 360, atan(sinh(dy / world * 2 * .pi)) * 180 / .pi)
    }

    /// The scenario style (its sprite and iconset URLs under `directory`), and the style it
    /// imports as `base`, which holds the `imported` scenarios' layers.
    static func style(in directory: URL) -> (root: String, imported: String) {
        var features: [String] = [], layers: [String] = [], importedLayers: [String] = []
        var index = 0
        for (number, scenario) in scenarios.enumerated() {
            for feature in scenario.features {
                let (x, y) = position(index)
                let (longitude, latitude) = lngLat(x, y)
                let properties =
                    String(feature.properties.dropLast()) + (feature.properties == "{}" ? "" : ", ")
                    + #""scenario": \#(number)}"#
                features.append(
                    #"{"type": "Feature", "geometry": {"type": "Point", "coordinates": [\#(longitude), \#(latitude)]}, "properties": \#(properties)}"#
                )
                index += 1
            }
            let layer =
                #"{"id": "s\#(number)", "type": "symbol", "source": "points", "filter": ["all", ["==", ["get", "scenario"], \#(number)]\#(scenario.filter.map { ", " + $0 } ?? "")], "layout": {\#(scenario.layer), "icon-allow-overlap": true, "icon-ignore-placement": true}\#(scenario.members.map { ", " + $0 } ?? "")}"#
            if scenario.imported {
                importedLayers.append(layer)
            } else {
                layers.append(layer)
            }
            if scenario.drawnByRef {
                layers.append(#"{"id": "s\#(number)-ref", "ref": "s\#(number)", "paint": {"icon-opacity": 1}}"#)
            }
        }
        let points =
            #"{"type": "geojson", "data": {"type": "FeatureCollection", "features": [\#(features.joined(separator: ",\n"))]}}"#
        let root = """
            {"version": 8, "center": [0, 0], "zoom": \(zoom), "schema": {"theme": {"default": "faded", "type": "string", "values": ["default", "faded"]}, "poiColor": {"default": ["match", ["get", "class"], "food", "#00ff00", "#ff0000"]}},
             "sprite": [{"id": "default", "url": "file://\(directory.path)/theirs-out/sprite"}],
             "iconsets": {"pins": {"type": "sprite", "url": "file://\(directory.path)/pins-out/sprite"}},
             "imports": [{"id": "base", "url": "mapbox://styles/example/base", "config": {"baseColor": "#00ffff"}}],
             "sources": {"points": \(points)},
             "layers": [\(layers.joined(separator: ",\n  "))]}
            """
        // The import is drawn below the root's layers: the background is its own.
        let imported = """
            {"version": 8, "schema": {"baseColor": {"default": "#ff0000"}}, "sources": {"points": \(points)},
             "layers": [{"id": "background", "type": "background", "paint": {"background-color": "#808080"}},
               \(importedLayers.joined(separator: ",\n  "))]}
            """
        return (root, imported)
    }

    /// The mean color of the 3x3 pixels around (x, y), and the width of the run of pixels
    /// through (x, y) that differ from the background by more than 24 in a channel.
    static func measure(_ pixels: [UInt8], width: Int, x: Int, y: Int) -> (color: (Int, Int, Int), run: Int) {
        let height = pixels.count / 4 / width
        func pixel(_ px: Int, _ py: Int) -> (Int, Int, Int) {
            let offset = (min(max(py, 0), height - 1) * width + min(max(px, 0), width - 1)) * 4
            return (Int(pixels[offset]), Int(pixels[offset + 1]), Int(pixels[offset + 2]))
        }
        var sum = (0, 0, 0)
        for dy in -1...1 {
            for dx in -1...1 {
                let p = pixel(x + dx, y + dy)
                sum = (sum.0 + p.0, sum.1 + p.1, sum.2 + p.2)
            }
        }
        func differs(_ px: Int) -> Bool {
            let p = pixel(px, y)
            return max(abs(p.0 - background.0), abs(p.1 - background.1), abs(p.2 - background.2)) > 24
        }
        var left = x, right = x
        while left > 0 && differs(left - 1) { left -= 1 }
        while right < width - 1 && differs(right + 1) { right += 1 }
        return ((sum.0 / 9, sum.1 / 9, sum.2 / 9), differs(x) ? right - left + 1 : 0)
    }

    @Test func everyScenarioDrawsRightInBothClientsAtRatios1And2() throws {
        let (build, failures) = try drawEveryScenario(options: [], expecting: [:])
        #expect(
            build.contains("removed Mapbox-only \"icon-size-scale-range\"")
                && build.contains("removed Mapbox-only \"schema\""))
        #expect(
            failures.isEmpty, Comment(rawValue: "\(failures.count) checks failed:\n" + failures.joined(separator: "\n"))
        )
    }

    /// The same style built with `--config` and `--light`: the options change the colors
    /// drawn as Mapbox would draw them with those settings (the theme picks the other hsl
    /// color, night light the other branch of `measure-light`, and a config value replaces a
    /// default read per feature); every other scenario draws as before.
    @Test func configAndLightChangeTheColorsDrawnInBothClients() throws {
        let (build, failures) = try drawEveryScenario(
            options: ["--config", "theme=default", "--config", "poiColor=#8000ff", "--light", "night"],
            expecting: [
                "Standard-like POI (config, match, hsla, step)": [
                    [Check(color: (255, 0, 0), width: 24)], [Check(color: (0, 170, 0), width: 24)],
                ],
                "Mapbox v3 camera and light (pitch, distance-from-center, worldview, measure-light)": [
                    [Check(color: (0, 0, 255), width: 16)]
                ],
                "config default read per feature": [
                    [Check(color: (128, 0, 255), width: 16)], [Check(color: (128, 0, 255), width: 16)],
                ],
            ])
        #expect(build.contains("brightness 0.1"), "the warning names the brightness used: \(build)")
        #expect(
            failures.isEmpty, Comment(rawValue: "\(failures.count) checks failed:\n" + failures.joined(separator: "\n"))
        )
    }

    /// With `--merge-sprites`, the style's own sprite and its iconset are drawn into iconr's
    /// sheets, one a ratio: the copy's `sprite` is one URL (for OpenLayers' ol-mapbox-style),
    /// and every scenario draws as with the array.
    @Test func mergedSpritesDrawTheSameInBothClients() throws {
        let (_, failures) = try drawEveryScenario(options: ["--merge-sprites"], expecting: [:], maxSize: 2048)
        #expect(
            failures.isEmpty, Comment(rawValue: "\(failures.count) checks failed:\n" + failures.joined(separator: "\n"))
        )
    }

    /// Builds the scenario style with `options`, draws it in both clients at ratios 1 and 2,
    /// and returns the build's stderr and every check that failed. `expecting` replaces the
    /// checks of the scenarios it names (one list per feature). Sheets of `maxSize` (96: the
    /// sprite needs several, so the copy's `sprite` is an array; else one URL, merged).
    private func drawEveryScenario(
        options: [String], expecting: [String: [[Check]]], maxSize: Int = 96
    ) throws -> (build: String, failures: [String]) {
        let (root, imported) = Self.style(in: directory)
        try Data(root.utf8).write(to: directory.appendingPathComponent("style.json"))
        try Data(imported.utf8).write(to: directory.appendingPathComponent("base.json"))
        for folder in ["theirs", "pins"] {
            let own = try TestSupport.iconr(
                ["sprite", folder, "-o", "\(folder)-out/sprite", "--no-cache"], in: directory)
            try #require(own.status == 0, "\(own.stderr)")
        }
        let build = try TestSupport.run(
            TestSupport.iconrExecutable,
            [
                "sprite", "icons", "-o", "out/sprite", "--style", "style.json", "--import", "base=base.json",
                "--emit-style", "out/style.json", "--max-size", "\(maxSize)", "--no-cache",
            ] + options,
            directory: directory)
        let stderr = String(decoding: build.stderr, as: UTF8.self)
        try #require(build.status == 0, "\(stderr)")
        let emitted = try JSONValue.parse(
            [UInt8](try Data(contentsOf: directory.appendingPathComponent("out/style.json"))))
        if maxSize == 96 {
            #expect((emitted["sprite"]?.arrayValue?.count ?? 0) > 1, "the sprite should need several sheets")
        } else {
            #expect(emitted["sprite"]?.stringValue != nil, "one sprite URL: \(emitted["sprite"]?.serialized ?? "none")")
        }
        var failures: [String] = []
        for client in MapClient.allCases {
            for ratio in [1.0, 2.0] {
                let pixels = try client.render(
                    style: directory.appendingPathComponent("out/style.json"), root: directory, ratio: ratio,
                    width: Self.width, height: Self.height, zoom: Self.zoom, longitude: 0, latitude: 0)
                let mapWidth = Int(Double(Self.width) * ratio)
                var index = 0
                for scenario in Self.scenarios {
                    for (number, feature) in scenario.features.enumerated() {
                        let (x, y) = Self.position(index)
                        index += 1
                        for check in expecting[scenario.name]?[number] ?? feature.checks {
                            let found = Self.measure(
                                pixels, width: mapWidth, x: Int(((x + check.dx) * ratio).rounded(.down)),
                                y: Int((y * ratio).rounded(.down)))
                            let place =
                                "\(client) at \(Int(ratio))x: \(scenario.name) \(feature.properties) at dx \(check.dx)"
                            let (r, g, b) = found.color
                            if max(abs(r - check.color.0), abs(g - check.color.1), abs(b - check.color.2)) > 40 {
                                failures.append("\(place): color \(found.color), expected \(check.color)")
                            }
                            if let expected = check.width, abs(Double(found.run) / ratio - expected) > 1 {
                                failures.append("\(place): \(Double(found.run) / ratio) px wide, expected \(expected)")
                            }
                        }
                    }
                }
            }
        }
        return (stderr, failures)
    }
}
