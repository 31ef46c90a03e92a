import Foundation
import IconrCore
import IconrStyle
import IconrTestSupport
import Testing

/// The whole style document checked as MapLibre GL JS checks it before it loads a style: each
/// fixture is loaded in GL JS (Chromium) and checked by iconr, and both must report the same
/// problems, in the same words; a document GL JS loads must have none.
struct DocumentValidationTests {
    static let source = #""s": {"type": "geojson", "data": {"type": "FeatureCollection", "features": []}}"#
    static let circle = #"{"id": "c", "type": "circle", "source": "s"}"#

    /// A document with `root` members (the sources and a circle layer unless given).
    static func document(_ root: String = "", sources: String? = nil, layers: String? = nil) -> String {
        #"{"version": 8, "sources": {\#(sources ?? source)}, "layers": [\#(layers ?? circle)]\#(root.isEmpty ? "" : ", " + root)}"#
    }

    /// Each fixture: its name, the document, and how many problems GL JS reports (0: it loads).
    static let fixtures: [(name: String, json: String, problems: Int)] = [
        ("valid", document(), 0),
        ("unknown root key", document(#""imports": 1, "foo": {}"#), 0),
        ("ref layer", document(layers: circle + #", {"id": "r", "ref": "c", "paint": {"circle-color": "red"}}"#), 0),
        (
            "sprite array",
            document(
                #""sprite": [{"id": "default", "url": "http://127.0.0.1:9/a"}, {"id": "x", "url": "http://127.0.0.1:9/b"}]"#
            ),
            0
        ),
        ("GeoJSON as a style", #"{"type": "FeatureCollection", "features": []}"#, 3),
        ("empty object", "{}", 3),
        ("version 7", #"{"version": 7, "sources": {\#(source)}, "layers": [\#(circle)]}"#, 1),
        ("duplicate ids", document(layers: circle + ", " + circle), 1),
        ("missing source", document(layers: #"{"id": "c", "type": "circle", "source": "nope"}"#), 1),
        ("layer without id", document(layers: #"{"type": "circle", "source": "s"}"#), 1),
        ("layer without type", document(layers: #"{"id": "c", "source": "s"}"#), 1),
        ("layer without source", document(layers: #"{"id": "c", "type": "circle"}"#), 1),
        ("ref to nothing", document(layers: circle + #", {"id": "r", "ref": "nope"}"#), 1),
        ("ref with its own type", document(layers: circle + #", {"id": "r", "ref": "c", "type": "circle"}"#), 1),
        (
            "vector source without source-layer",
            document(
                sources: #""v": {"type": "vector", "tiles": ["http://127.0.0.1:9/{z}/{x}/{y}.pbf"]}"#,
                layers: #"{"id": "c", "type": "circle", "source": "v"}"#), 1
        ),
        (
            "raster source for a circle layer",
            document(
                sources: #""r": {"type": "raster", "tiles": ["http://127.0.0.1:9/{z}/{x}/{y}.png"]}"#,
                layers: #"{"id": "c", "type": "circle", "source": "r"}"#), 1
        ),
        ("source without type", document(sources: source + #", "t": {"url": "x"}"#), 1),
        ("GeoJSON source without data", document(sources: source + #", "t": {"type": "geojson"}"#), 1),
        ("unknown source key", document(sources: source + #", "t": {"type": "geojson", "data": {}, "tiles": 3}"#), 1),
        ("sprite ids repeated", document(#""sprite": [{"id": "a", "url": "x"}, {"id": "a", "url": "y"}]"#), 1),
        ("sprite entry without url", document(#""sprite": [{"id": "a"}]"#), 1),
        ("sprite a number", document(#""sprite": 3"#), 1),
        ("glyphs without tokens", document(#""glyphs": "http://x/fonts.pbf""#), 2),
        ("light anchor", document(#""light": {"anchor": "nowhere", "intensity": 2}"#), 2),
        ("sky unknown key", document(#""sky": {"sky-colour": "red"}"#), 1),
        ("terrain without source (GL JS lets it pass)", document(#""terrain": {"exaggeration": 2}"#), 0),
        ("terrain exaggeration", document(#""terrain": {"source": "s", "exaggeration": -1}"#), 1),
        ("projection of a number", document(#""projection": {"type": 3}"#), 1),
        ("transition negative", document(#""transition": {"duration": -1}"#), 1),
        ("center not numbers", document(#""center": ["a", 0]"#), 1),
        ("zoom range", document(layers: #"{"id": "c", "type": "circle", "source": "s", "minzoom": 30}"#), 1),
        (
            "text-field without glyphs",
            document(layers: #"{"id": "c", "type": "symbol", "source": "s", "layout": {"text-field": "x"}}"#), 1
        ),
    ]

    /// A temporary folder with `icons/dot.svg`, for a sprite build.
    static func folderWithAnIcon(_ prefix: String) throws -> TemporaryFolder {
        let folder = try TemporaryFolder(prefix)
        try FileManager.default.createDirectory(
            at: folder.url.appendingPathComponent("icons"), withIntermediateDirectories: true)
        try Data(
            #"<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8"/></svg>"#.utf8
        )
        .write(to: folder.url.appendingPathComponent("icons/dot.svg"))
        return folder
    }

    /// GL JS's messages with their keys (`layers[1]: `) taken off, as iconr's `message`s are.
    static func message(_ text: String) -> String {
        var text = text
        if let colon = text.range(of: ": "), !text[..<colon.lowerBound].contains(" ") {
            text = String(text[colon.upperBound...])
        }
        // GL JS names the line of the first use (undefined for a parsed object); iconr its index.
        return text.components(separatedBy: ", previously used at").first ?? text
    }

    @Test func everyFixtureGetsTheProblemsGLJSReports() throws {
        #expect(Self.fixtures.count > 20 && Self.fixtures.contains { $0.problems == 0 })
        let python = try #require(TestSupport.which("python3"), "python3 is needed for the MapLibre tests")
        let folder = try TemporaryFolder("iconr-validation")
        var files: [String] = []
        for (index, fixture) in Self.fixtures.enumerated() {
            let file = folder.url.appendingPathComponent("fixture-\(index).json")
            try Data(fixture.json.utf8).write(to: file)
            files.append(file.path)
        }
        let script = TestSupport.repository.appendingPathComponent("Tests/MapLibre/validate_gljs.py").path
        let result = try TestSupport.run(python, [script] + files, timeout: 300)
        try #require(
            result.status == 0,
            "validate_gljs.py failed (chromium, chromium-driver, pip install selenium maplibre; .ci/install does): \(String(decoding: result.stderr, as: UTF8.self))"
        )
        let reported = try #require(
            try JSONSerialization.jsonObject(with: result.stdout) as? [String: [String]], "validate_gljs.py's JSON")
        for (index, fixture) in Self.fixtures.enumerated() {
            let glJS = (reported[files[index]] ?? ["(not loaded)"]).map(Self.message).sorted()
            let style = try StyleDocument(bytes: Array(fixture.json.utf8), file: "style.json")
            let emitted = style.emitted(sprite: .string("http://127.0.0.1:9/sprite"), templates: [:], needed: [])
            let iconr = emitted.problems.map { Self.message($0.message) }.sorted()
            #expect(glJS.count == fixture.problems, "\(fixture.name): GL JS reported \(glJS)")
            #expect(iconr == glJS, "\(fixture.name): iconr \(emitted.problems.map(\.description)), GL JS \(glJS)")
        }
    }

    /// `style check` and `sprite --emit-style` report the same problems by their JSON paths;
    /// `--lenient` removes what no other part depends on (a layer, a root key) and still fails
    /// on what the document needs (its version, a source).
    @Test func styleCheckAndEmitStyleReportTheSameAndLenientKeepsTheDocumentWhole() throws {
        let folder = try Self.folderWithAnIcon("iconr-validation-cli")
        let removable = Self.document(
            #""light": {"anchor": "nowhere"}"#,
            layers: Self.circle + ", " + Self.circle + #", {"id": "x", "type": "circle", "source": "nope"}"#)
        let broken = removable.replacingOccurrences(of: #""version": 8"#, with: #""version": 7"#)
        for (name, json) in [("removable", removable), ("broken", broken)] {
            try Data(json.utf8).write(to: folder.url.appendingPathComponent(name + ".json"))
        }
        let check = try TestSupport.iconr(["style", "check", "removable.json"], in: folder.url)
        let emit = try TestSupport.iconr(
            [
                "sprite", "icons", "-o", "out/", "--style", "removable.json", "--emit-style", "out/style.json",
                "--no-cache",
            ],
            in: folder.url)
        #expect(check.status == 1 && emit.status == 1)
        let paths = [
            #"light.anchor: expected one of [map, viewport], "nowhere" found"#,
            #"layers[1] ("c").id: duplicate layer id "c", previously used at layers[0]"#,
            #"layers[2] ("x").source: source "nope" not found"#,
        ]
        for path in paths {
            #expect(check.stderr.contains(path), "style check: \(check.stderr)")
            #expect(emit.stderr.contains(path), "--emit-style: \(emit.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("out/style.json").path))
        let lenient = try TestSupport.iconr(
            [
                "sprite", "icons", "-o", "out/", "--style", "removable.json", "--emit-style", "out/style.json",
                "--lenient", "--no-cache",
            ], in: folder.url)
        #expect(lenient.status == 0, "\(lenient.stderr)")
        let written = try JSONValue.parse(
            [UInt8](try Data(contentsOf: folder.url.appendingPathComponent("out/style.json"))))
        #expect(written["layers"]?.arrayValue?.count == 1 && written["light"] == nil)
        #expect(StyleDocument.mapLibreProblems(in: written).isEmpty)
        let stillBroken = try TestSupport.iconr(
            [
                "sprite", "icons", "-o", "out2/", "--style", "broken.json", "--emit-style", "out2/style.json",
                "--lenient", "--no-cache",
            ], in: folder.url)
        #expect(stillBroken.status == 1)
        #expect(stillBroken.stderr.contains("version: expected one of [8], 7 found"), "\(stillBroken.stderr)")
        #expect(!stillBroken.stderr.contains("--lenient removes these parts"))
    }

    /// `--merge-sprites` reads the style's own sprites from local files only: a remote one is
    /// an error naming it, and nothing is written.
    @Test func mergingARemoteSpriteIsAnErrorNamingIt() throws {
        let folder = try Self.folderWithAnIcon("iconr-merge-remote")
        try Data(Self.document(#""sprite": [{"id": "extra", "url": "https://example.com/sprite"}]"#).utf8).write(
            to: folder.url.appendingPathComponent("style.json"))
        let run = try TestSupport.iconr(
            [
                "sprite", "icons", "-o", "out/", "--style", "style.json", "--emit-style", "out/style.json",
                "--merge-sprites", "--no-cache",
            ], in: folder.url)
        #expect(run.status == 1)
        #expect(
            run.stderr.contains(
                #"sprite "extra" is at https://example.com/sprite: --merge-sprites reads local sprites only"#),
            "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("out/style.json").path))
    }
}
