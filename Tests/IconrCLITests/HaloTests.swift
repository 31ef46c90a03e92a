import Foundation
import Iconr
import IconrCore
import IconrRender
import IconrTestSupport
import Testing

/// Baked halos (`--halo W[,COLOR[,BLUR]]`): a ring under a full-color icon, which MapLibre
/// and Mapbox draw only around SDF icons.
struct HaloTests {
    /// An 8 px black square with a 2 px white ring at scale 1: 12 px wide; the ring opaque
    /// beside the edges, the corners beyond its reach clear, the icon on top.
    @Test func theRingGoesAroundWhatTheIconDraws() throws {
        let square = RasterImage(
            size: PixelSize(width: 8, height: 8), pixels: Array(repeating: [0, 0, 0, 255], count: 64).flatMap { $0 })
        let haloed = try #require(Halo(parsing: "2")).apply(to: square, scale: 1)
        #expect(haloed.size == PixelSize(width: 12, height: 12))
        #expect(haloed.hex(x: 0, y: 6) == "#ffffffff" && haloed.hex(x: 1, y: 1) == "#ffffffff")
        #expect(haloed[0, 0].alpha < 64, "a corner beyond the ring's reach, but for its antialiasing")
        #expect(haloed.hex(x: 6, y: 6) == "#000000ff")
        // At scale 2 the ring is 4 px; a color and a blur as given; bad values are refused.
        let wide = try #require(Halo(parsing: "2, #ff0000, 1")).apply(to: square, scale: 2)
        #expect(wide.size == PixelSize(width: 8 + 2 * 6, height: 8 + 2 * 6))
        #expect(wide.hex(x: 3, y: 10) == "#ff0000ff")
        #expect(wide[1, 10].alpha < 200 && wide[1, 10].alpha > 30, "the blurred edge fades: \(wide[1, 10])")
        #expect(wide[0, 10].alpha == 0)
        for text in ["0", "-1", "40", "2,nope", "2,red,x", "2,red,1,4", ""] {
            #expect(Halo(parsing: text) == nil, "\(text)")
        }
    }

