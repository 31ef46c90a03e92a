import Foundation
import IconrCore
import IconrRender
import IconrSystem
import IconrTestSupport
import Testing

/// `iconr sprite --theme` on real icon sets, checked against the same icons recolored by hand
/// (their paint colors replaced in the SVG text, an independent edit) and drawn by
/// `rsvg-convert --zoom 2`: Maki in a dark flavor (black to white), openstreetmap-carto's
/// symbols in one grey.
@Suite(.enabled(if: TestSupport.corporaAvailable, Comment(rawValue: TestSupport.corporaMissing)))
struct ThemeTests {
    /// The paint colors of `svg` replaced by `map` (attributes and CSS declarations of fill,
    /// stroke, stop-color and color, in hex or as black and white), and the root's initial
    /// black fill given as `map("#000000")`: what a person would edit.
    static func recolored(_ svg: String, _ map: (String) -> String) throws -> String {
        let pattern = try NSRegularExpression(
            pattern:
                #"((?:fill|stroke|stop-color|color)\s*(?:=\s*["']|:\s*))(#[0-9A-Fa-f]{6}\b|#[0-9A-Fa-f]{3}\b|black\b|white\b)"#
        )
        let text = NSMutableString(string: svg)
        for match in pattern.matches(in: svg, range: NSRange(location: 0, length: text.length)).reversed() {
            let color = text.substring(with: match.range(at: 2))
            text.replaceCharacters(in: match.range(at: 2), with: map(color))
        }
        var result = String(text)
        if let root = result.range(of: "<svg"), let end = result[root.upperBound...].range(of: ">"),
            !result[root.upperBound..<end.lowerBound].contains(" fill=")
        {
            result.insert(contentsOf: " fill=\"\(map("#000000"))\"", at: root.upperBound)
        }
        return result
    }

    /// Builds `folder`'s sprite with `theme` (a JSON text), and compares each SVG icon's 2x
    /// image with `rsvg-convert --zoom 2` of the icon recolored by `map`: premultiplied
    /// channels within 1. Returns how many agreed, the names of those that did not, and of
    /// those the two draw at other sizes or places without the theme too (a fractional
    /// width: a sprite needs whole pixels), which say nothing of the colors.
    static func compare(
        folder: String, theme: String, map: @escaping @Sendable (String) -> String
    ) throws -> (
        agreed: Int, differed: [String], otherSize: [String]
    ) {
        let rsvgConvert = try #require(
            TestSupport.which("rsvg-convert"), "rsvg-convert is not installed (apt-get install librsvg2-bin)")
        let scratch = try TemporaryFolder("iconr-theme")
        let themeFile = scratch.url.appendingPathComponent("flavor.json")
        try Data(theme.utf8).write(to: themeFile)
        let source = TestSupport.corpora.appendingPathComponent(folder).path
        let build = try TestSupport.iconr(
            [
                "sprite", source, "-o", "out/sprite", "--recursive", "--ratio", "2", "--theme", themeFile.path,
                "--no-cache",
            ],
            in: scratch.url, timeout: 600)
        try #require(build.status == 0, "\(build.stderr)")
        let (entries, sheetImages) = try Self.sheets(named: "sprite-flavor", in: scratch.url)
        // The same build's sprite without the theme, for icons whose two renders disagree anyway.
        let (plainEntries, plainSheets) = try Self.sheets(named: "sprite", in: scratch.url)
        let files = try TestSupport.requiredSVGFiles(in: TestSupport.corpus(folder), atLeast: 200)
        let results = Locked<(agreed: Int, differed: [String], otherSize: [String])>((0, [], []))
        DispatchQueue.concurrentPerform(iterations: files.count) { number in
            let file = files[number]
            let id = String(file.path.dropFirst(source.count + 1).dropLast(4))
            guard let (sheet, entry) = entries[id], let svg = try? String(contentsOf: file, encoding: .utf8),
                let edited = try? recolored(svg, map)
            else {
                results.withLock { $0.differed.append(id + " (not in the sprite or not read)") }
                return
            }
            let input = scratch.url.appendingPathComponent("hand-\(number).svg")
            let output = scratch.url.appendingPathComponent("hand-\(number).png")
            guard (try? Data(edited.utf8).write(to: input)) != nil,
                let run = try? TestSupport.run(rsvgConvert, ["--zoom", "2", input.path, "-o", output.path]),
                run.status == 0, let bytes = try? Data(contentsOf: output),
                let theirs = try? PNGDecoder.decode([UInt8](bytes))
            else {
                results.withLock { $0.differed.append(id + " (rsvg-convert failed)") }
                return
            }
            guard entry.rect.width == theirs.size.width, entry.rect.height == theirs.size.height else {
                results.withLock { $0.otherSize.append(id) }
                return
            }
            if Self.agree(sheetImages[sheet], entry.rect, theirs) {
                results.withLock { $0.agreed += 1 }
                return
            }
            // Drawn apart without the theme too (a fractional size placed differently): no
            // color difference, and counted with the other sizes.
            let original = scratch.url.appendingPathComponent("plain-\(number).png")
            if let (plainSheet, plainEntry) = plainEntries[id],
                let run = try? TestSupport.run(rsvgConvert, ["--zoom", "2", file.path, "-o", original.path]),
                run.status == 0, let bytes = try? Data(contentsOf: original),
                let plain = try? PNGDecoder.decode([UInt8](bytes)),
                !Self.agree(plainSheets[plainSheet], plainEntry.rect, plain)
            {
                results.withLock { $0.otherSize.append(id + " (unthemed too)") }
                return
            }
            results.withLock { $0.differed.append(id) }
        }
        return results.withLock { ($0.agreed, $0.differed.sorted(), $0.otherSize.sorted()) }
    }

