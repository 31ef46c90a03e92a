import Foundation
import IconrCore
import IconrRender
import IconrTestSupport
import Testing

/// The catalog page, in headless Chromium (`Tests/MapLibre/catalog_chromium.py`): written by
/// `iconr sprite --catalog` as one file, and served by `iconr serve` at `/catalog` (and `/`
/// for a browser), where a parameter's color input redraws its icon through the server.
struct CatalogTests {
    let directory: URL
    private let scratch: TemporaryFolder

    init() throws {
        scratch = try TestSupport.folderWithBundledIcons("iconr-catalog")
        directory = scratch.url
    }

    /// Runs the page script with `request` and returns what it saw.
    private func look(_ request: [String: Any]) throws -> [String: Any] {
        let python = try #require(TestSupport.which("python3"), "python3 is needed for the Chromium tests")
        let file = directory.appendingPathComponent("request-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: request).write(to: file)
        let script = TestSupport.repository.appendingPathComponent("Tests/MapLibre/catalog_chromium.py").path
        let run = try TestSupport.run(python, [script, file.path], timeout: 120)
        try #require(
            run.status == 0,
            "catalog_chromium.py failed (chromium, chromium-driver, pip install selenium; .ci/install does): \(String(decoding: run.stderr, as: UTF8.self))"
        )
        return try #require(try JSONSerialization.jsonObject(with: run.stdout) as? [String: Any])
    }