    /// `render --halo` and `sprite --halo`: the image grows by the ring on every side, the
    /// icon drawn as without it in the middle, stretch areas and content moved with it.
    @Test func renderAndSpriteBakeTheHalo() throws {
        let scratch = try TestSupport.folderWithBundledIcons("iconr-halo")
        let directory = scratch.url
        let plain = try TestSupport.iconr(
            ["render", "icons/marker.svg", "-s", "2", "-o", "plain.png", "--no-cache"], in: directory)
        let haloed = try TestSupport.iconr(
            ["render", "icons/marker.svg", "-s", "2", "--halo", "3,#00ff00", "-o", "halo.png", "--no-cache"],
            in: directory)
        try #require(plain.status == 0 && haloed.status == 0, "\(plain.stderr)\(haloed.stderr)")
        let a = try PNGDecoder.decode([UInt8](Data(contentsOf: directory.appendingPathComponent("plain.png"))))
        let b = try PNGDecoder.decode([UInt8](Data(contentsOf: directory.appendingPathComponent("halo.png"))))
        #expect(b.size == PixelSize(width: a.size.width + 12, height: a.size.height + 12))
        // The marker's middle is as drawn; beside its widest point, 3 px at 1x out, the ring.
        #expect(b.hex(x: a.size.width / 2 + 6, y: 20 + 6) == a.hex(x: a.size.width / 2, y: 20))
        #expect(b.hex(x: 5, y: 20 + 6) == "#00ff00ff", "\(b.hex(x: 5, y: 26))")
        #expect(b[0, 20 + 6].alpha == 0, "beyond the ring")
        let run = InProcess.iconr(
            ["sprite", "./icons", "-o", "./out/", "--halo", "2", "--sdf", "badge", "--no-cache"], in: directory)
        try #require(run.status == 0, "\(run.stderr)")
        let index = try #require(
            SpriteIndex.entries(
                fromJSON: [UInt8](Data(contentsOf: directory.appendingPathComponent("out/sprite.json")))))
        let plainRun = InProcess.iconr(
            ["sprite", "./icons", "-o", "./plain/", "--sdf", "badge", "--no-cache"], in: directory)
        try #require(plainRun.status == 0)
        let plainIndex = try #require(
            SpriteIndex.entries(
                fromJSON: [UInt8](Data(contentsOf: directory.appendingPathComponent("plain/sprite.json")))))
        let label = try #require(index["label"]), plainLabel = try #require(plainIndex["label"])
        #expect(label.rect.width == plainLabel.rect.width + 4)
        #expect(label.stretchX.map(\.start) == plainLabel.stretchX.map { $0.start + 2 })
        #expect(label.content?.left == plainLabel.content.map { $0.left + 2 })
        // An SDF icon's halo is the renderer's: its image is the plain build's.
        #expect(index["badge"]?.rect.width == plainIndex["badge"]?.rect.width)
    }

    /// MapLibre GL JS draws the baked halo: a white ring around the red marker on a dark map.
    @Test func glJSDrawsTheBakedHalo() throws {
        let scratch = try TestSupport.folderWithBundledIcons("iconr-halo-gljs")
        let directory = scratch.url
        let style = #"""
            {"version": 8, "sources": {"p": {"type": "geojson", "data": {"type": "FeatureCollection", "features": [
              {"type": "Feature", "geometry": {"type": "Point", "coordinates": [0, 0]}, "properties": {}}]}}},
             "layers": [{"id": "dark", "type": "background", "paint": {"background-color": "#202020"}},
              {"id": "m", "type": "symbol", "source": "p", "layout": {"icon-image": "marker"}}]}
            """#
        try Data(style.utf8).write(to: directory.appendingPathComponent("style.json"))
        let build = InProcess.iconr(
            [
                "sprite", "./icons", "-o", "./out/", "--halo", "3", "--style", "./style.json", "--emit-style",
                "./out/style.json", "--ratio", "2", "--no-cache",
            ], in: directory)
        try #require(build.status == 0, "\(build.stderr)")
        let request: [String: Any] = [
            "style_file": directory.appendingPathComponent("out/style.json").path, "root": directory.path,
            "ratio": 2, "width": 100, "height": 100, "zoom": 2, "longitude": 0, "latitude": 0,
        ]
        let map = try MapScript.run("render_gljs.py", request, in: directory, client: .glJS)
        // The marker's image (26 x 34 px with its ring) is centred at (50, 50); the pin is widest
        // 4.2 px above that, its right edge 8.5 px right of it: the ring 1.5 px beyond, the
        // pin's red 3.5 px within, the map 5 px beyond.
        let row = Int((50 - 4.2) * 2)
        let ring = map[Int((50 + 8.5 + 1.5) * 2), row], inside = map[Int((50 + 5) * 2), row]
        #expect(ring.red > 200 && ring.green > 200 && ring.blue > 200, "the ring: \(ring)")
        #expect(inside.red > 150 && inside.green < 100, "the marker: \(inside)")
        #expect(map[Int((50 + 8.5 + 5) * 2), row].red < 80, "the map beyond the ring")
    }

    /// A theme may carry a halo (a dark map's light ring), for all its icons or by a rule:
    /// its sprite's images grow by it, the plain sprite's do not; `render --theme` bakes it too.
    @Test func aThemeCarriesAHalo() throws {
        let scratch = try TestSupport.folderWithBundledIcons("iconr-theme-halo")
        let directory = scratch.url
        try Data(
            ##"{"name": "night", "colors": {"#000000": "#f2f2f2"}, "halo": "2,#000000", "rules": [{"icons": "badge", "halo": "4"}]}"##
                .utf8
        ).write(to: directory.appendingPathComponent("night.json"))
        let run = InProcess.iconr(
            ["sprite", "./icons", "-o", "./out/", "--theme", "./night.json", "--ratio", "1", "--no-cache"],
            in: directory)
        try #require(run.status == 0, "\(run.stderr)")
        func index(_ name: String) throws -> [String: SpriteIndexEntry] {
            try #require(
                SpriteIndex.entries(
                    fromJSON: [UInt8](Data(contentsOf: directory.appendingPathComponent("out/\(name)")))))
        }
        let plain = try index("sprite.json"), night = try index("sprite-night.json")
        #expect(night["flag"]?.rect.width == (plain["flag"]?.rect.width ?? 0) + 4)
        #expect(night["badge"]?.rect.width == (plain["badge"]?.rect.width ?? 0) + 8, "the rule's halo")
        let render = try TestSupport.iconr(
            ["render", "icons/flag.svg", "--theme", "night.json", "-o", "flag.png", "--no-cache"], in: directory)
        try #require(render.status == 0, "\(render.stderr)")
        let image = try PNGDecoder.decode([UInt8](Data(contentsOf: directory.appendingPathComponent("flag.png"))))
        #expect(image.size == PixelSize(width: 28, height: 28))
        let error = try #require(throws: ThemeError.self) {
            try Theme(json: Array(##"{"halo": "wide"}"##.utf8), fallbackName: "t")
        }
        #expect(error.message.hasPrefix("halo: expected \"W[,COLOR[,BLUR]]\""), "\(error.message)")
    }

    /// `--bake-halos` with `--emit-style`: a layer's `icon-halo-*` (here a color from data and
    /// a literal width) become haloed images the copy names per feature, drawn by MapLibre
    /// Native and GL JS (which draw no halo around a color icon themselves); a halo that
    /// changes with zoom stays the renderer's, with a warning; SDF icons keep theirs.
    @Test func bakeHalosTurnsTheStylesHalosIntoImages() throws {
        let scratch = try TestSupport.folderWithBundledIcons("iconr-bake-halos")
        let directory = scratch.url
        let style = #"""
            {"version": 8, "sources": {"p": {"type": "geojson", "data": {"type": "FeatureCollection", "features": [
              {"type": "Feature", "geometry": {"type": "Point", "coordinates": [-5, 0]}, "properties": {"kind": "a"}},
              {"type": "Feature", "geometry": {"type": "Point", "coordinates": [5, 0]}, "properties": {"kind": "b"}}]}}},
             "layers": [{"id": "dark", "type": "background", "paint": {"background-color": "#202020"}},
              {"id": "m", "type": "symbol", "source": "p",
               "layout": {"icon-image": "marker", "icon-allow-overlap": true},
               "paint": {"icon-halo-color": ["match", ["get", "kind"], "a", "#ffffff", "#00ff00"], "icon-halo-width": 3}},
              {"id": "z", "type": "symbol", "source": "p", "minzoom": 20, "layout": {"icon-image": "flag"},
               "paint": {"icon-halo-color": "#ffffff", "icon-halo-width": ["interpolate", ["linear"], ["zoom"], 0, 1, 22, 4]}},
              {"id": "s", "type": "symbol", "source": "p", "minzoom": 20, "layout": {"icon-image": "badge"},
               "paint": {"icon-halo-color": "#ffffff", "icon-halo-width": 2}}]}
            """#
        try Data(style.utf8).write(to: directory.appendingPathComponent("style.json"))
        let build = InProcess.iconr(
            [
                "sprite", "./icons", "-o", "./out/", "--style", "./style.json", "--emit-style", "./out/style.json",
                "--bake-halos", "--sdf", "badge", "--ratio", "2", "--no-cache",
            ], in: directory)
        try #require(build.status == 0, "\(build.stderr)")
        #expect(build.stderr.contains(#"layer "z": icon-halo-width changes with zoom or feature state: no halo baked"#))
        #expect(build.stderr.contains(#"layer "s": shows SDF icons, whose halos the renderer draws: none baked"#))
        let index = try #require(
            SpriteIndex.entries(
                fromJSON: [UInt8](Data(contentsOf: directory.appendingPathComponent("out/sprite@2x.json")))))
        let white = try #require(index["marker+halo=3,ffffff"]), green = try #require(index["marker+halo=3,00ff00"])
        let marker = try #require(index["marker"])
        #expect(white.rect.width == marker.rect.width + 12 && green.rect.height == marker.rect.height + 12)
        #expect(index.keys.filter { $0.contains("+halo") }.count == 2, "\(index.keys.sorted())")
        let emitted = try JSONValue.parse([UInt8](Data(contentsOf: directory.appendingPathComponent("out/style.json"))))
        let layers = emitted["layers"]?.arrayValue ?? []
        #expect(layers.count == 4)
        #expect(layers[1]["paint"]?["icon-halo-color"] == nil && layers[1]["paint"]?["icon-halo-width"] == nil)
        #expect(layers[2]["paint"]?["icon-halo-width"] != nil && layers[3]["paint"]?["icon-halo-width"] != nil)
        // Without --emit-style there is no copy to name the haloed images.
        let alone = InProcess.iconr(
            ["sprite", "./icons", "-o", "./alone/", "--style", "./style.json", "--bake-halos"], in: directory)
        #expect(alone.status == 64 && alone.stderr.contains("--bake-halos needs --emit-style"), "\(alone.stderr)")
        // Both MapLibres draw each marker's ring in its feature's color, 1.5 px beyond its
        // widest point (centred at x = 60 -+ 28.4 at zoom 2, 4.2 px above the middle).
        for client in MapClient.allCases {
            let pixels = try client.render(
                style: directory.appendingPathComponent("out/style.json"), root: directory, ratio: 2, width: 120,
                height: 100, zoom: 2, longitude: 0, latitude: 0)
            func pixel(_ x: Double, _ y: Double) -> [UInt8] {
                let offset = (Int(y * 2) * 240 + Int(x * 2)) * 4
                return Array(pixels[offset..<offset + 4])
            }
            let row = 50 - 4.2
            let a = pixel(60 - 28.44 + 10, row), b = pixel(60 + 28.44 + 10, row)
            #expect(a[0] > 200 && a[1] > 200 && a[2] > 200, "\(client): feature a's white ring: \(a)")
            #expect(b[0] < 80 && b[1] > 200 && b[2] < 80, "\(client): feature b's green ring: \(b)")
            #expect(pixel(60 - 28.44 + 5, row)[0] > 150, "\(client): the marker's red inside")
            #expect(pixel(60 - 28.44 + 14, row)[0] < 80, "\(client): the map beyond the ring")
        }
    }
}