    /// The entries (each with its sheet's number) and sheet images of `out/<name>@2x` under
    /// `folder`: every sheet, as a large set needs several (`<name>-2@2x`, ...).
    static func sheets(
        named name: String, in folder: URL
    ) throws -> (
        [String: (sheet: Int, entry: SpriteIndexEntry)], [RasterImage]
    ) {
        var index: [String: (sheet: Int, entry: SpriteIndexEntry)] = [:]
        var sheets: [RasterImage] = []
        while true {
            let base = "out/" + name + (sheets.isEmpty ? "" : "-\(sheets.count + 1)") + "@2x"
            guard let json = try? Data(contentsOf: folder.appendingPathComponent(base + ".json")) else { break }
            let entries = try #require(SpriteIndex.entries(fromJSON: [UInt8](json)))
            for (id, entry) in entries { index[id] = (sheets.count, entry) }
            sheets.append(
                try PNGDecoder.decode(
                    [UInt8](Data(contentsOf: folder.appendingPathComponent(base + ".png"))),
                    maxSize: PixelSize(width: 1 << 15, height: 1 << 15)))
        }
        try #require(!sheets.isEmpty, "no \(name)@2x sheet was written")
        return (index, sheets)
    }

    /// Whether `rect` of `sheet` and `image` are the same size with every premultiplied
    /// channel within 1.
    static func agree(_ sheet: RasterImage, _ rect: PixelRect, _ image: RasterImage) -> Bool {
        guard rect.width == image.size.width, rect.height == image.size.height else { return false }
        for y in 0..<rect.height {
            for x in 0..<rect.width {
                let a = sheet[rect.x + x, rect.y + y], b = image[x, y]
                func premultiplied(_ value: UInt8, _ alpha: UInt8) -> Int { (Int(value) * Int(alpha) + 127) / 255 }
                let pairs = [
                    (premultiplied(a.red, a.alpha), premultiplied(b.red, b.alpha)),
                    (premultiplied(a.green, a.alpha), premultiplied(b.green, b.alpha)),
                    (premultiplied(a.blue, a.alpha), premultiplied(b.blue, b.alpha)), (Int(a.alpha), Int(b.alpha)),
                ]
                if pairs.contains(where: { abs($0.0 - $0.1) > 1 }) { return false }
            }
        }
        return true
    }

    @Test func makiInADarkFlavorIsTheHandRecoloredMaki() throws {
        let (agreed, differed, otherSize) = try Self.compare(
            folder: "maki", theme: ##"{"colors": {"#000000": "#ffffff"}}"##,
            map: { ["#000000", "#000", "black"].contains($0.lowercased()) ? "#ffffff" : $0 })
        #expect(agreed >= 200 && otherSize.isEmpty, "\(agreed) agreed, \(otherSize) drawn at other sizes")
        #expect(differed.count == 0, "differed: \(differed.prefix(20))")
    }

