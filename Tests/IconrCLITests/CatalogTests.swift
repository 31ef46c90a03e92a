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
        let build = try TestSupport.iconr(
            [
                "sprite", "icons", "-o", "out/", "--sdf", "label", "--style", "style.json", "--catalog",
                "out/catalog.html",
                "--no-cache",
            ], in: directory)
        try #require(build.status == 0, "\(build.stderr)")
        let html = try String(contentsOf: directory.appendingPathComponent("out/catalog.html"), encoding: .utf8)
        #expect(!html.contains("src=\"http") && !html.contains("<link rel=\"stylesheet"), "one file, nothing fetched")
        #expect(html.contains("flag?flag_color=ff8000"), "the style's variant is on the page")
        let screenshot = directory.appendingPathComponent("catalog.png")
        let seen = try look(
            [
                "file": directory.appendingPathComponent("out/catalog.html").path, "search": "fla",
                "screenshot": screenshot.path,
            ])
        #expect(seen["cards"] as? Int == 4, "\(seen)")
        #expect(seen["afterSearch"] as? Int == 1, "\(seen)")
        #expect(seen["redrawable"] as? Int == 0, "a static page redraws nothing")
        #expect((seen["errors"] as? [String]) == [], "\(seen)")
        let picture = try PNGDecoder.decode([UInt8](Data(contentsOf: screenshot)))
        #expect(picture.size.width >= 800, "a screenshot was taken")
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
}
