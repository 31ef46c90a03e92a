import Foundation
import Iconr
import IconrCore
import IconrRender
import IconrTestSupport
import Testing

/// The seed's own interaction, played in MapLibre GL JS in Chromium as a person would: the
/// pages of docs/server.md, as written but for the script URLs, load three flags colored by
/// data; a real click on each flag in turn sets the layer's `icon-size` to 2 for it, and a
/// second click on the last one sets it back to 1. After each click the map is compared with
/// iconr's own renders of the flags: the tapped one at 2 x the device pixel ratio, the others
/// at 1 x, in both paths (a style served by `iconr serve --style`, and layers built in
/// JavaScript with `iconr.image`), at device pixel ratios 1 and 2, with GL JS 5 and with
/// GL JS 6's missing-image resolver.
@Suite(.serialized) struct TapTests {
    let directory: URL
    private let scratch: TemporaryFolder

    /// The three flags of the seed: where they stand, and their colors.
    static let flags: [(coordinates: [Double], color: String)] = [
        ([24.68727, 60.185755], "#ff0000"), ([24.68827, 60.186255], "#ffff00"), ([24.68927, 60.186055], "#800080"),
    ]
    /// The map's background, under the flags.
    static let land = (red: 0xF2, green: 0xEF, blue: 0xE9)

    init() throws {
        scratch = try TestSupport.folderWithBundledIcons("iconr-tap")
        directory = scratch.url
        try FileManager.default.copyItem(
            at: TestSupport.repository.appendingPathComponent("examples/helsinki-flags/style.json"),
            to: directory.appendingPathComponent("style.json"))
    }

    @Test(arguments: [1.0, 2.0])
    func aTappedFlagBuiltInJavaScriptIsAsSharpAsIconrsRender(ratio: Double) throws {
        try playTheSeed(page: "flags in code", ratio: ratio)
    }

    @Test(arguments: [1.0, 2.0])
    func aTappedFlagOfAServedStyleIsAsSharpAsIconrsRender(ratio: Double) throws {
        try playTheSeed(page: "flags from a served style", ratio: ratio)
    }

    @Test(arguments: [1.0, 2.0])
    func aTappedFlagInGLJS6IsAsSharpAsIconrsRender(ratio: Double) throws {
        try playTheSeed(page: "flags in code, GL JS 6", ratio: ratio)
    }

