import Foundation
import IconrCore
import IconrRender
import IconrTestSupport
import Testing

/// `iconr sprite` speaks the conventions users of spreet and spritezero know: ratio lists,
/// `--retina`, SDF globs, an output folder, results on stdout and the rest on stderr, a JSON
/// summary. Only the bundled icons: these run on a fresh clone too.
struct SpriteConventionsTests {
    let directory: URL
    /// Removed with the test.
    private let scratch: TemporaryFolder

    init() throws {
        scratch = try TestSupport.folderWithBundledIcons("iconr-conventions")
        directory = scratch.url
    }

    /// `iconr` run in this process as if in the test's folder: `./` arguments are paths in it.
    private func iconr(_ arguments: String...) -> IconrRun {
        InProcess.iconr(arguments, in: directory)
    }

    /// The built binary run in the test's folder, for what needs a process of its own: a
    /// render under the crash guard, a build librsvg may crash.
    private func binary(_ arguments: String...) throws -> IconrRun {
        try TestSupport.iconr(arguments, in: directory)
    }

    private func files(_ folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent(folder).path)) ?? [])
            .sorted()
    }

    /// The files of `folder` by name; a build's outputs, so none is a failure (two empty
    /// folders would compare equal).
    private func contents(
        _ folder: String, sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) throws -> [String: Data] {
        var found: [String: Data] = [:]
        for name in files(folder) {
            found[name] = try Data(contentsOf: directory.appendingPathComponent(folder + "/" + name))
        }
        #expect(!found.isEmpty, "\(folder) holds no files", sourceLocation: sourceLocation)
        return found
    }

    private func index(_ path: String) throws -> [String: [String: Any]] {
        try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent(path)))
            as! [String: [String: Any]]
    }

    /// A variants file's colors are parsed when it is read: a bad one names the file, the
    /// icon and the parameter, and nothing is built.
    @Test func aBadColorInAVariantsFileIsOneErrorNamingIt() throws {
        try ##"{"flag": [{"params": {"flag_color": "red"}}, {"params": {"flag_color": "#12"}}]}"##
            .write(to: directory.appendingPathComponent("variants.json"), atomically: true, encoding: .utf8)
        let result = iconr("sprite", "./icons", "-o", "./out/", "--variants", "./variants.json", "--no-cache")
        #expect(result.status == 1)
        #expect(
            result.stderr
                == "error: variants.json: icon \"flag\": invalid color \"#12\" for parameter \"flag_color\" (\(ParameterError.syntaxes))\n"
        )
        #expect(files("out").isEmpty)
    }

    @Test func ratioListsRetinaAndAnOutputFolder() throws {
        let listed = iconr("sprite", "./icons", "-o", "./a/", "--ratio", "1,2,3", "--no-cache")
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(
            files("a") == [
                "sprite.json", "sprite.png", "sprite@2x.json", "sprite@2x.png", "sprite@3x.json", "sprite@3x.png",
            ])
        // Results on stdout, the summary on stderr.
        #expect(
            listed.stdout.split(separator: "\n") == [
                "a/sprite.png", "a/sprite.json", "a/sprite@2x.png", "a/sprite@2x.json",
                "a/sprite@3x.png", "a/sprite@3x.json",
            ])
        #expect(listed.stderr.hasPrefix("sprite: 4 icons, 0 variants, 1 sheet x 3 ratios"), "\(listed.stderr)")
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("b"), withIntermediateDirectories: true)
        #expect(iconr("sprite", "./icons", "-o", "./b", "--retina", "--no-cache").status == 0)
        #expect(files("b") == ["sprite@2x.json", "sprite@2x.png"])
        #expect(try index("b/sprite@2x.json")["flag"]?["pixelRatio"] as? Int == 2)
        #expect(InProcess.iconr(["sprite", "icons", "-o", "b", "--retina", "--ratio", "1"]).status == 64)
        #expect(InProcess.iconr(["sprite", "icons", "-o", "b", "--ratio", "1,,2"]).status == 64)
    }

    @Test func sdfTakesGlobsAndAll() throws {
        #expect(
            iconr("sprite", "./icons", "-o", "./g/sprite", "-r", "1", "--sdf", "ma*", "--sdf", "fla?", "--no-cache")
                .status == 0)
        let globbed = try index("g/sprite.json")
        #expect(globbed.filter { $0.value["sdf"] as? Bool == true }.keys.sorted() == ["flag", "marker"])
        #expect(iconr("sprite", "./icons", "-o", "./all/sprite", "-r", "1", "--sdf-all", "--no-cache").status == 0)
        #expect(try index("all/sprite.json").values.allSatisfy { $0["sdf"] as? Bool == true })
        let unmatched = iconr("sprite", "./icons", "-o", "./n/sprite", "-r", "1", "--sdf", "nothing*", "--no-cache")
        #expect(unmatched.status == 1 && unmatched.stderr == "error: --sdf \"nothing*\" matches no sprite id\n")
        #expect(files("n").isEmpty)
    }

    @Test func aJSONSummaryForScripts() throws {
        let result = iconr("sprite", "./icons", "-o", "./j/sprite", "--json", "--no-cache")
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(
            summary["files"] as? [String] == ["j/sprite.png", "j/sprite.json", "j/sprite@2x.png", "j/sprite@2x.json"])
        #expect(summary["icons"] as? Int == 4 && summary["sheetCount"] as? Int == 1 && summary["rendered"] as? Int == 8)
        #expect(summary["sprite"] as? String == "j/sprite")
        let sheets = try #require(summary["sheets"] as? [[String: Any]])
        #expect(sheets.count == 2 && sheets[1]["ratio"] as? Int == 2 && (sheets[1]["bytes"] as? Int ?? 0) > 100)
    }

    /// A build that needs fewer sheets than the last one removes the sheets it no longer writes.
    @Test func staleSheetsAreRemoved() throws {
        let split = iconr("sprite", "./icons", "-o", "./s/sprite", "--max-size", "96", "--no-cache")
        #expect(split.status == 0, "\(split.stderr)")
        #expect(files("s").contains("sprite-2@2x.png"))
        #expect(
            split.stderr.contains(
                #""sprite": [{"id":"default","url":"s/sprite"},{"id":"sprite-2","url":"s/sprite-2"}"#),
            "\(split.stderr)")
        #expect(iconr("sprite", "./icons", "-o", "./s/sprite", "--no-cache").status == 0)
        #expect(files("s") == ["sprite.json", "sprite.png", "sprite@2x.json", "sprite@2x.png"])
    }

    /// Every input kind: `.svgz`, any letter case, PNG icons (as they are at 1x, scaled with a
    /// warning above), `name@2x` files for one ratio, hidden files left out.
    @Test func everyInputKind() throws {
        let icons = directory.appendingPathComponent("kinds")
        try FileManager.default.createDirectory(at: icons, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: TestSupport.icons.appendingPathComponent("flag.svg"), to: icons.appendingPathComponent("flag.svg"))
        let gzip = try TestSupport.run(
            "/bin/gzip", ["-c", TestSupport.icons.appendingPathComponent("marker.svg").path])
        try gzip.stdout.write(to: icons.appendingPathComponent("marker.svgz"))
        try FileManager.default.copyItem(
            at: TestSupport.icons.appendingPathComponent("badge.svg"), to: icons.appendingPathComponent("Badge.SVG"))
        try FileManager.default.copyItem(
            at: TestSupport.icons.appendingPathComponent("label.svg"), to: icons.appendingPathComponent(".hidden.svg"))
        // flag@2x: a red square, so that the 2x sheet shows which file drew it.
        try Data(
            "<svg xmlns='http://www.w3.org/2000/svg' width='48' height='48'><rect width='48' height='48' fill='#ff0000'/></svg>"
                .utf8
        )
        .write(to: icons.appendingPathComponent("flag@2x.svg"))
        let blue = RasterImage(
            size: PixelSize(width: 10, height: 6), pixels: Array([UInt8]([0, 0, 255, 255]).repeated(60)))
        try Data(try PNGEncoder.encode(blue)).write(to: icons.appendingPathComponent("dot.png"))

        let result = iconr("sprite", "./kinds", "-o", "./k/sprite", "--ratio", "1,2", "--no-cache")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stderr.contains("warning: kinds/dot.png: a PNG icon enlarged 2 times for 2x blurs"),
            "\(result.stderr)")
        for (suffix, ratio) in [("", 1), ("@2x", 2)] {
            let entries = try index("k/sprite\(suffix).json")
            #expect(entries.keys.sorted() == ["Badge", "dot", "flag", "marker"])
            #expect(entries["dot"]?["width"] as? Int == 10 * ratio && entries["dot"]?["height"] as? Int == 6 * ratio)
            #expect(entries["marker"]?["width"] as? Int == 20 * ratio)
            let sheet = try PNGDecoder.decode(
                [UInt8](Data(contentsOf: directory.appendingPathComponent("k/sprite\(suffix).png"))))
            let flag = try #require(entries["flag"]), dot = try #require(entries["dot"])
            let flagCenter = sheet.hex(x: (flag["x"] as! Int) + 2 * ratio, y: (flag["y"] as! Int) + 20 * ratio)
            #expect(
                ratio == 2 ? flagCenter == "#ff0000ff" : flagCenter != "#ff0000ff", "flag at \(ratio)x: \(flagCenter)")
            #expect(sheet.hex(x: (dot["x"] as! Int) + 3 * ratio, y: (dot["y"] as! Int) + 3 * ratio) == "#0000ffff")
        }
        let svgz = try binary("render", "kinds/marker.svgz", "-o", "m.png", "--no-cache")
        #expect(svgz.status == 0, "\(svgz.stderr)")
        let png = try binary("render", "kinds/dot.png", "--no-cache")
        #expect(
            png.status == 1 && png.stderr.hasPrefix("error: kinds/dot.png: is a PNG image, not an SVG template"),
            "\(png.stderr)")
    }

    /// Ids that would break `["image", id]`, `id:name` prefixes or `{token}` strings are an
    /// error naming the file, or replaced with `--sanitize-ids` (collisions still errors).
    @Test func idsAStyleCannotUseAreRefused() throws {
        let icons = directory.appendingPathComponent("ids")
        try FileManager.default.createDirectory(at: icons, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: TestSupport.icons.appendingPathComponent("flag.svg"), to: icons.appendingPathComponent("a:b.svg"))
        let refused = iconr("sprite", "./ids", "-o", "./i/sprite", "--no-cache")
        #expect(
            refused.status == 1 && refused.stderr.hasPrefix("error: ids/a:b.svg: its id would hold \":\""),
            "\(refused.stderr)")
        #expect(iconr("sprite", "./ids", "-o", "./i/sprite", "--no-cache", "--sanitize-ids").status == 0)
        #expect(try index("i/sprite.json").keys.sorted() == ["a_b"])
        try FileManager.default.copyItem(
            at: TestSupport.icons.appendingPathComponent("flag.svg"), to: icons.appendingPathComponent("a{b.svg"))
        let collision = iconr("sprite", "./ids", "-o", "./i/sprite", "--no-cache", "--sanitize-ids")
        #expect(
            collision.status == 1 && collision.stderr.contains("two icons have the id \"a_b\""), "\(collision.stderr)")
    }

    /// `--check` writes nothing and names each output a build would change.
    @Test func checkSaysWhatWouldChange() throws {
        #expect(iconr("sprite", "./icons", "-o", "./c/sprite", "--no-cache").status == 0)
        let clean = iconr("sprite", "./icons", "-o", "./c/sprite", "--no-cache", "--check")
        #expect(clean.status == 0 && clean.stdout.isEmpty, "\(clean.stderr)")
        try Data("stale".utf8).write(to: directory.appendingPathComponent("c/sprite@2x.json"))
        try FileManager.default.removeItem(at: directory.appendingPathComponent("c/sprite.png"))
        let dirty = iconr("sprite", "./icons", "-o", "./c/sprite", "--no-cache", "--check")
        #expect(dirty.status == 1)
        #expect(
            dirty.stderr == "error: c/sprite.png would change\nerror: c/sprite@2x.json would change\n"
                + "error: 2 outputs not up to date (--check)\n", "\(dirty.stderr)")
        #expect(files("c") == ["sprite.json", "sprite@2x.json", "sprite@2x.png"], "nothing written")
    }

    /// spritezero's element ids: a hidden element or an overlapping stretch area is a warning
    /// naming the icon, not a zero area; `inspect` shows them, with sizes as written.
    @Test func elementAreasAreValidated() throws {
        let icons = directory.appendingPathComponent("shields")
        try FileManager.default.createDirectory(at: icons, withIntermediateDirectories: true)
        try Data(
            """
            <svg xmlns="http://www.w3.org/2000/svg" width="20" height="14.4" viewBox="0 0 20 14.4">
              <rect id="mapbox-stretch-x" x="4" y="0" width="12" height="14.4" fill="none"/>
              <rect id="mapbox-stretch-x-2" x="6" y="0" width="4" height="14.4" fill="none"/>
              <rect id="mapbox-content" x="2" y="2" width="16" height="10" style="display:none"/>
              <rect width="20" height="14.4" fill="#345"/>
            </svg>
            """.utf8
        ).write(to: icons.appendingPathComponent("shield.svg"))
        let built = iconr("sprite", "./shields", "-o", "./e/sprite", "-r", "1", "--no-cache")
        #expect(built.status == 0)
        #expect(
            built.stderr.contains(
                "warning: shields/shield.svg: element \"mapbox-content\" draws nothing (hidden, or no geometry)"))
        #expect(
            built.stderr.contains(
                "warning: shields/shield.svg: stretch x area [6, 10] overlaps [4, 16]: it is left out"))
        let entry = try #require(try index("e/sprite.json")["shield"])
        #expect(entry["content"] == nil)
        #expect((entry["stretchX"] as? [[Int]]) == [[4, 16]])
        let inspected = try binary("inspect", "shields/shield.svg")
        #expect(inspected.stdout.contains("  size: 20 x 14.4\n"), "\(inspected.stdout)")
        #expect(inspected.stdout.contains("  stretch x: [4, 16]\n"))
        #expect(inspected.stdout.contains("  area elements: mapbox-stretch-x mapbox-stretch-x-2 mapbox-content"))
        let json = try binary("inspect", "shields/shield.svg", "--json")
        #expect(json.stdout.contains("\"height\": 14.4,"), "\(json.stdout)")
    }

    /// References to files inside the icon's folder are drawn (and count in the cache key);
    /// anything else is refused with a warning naming the icon and the reference; a document
    /// that includes itself ends as an error, never a hang.
    @Test func referencedFilesInsideTheFolderAreDrawn() throws {
        let icons = directory.appendingPathComponent("refs")
        try FileManager.default.createDirectory(
            at: icons.appendingPathComponent("img"), withIntermediateDirectories: true)
        let green = RasterImage(
            size: PixelSize(width: 8, height: 8), pixels: Array([UInt8]([0, 255, 0, 255]).repeated(64)))
        try Data(try PNGEncoder.encode(green)).write(to: icons.appendingPathComponent("img/green.png"))
        try Data(
            """
            <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="8" height="8">
              <image href="img/green.png" width="8" height="8"/>
              <image xlink:href="../secret.png" width="1" height="1"/>
              <image href="http://127.0.0.1:9/x.png" width="1" height="1"/>
              <rect width="2" height="2" fill="url(/etc/hostname#x)"/>
            </svg>
            """.utf8
        ).write(to: icons.appendingPathComponent("pic.svg"))
        try Data(try PNGEncoder.encode(green)).write(to: directory.appendingPathComponent("secret.png"))
        let cache = directory.appendingPathComponent("cache").path
        let built = iconr("sprite", "./refs", "-o", "./r/sprite", "-r", "1", "--cache-dir", cache)
        #expect(built.status == 0, "\(built.stderr)")
        for (reference, reason) in [
            ("../secret.png", "outside the icon's folder"),
            ("http://127.0.0.1:9/x.png", "which is not a local file (iconr never uses the network)"),
            ("/etc/hostname#x", "outside the icon's folder"),
        ] {
            #expect(
                built.stderr.contains("warning: refs/pic.svg: refers to \"\(reference)\", \(reason): not drawn"),
                "\(built.stderr)")
        }
        let sheet = try PNGDecoder.decode([UInt8](Data(contentsOf: directory.appendingPathComponent("r/sprite.png"))))
        #expect(sheet.hex(x: 5, y: 5) == "#00ff00ff")
        let rendered = try binary("render", "refs/pic.svg", "-o", "pic.png", "--cache-dir", cache)
        #expect(rendered.status == 0)
        #expect(
            try PNGDecoder.decode([UInt8](Data(contentsOf: directory.appendingPathComponent("pic.png")))).hex(
                x: 5, y: 5) == "#00ff00ff")
        // Editing the referenced file makes a new key: the next build draws the new pixels.
        let red = RasterImage(
            size: PixelSize(width: 8, height: 8), pixels: Array([UInt8]([255, 0, 0, 255]).repeated(64)))
        try Data(try PNGEncoder.encode(red)).write(to: icons.appendingPathComponent("img/green.png"))
        #expect(iconr("sprite", "./refs", "-o", "./r/sprite", "-r", "1", "--cache-dir", cache).status == 0)
        let again = try PNGDecoder.decode([UInt8](Data(contentsOf: directory.appendingPathComponent("r/sprite.png"))))
        #expect(again.hex(x: 5, y: 5) == "#ff0000ff")

        try Data(
            """
            <svg xmlns="http://www.w3.org/2000/svg" xmlns:xi="http://www.w3.org/2001/XInclude" width="8" height="8">
              <xi:include href="self.svg"/><rect width="4" height="4"/>
            </svg>
            """.utf8
        ).write(to: icons.appendingPathComponent("self.svg"))
        // libxml2 stops the recursion, or librsvg overflows its stack on a worker thread (then
        // the supervisor names the icon): drawn, or one error line, never a signal or a hang.
        let recursive = try binary("sprite", "refs", "-o", "s/sprite", "-r", "1", "--no-cache", "--timeout", "10")
        #expect(
            recursive.status == 0 || (recursive.status == 1 && recursive.stderr.contains("error: refs/self.svg: ")),
            "\(recursive.status): \(recursive.stderr)")
        let alone = try binary("render", "refs/self.svg", "--no-cache", "--timeout", "10", "-o", "self.png")
        #expect(
            alone.status == 0 || (alone.status == 1 && alone.stderr.hasPrefix("error: refs/self.svg: ")),
            "\(alone.stderr)")
    }

    /// spritezero's `mapbox-text-placeholder`, and a sidecar `name.json` (MapLibre's
    /// `textFitWidth`/`textFitHeight` and any index key) merged into the index and validated.
    @Test func placeholdersAndSidecarsReachTheIndex() throws {
        let icons = directory.appendingPathComponent("meta")
        try FileManager.default.createDirectory(at: icons, withIntermediateDirectories: true)
        try Data(
            """
            <svg xmlns="http://www.w3.org/2000/svg" width="30" height="20">
              <rect id="mapbox-text-placeholder" x="5" y="4" width="20" height="12" fill="none"/>
              <rect width="30" height="20" fill="#345"/>
            </svg>
            """.utf8
        ).write(to: icons.appendingPathComponent("shield.svg"))
        try FileManager.default.copyItem(
            at: TestSupport.icons.appendingPathComponent("label.svg"), to: icons.appendingPathComponent("label.svg"))
        try Data(
            #"{"textFitWidth": "stretchOnly", "textFitHeight": "proportional", "content": [6, 5, 34, 19], "visible": true, "colour": 1}"#
                .utf8
        )
        .write(to: icons.appendingPathComponent("label.json"))
        let result = iconr("sprite", "./meta", "-o", "./m/sprite", "--no-cache")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stderr.contains("warning: meta/label.json: ignoring the unknown key \"colour\""), "\(result.stderr)")
        let index2x = try index("m/sprite@2x.json")
        #expect(index2x["shield"]?["placeholder"] as? [Int] == [10, 8, 50, 32])
        let label = try #require(index2x["label"])
        #expect(
            label["textFitWidth"] as? String == "stretchOnly" && label["textFitHeight"] as? String == "proportional")
        #expect(label["visible"] as? Bool == true && label["content"] as? [Int] == [12, 10, 68, 38])
        #expect(
            (label["stretchX"] as? [[Int]]) == [[16, 64]], "the SVG's metadata stays where the sidecar says nothing")
        try Data(#"{"textFitWidth": "sideways"}"#.utf8).write(to: icons.appendingPathComponent("label.json"))
        let invalid = iconr("sprite", "./meta", "-o", "./m/sprite", "--no-cache")
        #expect(invalid.status == 1)
        #expect(
            invalid.stderr.contains(
                "error: meta/label.svg: meta/label.json: textFitWidth: expected one of stretchOrShrink, stretchOnly, proportional"
            ),
            "\(invalid.stderr)")
    }

    /// `--hash-names`: names after the content, the same for the same input, new for a new
    /// one (the old files stay for whoever still names them), and the prefix printed last.
    @Test func hashNamesFollowTheContent() throws {
        let first = iconr("sprite", "./icons", "-o", "./h/", "--hash-names", "--no-cache")
        #expect(first.status == 0, "\(first.stderr)")
        let lines = first.stdout.split(separator: "\n").map(String.init)
        let prefix = try #require(lines.last)
        #expect(prefix.hasPrefix("h/sprite.") && prefix.count == "h/sprite.".count + 12, "\(prefix)")
        #expect(lines.dropLast() == ["\(prefix).png", "\(prefix).json", "\(prefix)@2x.png", "\(prefix)@2x.json"])
        let again = iconr("sprite", "./icons", "-o", "./h/", "--hash-names", "--no-cache")
        #expect(again.stdout == first.stdout, "deterministic")
        try FileManager.default.removeItem(at: directory.appendingPathComponent("icons/badge.svg"))
        let changed = iconr("sprite", "./icons", "-o", "./h/", "--hash-names", "--no-cache")
        let newPrefix = try #require(changed.stdout.split(separator: "\n").last.map(String.init))
        #expect(newPrefix != prefix)
        #expect(files("h").count == 8, "both builds' files: \(files("h"))")
    }

    /// The disk cache keys each variant and ratio: a moved folder, or an added ratio, renders
    /// only what is new.
    @Test func theCacheOutlivesMovesAndNewRatios() throws {
        let cache = directory.appendingPathComponent("cache").path
        let first = iconr("sprite", "./icons", "-o", "./a/sprite", "--cache-dir", cache)
        #expect(first.stderr.contains(", 8 rendered, 0 from cache"), "\(first.stderr)")
        try FileManager.default.moveItem(
            at: directory.appendingPathComponent("icons"), to: directory.appendingPathComponent("moved"))
        let moved = iconr("sprite", "./moved", "-o", "./b/sprite", "--cache-dir", cache)
        #expect(moved.stderr.contains(", 0 rendered, 8 from cache"), "\(moved.stderr)")
        let added = iconr("sprite", "./moved", "-o", "./c/sprite", "--ratio", "1,2,3", "--cache-dir", cache)
        #expect(added.stderr.contains(", 4 rendered, 8 from cache"), "\(added.stderr)")
        let all = iconr("sprite", "./moved", "-o", "./d/sprite", "--ratio", "1,2,3", "--cache-dir", cache)
        #expect(all.stderr.contains(", 0 rendered, 12 from cache"), "\(all.stderr)")
    }

    /// A rebuild of unchanged icons reads its composed sheets from the cache: the same bytes as
    /// a build without the cache, a damaged archive is composed again, and another option (here
    /// the padding) is never served the old layout.
    @Test func composedSheetsComeFromTheCache() throws {
        let cache = directory.appendingPathComponent("cache").path
        /// Builds with `--json` and says whether the sheets came from the cache.
        func build(_ out: String, _ extra: String...) throws -> Bool? {
            let result = InProcess.iconr(["sprite", "./icons", "-o", "./" + out, "--json"] + extra, in: directory)
            guard result.status == 0 else { return nil }
            return (try JSONSerialization.jsonObject(with: result.output) as? [String: Any])?["sheetsFromCache"]
                as? Bool
        }
        #expect(try build("fresh/", "--no-cache") == false)
        #expect(try build("first/", "--cache-dir", cache) == false)
        let archives = directory.appendingPathComponent("cache/entries-v1/sheets")
        // The folder holds the build's record too (see the next test): the archive is the other file.
        func archiveNames() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: archives.path).filter {
                try Data(contentsOf: archives.appendingPathComponent($0)).starts(with: Data("iconr sheets".utf8))
            }
        }
        let archive = try #require(try archiveNames().first)
        #expect(try build("warm/", "--cache-dir", cache) == true)
        #expect(try contents("warm") == contents("fresh"))
        var damaged = try Data(contentsOf: archives.appendingPathComponent(archive))
        damaged[damaged.count - 10] ^= 0xFF
        try damaged.write(to: archives.appendingPathComponent(archive))
        #expect(try build("again/", "--cache-dir", cache) == false, "a damaged archive is composed again")
        #expect(try contents("again") == contents("fresh"))
        #expect(try build("padded/", "--padding", "3", "--cache-dir", cache) == false)
        #expect(try build("padded-fresh/", "--padding", "3", "--no-cache") == false)
        #expect(try contents("padded") == contents("padded-fresh"))
        #expect(try contents("padded") != contents("fresh"))
        // The padded build's archive planted under the plain build's name is not served.
        let padded = try #require(try archiveNames().first { $0 != archive })
        try FileManager.default.removeItem(at: archives.appendingPathComponent(archive))
        try FileManager.default.copyItem(
            at: archives.appendingPathComponent(padded), to: archives.appendingPathComponent(archive))
        #expect(try build("planted/", "--cache-dir", cache) == false)
        #expect(try contents("planted") == contents("fresh"))
    }

    /// A rebuild whose files are all as they were is served the recorded build whole (nothing
    /// parsed, decoded or composed); an edit that keeps the file's size, a new sidecar, another
    /// option or a damaged record is built again, and every output equals a build without cache.
    @Test func unchangedFilesAreServedTheirRecordedBuild() throws {
        let cache = directory.appendingPathComponent("cache").path
        /// Builds with `--json`: whether the build was its record, its warnings, and how many
        /// icons it took from the last build.
        func build(
            _ out: String, _ extra: String...
        ) throws -> (
            unchanged: Bool?, warnings: [String], reused: Int?
        ) {
            let result = InProcess.iconr(["sprite", "./icons", "-o", "./" + out, "--json"] + extra, in: directory)
            let json = try? JSONSerialization.jsonObject(with: result.output) as? [String: Any]
            return (
                json?["inputsUnchanged"] as? Bool, json?["warnings"] as? [String] ?? [], json?["iconsReused"] as? Int
            )
        }
        // A warning (an unknown sidecar key) is served with the record, as the build gave it.
        try Data(#"{"colour": 1}"#.utf8).write(to: directory.appendingPathComponent("icons/badge.json"))
        let fresh = try build("fresh/", "--no-cache")
        #expect(fresh.unchanged == false && fresh.warnings.count == 1, "\(fresh.warnings)")
        // Without a cache no stamp is trusted: `filesRead` counts the 4 icons and the sidecar.
        let uncached = iconr("sprite", "./icons", "-o", "./uncached/", "--json", "--no-cache")
        let summary = try JSONSerialization.jsonObject(with: uncached.output) as? [String: Any]
        #expect(summary?["filesRead"] as? Int == 5, "\(summary ?? [:])")
        #expect(try build("first/", "--cache-dir", cache).unchanged == false)
        let warm = try build("warm/", "--cache-dir", cache)
        #expect(warm.unchanged == true && warm.warnings == fresh.warnings)
        #expect(try contents("warm") == contents("fresh"))

        // The same size, another color of the pole: the record's key is of the bytes, not of
        // the file's size or time.
        let flag = directory.appendingPathComponent("icons/flag.svg")
        let original = try Data(contentsOf: flag)
        let text = String(decoding: original, as: UTF8.self)
        #expect(text.contains("#5a5a5a"))
        let edited = text.replacingOccurrences(of: "#5a5a5a", with: "#a05a5a")
        #expect(edited.utf8.count == original.count)
        try Data(edited.utf8).write(to: flag)
        // The other three icons are taken from the last build, the flag drawn into its sheets.
        let editedBuild = try build("edited/", "--cache-dir", cache)
        #expect(editedBuild.unchanged == false && editedBuild.reused == 3)
        #expect(try build("edited-fresh/", "--no-cache").unchanged == false)
        #expect(try contents("edited") == contents("edited-fresh"))
        #expect(try contents("edited") != contents("fresh"))
        try original.write(to: flag)
        #expect(try build("back/", "--cache-dir", cache).unchanged == true, "the first record again")
        #expect(try contents("back") == contents("fresh"))

        // A sidecar that appears is an input.
        try Data(#"{"sdf": true}"#.utf8).write(to: directory.appendingPathComponent("icons/marker.json"))
        #expect(try build("sidecar/", "--cache-dir", cache).unchanged == false)
        #expect(try build("sidecar-fresh/", "--no-cache").unchanged == false)
        #expect(try contents("sidecar") == contents("sidecar-fresh"))
        try FileManager.default.removeItem(at: directory.appendingPathComponent("icons/marker.json"))

        // Another option is another build.
        #expect(try build("padded/", "--padding", "3", "--cache-dir", cache).unchanged == false)
        #expect(try build("padded-fresh/", "--padding", "3", "--no-cache").unchanged == false)
        #expect(try contents("padded") == contents("padded-fresh"))

        // A damaged record is not served: the build goes on as without it.
        let sheets = directory.appendingPathComponent("cache/entries-v1/sheets")
        var damaged = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: sheets.path) {
            var bytes = try Data(contentsOf: sheets.appendingPathComponent(name))
            guard bytes.starts(with: Data("iconr build".utf8)) else { continue }
            bytes[bytes.count - 3] ^= 0x01
            try bytes.write(to: sheets.appendingPathComponent(name))
            damaged += 1
        }
        // A damage that reached no record would prove nothing.
        #expect(damaged > 0, "no build record was found to damage")
        #expect(try build("damaged/", "--cache-dir", cache).unchanged == false)
        #expect(try contents("damaged") == contents("fresh"))
    }

    @Test func helpSpriteIsSpriteHelp() throws {
        let help = InProcess.iconr(["help", "sprite"])
        let direct = InProcess.iconr(["sprite", "--help"])
        #expect(help.status == 0 && help.stdout == direct.stdout)
        #expect(help.stdout.contains("--retina") && help.stdout.contains("--sdf-all") && help.stdout.contains("--json"))
    }
}

extension Array {
    /// The elements `count` times over.
    func repeated(_ count: Int) -> [Element] { (0..<count).flatMap { _ in self } }
}
