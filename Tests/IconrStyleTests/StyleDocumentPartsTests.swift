import IconrCore
import Testing

@testable import IconrStyle

/// The parts of a style document beyond its layers' properties that the copy for MapLibre
/// writes out: `ref` layers, sprite arrays and iconsets, Mapbox imports, appearances, and
/// names computed with params.
struct StyleDocumentPartsTests {
    static func style(_ text: String, imports: [String: String] = [:]) throws -> StyleDocument {
        try StyleDocument(
            bytes: Array(text.utf8), file: "style.json", imports: imports.mapValues { Array($0.utf8) })
    }

    static let source = #""s": {"type": "geojson", "data": {"type": "FeatureCollection", "features": []}}"#

    /// A ref layer takes type, source, source-layer, zooms, filter and layout from the layer it
    /// names (the last of that id, as renderers take) and keeps its own paint.
    @Test func refLayersAreWrittenWhole() throws {
        let style = try Self.style(
            #"""
            {"version": 8, "sources": {\#(Self.source)}, "layers": [
              {"id": "road", "type": "line", "source": "s", "minzoom": 5, "filter": ["==", "k", 1], "layout": {"line-cap": "round"}},
              {"id": "road-fill", "ref": "road", "paint": {"line-color": "#fff"}}]}
            """#)
        let layer = try #require(style.json["layers"]?.arrayValue?[1])
        #expect(layer["ref"] == nil && layer["type"] == .string("line") && layer["source"] == .string("s"))
        #expect(layer["minzoom"] == .number(5) && layer["layout"]?["line-cap"] == .string("round"))
        #expect(layer["filter"] != nil && layer["paint"]?["line-color"] == .string("#fff"))
        #expect(style.warnings.contains { $0.containsUTF8("1 ref layer written whole") })
        #expect(style.emitted(sprite: .string("x"), templates: [:], needed: []).problems.isEmpty)
    }

    /// A single sprite URL is replaced by iconr's; an array keeps its entries, iconr's sheets
    /// added under ids none of them has, and only iconr's ids prefixed; a sprite iconset is
    /// one more entry, a source iconset removed with a warning.
    @Test func spriteArraysAreKeptAndIconrsSheetsAdded() throws {
        let layer =
            #""layout": {"icon-image": ["coalesce", ["image", "airport"], ["image", "pin", {"iconset": {"id": "pins"}}], ["image", "flag"]]}"#
        let single = try Self.style(
            #"{"version": 8, "sprite": "http://x/theirs", "sources": {\#(Self.source)}, "layers": [{"id": "l", "type": "symbol", "source": "s", \#(layer)}]}"#
        )
        #expect(
            single.emitted(sprite: .string("http://y/sprite"), templates: [:], needed: []).json["sprite"]
                == .string("http://y/sprite"))
        let array = try Self.style(
            #"""
            {"version": 8, "sprite": [{"id": "default", "url": "http://x/theirs"}, {"id": "sprite", "url": "http://x/other"}],
             "iconsets": {"pins": {"type": "sprite", "url": "http://x/pins"}, "raster": {"type": "source", "source": "r"}},
             "sources": {\#(Self.source)}, "layers": [{"id": "l", "type": "symbol", "source": "s", \#(layer)}]}
            """#)
        let emitted = array.emitted(
            sprite: .array([
                .object(["id": .string("default"), "url": .string("http://y/sprite")]),
                .object(["id": .string("sprite-2"), "url": .string("http://y/sprite-2")]),
            ]), templates: [:], needed: [], sheetOf: ["late": "sprite-2"], firstSheetIDs: ["flag"],
            icons: ["flag", "late"])
        #expect(emitted.problems.isEmpty, "\(emitted.problems)")
        let ids = (emitted.json["sprite"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
        #expect(ids == ["default", "sprite", "sprite-3", "sprite-2", "pins"])
        // iconr's first sheet is "sprite-3" ("sprite" is the style's): "flag" is there. The
        // style's own default sprite may hold "airport": it stays, unprefixed.
        #expect(
            emitted.json["layers"]?.arrayValue?[0]["layout"]?["icon-image"]?.serialized
                == #"["coalesce",["image","airport"],["image","pins:pin"],["image","sprite-3:flag"]]"#)
        #expect(emitted.warnings.contains { $0.containsUTF8(#"removed iconset "raster" of type "source""#) })
        // What the style's own default sprite holds, when iconr could read it, decides coalesce.
        let known = array.emitted(
            sprite: .string("http://y/sprite"), templates: [:], needed: [], firstSheetIDs: ["flag"], icons: ["flag"],
            ownSprites: ["default": ["bus"], "sprite": []])
        #expect(
            known.json["layers"]?.arrayValue?[0]["layout"]?["icon-image"]?.serialized
                == #"["coalesce",["image","pins:pin"],["image","sprite-2:flag"]]"#)
    }

    /// Imports: the imported style's layers below the root's (the root's own in its slots),
    /// its sources renamed where the root has the id, its schema with the import's config;
    /// not given, a warning naming the URL, or an error when every layer came from it.
    @Test func importsAreWrittenInOrNamed() throws {
        let root = #"""
            {"version": 8, "imports": [{"id": "base", "url": "mapbox://styles/x/base", "config": {"tint": "#00ff00"}}],
             "sources": {\#(Self.source)},
             "layers": [{"id": "pins", "type": "symbol", "source": "s", "slot": "middle", "layout": {"icon-image": "x"}},
               {"id": "top", "type": "circle", "source": "s"}]}
            """#
        let base = #"""
            {"version": 8, "schema": {"tint": {"default": "#ff0000"}}, "sources": {\#(Self.source)},
             "layers": [{"id": "land", "type": "background"}, {"id": "middle", "type": "slot"},
               {"id": "top", "type": "circle", "source": "s", "paint": {"circle-color": ["config", "tint"]}}]}
            """#
        let merged = try Self.style(root, imports: ["base": base])
        let layers = merged.json["layers"]?.arrayValue ?? []
        #expect(layers.compactMap { $0["id"]?.stringValue } == ["land", "pins", "base/top", "top"])
        #expect(layers[2]["source"] == .string("base/s") && merged.json["sources"]?["base/s"] != nil)
        #expect(merged.config["tint"] == StyleValue(.string("#00ff00")))
        let emitted = merged.emitted(sprite: .string("x"), templates: [:], needed: [])
        #expect(emitted.problems.isEmpty, "\(emitted.problems)")
        #expect(emitted.json["layers"]?.arrayValue?[2]["paint"]?["circle-color"] == .string("#00ff00"))

        let alone = try Self.style(root)
        #expect(
            alone.warnings.contains(
                #"style.json: imports[0] ("base"): removed the Mapbox import of mapbox://styles/x/base: its layers are not in the copy (--import base=FILE adds them)"#
            ))
        let onlyImported =
            #"{"version": 8, "imports": [{"id": "base", "url": "mapbox://styles/x/base"}], "sources": {}, "layers": []}"#
        let error = try #require(throws: StyleError.self) { try Self.style(onlyImported) }
        #expect(
            error.message.containsUTF8("mapbox://styles/x/base") && error.message.containsUTF8("--import base=FILE"))
        // Inline data is read as the style.
        let inline = try Self.style(
            #"{"version": 8, "imports": [{"id": "base", "url": "u", "data": \#(base)}], "sources": {}, "layers": []}"#)
        #expect(inline.json["layers"]?.arrayValue?.count == 2)
    }

    /// Appearances become `case` on their conditions (a zoom condition a `step` on the zoom);
    /// feature-state in a layout property's condition is left out with a warning.
    @Test func appearancesBecomeConditionsMapLibreReads() throws {
        let style = try Self.style(
            #"""
            {"version": 8, "sources": {\#(Self.source)}, "layers": [{"id": "l", "type": "symbol", "source": "s",
              "layout": {"icon-image": "a"},
              "appearances": [
                {"name": "hover", "condition": ["boolean", ["feature-state", "hover"], false], "properties": {"icon-image": "h", "icon-opacity": 0.5}},
                {"name": "selected", "condition": ["get", "sel"], "properties": {"icon-image": "s", "icon-size": 2}},
                {"name": "far", "condition": ["<", ["zoom"], 3], "properties": {"icon-opacity": 0.8}}]}]}
            """#)
        let layer = try #require(style.json["layers"]?.arrayValue?[0])
        #expect(layer["appearances"] == nil)
        #expect(layer["layout"]?["icon-image"]?.serialized == #"["case",["get","sel"],"s","a"]"#)
        #expect(layer["layout"]?["icon-size"]?.serialized == #"["case",["get","sel"],2,1]"#)
        #expect(
            layer["paint"]?["icon-opacity"]?.serialized
                == #"["step",["zoom"],["case",["boolean",["feature-state","hover"],false],0.5,true,0.8,1],3,["case",["boolean",["feature-state","hover"],false],0.5,1]]"#
        )
        #expect(
            style.warnings.contains {
                $0.containsUTF8(#"appearance "hover": its condition reads feature-state"#)
                    && $0.containsUTF8("icon-image")
            })
        #expect(style.emitted(sprite: .string("x"), templates: [:], needed: []).problems.isEmpty)
    }

    /// A name built with `concat` over branches is enumerated for a source without data, each
    /// name times its params' literal colors.
    @Test func computedNamesAreEnumerated() throws {
        let style = try Self.style(
            #"""
            {"version": 8, "sources": {"v": {"type": "vector", "tiles": ["http://x/{z}/{x}/{y}.pbf"]}}, "layers": [
              {"id": "l", "type": "symbol", "source": "v", "source-layer": "poi", "layout": {"icon-image":
                ["image", ["concat", ["match", ["get", "class"], "food", "cafe", "shop"], "_rating_", ["case", [">", ["get", "r"], 3], "2", "1"]],
                 {"params": {"color-1": ["match", ["get", "class"], "food", "#ff8000", "#808080"]}}]}}]}
            """#)
        let names = Set(
            style.neededIcons().icons.map { "\($0.image.name) \($0.image.params["color-1"]?.hexString ?? "-")" })
        #expect(names.count == 8)
        #expect(names.contains("cafe_rating_2 #ff8000") && names.contains("shop_rating_1 #808080"))
    }

    /// Served (runtime images), a computed name the build did not see keeps its params: the
    /// renderer computes `iconr:<name>?<param>=<color>`, leaving out a value that is no color.
    @Test func aComputedNameNobodyPrebakedBecomesARuntimeImage() throws {
        let style = try Self.style(
            #"""
            {"version": 8, "sources": {"v": {"type": "vector", "tiles": ["http://x/{z}/{x}/{y}.pbf"]}}, "layers": [
              {"id": "l", "type": "symbol", "source": "v", "source-layer": "poi", "layout": {"icon-image":
                ["image", ["concat", ["get", "icon"], "_rating_", ["get", "r"]], {"params": {"color-1": ["get", "a"], "color-2": ["get", "b"]}}]}}]}
            """#)
        let emitted = style.emitted(sprite: .string("x"), templates: [:], needed: [], runtimeImages: true)
        #expect(emitted.problems.isEmpty, "\(emitted.problems)")
        let image = try #require(emitted.json["layers"]?.arrayValue?[0]["layout"]?["icon-image"])
        let compiled = try CompiledExpression.compile(image, specification: StyleLayer.imageSpecification).get()
        for (properties, expected) in [
            (
                ["icon": "pin", "r": "3", "a": "red", "b": "#0000ff"],
                "iconr:pin_rating_3?color-1=rgba(255,0,0,1)&color-2=rgba(0,0,255,1)"
            ),
            (
                ["icon": "pin", "r": "1", "a": "no color", "b": "#0000ff"],
                "iconr:pin_rating_1?&color-2=rgba(0,0,255,1)"
            ),
        ] {
            var context = EvaluationContext()
            context.feature = ExpressionFeature(properties: properties.mapValues { StyleValue.string($0) })
            guard case .image(let resolved)? = try? compiled.evaluate(context) else {
                Issue.record("no image for \(properties)")
                continue
            }
            #expect(resolved.name == expected)
        }
    }

    /// A name computed from data (`get`, `concat`, a `step` of them) can be any id of the
    /// sprite: with several sheets, the ids of later sheets are mapped to `sheet:id` wherever
    /// the expression returns a name, so a renderer finds them.
    @Test(arguments: [
        (
            #"["get", "icon"]"#,
            #"["match",["to-string",["get","icon"]],"last","sprite-3:last","late","sprite-2:late",["get","icon"]]"#
        ),
        (
            #"["concat", ["get", "kind"], "-11"]"#,
            #"["match",["to-string",["concat",["get","kind"],"-11"]],"last","sprite-3:last","late","sprite-2:late",["concat",["get","kind"],"-11"]]"#
        ),
        (
            #"["step", ["zoom"], "flag", 10, ["get", "icon"]]"#,
            #"["step",["zoom"],"flag",10,["match",["to-string",["get","icon"]],"last","sprite-3:last","late","sprite-2:late",["get","icon"]]]"#
        ),
        (#""late""#, #""sprite-2:late""#),
        (
            #"{"property": "icon", "type": "identity"}"#,
            #"["match",["to-string",["get","icon"]],"last","sprite-3:last","late","sprite-2:late",["get","icon"]]"#
        ),
        (
            #"{"property": "kind", "type": "categorical", "stops": [["a", "late"], ["b", "flag"]], "default": "last"}"#,
            #"["match",["get","kind"],"a","sprite-2:late","b","flag","sprite-3:last"]"#
        ),
    ])
    func namesFromDataFindEverySheet(iconImage: String, expected: String) throws {
        let style = try Self.style(
            #"{"version": 8, "sources": {\#(Self.source)}, "layers": [{"id": "l", "type": "symbol", "source": "s", "layout": {"icon-image": \#(iconImage)}}]}"#
        )
        let emitted = style.emitted(
            sprite: .array([
                .object(["id": .string("default"), "url": .string("http://y/sprite")]),
                .object(["id": .string("sprite-2"), "url": .string("http://y/sprite-2")]),
                .object(["id": .string("sprite-3"), "url": .string("http://y/sprite-3")]),
            ]), templates: [:], needed: [], sheetOf: ["late": "sprite-2", "last": "sprite-3"], firstSheetIDs: ["flag"],
            icons: ["flag", "late", "last"])
        #expect(emitted.problems.isEmpty, "\(emitted.problems)")
        #expect(emitted.json["layers"]?.arrayValue?[0]["layout"]?["icon-image"]?.serialized == expected)
    }
}
