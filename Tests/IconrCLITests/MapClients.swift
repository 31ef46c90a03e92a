import Foundation
import IconrCore
import IconrRender
import IconrTestSupport
import Testing

/// The two real MapLibre clients the tests draw styles in: MapLibre Native (PyPI pymgl,
/// headless on Mesa) and MapLibre GL JS 5 (PyPI maplibre's maplibre-gl.js) in headless
/// Chromium through Selenium. Both read the same style file and sprite files.
enum MapClient: String, CaseIterable, CustomStringConvertible {
    case native = "MapLibre Native"
    case glJS = "MapLibre GL JS"

    var description: String { rawValue }

    private var script: String {
        TestSupport.repository.appendingPathComponent(
            self == .native ? "Tests/MapLibre/render.py" : "Tests/MapLibre/render_gljs.py"
        ).path
    }

    /// Draws `style` (a file under `root`) and returns the map's RGBA pixels at `ratio`.
    func render(
        style: URL, root: URL, ratio: Double, width: Int, height: Int, zoom: Double,
        longitude: Double, latitude: Double, sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) throws -> [UInt8] {
        let request: [String: Any] = [
            "style_file": style.path, "root": root.path, "ratio": ratio, "width": width, "height": height,
            "zoom": zoom, "longitude": longitude, "latitude": latitude,
        ]
        let map = try MapScript.run(
            self == .native ? "render.py" : "render_gljs.py", request, in: root, client: self,
            sourceLocation: sourceLocation)
        try #require(
            map.size == PixelSize(width: Int(Double(width) * ratio), height: Int(Double(height) * ratio)),
            "\(self) drew \(map.size) at \(ratio)x", sourceLocation: sourceLocation)
        return map.pixels
    }
}

/// Runs one of the scripts in Tests/MapLibre with a request file and reads the PNG it writes.
enum MapScript {
    /// Writes `request` into `folder`, runs `Tests/MapLibre/<script> request.json out.png`
    /// (headless: `EGL_PLATFORM=surfaceless` for pymgl), and returns the image; a failure
    /// names the client and how to install it, with what the script said.
    static func run(
        _ script: String, _ request: [String: Any], in folder: URL, client: MapClient,
        sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) throws
        -> RasterImage
    {
        try drawing(script, request, in: folder, client: client, sourceLocation: sourceLocation).map
    }

    /// `run`, with the JSON the script wrote beside the map (`output.png.json`), if any.
    static func drawing(
        _ script: String, _ request: [String: Any], in folder: URL, client: MapClient,
        sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) throws -> (map: RasterImage, sidecar: Any?) {
        let python = try #require(
            TestSupport.which("python3"), "python3 is needed for the MapLibre tests", sourceLocation: sourceLocation)
        let requestFile = folder.appendingPathComponent("request-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: request).write(to: requestFile)
        let output = folder.appendingPathComponent("map-\(UUID().uuidString).png")
        let path = TestSupport.repository.appendingPathComponent("Tests/MapLibre/" + script).path
        let result = try TestSupport.run(
            "/usr/bin/env", ["EGL_PLATFORM=surfaceless", python, path, requestFile.path, output.path], timeout: 180)
        let setup =
            client == .native
            ? "pip install pymgl and the Mesa EGL packages"
            : "install chromium, chromium-driver, and pip install selenium maplibre"
        let failure =
            "\(client) failed (\(setup); .ci/install does): "
            + String(decoding: result.stderr, as: UTF8.self)
            .split(separator: "\n").filter { !$0.contains("WARNING:maplibre") && !$0.contains("shiny") }.joined(
                separator: "\n")
        try #require(result.status == 0, Comment(rawValue: failure), sourceLocation: sourceLocation)
        // MapLibre Native reports a style it rejects, or a layer it drops, on stderr and draws on.
        let logged = String(decoding: result.stderr, as: UTF8.self).split(separator: "\n").filter {
            $0.contains("Error") || $0.contains("[WARNING]")
        }
        #expect(logged.isEmpty, "\(client) logged: \(logged.joined(separator: "; "))", sourceLocation: sourceLocation)
        let sidecar = (try? Data(contentsOf: URL(fileURLWithPath: output.path + ".json"))).flatMap {
            try? JSONSerialization.jsonObject(with: $0)
        }
        return (try PNGDecoder.decode([UInt8](try Data(contentsOf: output))), sidecar)
    }
}
