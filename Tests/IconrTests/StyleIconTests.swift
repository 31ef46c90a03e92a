import Foundation
import Iconr
import IconrStyle
import IconrTestSupport
import Testing

/// A renderer asks the library for the icon a style layer shows for a feature at a zoom.
struct StyleIconTests {
    private func layer(_ layout: String, extra: String = "") throws -> StyleLayer {
        let style =
            #"{"version": 8, "sources": {}, "layers": [{"id": "l", "type": "symbol", "# + extra + #""layout": "#
            + layout + "}]}"
        return try #require(try StyleDocument(bytes: Array(style.utf8), file: "style.json").layers.first)
    }

    private func feature(_ properties: [String: StyleValue]) -> ExpressionFeature {
        ExpressionFeature(properties: properties)
    }

    @Test func featuresGetMapboxsRasterAtIconSizeTimesPixelRatio() throws {
        let library = IconLibrary(directory: TestSupport.icons.path)
        let points = try layer(
            #"{"icon-image": ["image", "flag", {"params": {"flag_color": ["get", "flagColor"]}}], "#
                + #""icon-size": ["case", ["==", ["get", "id"], "flag-red"], 2.0, 1.0]}"#)
        let selected = try #require(
            try library.icon(
                for: feature(["id": .string("flag-red"), "flagColor": .string("red")]),
                layer: points, zoom: 14, pixelRatio: 2))
        #expect(
            selected.key.description == "flag?flag_color=#ff0000@4x"
                && selected.size == PixelSize(width: 96, height: 96))
        // A data-driven size is evaluated per feature, as Mapbox does.
        let other = try #require(
            try library.icon(
                for: feature(["id": .string("flag-yellow"), "flagColor": .string("yellow")]),
                layer: points, zoom: 14, pixelRatio: 1))
        #expect(other.key.description == "flag?flag_color=#ffff00@1x")
        // A color from data that is no color leaves the default.
        let invalid = try #require(
            try library.icon(for: feature(["flagColor": .string("nope")]), layer: points, zoom: 14, pixelRatio: 1))
        #expect(invalid.key.description == "flag@1x")
        #expect(invalid.image.hex(x: 13, y: 8) == "#000000ff")
    }

    /// Styles pass params some of a layer's icons lack on purpose (Mapbox Standard): the
    /// style path ignores them, as Mapbox does, where a name asked for directly is an error.
    @Test func paramsAnIconLacksAreIgnoredInAStyle() throws {
        let library = IconLibrary(directory: TestSupport.icons.path)
        let points = try layer(
            #"{"icon-image": ["image", ["get", "icon"], {"params": {"flag_color": "red", "badge_color": "blue"}}]}"#)
        let flag = try #require(
            try library.icon(for: feature(["icon": .string("flag")]), layer: points, zoom: 14, pixelRatio: 1))
        #expect(flag.key.description == "flag?flag_color=#ff0000@1x")
        let marker = try #require(
            try library.icon(for: feature(["icon": .string("marker")]), layer: points, zoom: 14, pixelRatio: 1))
        #expect(marker.key.description == "marker@1x")
    }

    @Test func zoomCurvesFiltersAndRangesAsMapbox() throws {
        let library = IconLibrary(directory: TestSupport.icons.path)
        let curve = try layer(
            #"{"icon-image": "marker", "icon-size": ["interpolate", ["linear"], ["zoom"], 10, 1, 12, 3]}"#,
            extra: #""minzoom": 10, "maxzoom": 14, "filter": ["==", ["get", "show"], true], "#)
        // Tile zoom 10 is drawn at the value of the stop above it (12: 3), 11.5 likewise.
        #expect(
            try library.icon(for: feature(["show": .boolean(true)]), layer: curve, zoom: 11.5, pixelRatio: 1)?.key
                .description == "marker@3x")
        #expect(try library.icon(for: feature(["show": .boolean(false)]), layer: curve, zoom: 11, pixelRatio: 1) == nil)
        #expect(try library.icon(for: feature(["show": .boolean(true)]), layer: curve, zoom: 9, pixelRatio: 1) == nil)
    }

    @Test func legacyTokensCoalesceAndNoIcon() throws {
        let library = IconLibrary(directory: TestSupport.icons.path)
        let tokens = try layer(#"{"icon-image": "{kind}"}"#)
        #expect(
            try library.icon(for: feature(["kind": .string("marker")]), layer: tokens, zoom: 0, pixelRatio: 1)?.key
                .description == "marker@1x")
        #expect(try library.icon(for: feature([:]), layer: tokens, zoom: 0, pixelRatio: 1) == nil)
        let fallback = try layer(#"{"icon-image": ["coalesce", ["image", "missing-icon"], ["image", "badge"]]}"#)
        #expect(try library.icon(for: feature([:]), layer: fallback, zoom: 0, pixelRatio: 1)?.key.name == "badge")
    }
}