    @Test func osmCartoInOneGreyIsTheHandRecoloredSet() throws {
        let (agreed, differed, otherSize) = try Self.compare(
            folder: "osm-carto-symbols", theme: ##"{"paint": "#777777"}"##, map: { _ in "#777777" })
        // Three icons have no size or a fractional one (leafless1, leafless2; fitness, 14.93 px).
        #expect(agreed >= 900 && otherSize.count <= 3, "\(agreed) agreed, \(otherSize) drawn at other sizes")
        #expect(differed.count == 0, "\(differed.count) differed: \(differed.prefix(20))")
    }
}

/// The theme options of the command line, on the repository's own icons (no corpus needed).
struct ThemeOptionTests {
    /// `iconr render --theme` draws the flag's cloth (its parameter's default, black) in the
    /// theme's white; an explicit `-p` still wins; a broken theme file is one error line.
    @Test func renderTakesATheme() throws {
        let folder = try TemporaryFolder("iconr-theme-render")
        try Data(##"{"name": "dark", "colors": {"#000000": "#ffffff"}}"##.utf8).write(
            to: folder.url.appendingPathComponent("dark.json"))
        let flag = TestSupport.icons.appendingPathComponent("flag.svg").path
        for (arguments, cloth) in [
            (["--theme", "dark.json"], (255, 255, 255)),
            (["--theme", "dark.json", "-p", "flag_color=red"], (255, 0, 0)),
            ([], (0, 0, 0)),
        ] {
            let run = try TestSupport.iconr(
                ["render", flag, "-o", "out.png", "--no-cache"] + arguments, in: folder.url)
            try #require(run.status == 0, "\(run.stderr)")
            let image = try PNGDecoder.decode([UInt8](Data(contentsOf: folder.url.appendingPathComponent("out.png"))))
            // The middle of the cloth (icons/flag.svg: x 6-20, y 3.5-13.5).
            let pixel = image[13, 8]
            #expect((Int(pixel.red), Int(pixel.green), Int(pixel.blue)) == cloth, "\(arguments)")
        }
        // One paint for all: the pole and the cloth's default become one color, and the
        // parameter still recolors the cloth alone (the pole, x 4-6, stays the theme's).
        try Data(##"{"name": "mono", "paint": "#777777"}"##.utf8).write(
            to: folder.url.appendingPathComponent("mono.json"))
        let mono = try TestSupport.iconr(
            ["render", flag, "-o", "mono.png", "--no-cache", "--theme", "mono.json", "-p", "flag_color=red"],
            in: folder.url)
        try #require(mono.status == 0, "\(mono.stderr)")
        let drawn = try PNGDecoder.decode([UInt8](Data(contentsOf: folder.url.appendingPathComponent("mono.png"))))
        #expect(drawn.hex(x: 5, y: 16) == "#777777ff" && drawn.hex(x: 13, y: 8) == "#ff0000ff")
        try Data(##"{"colors": {"#000000": 3}}"##.utf8).write(to: folder.url.appendingPathComponent("bad.json"))
        let bad = try TestSupport.iconr(["render", flag, "-o", "out.png", "--theme", "bad.json"], in: folder.url)
        #expect(bad.status == 1)
        #expect(
            bad.stderr == "error: bad.json: colors.#000000: expected a color (#rrggbb, rgb(), a CSS name), found 3\n")
    }

    /// `iconr sprite --theme` writes `<prefix>-<theme>` beside the sprite, and the emitted
    /// style's copy for each theme names that sprite; `iconr inspect` over a folder lists the
    /// paints a theme would map.
    @Test func spriteWritesOneSpritePerThemeAndInspectListsPaints() throws {
        let folder = try TemporaryFolder("iconr-theme-sprite")
        let style = #"{"version": 8, "sources": {}, "layers": []}"#
        try Data(style.utf8).write(to: folder.url.appendingPathComponent("style.json"))
        let run = try TestSupport.iconr(
            [
                "sprite", TestSupport.icons.path, "-o", "out/", "--theme", "grayscale", "--style", "style.json",
                "--emit-style", "out/style.json", "--no-cache",
            ], in: folder.url)
        try #require(run.status == 0, "\(run.stderr)")
        for file in ["sprite.png", "sprite@2x.json", "sprite-grayscale.png", "sprite-grayscale@2x.json", "style.json"] {
            #expect(
                FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("out/" + file).path), "\(file)"
            )
        }
        let themedStyle = try JSONValue.parse(
            [UInt8](Data(contentsOf: folder.url.appendingPathComponent("out/style-grayscale.json"))))
        #expect(themedStyle["sprite"]?.stringValue?.hasSuffix("/out/sprite-grayscale") == true)
        let inspect = InProcess.iconr(["inspect", TestSupport.icons.path, "--json"])
        #expect(inspect.status == 0, "\(inspect.stderr)")
        let paints = try JSONValue.parse(Array(inspect.stdout.utf8))["paints"]?.arrayValue ?? []
        let colors = paints.compactMap { $0["color"]?.stringValue }
        #expect(colors.contains("#000000") && colors.contains("#5a5a5a"), "\(colors)")
        // --json holds each theme's build beside the plain one's.
        let json = InProcess.iconr(
            [
                "sprite", TestSupport.icons.path, "-o", folder.path + "/o/", "--theme", "grayscale", "--json",
                "--no-cache",
            ])
        #expect(json.status == 0, "\(json.stderr)")
        let summary = try JSONValue.parse(Array(json.stdout.utf8))
        let themes = summary["themes"]?.arrayValue ?? []
        #expect(themes.count == 1 && themes.first?["theme"] == .string("grayscale"))
        #expect(
            themes.first?["files"]?.arrayValue?.contains(.string(folder.path + "/o/sprite-grayscale@2x.png")) == true)
        #expect(summary["files"]?.arrayValue?.contains(.string(folder.path + "/o/sprite.png")) == true)
    }
}
