import Foundation
import IconrCore
import IconrRender
import IconrTestSupport
import Testing

/// Options taken together (`SpriteJob`): every output named by one rule and checked before
/// anything is written, themes with params, `--sprite-url` and several sheets, warnings once.
/// The repository's icons only, in process.
struct SpriteJobTests {
    let directory: URL
    private let scratch: TemporaryFolder

    /// A style showing the flag in red (a variant) and the marker: `style.json`.
    static let style = #"""
        {"version": 8, "sources": {"points": {"type": "geojson", "data": {"type": "FeatureCollection", "features": [
          {"type": "Feature", "geometry": {"type": "Point", "coordinates": [0, 0]}, "properties": {"c": "red"}}]}}},
         "layers": [{"id": "flags", "type": "symbol", "source": "points",
           "layout": {"icon-image": ["image", "flag", {"params": {"flag_color": ["get", "c"]}}]}},
          {"id": "markers", "type": "symbol", "source": "points", "layout": {"icon-image": "marker"}}]}
        """#

    init() throws {
        scratch = try TestSupport.folderWithBundledIcons("iconr-job")
        directory = scratch.url
        try Data(Self.style.utf8).write(to: directory.appendingPathComponent("style.json"))
        try Data(##"{"name": "mono", "paint": "#777777"}"##.utf8).write(
            to: directory.appendingPathComponent("mono.json"))
        try Data(##"{"name": "dark", "colors": {"#000000": "#ffffff"}}"##.utf8).write(
            to: directory.appendingPathComponent("dark.json"))
        try Data(##"{"name": "dark-2", "colors": {"#000000": "#eeeeee"}}"##.utf8).write(
            to: directory.appendingPathComponent("dark-2.json"))
    }

    private func iconr(_ arguments: [String]) -> IconrRun {
        InProcess.iconr(arguments, in: directory)
    }

    private func exists(_ path: String) -> Bool {
        FileManager.default.fileExists(atPath: directory.appendingPathComponent(path).path)
    }

    private func json(_ path: String) throws -> JSONValue {
        try JSONValue.parse([UInt8](Data(contentsOf: directory.appendingPathComponent(path))))
    }

    /// A plan that would overwrite itself, read its own output or make themes' sheets one
    /// file is a usage error naming both parties, and nothing is written.
    @Test(
        arguments: [
            (["--theme", "./dark-2.json", "--theme", "./dark.json"], "theme \"dark-2\": a name ending in -2"),
            (["--theme", "./dark-2.json"], "theme \"dark-2\": a name ending in -2"),
            (
                ["--style", "./style.json", "--emit-style", "./out/sprite.json"],
                "--emit-style out/sprite.json is a sprite file of -o out/sprite"
            ),
            (["--catalog", "./out/sprite@2x.png"], "--catalog out/sprite@2x.png is a sprite file of -o out/sprite"),
            (
                ["--style", "./style.json", "--preview", "./out/sprite-2.png"],
                "--preview out/sprite-2.png is a sprite file"
            ),
            (
                ["--catalog", "./out/sprite-dark.json", "--theme", "./dark.json"],
                "is a sprite file of -o out/sprite-dark"
            ),
            (["--hash-names", "--catalog", "./out/sprite.0123456789ab@2x.json"], "is a sprite file of -o out/sprite"),
            (
                ["--style", "./style.json", "--emit-style", "./x.html", "--catalog", "./x.html"],
                "--emit-style and --catalog both write x.html"
            ),
            (
                [
                    "--style", "./style.json", "--emit-style", "./out/s.json", "--theme", "./dark.json", "--catalog",
                    "./out/s-dark.json",
                ],
                "--catalog and --emit-style (theme dark) both write out/s-dark.json"
            ),
            (
                ["--style", "./style.json", "--emit-style", "./style.json"],
                "--emit-style style.json would replace an input"
            ),
            (["--style", "./style.json", "--emit-style", "./out/../style.json"], "would replace an input"),
            (["--theme", "./dark.json", "--catalog", "./dark.json"], "--catalog dark.json would replace an input"),
        ] as [([String], String)])
    func aPlanThatOverwritesItselfIsAUsageError(row: (options: [String], message: String)) throws {
        let run = iconr(["sprite", "./icons", "-o", "./out/", "--no-cache"] + row.options)
        #expect(run.status == 64, "\(row.options): \(run.stderr)")
        #expect(run.stderr.hasPrefix("error: ") && run.stderr.contains(row.message), "\(run.stderr)")
        #expect(!exists("out"), "\(row.options) wrote something")
        #expect(!exists("x.html"))
    }

    /// Sheets, a preview or a style copy in an icon folder (or below it) would be read as
    /// icons by the next build: refused, with either spelling of the folder.
    @Test(arguments: [
        ["-o", "./icons/"], ["-o", "./icons/sub/sprite"], ["-o", "./icons/../icons/sprite"],
        ["-o", "./out/", "--style", "./style.json", "--preview", "./icons/preview.png"],
        ["-o", "./out/", "--style", "./style.json", "--emit-style", "./icons/style-out.json"],
    ])
    func outputsInsideAnIconFolderAreRefused(options: [String]) throws {
        let run = iconr(["sprite", "./icons", "--no-cache"] + options)
        #expect(run.status == 64, "\(options): \(run.stderr)")
        #expect(run.stderr.contains("is inside the icon folder"), "\(run.stderr)")
        let icons = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("icons").path)
        #expect(icons.sorted() == ["badge.svg", "flag.svg", "label.svg", "marker.svg"])
        // A catalog (HTML, never read as an icon) may go there.
        let catalog = iconr(["sprite", "./icons", "-o", "./out/", "--catalog", "./icons/catalog.html", "--no-cache"])
        #expect(catalog.status == 0, "\(catalog.stderr)")
    }

    /// Each themed style copy names its themed sheets, `--sprite-url` included (the theme
    /// goes before the URL's query), with the plain build's sheet ids; the summary names each
    /// theme, and a warning is said once for the whole job.
    @Test func themesKeepPlainIdsAndTakeTheirOwnURLs() throws {
        // A broken icon: --skip-invalid warns of it once, not once per theme.
        try Data("<svg".utf8).write(to: directory.appendingPathComponent("icons/broken.svg"))
        let run = iconr([
            "sprite", "./icons", "-o", "./out/", "--style", "./style.json", "--emit-style", "./out/style.json",
            "--theme", "./dark.json", "--theme", "grayscale", "--max-size", "90", "--skip-invalid",
            "--sprite-url", "https://tiles.example.com/sprites/sprite?key=k1", "--no-cache",
        ])
        try #require(run.status == 0, "\(run.stderr)")
        let plain = try #require(try json("out/style.json")["sprite"]?.arrayValue)
        #expect(plain.count > 1, "--max-size 90 puts the icons on several sheets")
        for theme in ["dark", "grayscale"] {
            let themed = try #require(try json("out/style-\(theme).json")["sprite"]?.arrayValue)
            #expect(themed.map { $0["id"] } == plain.map { $0["id"] }, "\(theme)")
            let urls = themed.compactMap { $0["url"]?.stringValue }
            #expect(urls.first == "https://tiles.example.com/sprites/sprite-\(theme)?key=k1", "\(urls)")
            #expect(urls.dropFirst().allSatisfy { $0.hasPrefix("https://tiles.example.com/sprites/sprite-\(theme)-") })
            // The layers name the same ids as the plain copy's: only the URLs differ.
            #expect(try json("out/style-\(theme).json")["layers"] == (try json("out/style.json")["layers"]))
            #expect(run.stderr.contains("sprite (theme \(theme)): "), "\(run.stderr)")
        }
        let skipped = run.stderr.components(separatedBy: "\n").filter {
            $0.contains("skipped") && $0.contains("broken.svg")
        }
        #expect(skipped.count == 1, "\(run.stderr)")
        // The printed "sprite" snippets keep the plain ids.
        let snippets = run.stderr.components(separatedBy: "\n").filter { $0.hasPrefix("\"sprite\": ") }
        #expect(snippets.count == 3)
        #expect(
            snippets.allSatisfy { $0.contains(#""id":"sprite-2""#) && !$0.contains(#""id":"sprite-dark-2""#) },
            "\(snippets)")
    }

    /// A themed sprite's parameterized variant: the theme on the pole, the style's red on the
    /// cloth only (`paint` gives the pole and the cloth's default one color).
    @Test func aThemedVariantRecolorsOnlyItsParameterPaints() throws {
        let run = iconr([
            "sprite", "./icons", "-o", "./out/", "--style", "./style.json", "--theme", "./mono.json", "--ratio", "2",
            "--no-cache",
        ])
        try #require(run.status == 0, "\(run.stderr)")
        let index = try #require(
            SpriteIndex.entries(
                fromJSON: [UInt8](Data(contentsOf: directory.appendingPathComponent("out/sprite-mono@2x.json")))))
        let plainIndex = try #require(
            SpriteIndex.entries(
                fromJSON: [UInt8](Data(contentsOf: directory.appendingPathComponent("out/sprite@2x.json")))))
        #expect(Set(index.keys) == Set(plainIndex.keys))
        let entry = try #require(index["flag?flag_color=ff0000"], "\(index.keys.sorted())")
        let sheet = try PNGDecoder.decode(
            [UInt8](Data(contentsOf: directory.appendingPathComponent("out/sprite-mono@2x.png"))))
        // icons/flag.svg at 2x: the pole at x 8-12, the cloth's middle at (26, 16).
        let pole = sheet[entry.rect.x + 10, entry.rect.y + 30], cloth = sheet[entry.rect.x + 26, entry.rect.y + 16]
        #expect((pole.red, pole.green, pole.blue) == (0x77, 0x77, 0x77))
        #expect((cloth.red, cloth.green, cloth.blue) == (0xff, 0, 0))
    }

    /// PNG icons build with `--style` as without: a style that shows one (plainly, with
    /// params it does not declare, at icon-size 2) gets the icon, drawn for that size.
    @Test func pngIconsBuildWithAStyle() throws {
        let red = RasterImage(
            size: PixelSize(width: 12, height: 12),
            pixels: Array(repeating: [255, 0, 0, 255], count: 144).flatMap { $0 })
        try Data(try PNGEncoder.encode(red)).write(to: directory.appendingPathComponent("icons/wetland.png"))
        let style = Self.style.replacingOccurrences(
            of: #"{"icon-image": "marker"}"#,
            with: #"{"icon-image": ["image", "wetland", {"params": {"tone": "blue"}}], "icon-size": 2}"#)
        try Data(style.utf8).write(to: directory.appendingPathComponent("png-style.json"))
        let run = iconr([
            "sprite", "./icons", "-o", "./out/", "--style", "./png-style.json", "--emit-style", "./out/style.json",
            "--ratio", "1", "--no-cache",
        ])
        try #require(run.status == 0, "\(run.stderr)")
        let index = try #require(
            SpriteIndex.entries(
                fromJSON: [UInt8](Data(contentsOf: directory.appendingPathComponent("out/sprite.json")))))
        let entry = try #require(index["wetland"], "\(index.keys.sorted())")
        // Drawn for icon-size 2: twice the pixels, pixel ratio 2.
        #expect(entry.rect.width == 24 && entry.pixelRatio == 2)
        #expect(run.stderr.contains("wetland.png: a PNG icon enlarged 2 times"), "\(run.stderr)")
        let layers = try json("out/style.json")["layers"]?.arrayValue ?? []
        #expect(layers.last?["layout"]?["icon-image"]?.serialized == #"["image","wetland"]"#, "\(layers)")
        // A variant file naming an id of its own for it is still an error.
        try Data(#"{"wetland": [{"id": "w2", "params": {}}]}"#.utf8).write(
            to: directory.appendingPathComponent("v.json"))
        let named = iconr(["sprite", "./icons", "-o", "./out2/", "--variants", "./v.json", "--no-cache"])
        #expect(named.status == 1)
        #expect(
            named.stderr.contains("a PNG icon has no parameters, so it can have no variant \"w2\""), "\(named.stderr)")
    }

    /// An icon the style shows that the folders lack is named once with the id meant (a size
    /// suffix ignored, else the nearest spelling); `--strict` makes it an error, nothing written.
    @Test func missingIconsAreNamedWithTheIdMeantAndStrictRefusesThem() throws {
        let layers = ["marker-15", "markr", "tram"].map { name in
            #"{"id": "\#(name)", "type": "symbol", "source": "points", "layout": {"icon-image": "\#(name)"}}"#
        }
        let style = Self.style.replacingOccurrences(
            of: #"{"id": "markers", "type": "symbol", "source": "points", "layout": {"icon-image": "marker"}}"#,
            with: layers.joined(separator: ", "))
        try Data(style.utf8).write(to: directory.appendingPathComponent("missing.json"))
        let warned = iconr(["sprite", "./icons", "-o", "./out/", "--style", "./missing.json", "--no-cache"])
        #expect(warned.status == 0, "\(warned.stderr)")
        for (name, hint) in [
            ("marker-15", " (did you mean 'marker'?)"), ("markr", " (did you mean 'marker'?)"), ("tram", ""),
        ] {
            let line = "warning: missing.json: the style shows icon \"\(name)\", which is not among the icons\(hint)\n"
            #expect(warned.stderr.components(separatedBy: line).count == 2, "\(name) once: \(warned.stderr)")
        }
        let strict = iconr([
            "sprite", "./icons", "-o", "./strict/", "--style", "./missing.json", "--strict", "--no-cache",
        ])
        #expect(strict.status == 1)
        #expect(
            strict.stderr.contains(
                "error: --strict: the style shows 3 icons the folders lack (marker-15, markr, tram), nothing written"),
            "\(strict.stderr)")
        #expect(!exists("strict"))
        #expect(iconr(["sprite", "./icons", "-o", "./s/", "--strict"]).status == 64, "--strict needs --style")
    }

    /// A theme that inverts lightness, with a rule for one folder's icons, drawn into a sprite:
    /// the flag's black cloth turns white and its dark grey pole (#5a5a5a, just below the
    /// middle of OKLab's lightness) a grey just above it; the folder's copy all the rule's red.
    @Test func aThemeInvertsAndItsRulesThemeAFolder() throws {
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("icons/shop"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: directory.appendingPathComponent("icons/flag.svg"),
            to: directory.appendingPathComponent("icons/shop/flag.svg"))
        try Data(##"{"name": "night", "invert": true, "rules": [{"icons": "shop/*", "paint": "#ff0000"}]}"##.utf8)
            .write(to: directory.appendingPathComponent("night.json"))
        let run = iconr([
            "sprite", "./icons", "-o", "./out/", "--recursive", "--theme", "./night.json", "--ratio", "2", "--no-cache",
        ])
        try #require(run.status == 0, "\(run.stderr)")
        let index = try #require(
            SpriteIndex.entries(
                fromJSON: [UInt8](Data(contentsOf: directory.appendingPathComponent("out/sprite-night@2x.json")))))
        let sheet = try PNGDecoder.decode(
            [UInt8](Data(contentsOf: directory.appendingPathComponent("out/sprite-night@2x.png"))))
        let flag = try #require(index["flag"]), shop = try #require(index["shop/flag"])
        // icons/flag.svg at 2x: the pole at x 8-12.
        let pole = sheet[flag.rect.x + 10, flag.rect.y + 30], shopPole = sheet[shop.rect.x + 10, shop.rect.y + 30]
        let cloth = sheet[flag.rect.x + 26, flag.rect.y + 16]
        #expect((cloth.red, cloth.green, cloth.blue) == (255, 255, 255), "\(cloth)")
        #expect(pole.red > 0x5a && pole.red < 0x80 && pole.red == pole.green && pole.green == pole.blue, "\(pole)")
        #expect((shopPole.red, shopPole.green, shopPole.blue) == (255, 0, 0), "\(shopPole)")
    }

    /// A plain SVG without parameters gets variants of its own colors from the variants file
    /// (red and blue shields from one black one), drawn in them whatever the build's theme.
    @Test func variantsRecolorAPlainIcon() throws {
        try Data(
            ##"<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8"/></svg>"##.utf8
        )
        .write(to: directory.appendingPathComponent("icons/shield.svg"))
        try Data(
            ##"{"shield": [{"id": "shield-red", "icon": "shield", "colors": {"#000000": "#dd2222"}}, {"id": "shield-blue", "paint": "#0000ff"}]}"##
                .utf8
        ).write(to: directory.appendingPathComponent("v.json"))
        let run = iconr([
            "sprite", "./icons", "-o", "./out/", "--variants", "./v.json", "--theme", "grayscale", "--ratio", "1",
            "--no-cache",
        ])
        try #require(run.status == 0, "\(run.stderr)")
        for (prefix, expected) in [
            ("sprite", ["shield": "#000000ff", "shield-red": "#dd2222ff", "shield-blue": "#0000ffff"]),
            ("sprite-grayscale", ["shield": "#000000ff", "shield-red": "#dd2222ff", "shield-blue": "#0000ffff"]),
        ] {
            let index = try #require(
                SpriteIndex.entries(
                    fromJSON: [UInt8](Data(contentsOf: directory.appendingPathComponent("out/\(prefix).json")))))
            let sheet = try PNGDecoder.decode(
                [UInt8](Data(contentsOf: directory.appendingPathComponent("out/\(prefix).png"))))
            for (id, color) in expected {
                let entry = try #require(index[id], "\(prefix): \(id)")
                #expect(sheet.hex(x: entry.rect.x + 4, y: entry.rect.y + 4) == color, "\(prefix): \(id)")
            }
        }
        for (variants, message) in [
            (
                ##"{"shield": [{"colors": {"#000000": "#dd2222"}}]}"##,
                "v.json: icon \"shield\": a variant with colors of its own needs an \"id\""
            ),
            (
                ##"{"shield": [{"id": "x", "paint": "nope"}]}"##,
                "v.json: icon \"shield\", variant \"x\": paint: expected a color"
            ),
        ] {
            try Data(variants.utf8).write(to: directory.appendingPathComponent("v.json"))
            let bad = iconr(["sprite", "./icons", "-o", "./bad/", "--variants", "./v.json", "--no-cache"])
            #expect(bad.status == 1 && bad.stderr.contains(message), "\(bad.stderr)")
        }
    }
}
