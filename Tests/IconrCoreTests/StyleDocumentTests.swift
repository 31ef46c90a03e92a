import Foundation
import Testing
@testable import IconrCore

struct StyleDocumentTests {
    static let helsinki = """
        {"version": 8, "center": [24.6881, 60.185755], "zoom": 16,
         "sources": {"points": {"type": "geojson", "data": {"type": "FeatureCollection", "features": [
           {"type": "Feature", "geometry": {"type": "Point", "coordinates": [24.68727, 60.185755]}, "properties": {"id": "flag-red", "flagColor": "red"}},
           {"type": "Feature", "geometry": {"type": "Point", "coordinates": [24.68827, 60.186255]}, "properties": {"id": "flag-yellow", "flagColor": "yellow"}},
           {"type": "Feature", "geometry": {"type": "Point", "coordinates": [24.68927, 60.186055]}, "properties": {"id": "flag-purple", "flagColor": "#800080"}},
           {"type": "Feature", "geometry": {"type": "Point", "coordinates": [24.69, 60.186]}, "properties": {"id": "bad", "flagColor": "not a color"}}]}}},
         "layers": [{"id": "bg", "type": "background"},
           {"id": "points", "type": "symbol", "source": "points", "layout": {
             "icon-image": ["image", "flag", {"params": {"flag_color": ["get", "flagColor"]}}],
             "icon-size": ["case", ["==", ["get", "id"], "flag-red"], 2.0, 1.0]}},
           {"id": "plain", "type": "symbol", "source": "points", "layout": {"icon-image": "marker"}}]}
        """

    static let flagTemplate = try! SVGTemplate(bytes: Array("""
        <svg xmlns="http://www.w3.org/2000/svg" xmlns:m="https://www.mapbox.com" width="4" height="4">
          <m:metadata><m:parameters><m:parameter m:name="flag_color" m:type="color" m:value="#000000"/></m:parameters></m:metadata>
        </svg>
        """.utf8))

    @Test func findsTheVariantsAndScalesTheFeaturesNeed() throws {
        let style = try StyleDocument(bytes: Array(Self.helsinki.utf8), file: "style.json")
        #expect(style.layers.map(\.id) == ["points", "plain"])
        let needed = style.neededIcons()
        let described = needed.map { "\($0.image.name) \($0.image.params.mapValues(\.hexString)) \($0.scale)" }
        #expect(described == [
            // The feature whose color is no color shows the default.
            "flag [:] 2.0",
            "flag [\"flag_color\": \"#800080\"] 2.0",
            "flag [\"flag_color\": \"#ff0000\"] 2.0",
            "flag [\"flag_color\": \"#ffff00\"] 2.0",
            "marker [:] 1.0",
        ])
    }

    @Test func emitsAStyleWithPrebakedVariants() throws {
        let style = try StyleDocument(bytes: Array(Self.helsinki.utf8), file: "style.json")
        let emitted = style.emitted(spriteURL: "file:///out/sprite", templates: ["flag": Self.flagTemplate],
                                    needed: style.neededIcons().map(\.image))
        #expect(emitted["sprite"] == .string("file:///out/sprite"))
        let image = emitted["layers"]?.arrayValue?[1]["layout"]?["icon-image"]
        // Branches in a stable order: by icon, then by parameter colors.
        let expected = ##"["match",["concat",["to-string",["to-color",["get","flagColor"],"#000000"]]],"##
            + ##""rgba(0,0,0,1)","flag","rgba(128,0,128,1)","flag?flag_color=800080","rgba(255,0,0,1)","flag?flag_color=ff0000","##
            + ##""rgba(255,255,0,1)","flag?flag_color=ffff00","flag"]"##
        #expect(image?.serialized == expected)
        // Other layers and properties are kept.
        #expect(emitted["layers"]?.arrayValue?[2]["layout"]?["icon-image"] == .string("marker"))
        #expect(emitted["layers"]?.arrayValue?[1]["layout"]?["icon-size"] == style.json["layers"]?.arrayValue?[1]["layout"]?["icon-size"])
    }

    @Test func errorsNameTheFileAndThePlace() {
        let bad = Self.helsinki.replacingOccurrences(of: #"["get", "flagColor"]"#, with: #"["fetch", "flagColor"]"#)
        #expect(performing: { try StyleDocument(bytes: Array(bad.utf8), file: "style.json") }, throws: {
            "\($0)" == "style.json: layers[1].layout.icon-image[2].params.flag_color: unknown expression operator \"fetch\""
        })
        let literal = Self.helsinki.replacingOccurrences(of: #"["get", "flagColor"]"#, with: #""blurple""#)
        #expect(performing: { try StyleDocument(bytes: Array(literal.utf8), file: "style.json") }, throws: {
            "\($0)".hasSuffix("Could not parse color from value 'blurple'")
        })
        let remote = #"{"version": 8, "sources": {"p": {"type": "geojson", "data": "https://example.org/points.geojson"}}, "layers": []}"#
        #expect(performing: { try StyleDocument(bytes: Array(remote.utf8), file: "s.json") }, throws: {
            "\($0)" == "s.json: source \"p\" loads https://example.org/points.geojson: give it with --data points.geojson"
        })
        let given = try? StyleDocument(bytes: Array(remote.utf8), file: "s.json",
                                       data: ["points.geojson": .object(["type": .string("FeatureCollection"), "features": .array([])])])
        #expect(given?.features["p"]?.isEmpty == true)
    }
}