    /// GL JS 6 has one missing-image resolver per map: iconr.js chains to the one the app set
    /// before `attach` ("app-before"), and to the one it sets after ("app-after", on a tap),
    /// resolving its own ids in both cases; `maxIconSize: 2` draws runtime images at 2 from
    /// the start; a data value that is no color leaves its param out (the default shows);
    /// nothing is logged.
    @Test func anAppsOwnResolverIsChainedInGLJS6() throws {
        let server = try ServerProcess(["--icons", "icons", "--cors", "*", "--no-cache"], directory: directory)
        let page = #"""
            <!doctype html><html><head><meta charset="utf-8"><style>body { margin: 0 } #map { position: absolute; inset: 0 }</style></head>
            <body><div id="map"></div><script type="module">
            import * as maplibregl from "/maplibre-gl-6.mjs";
            import {attach, image} from "SERVER/iconr.mjs";
            const point = (x, icon, color) => ({type: "Feature", geometry: {type: "Point", coordinates: [x, 0]}, properties: {icon, color}});
            const map = window.map = new maplibregl.Map({container: "map", center: [0, 0], zoom: 2, style: {version: 8,
              sources: {points: {type: "geojson", data: {type: "FeatureCollection", features: [point(-20, "app-before"), point(0, "flag", "no color")]}}},
              layers: [{id: "icons", type: "symbol", source: "points", layout: {"icon-allow-overlap": true,
                "icon-image": ["case", ["==", ["get", "icon"], "flag"], image("flag", {flag_color: ["get", "color"]}), ["image", ["get", "icon"]]]}}]}});
            const square = (id) => map.addImage(id, {width: 4, height: 4, data: new Uint8Array(64).fill(255)});
            map.setMissingStyleImageResolver(async (id) => { if (id === "app-before") square(id); });
            attach(map, {maxIconSize: 2});
            map.on("click", () => {
              map.setMissingStyleImageResolver(async (id) => { if (id === "app-after") square(id); });
              map.getSource("points").setData({type: "FeatureCollection", features: [point(-20, "app-after"), point(20, "flag", "#00ff00")]});
            });
            </script></body></html>
            """#.replacingOccurrences(of: "SERVER", with: server.url)
        let played = try play(page, ratio: 1, taps: [[10, 10]])
        #expect(played.console.isEmpty, "the page logged: \(played.console)")
        let before = played.steps[0].images.map { "\($0.id) \($0.width)" }
        #expect(before == ["app-before 4", "iconr:flag? 48"])
        let after = played.steps[1].images.map { "\($0.id) \($0.width)" }
        #expect(after.contains("app-after 4") && after.contains("iconr:flag?flag_color=rgba(0,255,0,1) 48"), "\(after)")
    }

    /// `setStyle` with a new style whose layer is drawn at icon-size 2: the runtime images the
    /// old style had are dropped with it, and iconr.js fetches them again at the new size (it
    /// took a known id for loaded and fetched nothing); nothing is logged. GL JS 5.
    @Test func aNewStyleGetsItsRuntimeImagesAtItsIconSize() throws {
        let server = try ServerProcess(["--icons", "icons", "--cors", "*", "--no-cache"], directory: directory)
        let page = #"""
            <!doctype html><html><head><meta charset="utf-8"><script src="/maplibre-gl.js"></script>
            <script src="SERVER/iconr.js"></script><style>body { margin: 0 } #map { position: absolute; inset: 0 }</style></head>
            <body><div id="map"></div><script>
            const style = (size) => ({version: 8, sources: {points: {type: "geojson", data: {type: "Feature",
                geometry: {type: "Point", coordinates: [0, 0]}, properties: {color: "#1060c0"}}}},
              layers: [{id: "flags", type: "symbol", source: "points", layout: {"icon-allow-overlap": true,
                "icon-image": iconr.image("flag", {flag_color: ["get", "color"]}), "icon-size": size}}]});
            const map = new maplibregl.Map({container: "map", center: [0, 0], zoom: 2, style: style(1)});
            iconr.attach(map);
            map.on("click", () => map.setStyle(style(2), {diff: false}));
            </script></body></html>
            """#.replacingOccurrences(of: "SERVER", with: server.url)
        let played = try play(page, ratio: 1, taps: [[10, 10]])
        #expect(played.console.isEmpty, "the page logged: \(played.console)")
        #expect(played.steps[0].images.map { "\($0.id) \($0.width)" } == ["iconr:flag?flag_color=rgba(16,96,192,1) 24"])
        #expect(played.steps[1].images.map { "\($0.id) \($0.width)" } == ["iconr:flag?flag_color=rgba(16,96,192,1) 48"])
    }

    /// Serves the bundled icons and the seed's style, plays docs/server.md's page `name`
    /// (tap red, yellow, purple, purple again) and checks every flag after each step.
    private func playTheSeed(page name: String, ratio: Double) throws {
        let server = try ServerProcess(
            ["--icons", "icons", "--style", "style.json", "--cors", "*", "--no-cache"], directory: directory)
        let page = try Self.docsPage(name)
            .replacingOccurrences(of: "https://unpkg.com/maplibre-gl@5/dist/maplibre-gl.js", with: "/maplibre-gl.js")
            .replacingOccurrences(
                of: "https://unpkg.com/maplibre-gl@6/dist/maplibre-gl.mjs", with: "/maplibre-gl-6.mjs"
            )
            .replacingOccurrences(of: "http://127.0.0.1:8080", with: server.url)
        let taps = [0, 1, 2, 2].map { Self.flags[$0].coordinates }
        let played = try play(page, ratio: ratio, taps: taps)
        #expect(played.console.isEmpty, "the page logged: \(played.console)")
        // Which flag is at icon-size 2 after each step: the served style's own case selects the
        // red flag at first; then red, yellow, purple are tapped, and purple again (none).
        let servedStyle = name.contains("served")
        let sizedTwo: [Int?] = [servedStyle ? 0 : nil, 0, 1, 2, nil]
        for (step, selected) in sizedTwo.enumerated() {
            for (index, flag) in Self.flags.enumerated() {
                let size = index == selected ? 2.0 : 1.0
                let expected = try IconSource(path: directory.appendingPathComponent("icons/flag.svg").path).render(
                    params: ["flag_color": flag.color], scale: size * ratio
                ).image
                let point = played.steps[step].points[index]
                // A flag at 2 must be as sharp as iconr's render at 2; one at 1 may come from the
                // layer's larger raster, which the GPU samples down (up to 5.6% of its pixels
                // then differ by more than 40, measured).
                let (threshold, share) = size == 2 ? (24, 0.01) : (40, 0.08)
                let differing = Self.differingShare(
                    expected, in: played.steps[step].screenshot, at: (point.x * ratio, point.y * ratio),
                    threshold: threshold)
                #expect(
                    differing <= share,
                    "\(name), ratio \(ratio), step \(step): the \(flag.color) flag at icon-size \(size): \((differing * 1000).rounded() / 10)% of its pixels differ by more than \(threshold) from iconr's render"
                )
            }
            // In code, iconr.js draws the layer's runtime images at its largest icon-size, and
            // again at 1 when the last tap deselects.
            if !servedStyle {
                let widths = played.steps[step].images.filter { $0.id.hasPrefix("iconr:") }.map(\.width)
                #expect(
                    widths == Array(repeating: Int(24 * ratio * (step == 0 || step == 4 ? 1 : 2)), count: 3),
                    "\(name), ratio \(ratio), step \(step): runtime images \(played.steps[step].images)")
            }
        }
    }

    /// The share of `expected`'s pixels (over the land's color) that differ by more than
    /// `threshold` of 255 in a channel from `map`'s, with `expected` centred on `center`
    /// (device pixels): at the best of the quarter-pixel positions within a pixel of it, each
    /// sampled bilinearly as a GPU draws a texture between pixels. A crisp flag drawn from
    /// iconr's raster matches at 0% (measured); one drawn at icon-size 2 from a raster of half
    /// the size (today's code, before the tap was handled) differs by more than 24 in 12% of
    /// its pixels at ratio 1, and 3-5% at ratio 2.
    static func differingShare(
        _ expected: RasterImage, in map: RasterImage, at center: (Double, Double), threshold: Int
    ) -> Double {
        let (width, height) = (expected.size.width, expected.size.height)
        // The expected pixels over the land, with a border of land, as Doubles.
        var padded = [[Double]](
            repeating: [land.red, land.green, land.blue].map(Double.init), count: (width + 2) * (height + 2))
        for y in 0..<height {
            for x in 0..<width {
                let pixel = expected[x, y]
                let alpha = Double(pixel.alpha) / 255
                padded[(y + 1) * (width + 2) + x + 1] = [
                    Double(pixel.red) * alpha + Double(land.red) * (1 - alpha),
                    Double(pixel.green) * alpha + Double(land.green) * (1 - alpha),
                    Double(pixel.blue) * alpha + Double(land.blue) * (1 - alpha),
                ]
            }
        }
        let left = Int((center.0 - Double(width) / 2).rounded(.down))
        let top = Int((center.1 - Double(height) / 2).rounded(.down))
        var best = Int.max
        for (dx, dy) in [(-1, -1), (-1, 0), (0, -1), (0, 0)] {
            for fy in [0.0, 0.25, 0.5, 0.75] {
                for fx in [0.0, 0.25, 0.5, 0.75] {
                    var differing = 0
                    for j in 0...height {
                        for i in 0...width {
                            let (mx, my) = (left + dx + i, top + dy + j)
                            guard mx >= 0, my >= 0, mx < map.size.width, my < map.size.height else {
                                differing += 1
                                continue
                            }
                            let found = map[mx, my]
                            let a = padded[j * (width + 2) + i], b = padded[j * (width + 2) + i + 1]
                            let c = padded[(j + 1) * (width + 2) + i], d = padded[(j + 1) * (width + 2) + i + 1]
                            var worst = 0.0
                            for (channel, value) in [found.red, found.green, found.blue].enumerated() {
                                let sampled =
                                    a[channel] * (1 - fx) * (1 - fy) + b[channel] * fx * (1 - fy)
                                    + c[channel] * (1 - fx) * fy + d[channel] * fx * fy
                                worst = max(worst, abs(sampled - Double(value)))
                            }
                            if worst > Double(threshold) { differing += 1 }
                        }
                    }
                    best = min(best, differing)
                }
            }
        }
        return Double(best) / Double((width + 1) * (height + 1))
    }

    /// docs/server.md's HTML page marked `<!-- page: name -->`.
    static func docsPage(_ name: String) throws -> String {
        let docs = try String(
            contentsOf: TestSupport.repository.appendingPathComponent("docs/server.md"), encoding: .utf8)
        let marker = try #require(
            docs.range(of: "<!-- page: \(name) -->\n```html\n"), "docs/server.md has page \(name)")
        let end = try #require(docs.range(of: "```", range: marker.upperBound..<docs.endIndex))
        return String(docs[marker.upperBound..<end.lowerBound])
    }

    /// What `tap_gljs.py` saw: a screenshot and the flags' positions (CSS pixels) per step.
    struct Played {
        var steps: [(screenshot: RasterImage, points: [(x: Double, y: Double)], images: [(id: String, width: Int)])]
        var console: [String]
    }

    private func play(_ page: String, ratio: Double, taps: [[Double]]) throws -> Played {
        let python = try #require(TestSupport.which("python3"), "python3 is needed for the MapLibre tests")
        let request: [String: Any] = [
            "page": page, "width": 480, "height": 320, "ratio": ratio, "taps": taps,
            "points": Self.flags.map(\.coordinates),
        ]
        let requestFile = directory.appendingPathComponent("tap-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: request).write(to: requestFile)
        let prefix = directory.appendingPathComponent("tap-\(UUID().uuidString)").path
        let script = TestSupport.repository.appendingPathComponent("Tests/MapLibre/tap_gljs.py").path
        let result = try TestSupport.run(python, [script, requestFile.path, prefix], timeout: 240)
        try #require(
            result.status == 0,
            "MapLibre GL JS failed (install chromium, chromium-driver, and pip install selenium maplibre lonboard; .ci/install does): \(String(decoding: result.stderr, as: UTF8.self))"
        )
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: prefix + ".json")))
                as? [String: Any])
        let steps = try #require(report["steps"] as? [[String: Any]])
        try #require(steps.count == taps.count + 1)
        return Played(
            steps: try steps.enumerated().map { index, step in
                let points = try #require(step["points"] as? [[Double]]).map { (x: $0[0], y: $0[1]) }
                let screenshot = try PNGDecoder.decode(
                    [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(prefix)-\(index).png"))))
                let images = try #require(step["images"] as? [[String: Any]]).map {
                    (id: $0["id"] as? String ?? "", width: $0["width"] as? Int ?? 0)
                }
                return (screenshot, points, images)
            },
            console: report["console"] as? [String] ?? ["no console report"])
    }
}