    @Test func aBuiltSpritesCatalogIsOneFileThatLoadsAndSearches() throws {
        // A style's variants go under their icon.
        let style = #"""
            {"version": 8, "sources": {"p": {"type": "geojson", "data": {"type": "FeatureCollection", "features": []}}},
             "layers": [{"id": "f", "type": "symbol", "source": "p", "layout": {"icon-image": ["image", "flag", {"params": {"flag_color": "#ff8000"}}]}}]}
            """#
        try Data(style.utf8).write(to: directory.appendingPathComponent("style.json"))
        try Data(##"{"name": "white", "paint": "#ffffff"}"##.utf8).write(
            to: directory.appendingPathComponent("white.json"))
        let build = try TestSupport.iconr(
            [
                "sprite", "icons", "-o", "out/", "--sdf", "label", "--style", "style.json", "--catalog",
                "pages/catalog.html", "--theme", "white.json",
                "--no-cache",
            ], in: directory)
        try #require(build.status == 0, "\(build.stderr)")
        let html = try String(contentsOf: directory.appendingPathComponent("pages/catalog.html"), encoding: .utf8)
        #expect(!html.contains("src=\"http") && !html.contains("<link rel=\"stylesheet"), "nothing fetched from afar")
        #expect(html.contains("\"../out/sprite@2x.png\""), "the sheets by their paths from the page")
        #expect(html.contains("flag?flag_color=ff8000"), "the style's variant is on the page")
        // The theme's page shows its white icons on dark.
        let themed = try look(["file": directory.appendingPathComponent("pages/catalog-white.html").path])
        #expect(themed["backdrops"] as? [String] == ["dark"], "\(themed)")
        #expect(themed["sheetsLoaded"] as? Int == themed["sheets"] as? Int, "\(themed)")
        #expect((themed["errors"] as? [String]) == [], "\(themed)")
        let screenshot = directory.appendingPathComponent("catalog.png")
        let seen = try look(
            [
                "file": directory.appendingPathComponent("pages/catalog.html").path, "search": "fla",
                "screenshot": screenshot.path,
            ])
        #expect(seen["cards"] as? Int == 4, "\(seen)")
        #expect(seen["backdrops"] as? [String] == ["light"], "\(seen)")
        // Both ratios' sheets, each fetched and loaded.
        #expect(seen["sheets"] as? Int == 2 && seen["sheetsLoaded"] as? Int == 2, "\(seen)")
        #expect(seen["afterSearch"] as? Int == 1, "\(seen)")
        #expect(seen["redrawable"] as? Int == 0, "a static page redraws nothing")
        #expect((seen["errors"] as? [String]) == [], "\(seen)")
        let picture = try PNGDecoder.decode([UInt8](Data(contentsOf: screenshot)))
        #expect(picture.size.width >= 800, "a screenshot was taken")
    }

    /// Icons named like the properties every JavaScript object has (`valueOf?x`, whose base
    /// is `valueOf`; `constructor`; `__proto__`) are cards like any other: none stops the page.
    @Test func iconsNamedLikeObjectPropertiesAreCards() throws {
        let names = ["valueOf?x", "constructor", "__proto__", "toString?y"]
        let flag = try Data(contentsOf: directory.appendingPathComponent("icons/flag.svg"))
        let odd = directory.appendingPathComponent("odd")
        try FileManager.default.createDirectory(at: odd, withIntermediateDirectories: true)
        for name in names { try flag.write(to: odd.appendingPathComponent(name + ".svg")) }
        let build = try TestSupport.iconr(
            ["sprite", "odd", "-o", "out/", "--catalog", "pages/odd.html", "--no-cache"], in: directory)
        try #require(build.status == 0, "\(build.stderr)")
        let seen = try look(["file": directory.appendingPathComponent("pages/odd.html").path])
        #expect(seen["cards"] as? Int == names.count, "\(seen)")
        #expect((seen["errors"] as? [String]) == [], "\(seen)")
    }

    @Test func theServedCatalogRedrawsAnIconWhenItsColorChanges() throws {
        let server = try ServerProcess(["--icons", "icons=bundled", "--no-cache"], directory: directory)
        let seen = try look(["url": server.url + "/catalog", "search": "marker", "color": "#00c000"])
        #expect(seen["cards"] as? Int == 4, "\(seen)")
        #expect(seen["afterSearch"] as? Int == 1, "\(seen)")
        #expect((seen["redrawable"] as? Int ?? 0) > 0)
        #expect(seen["pixelsChanged"] as? Bool == true, "\(seen)")
        #expect((seen["redrawnFrom"] as? String)?.contains("/icons/bundled:") == true, "\(seen)")
        #expect((seen["errors"] as? [String]) == [], "\(seen)")
        // A browser asking for / gets the page; other clients the routes as JSON.
        let page = try server.get("/", headers: ["Accept": "text/html,application/xhtml+xml"])
        #expect(page.status == 200 && page.headers["content-type"] == "text/html; charset=utf-8")
        let json = try server.get("/")
        #expect(json.headers["content-type"]?.hasPrefix("application/json") == true)
    }

    /// Real sets served with a theme (Maki and openstreetmap-carto's symbols, 2,416 cards):
    /// the page stays small (the images are the sheets, by URL), every sheet loads in
    /// Chromium, and each theme has its section. Its load time is printed, not asserted
    /// (docs/development.md: speed lives in benchmarks).
    @Test(.enabled(if: TestSupport.corporaAvailable, Comment(rawValue: TestSupport.corporaMissing)))
    func realSetsMakeASmallCatalog() throws {
        let maki = TestSupport.corpus("maki").path, carto = TestSupport.corpus("osm-carto-symbols").path
        let dark = TestSupport.repository.appendingPathComponent("examples/themes/dark.json").path
        let server = try ServerProcess(
            ["--icons", maki + "=maki", "--icons", carto + "=carto", "--theme", dark, "--no-cache"],
            directory: directory)
        // The first request builds the four sprites.
        let page = try HTTPConnection(port: server.port, timeout: 600).request("/catalog")
        #expect(page.status == 200)
        #expect(page.body.count < 3 << 20, "\(page.body.count) bytes")
        let seen = try look(["url": server.url + "/catalog", "search": "parking"])
        #expect(seen["cards"] as? Int == 2 * (214 + 994), "\(seen)")
        #expect(
            seen["sections"] as? [String] == [
                "maki (214 icons)", "maki (theme dark) (214 icons)", "carto (994 icons)",
                "carto (theme dark) (994 icons)",
            ])
        #expect(seen["backdrops"] as? [String] == ["light", "dark", "light", "dark"], "\(seen)")
        #expect((seen["sheets"] as? Int ?? 0) >= 8 && seen["sheetsLoaded"] as? Int == seen["sheets"] as? Int, "\(seen)")
        #expect((seen["errors"] as? [String]) == [], "\(seen)")
        print(
            "catalog of Maki and openstreetmap-carto with a theme: \(page.body.count) bytes, loaded in Chromium in \(seen["loadSeconds"] ?? "?") s"
        )
    }
}
