import Foundation
import IconrCore
import IconrRender
import IconrTestSupport
import Testing

/// `iconr sprite` end to end (with a Maki icon among the bundled ones).
@Suite(.enabled(if: TestSupport.corporaAvailable, Comment(rawValue: TestSupport.corporaMissing)))
struct SpriteCommandTests {
    let directory: URL
    /// Removed with the test.
    private let scratch: TemporaryFolder

    init() throws {
        scratch = try TemporaryFolder("iconr-sprite")
        directory = scratch.url
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("icons/more"), withIntermediateDirectories: true)
        try TestSupport.copyBundledIcons(to: directory.appendingPathComponent("icons"))
        try FileManager.default.copyItem(
            at: TestSupport.corpora.appendingPathComponent("maki/airport.svg"),
            to: directory.appendingPathComponent("icons/more/airport.svg"))
    }

    @discardableResult
    private func iconr(_ arguments: String...) throws -> IconrRun {
        try TestSupport.iconr(arguments, in: directory)
    }

    private func data(_ path: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(path))
    }

    private func index(_ path: String) throws -> [String: [String: Any]] {
        try JSONSerialization.jsonObject(with: data(path)) as! [String: [String: Any]]
    }

    private func image(_ sheet: String, _ entry: [String: Any]) throws -> RasterImage {
        try PNGDecoder.decode([UInt8](data(sheet))).cropped(to: entry)
    }

    @Test func buildsASheetPerRatioWithTheRenderedPixels() throws {
        let result = try iconr("sprite", "icons", "-o", "out/sprite", "--no-cache")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "out/sprite.png\nout/sprite.json\nout/sprite@2x.png\nout/sprite@2x.json\n")
        // Subfolders are read by default: more/airport too.
        #expect(result.stderr.hasPrefix("sprite: 5 icons, 0 variants, 1 sheet x 2 ratios"), "\(result.stderr)")
        for (suffix, ratio) in [("", 1), ("@2x", 2)] {
            let entries = try index("out/sprite\(suffix).json")
            #expect(entries.keys.sorted() == ["badge", "flag", "label", "marker", "more/airport"])
            let flag = try #require(entries["flag"])
            #expect(flag["pixelRatio"] as? Int == ratio && flag["width"] as? Int == 24 * ratio)
            // The sheet holds exactly what `iconr render` draws.
            _ = try iconr("render", "icons/flag.svg", "-s", "\(ratio)", "-o", "flag\(ratio).png", "--no-cache")
            #expect(try image("out/sprite\(suffix).png", flag) == PNGDecoder.decode([UInt8](data("flag\(ratio).png"))))
        }
        let label = try #require(try index("out/sprite@2x.json")["label"])
        #expect(label["stretchX"] as? [[Double]] == [[16, 64]] && label["stretchY"] as? [[Double]] == [[16, 32]])
        #expect(label["content"] as? [Double] == [12, 10, 68, 38])
    }

    @Test func variantsRecursiveIdsAndFractionalRatios() throws {
        try Data(
            """
            {"flag": [{"params": {"flag_color": "red"}}, {"id": "flag-selected", "params": {"flag_color": "#800080"}},
                      {"params": {"flag_color": "black"}}],
             "more/airport": [{"params": {}}]}
            """.utf8
        ).write(to: directory.appendingPathComponent("variants.json"))
        let result = try iconr(
            "sprite", "icons", "-o", "out/s", "--variants", "variants.json", "--recursive",
            "--ratio", "1.5", "-r", "3x", "--no-cache")
        #expect(result.status == 0, "\(result.stderr)")
        let entries = try index("out/s@1.5x.json")
        #expect(
            entries.keys.sorted() == [
                "badge", "flag", "flag-selected", "flag?flag_color=ff0000", "label", "marker", "more/airport",
            ])
        #expect(entries["flag"]?["width"] as? Int == 36 && entries["flag"]?["pixelRatio"] as? Double == 1.5)
        #expect(try image("out/s@1.5x.png", entries["flag-selected"]!).hex(x: 20, y: 12) == "#800080ff")
        #expect(try image("out/s@1.5x.png", entries["flag?flag_color=ff0000"]!).hex(x: 20, y: 12) == "#ff0000ff")
        #expect(try index("out/s@3x.json")["more/airport"]?["width"] as? Int == 45)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("out/s.json").path))
    }

    @Test func outputIsByteIdenticalAndASecondRunRendersNothing() throws {
        let cache = directory.appendingPathComponent("cache").path
        let first = try iconr("sprite", "icons", "-o", "a/sprite", "--cache-dir", cache)
        #expect(first.stderr.contains(", 10 rendered, 0 from cache, "), "\(first.stderr)")
        let second = try iconr("sprite", "icons", "-o", "b/sprite", "--cache-dir", cache)
        #expect(second.stderr.contains(", 0 rendered, 10 from cache, "), "\(second.stderr)")
        _ = try iconr("sprite", "icons", "-o", "c/sprite", "--no-cache")
        for file in ["sprite.png", "sprite.json", "sprite@2x.png", "sprite@2x.json"] {
            #expect(try data("a/\(file)") == data("b/\(file)") && data("a/\(file)") == data("c/\(file)"), "\(file)")
        }
    }

    @Test func uniqueStoresIdenticalImagesOnceAndMinifyDropsWhiteSpace() throws {
        try FileManager.default.copyItem(
            at: directory.appendingPathComponent("icons/flag.svg"),
            to: directory.appendingPathComponent("icons/flag-copy.svg"))
        #expect(try iconr("sprite", "icons", "-o", "u/sprite", "--unique", "--minify", "--no-cache").status == 0)
        let entries = try index("u/sprite.json")
        #expect(entries["flag"]?["x"] as? Int == entries["flag-copy"]?["x"] as? Int)
        #expect(entries["flag"]?["y"] as? Int == entries["flag-copy"]?["y"] as? Int)
        let json = String(decoding: try data("u/sprite.json"), as: UTF8.self)
        #expect(!json.contains(" ") && !json.contains("\n"))
        #expect(try iconr("sprite", "icons", "-o", "n/sprite", "--no-cache").status == 0)
        let separate = try index("n/sprite.json")
        #expect(
            separate["flag"]?["x"] as? Int != separate["flag-copy"]?["x"] as? Int
                || separate["flag"]?["y"] as? Int != separate["flag-copy"]?["y"] as? Int)
    }

    @Test func invalidIconsFailTheBuildByNameOrAreSkipped() throws {
        for name in ["empty-region.svg", "bug928-empty-feTile-bounds.svg"] {
            try FileManager.default.copyItem(
                at: TestSupport.corpora.appendingPathComponent("librsvg-2.54-crashers/\(name)"),
                to: directory.appendingPathComponent("icons/\(name)"))
        }
        try Data("<svg xmlns='http://www.w3.org/2000/svg'><g>".utf8).write(
            to: directory.appendingPathComponent("icons/broken.svg"))
        let failed = try iconr("sprite", "icons", "-o", "out/sprite", "--no-cache")
        #expect(failed.status == 1)
        #expect(failed.stderr.contains("error: 3 icons are invalid, no sheets written"))
        #expect(
            failed.stderr.split(separator: "\n").allSatisfy { $0.hasPrefix("error: ") },
            "one error line each: \(failed.stderr)")
        #expect(failed.stderr.contains("icons/empty-region.svg: librsvg crashed on this document (SIGABRT)"))
        #expect(
            failed.stderr.contains("icons/bug928-empty-feTile-bounds.svg: librsvg crashed on this document (SIGABRT)"))
        #expect(failed.stderr.contains("icons/broken.svg: "))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("out").path))
        let skipped = try iconr("sprite", "icons", "-o", "out/sprite", "--no-cache", "--skip-invalid")
        #expect(skipped.status == 0)
        #expect(skipped.stderr.components(separatedBy: "warning: skipped ").count == 4)
        #expect(try index("out/sprite.json").keys.sorted() == ["badge", "flag", "label", "marker", "more/airport"])
    }

    /// The build renders in process in a supervised child: crashes and a render past the
    /// time limit, among many icons rendering in parallel, are each pinned on their icon,
    /// and every other icon still makes it into the sheet, drawn.
    @Test func crashesAndTimeoutsAmongManyIconsArePinnedOnTheirIcons() throws {
        let maki = TestSupport.corpora.appendingPathComponent("maki")
        let names = try FileManager.default.contentsOfDirectory(atPath: maki.path).filter { $0.hasSuffix(".svg") }
            .sorted().prefix(60)
        for name in names {
            try FileManager.default.copyItem(
                at: maki.appendingPathComponent(name), to: directory.appendingPathComponent("icons/\(name)"))
        }
        let crashers = [
            "empty-region.svg", "bug928-empty-feTile-bounds.svg", "bug1064-private-lang-tag-in-lang-selector.svg",
        ]
        for name in crashers + ["bug1062-feTurbulence-limit-numOctaves.svg"] {
            try FileManager.default.copyItem(
                at: TestSupport.corpora.appendingPathComponent("librsvg-2.54-crashers/\(name)"),
                to: directory.appendingPathComponent("icons/\(name)"))
        }
        let result = try iconr(
            "sprite", "icons", "-o", "out/sprite", "--skip-invalid", "--timeout", "1", "--cache-dir", "cache")
        #expect(result.status == 0, "\(result.stderr)")
        let warnings = result.stderr.split(separator: "\n").filter { $0.hasPrefix("warning: ") }.sorted()
        #expect(
            result.stderr.split(separator: "\n").last?.hasPrefix("sprite: 65 icons") == true, "the summary ends stderr")
        #expect(
            warnings
                == (crashers.sorted().map { "warning: skipped icons/\($0): librsvg crashed on this document (SIGABRT)" }
                + [
                    "warning: skipped icons/bug1062-feTurbulence-limit-numOctaves.svg: rendering took longer than the 1 s limit"
                ]).sorted())
        let entries = try index("out/sprite@2x.json")
        #expect(entries.count == names.count + 5, "the bundled icons and more/airport")
        for name in names {
            let id = String(name.dropLast(4))
            guard let entry = entries[id] else {
                Issue.record("\(id) is missing")
                continue
            }
            #expect(
                try image("out/sprite@2x.png", entry).pixels.enumerated().contains {
                    $0.offset % 4 == 3 && $0.element > 0
                },
                "\(id) is blank")
        }
    }

    @Test func tooManyIconsSplitAndAnIconOverTheLimitIsNamed() throws {
        let split = try iconr("sprite", "icons", "-o", "out/sprite", "--max-size", "90", "--no-cache")
        #expect(split.status == 0, "\(split.stderr)")
        #expect(
            split.stderr.contains(
                #""sprite": [{"id":"default","url":"out/sprite"},{"id":"sprite-2","url":"out/sprite-2"}"#),
            "\(split.stderr)")
        let first = try index("out/sprite@2x.json"), second = try index("out/sprite-2@2x.json")
        #expect(Set(first.keys).isDisjoint(with: second.keys))
        // Each sheet a range of names; the summary names the --max-size that needs one sheet.
        #expect(try #require(first.keys.max()) < second.keys.min() ?? "")
        let side = try #require(
            split.stderr.firstRange(of: #/--max-size (\d+) puts them on one/#).map {
                String(split.stderr[$0].split(separator: " ")[1])
            }, "\(split.stderr)")
        let one = try iconr("sprite", "icons", "-o", "one/sprite", "--max-size", side, "--no-cache")
        #expect(one.status == 0 && !one.stderr.contains("sheets"), "\(one.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("one/sprite-2.png").path))
        #expect(try index("out/sprite.json").keys.sorted() == first.keys.sorted())
        let tooLarge = try iconr("sprite", "icons", "-o", "big/sprite", "--max-size", "60", "--no-cache")
        #expect(tooLarge.status == 1)
        #expect(tooLarge.stderr.contains("icons/label.svg: is 80x48 at 2x, larger than the 60 px sheet limit"))
    }

    /// A PNG icon that exists only as `name@2x.png` is checked against the sheet limit at the
    /// size each ratio draws it: at ratio 1 a 64 px file is 32 px, within a 40 px limit.
    @Test func aRetinaOnlyPNGIsCheckedAtTheSizeOfEachRatio() throws {
        let pixels = [UInt8](repeating: 200, count: 64 * 64 * 4)
        let png = try PNGEncoder.encode(RasterImage(size: PixelSize(width: 64, height: 64), pixels: pixels))
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("bitmaps"), withIntermediateDirectories: true)
        try Data(png).write(to: directory.appendingPathComponent("bitmaps/bog@2x.png"))
        let one = try iconr("sprite", "bitmaps", "-o", "one/sprite", "--ratio", "1", "--max-size", "40", "--no-cache")
        #expect(one.status == 0, "\(one.stderr)")
        let entry = try #require(try index("one/sprite.json")["bog"])
        #expect(entry["width"] as? Int == 32)
        // At ratio 2 it is 64 px: over the limit, and named.
        let two = try iconr("sprite", "bitmaps", "-o", "two/sprite", "--ratio", "2", "--max-size", "40", "--no-cache")
        #expect(two.status == 1 && two.stderr.contains("bog@2x.png"), "\(two.stderr)")
    }

    @Test func signedDistanceFields() throws {
        #expect(try iconr("sprite", "icons", "-o", "out/sprite", "--sdf", "badge", "--no-cache").status == 0)
        let badge = try #require(try index("out/sprite@2x.json")["badge"])
        #expect(badge["sdf"] as? Bool == true)
        // 24 px at 2x plus a border of 6 px (times 2) on each side: as far as the field reaches.
        #expect(badge["width"] as? Int == 72)
        let field = try image("out/sprite@2x.png", badge)
        #expect(field[36, 36].alpha == 255 && field[0, 0].alpha == 0)
        // The circle's edge (radius 10.5 at 1x: 21 px at 2x from the centre) is near 191.
        let edge = Int(field[36 + 21, 36].alpha)
        #expect(abs(edge - 191) < 40, "edge \(edge)")
        #expect(try index("out/sprite@2x.json")["flag"]?["sdf"] == nil)
    }

    @Test func spritezeroElementIDsMarkStretchAndContentAreas() throws {
        try Data(
            """
            <svg xmlns="http://www.w3.org/2000/svg" width="30" height="20" viewBox="0 0 30 20">
              <rect x="0.5" y="0.5" width="29" height="19" rx="4" fill="#fff" stroke="#000"/>
              <rect id="mapbox-stretch-x" x="6" y="0" width="18" height="20" fill="none"/>
              <rect id="mapbox-stretch-y-2" x="0" y="5" width="30" height="10" fill="none"/>
              <g transform="translate(2 1)"><rect id="mapbox-content" x="2" y="2" width="22" height="14" fill="none"/></g>
            </svg>
            """.utf8
        ).write(to: directory.appendingPathComponent("icons/more/shield.svg"))
        #expect(try iconr("sprite", "icons/more", "-o", "out/shield", "--no-cache").status == 0)
        let shield = try #require(try index("out/shield@2x.json")["shield"])
        #expect(shield["stretchX"] as? [[Double]] == [[12, 48]] && shield["stretchY"] as? [[Double]] == [[10, 30]])
        #expect(shield["content"] as? [Double] == [8, 6, 52, 34])
        #expect(try index("out/shield.json")["airport"]?["content"] == nil)
    }

    @Test func aStyleAddsTheVariantsItsFeaturesNeed() throws {
        try Data(
            """
            {"version": 8, "sources": {"p": {"type": "geojson", "data": "https://example.org/data/points.geojson"}},
             "layers": [{"id": "s", "type": "symbol", "source": "p", "layout": {
               "icon-image": ["match", ["get", "kind"], "pin", ["image", "marker", {"params": {"fill_color": ["get", "color"]}}], "flag"],
               "icon-size": 1.5}},
               {"id": "t", "type": "symbol", "source": "p", "layout": {"icon-image": "not-an-icon"}}]}
            """.utf8
        ).write(to: directory.appendingPathComponent("style.json"))
        try Data(
            """
            {"type": "FeatureCollection", "features": [
              {"type": "Feature", "geometry": {"type": "Point", "coordinates": [0, 0]}, "properties": {"kind": "pin", "color": "teal"}},
              {"type": "Feature", "geometry": {"type": "Point", "coordinates": [1, 0]}, "properties": {"kind": "pin", "color": "#2a9d8f"}},
              {"type": "Feature", "geometry": {"type": "Point", "coordinates": [2, 0]}, "properties": {"kind": "other"}}]}
            """.utf8
        ).write(to: directory.appendingPathComponent("points.geojson"))
        // Without the data, the build takes the style's literal values and says so.
        let missing = try iconr("sprite", "icons", "--style", "style.json", "-o", "out/without", "--no-cache")
        #expect(missing.status == 0)
        #expect(
            missing.stderr.contains(
                "warning: style.json: source \"p\" loads https://example.org/data/points.geojson at run time"))
        #expect(
            missing.stderr.contains(
                "warning: style.json: layer \"s\": layers[0].layout.icon-image[3][2].params.fill_color comes from feature data"
            ))
        // The literal outputs, at the layer's size: the marker with its default color, and the flag.
        let without = try index("out/without.json")
        #expect(without["marker"]?["pixelRatio"] as? Double == 1.5 && without["flag"]?["pixelRatio"] as? Double == 1.5)
        // --config names a schema option: one the style lacks is an error, a malformed one a usage mistake.
        let unknownOption = try iconr(
            "sprite", "icons", "--style", "style.json", "--config", "theme=night", "-o", "out/c", "--no-cache")
        #expect(
            unknownOption.status == 1
                && unknownOption.stderr
                    == "error: style.json: --config theme: the style's schema has no option \"theme\"\n"
        )
        #expect(
            try iconr("sprite", "icons", "--style", "style.json", "--config", "=x", "-o", "out/c", "--no-cache").status
                == 64)
        let result = try iconr(
            "sprite", "icons", "--style", "style.json", "--data", "points.geojson", "-o", "out/sprite",
            "--emit-style", "out/style.json", "--no-cache")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stderr.contains(
                "warning: style.json: the style shows icon \"not-an-icon\", which is not among the icons"))
        let entries = try index("out/sprite.json")
        #expect(entries["marker?fill_color=008080"]?["pixelRatio"] as? Double == 1.5)
        #expect(entries["marker?fill_color=2a9d8f"]?["width"] as? Int == 30)
        #expect(entries["flag"]?["pixelRatio"] as? Double == 1.5)
        #expect(try index("out/sprite@2x.json")["flag"]?["pixelRatio"] as? Int == 3)
        let style = try JSONSerialization.jsonObject(with: data("out/style.json")) as! [String: Any]
        #expect((style["sprite"] as? String) == "file://" + directory.appendingPathComponent("out/sprite").path)
        let layout = ((style["layers"] as! [[String: Any]])[0]["layout"] as! [String: Any])
        let image = try JSONSerialization.data(
            withJSONObject: layout["icon-image"]!, options: [.sortedKeys, .withoutEscapingSlashes])
        #expect(
            String(decoding: image, as: UTF8.self).contains(
                #""0,128,128,255|122,31,26,255","marker?fill_color=008080""#))
    }

    /// The seed's style selects the red flag at icon-size 2: every flag of the layer is drawn
    /// at 2, so that a tap selecting another is as sharp (the summary says what that costs);
    /// --exact-icon-sizes draws only what the features show.
    @Test func aLayersVariantsAreDrawnAtTheLargestIconSizeItCanReach() throws {
        try FileManager.default.copyItem(
            at: TestSupport.repository.appendingPathComponent("examples/helsinki-flags/style.json"),
            to: directory.appendingPathComponent("style.json"))
        let json = try iconr("sprite", "icons", "--style", "style.json", "-o", "out/sprite", "--json", "--no-cache")
        #expect(json.status == 0, "\(json.stderr)")
        let summary = try #require(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let headroom = try #require(summary["iconSizeHeadroom"] as? [String: Int], "\(summary)")
        // Yellow and purple, 96 x 96 where their features need 48 x 48 at ratio 2.
        #expect(headroom["variants"] == 2 && headroom["extraPixels"] == 2 * (96 * 96 - 48 * 48), "\(headroom)")
        for color in ["ff0000", "ffff00", "800080"] {
            #expect(try index("out/sprite@2x.json")["flag?flag_color=\(color)"]?["pixelRatio"] as? Int == 4)
        }
        let text = try iconr("sprite", "icons", "--style", "style.json", "-o", "out/sprite", "--no-cache")
        #expect(
            text.stderr.contains(
                "sprite: 2 style variants drawn at the largest icon-size their layer can reach, larger than their "
                    + "features show: 13824 more pixels at the largest ratio"), "\(text.stderr)")
        let exact = try iconr(
            "sprite", "icons", "--style", "style.json", "-o", "out/exact", "--exact-icon-sizes", "--no-cache")
        #expect(exact.status == 0 && !exact.stderr.contains("style variant"), "\(exact.stderr)")
        #expect(try index("out/exact@2x.json")["flag?flag_color=ffff00"]?["pixelRatio"] as? Int == 2)
        #expect(try index("out/exact@2x.json")["flag?flag_color=ff0000"]?["pixelRatio"] as? Int == 4)
        #expect(InProcess.iconr(["sprite", "icons", "-o", "out/x", "--exact-icon-sizes"]).status == 64)
    }

    /// A param no icon the layer can show declares is warned of, with the names they declare;
    /// one that some of them declare is meant for those.
    @Test func aStyleParamNoIconDeclaresIsWarnedOf() throws {
        try Data(
            """
            {"version": 8, "sources": {"p": {"type": "geojson", "data": {"type": "FeatureCollection", "features": []}}},
             "layers": [{"id": "typo", "type": "symbol", "source": "p", "layout": {
               "icon-image": ["image", "flag", {"params": {"flag_colour": "red"}}]}},
               {"id": "some", "type": "symbol", "source": "p", "layout": {
               "icon-image": ["image", ["get", "icon"], {"params": {"flag_color": "red", "fill_colr": "blue"}}]}}]}
            """.utf8
        ).write(to: directory.appendingPathComponent("style.json"))
        let run = try iconr("sprite", "icons", "--style", "style.json", "-o", "out/sprite", "--no-cache")
        #expect(run.status == 0)
        let warnings = run.stderr.split(separator: "\n").filter { $0.contains("unknown parameter") }
        #expect(
            warnings == [
                "warning: style.json: layer \"typo\": icon-image: unknown parameter 'flag_colour': icon \"flag\" declares flag_color (did you mean 'flag_color'?); ignored, as Mapbox does",
                "warning: style.json: layer \"some\": icon-image: unknown parameter 'fill_colr': no icon the layer can show declares it (did you mean 'fill_color'?); ignored, as Mapbox does",
            ], "\(run.stderr)")
    }

    /// `--quiet` (spreet's silence, for scripts): nothing on stdout or stderr when all goes
    /// well, the files written all the same; render too.
    @Test func quietBuildsSayNothing() throws {
        let sprite = try iconr("sprite", "icons", "-o", "out/quiet", "--quiet", "--no-cache")
        #expect(
            sprite.status == 0 && sprite.stdout.isEmpty && sprite.stderr.isEmpty, "\(sprite.stdout)\(sprite.stderr)")
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("out/quiet@2x.png").path))
        let render = try iconr("render", "icons/flag.svg", "icons/marker.svg", "-q", "-o", "out/rendered", "--no-cache")
        #expect(render.status == 0 && render.stdout.isEmpty && render.stderr.isEmpty)
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("out/rendered/flag.png").path))
        // Errors still speak.
        let failed = try iconr("sprite", "nowhere", "-o", "out/x", "--quiet")
        #expect(failed.status == 1 && failed.stderr == "error: nowhere: no such folder\n")
    }

    @Test func anInterruptedBuildLeavesAllSheetsOrNone() throws {
        var interrupted = 0
        // From 10 ms (still starting) to 300 ms (a debug build of Maki is about done).
        for delay in [0.01, 0.1, 0.3] {
            let out = directory.appendingPathComponent("interrupted-\(delay)")
            let process = try RunningProgram(
                TestSupport.iconrExecutable,
                [
                    "sprite", TestSupport.corpora.appendingPathComponent("maki").path, "-o", out.path + "/sprite",
                    "--no-cache",
                ])
            Thread.sleep(forTimeInterval: delay)
            process.signal(SIGINT)
            let status = process.wait(timeout: 60)
            #expect(status != nil, "still running 60 s after the interrupt")
            // Done, or interrupted (130); or, when the signal came before the process set up
            // its handlers (a slow start, under ThreadSanitizer), ended by it before any work.
            #expect(
                status == 0 || status == 130 || status == -SIGINT,
                "exit status \(String(describing: status)) after SIGINT at \(delay) s")
            if status == 130 || status == -SIGINT { interrupted += 1 }
            let files = ((try? FileManager.default.contentsOfDirectory(atPath: out.path)) ?? []).sorted()
            #expect(
                files.isEmpty || files == ["sprite.json", "sprite.png", "sprite@2x.json", "sprite@2x.png"], "\(files)")
        }
        // A test whose every build finished before its signal proved nothing about interrupts.
        #expect(interrupted > 0, "no build was interrupted: the signal came after every build")
    }

    @Test func usageMistakes() throws {
        #expect(InProcess.iconr(["sprite", "icons", "-o", "x", "--emit-style", "s.json"]).status == 64)
        #expect(InProcess.iconr(["sprite", "icons", "-o", "x", "--preview", "p.png"]).status == 64)
        #expect(InProcess.iconr(["sprite", "icons"]).status == 64)
        #expect(InProcess.iconr(["sprite", "-o", "x"]).status == 64)
        #expect(InProcess.iconr(["sprite", "icons", "-o", "x", "--ratio", "0"]).status == 64)
        let missing = try iconr("sprite", "nowhere", "-o", "x")
        #expect(missing.status == 1 && missing.stderr == "error: nowhere: no such folder\n")
        let file = try iconr("sprite", "icons/flag.svg", "-o", "x")
        #expect(file.status == 1 && file.stderr == "error: icons/flag.svg: not a folder\n", "\(file.stderr)")
        let variants = try iconr("sprite", "icons", "-o", "x", "--variants", "none.json")
        #expect(variants.status == 1 && variants.stderr == "error: none.json: no such file\n", "\(variants.stderr)")
        // Icons only in subfolders: read by default (as inspect, check and serve do); with
        // --no-recursive the error names the option that leaves them out.
        let nested = directory.appendingPathComponent("nested/shops")
        try FileManager.default.createDirectory(at: nested, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: directory.appendingPathComponent("icons/flag.svg"), to: nested.appendingPathComponent("flag.svg"))
        let top = try iconr("sprite", "nested", "-o", "x", "--no-cache", "--no-recursive")
        #expect(
            top.status == 1
                && top.stderr
                    == "error: no icons (.svg, .svgz, .png) in nested (without --no-recursive, the 1 icon in subfolders are read)\n",
            "\(top.stderr)")
        let all = try iconr("sprite", "nested", "-o", "x", "--no-cache")
        #expect(all.status == 0, "\(all.stderr)")
        let ids = try JSONValue.parse(Array(try Data(contentsOf: directory.appendingPathComponent("x.json"))))
        #expect(ids["shops/flag"] != nil, "\(ids)")
        #expect(try iconr("sprite", "nested", "-o", "x", "--no-cache", "--recursive").status == 0, "spreet's spelling")
        let both = try iconr("sprite", "nested", "-o", "x", "--recursive", "--no-recursive")
        #expect(both.status == 64 && both.stderr.contains("contradict"), "\(both.stderr)")
        // DIR=NAME, as serve's --icons: two folders' icons of one name told apart by the names.
        let twin = directory.appendingPathComponent("twin")
        try FileManager.default.createDirectory(at: twin, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: directory.appendingPathComponent("icons/flag.svg"), to: twin.appendingPathComponent("flag.svg"))
        let clash = try iconr("sprite", "icons", "twin", "-o", "twins", "--no-cache")
        #expect(clash.status == 1 && clash.stderr.contains("two icons have the id \"flag\""), "\(clash.stderr)")
        let named = try iconr("sprite", "icons=base", "twin=extra", "-o", "twins", "--no-cache")
        #expect(named.status == 0, "\(named.stderr)")
        let twins = try JSONValue.parse(Array(try Data(contentsOf: directory.appendingPathComponent("twins.json"))))
        #expect(twins["base/flag"] != nil && twins["extra/flag"] != nil && twins["flag"] == nil, "\(twins)")
        let sameName = try iconr("sprite", "icons=x", "twin=x", "-o", "twins")
        #expect(sameName.status == 64 && sameName.stderr.contains("two folders are named 'x'"), "\(sameName.stderr)")
        let slash = try iconr("sprite", "icons=a/b", "-o", "twins")
        #expect(slash.status == 64 && slash.stderr.contains("invalid folder name 'a/b'"), "\(slash.stderr)")
        // A file whose name is not UTF-8 cannot be an id: it is left out with a warning naming
        // it, its odd byte written \xFF, not dropped unseen.
        let raw = (Array((twin.path + "/f").utf8) + [0xFF] + Array(".svg".utf8)).map { CChar(bitPattern: $0) } + [0]
        let descriptor = open(raw, O_WRONLY | O_CREAT, 0o644)
        try #require(descriptor >= 0)
        close(descriptor)
        let undecodable = try iconr("sprite", "twin", "-o", "odd", "--no-cache")
        #expect(undecodable.status == 0, "\(undecodable.stderr)")
        #expect(
            undecodable.stderr.contains("warning: twin/f\\xFF.svg: its name is not UTF-8: left out (rename it)"),
            "\(undecodable.stderr)")
        // Far more below than at the top: a warning says how many --no-recursive leaves out.
        for name in ["badge", "marker"] {
            try FileManager.default.copyItem(
                at: directory.appendingPathComponent("icons/\(name).svg"),
                to: nested.appendingPathComponent("\(name).svg"))
        }
        try FileManager.default.copyItem(
            at: directory.appendingPathComponent("icons/label.svg"),
            to: directory.appendingPathComponent("nested/label.svg"))
        let few = try iconr("sprite", "nested", "-o", "x", "--no-cache", "--no-recursive")
        #expect(
            few.status == 0
                && few.stderr.contains(
                    "warning: 1 icon read, and 3 more in subfolders: without --no-recursive they are read"),
            "\(few.stderr)")
        // --skip-invalid with every icon invalid: nothing to build is an error, and nothing is written.
        let broken = directory.appendingPathComponent("broken")
        try FileManager.default.createDirectory(at: broken, withIntermediateDirectories: true)
        try Data("<svg".utf8).write(to: broken.appendingPathComponent("a.svg"))
        let none = try iconr("sprite", "broken", "-o", "none/sprite", "--no-cache", "--skip-invalid")
        #expect(
            none.status == 1 && none.stderr.hasSuffix("error: every icon failed (1), so there is nothing to build\n"),
            "\(none.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("none").path))
        try Data("{\"nope\": [{\"params\": {}}]}".utf8).write(to: directory.appendingPathComponent("v.json"))
        let unknown = try iconr("sprite", "icons", "-o", "x", "--variants", "v.json", "--no-cache")
        #expect(
            unknown.status == 1
                && unknown.stderr.contains("the variants name icon \"nope\", which is not among the icons"))
    }

    /// A style MapLibre would reject is never written: an error naming the part, exit 1 and no
    /// file at all; with --lenient the part is removed, with a warning, and the build writes.
    @Test func anEmittedStyleMapLibreWouldRejectIsAnErrorUnlessLenient() throws {
        let style = #"""
            {"version": 8, "sources": {"s": {"type": "geojson", "data": {"type": "FeatureCollection", "features": [
               {"type": "Feature", "geometry": {"type": "Point", "coordinates": [0, 0]}, "properties": {"c": "red"}}]}}},
             "layers": [{"id": "poi", "type": "symbol", "source": "s", "layout": {"icon-image": "flag"},
               "paint": {"icon-color": ["to-color", ["to-hsla", ["get", "c"]]]}}]}
            """#
        try Data(style.utf8).write(to: directory.appendingPathComponent("style.json"))
        let refused = try iconr(
            "sprite", "icons", "-o", "out/sprite", "--style", "style.json", "--emit-style", "out/style.json")
        #expect(refused.status == 1)
        #expect(
            refused.stderr.contains(
                #"error: style.json: the style for MapLibre would not load: layers[0] ("poi").paint.icon-color: "to-hsla" is Mapbox-only"#
            ), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("out").path))
        let lenient = try iconr(
            "sprite", "icons", "-o", "out/sprite", "--style", "style.json", "--emit-style", "out/style.json",
            "--lenient")
        #expect(lenient.status == 0, "\(lenient.stderr)")
        #expect(lenient.stderr.contains("removed it (--lenient)"))
        let written = try JSONValue.parse([UInt8](data("out/style.json")))
        #expect(written["layers"]?.arrayValue?.first?["paint"]?["icon-color"] == nil)
    }

    /// Legal style values the preview cannot place (icon-size 0, a center past the pole, a
    /// huge zoom) draw nothing there: they trapped converting NaN to Int (exit 70). A tiny
    /// size (1e-300, found by `iconr-bench fuzz 2000 3`) draws one pixel: it trapped too.
    @Test(arguments: [
        #""center": [0, 0], "zoom": 2, "size": 0"#, #""center": [0, 100], "zoom": 2, "size": 1"#,
        #""center": [0, 0], "zoom": 1e300, "size": 1"#, #""center": [0, 0], "zoom": 2, "size": 1e-300"#,
    ])
    func thePreviewNeverTrapsOnLegalValues(_ camera: String) throws {
        let parts = camera.components(separatedBy: #", "size": "#)
        let style = #"""
            {"version": 8, \#(parts[0]), "sources": {"s": {"type": "geojson", "data": {"type": "FeatureCollection", "features": [
               {"type": "Feature", "geometry": {"type": "Point", "coordinates": [0, 0]}, "properties": {}}]}}},
             "layers": [{"id": "l", "type": "symbol", "source": "s", "layout": {"icon-image": "flag", "icon-size": \#(parts[1])}}]}
            """#
        try Data(style.utf8).write(to: directory.appendingPathComponent("style.json"))
        let result = try iconr(
            "sprite", "icons", "-o", "out/sprite", "--style", "style.json", "--preview", "out/preview.png", "--no-cache"
        )
        #expect(result.status == 0, "\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("out/preview.png").path))
    }
}
