import Foundation
import Iconr
import IconrRender
import IconrStyle
import IconrTestSupport
import Testing

// Guide example: flags begin
/// The flag in purple at 2x, for a selected feature: PNG bytes.
func purpleFlag(icons: String) async throws -> [UInt8] {
    let library = IconLibrary(directory: icons)
    let flag = try await library.icon(named: "flag", params: ["flag_color": "#800080"], scale: 2)
    return try flag.png
}
// Guide example: flags end

// Guide example: sprite begin
/// A sprite of every icon in `icons` at 1x and 2x, written as MapLibre reads it:
/// `prefix.png`, `prefix.json`, `prefix@2x.png`, `prefix@2x.json`.
func writeSprite(icons: String, to prefix: String) throws -> [String] {
    var options = SpriteOptions()
    options.ratios = [1, 2]
    let builder = SpriteBuilder(options: options, cache: IconCache(), placement: .inProcess)
    return try builder.build(directories: [icons]).write(to: prefix)
}
// Guide example: sprite end

// Guide example: style begin
/// The icon a style's first symbol layer shows for a feature at zoom 16 on a 2x screen:
/// the icon and its colors from the feature's properties, at the layer's icon-size.
func iconForFeature(icons: String, style: [UInt8], properties: [String: StyleValue]) throws -> IconVariant? {
    let document = try StyleDocument(bytes: style, file: "style.json")
    guard let layer = document.layers.first else { return nil }
    let feature = ExpressionFeature(properties: properties)
    return try IconLibrary(directory: icons).icon(for: feature, layer: layer, zoom: 16, pixelRatio: 2)
}
// Guide example: style end

/// docs/library.md's guide: each example is a function above, which the guide shows as it
/// is, and which runs here.
struct LibraryGuideTests {
    @Test func theFlagsExampleRuns() async throws {
        let png = try await purpleFlag(icons: TestSupport.icons.path)
        #expect(try PNGDecoder.decode(png).hex(x: 26, y: 16) == "#800080ff")
    }

    @Test func theSpriteExampleRuns() throws {
        let scratch = try TemporaryFolder("iconr-guide")
        let prefix = scratch.url.appendingPathComponent("sprite").path
        let written = try writeSprite(icons: TestSupport.icons.path, to: prefix)
        #expect(written == [prefix + ".png", prefix + ".json", prefix + "@2x.png", prefix + "@2x.json"])
    }

    @Test func theStyleExampleRuns() throws {
        let style = try Data(
            contentsOf: TestSupport.repository.appendingPathComponent("examples/helsinki-flags/style.json"))
        let flag = try #require(
            try iconForFeature(
                icons: TestSupport.icons.path, style: [UInt8](style),
                properties: ["id": .string("flag-red"), "flagColor": .string("red")]))
        // The selected flag: icon-size 2 at pixel ratio 2.
        #expect(flag.size == PixelSize(width: 96, height: 96) && flag.image.hex(x: 52, y: 32) == "#ff0000ff")
    }

    @Test func theGuideShowsTheseExamples() throws {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let guide = try String(
            contentsOf: TestSupport.repository.appendingPathComponent("docs/library.md"), encoding: .utf8)
        for name in ["flags", "sprite", "style"] {
            let begin = try #require(source.range(of: "// Guide example: \(name) begin\n"))
            let end = try #require(source.range(of: "// Guide example: \(name) end"))
            let example = String(source[begin.upperBound..<end.lowerBound])
            let imports = name == "style" ? "import Iconr\nimport IconrStyle\n\n" : "import Iconr\n\n"
            #expect(guide.contains("```swift\n" + imports + example + "```"), "\(name)")
        }
    }
}
