import Foundation
import Iconr
import IconrTestSupport
import Testing

/// A renderer asks the library for the icon a style layer shows for a feature.
struct StyleIconTests {
    private func layer(_ layout: String) throws -> StyleLayer {
        let style = #"{"version": 8, "sources": {}, "layers": [{"id": "l", "type": "symbol", "layout": "# + layout + "}]}"
        return try #require(try StyleDocument(bytes: Array(style.utf8), file: "style.json").layers.first)
    }

    @Test func featuresGetTheirVariantAtIconSizeTimesPixelRatio() throws {
        let library = IconLibrary(directory: TestSupport.icons.path)
        let points = try layer(#"{"icon-image": ["image", "flag", {"params": {"flag_color": ["get", "flagColor"]}}], "#
            + #""icon-size": ["case", ["==", ["get", "id"], "flag-red"], 2.0, 1.0]}"#)
        let selected = try #require(try library.icon(for: ["id": .string("flag-red"), "flagColor": .string("red")], layer: points, pixelRatio: 2))
        #expect(selected.key.description == "flag?flag_color=#ff0000@4x" && selected.size == PixelSize(width: 96, height: 96))
        // Every feature of the layer rasterizes at the largest icon-size it can reach.
        let other = try #require(try library.icon(for: ["id": .string("flag-yellow"), "flagColor": .string("yellow")], layer: points, pixelRatio: 1))
        #expect(other.key.description == "flag?flag_color=#ffff00@2x")
        // A color from data that is no color leaves the default.
        let invalid = try #require(try library.icon(for: ["flagColor": .string("nope")], layer: points, pixelRatio: 1))
        #expect(invalid.key.description == "flag@2x")
        #expect(invalid.icon.image.hex(x: 26, y: 16) == "#000000ff")
    }

    @Test func legacyTokensFallbacksAndNoIcon() throws {
        let library = IconLibrary(directory: TestSupport.icons.path)
        let tokens = try layer(#"{"icon-image": "{kind}"}"#)
        #expect(try library.icon(for: ["kind": .string("marker")], layer: tokens, pixelRatio: 1)?.key.description == "marker@1x")
        #expect(try library.icon(for: [:], layer: tokens, pixelRatio: 1) == nil)
        let fallback = try layer(#"{"icon-image": ["image", "missing-icon", "badge"]}"#)
        #expect(try library.icon(for: [:], layer: fallback, pixelRatio: 1)?.key.name == "badge")
    }
}
