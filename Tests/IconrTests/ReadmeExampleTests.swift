import Foundation
import Iconr
import IconrRender
import IconrTestSupport
import Testing

// README example begin
func flagIcons(in icons: String) async throws -> [UInt8] {
    let library = IconLibrary(directory: icons, cache: IconCache(memoryLimit: 16 << 20))
    let selected = try await library.icon(named: "flag", params: ["flag_color": "#800080"], scale: 2)
    print(selected.size, selected.pixelRatio)  // 48x48 2.0
    let label = try await library.icon(named: "label", scale: 2)
    print(label.stretchX, label.content!)  // stretch areas and content box, in pixels at 2x
    return try selected.png  // PNG bytes; selected.pixels is straight RGBA
}
// README example end

/// The README's library example compiles (it is the function above) and runs.
struct ReadmeExampleTests {
    @Test func theExampleRuns() async throws {
        let png = try await flagIcons(in: TestSupport.icons.path)
        let image = try PNGDecoder.decode(png)
        #expect(image.size == PixelSize(width: 48, height: 48) && image.hex(x: 26, y: 16) == "#800080ff")
    }

    @Test func theReadmeShowsThisExample() throws {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let begin = try #require(source.range(of: "// README example begin\n"))
        let end = try #require(source.range(of: "// README example end"))
        let example = String(source[begin.upperBound..<end.lowerBound])
        let readme = try String(contentsOf: TestSupport.repository.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains("```swift\nimport Iconr\n\n" + example + "```"))
    }
}
