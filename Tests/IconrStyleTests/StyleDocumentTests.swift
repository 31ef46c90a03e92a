import Foundation
import Testing

@testable import IconrCore
@testable import IconrStyle

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

    static func template(_ parameters: String) -> SVGTemplate {
        // A literal template of this test: parsing it cannot fail.
        try! SVGTemplate(
            bytes: Array(
                """
                <svg xmlns="http://www.w3.org/2000/svg" xmlns:m="https://www.mapbox.com" width="4" height="4">
                  <m:metadata><m:parameters>\(parameters)</m:parameters></m:metadata>
                </svg>
                """.utf8))
    }

    static let flagTemplate = template(##"<m:parameter m:name="flag_color" m:type="color" m:value="#000000"/>"##)

    static func style(
        _ text: String, data: [String: String] = [:], config: [String: JSONValue] = [:]
    ) throws -> StyleDocument {
        try StyleDocument(
            bytes: Array(text.utf8), file: "style.json", data: data.mapValues { Array($0.utf8) }, config: config)
    }

    static func described(_ needed: NeededIcons) -> [String] {
        needed.icons.map {
            "\($0.image.name) \($0.image.params.mapValues(\.hexString).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }) \($0.scale)"
        }
    }

    /// A symbol layer over one GeoJSON source of `features` (JSON property objects).
    static func layerStyle(_ layer: String, features: [String], extra: String = "") -> String {
        let list = features.enumerated().map { index, properties in
            #"{"type": "Feature", "geometry": {"type": "Point", "coordinates": [\#(index), 0]}, "properties": \#(properties)}"#
        }.joined(separator: ",")
        return
            #"{"version": 8, \#(extra) "sources": {"s": {"type": "geojson", "data": {"type": "FeatureCollection", "features": [\#(list)]}}}, "layers": [{"id": "l", "type": "symbol", "source": "s", \#(layer)}]}"#
    }

    @Test func findsTheVariantsAndTheSizeEachFeatureNeeds() throws {
        let style = try Self.style(Self.helsinki)
        #expect(style.layers.map(\.id) == ["points", "plain"])
        // Mapbox rasterizes a data-driven icon-size per feature: only the red flag is at 2x;
        // the feature whose color is no color shows the default.
        #expect(
            Self.described(style.neededIcons(sizes: .featuresSeen)) == [
                "flag [] 1.0", "flag [\"flag_color=#800080\"] 1.0", "flag [\"flag_color=#ff0000\"] 2.0",
                "flag [\"flag_color=#ffff00\"] 1.0", "marker [] 1.0",
            ])
        // By default every variant of the layer is drawn at the largest size its icon-size can
        // reach (a tap that selects the yellow flag draws it at 2, as Mapbox rasterizes again),
        // and what the features alone need is kept for the build's summary.
        let needed = style.neededIcons()
        #expect(
            Self.described(needed) == [
                "flag [] 2.0", "flag [\"flag_color=#800080\"] 2.0", "flag [\"flag_color=#ff0000\"] 2.0",
                "flag [\"flag_color=#ffff00\"] 2.0", "marker [] 1.0",
            ])
        #expect(
            needed.raised.map { "\($0.key.sortKey) \($0.value)" }.sorted() == [
                "flag? 1.0", "flag?flag_color=#800080 1.0", "flag?flag_color=#ffff00 1.0",
            ])
    }

    /// S is the largest literal output of every branch over the layer's tile zooms, whether a
    /// feature the build sees reaches it or not; a size read from data is the data's.
    @Test(arguments: [
        (#"["match", ["get", "k"], "never", 4, 1]"#, 4.0, 1.0),
        (#"["case", ["has", "big"], ["match", ["get", "kind"], "a", 3, 2], 1]"#, 3.0, 1.0),
        (#"["interpolate", ["linear"], ["zoom"], 0, 0.5, 24, ["case", ["get", "big"], 2.5, 1]]"#, 2.5, 1.0),
        (#"["get", "s"]"#, 1.5, 1.5),
    ])
    func theLayersLargestIconSizeCountsEveryBranch(size: String, largest: Double, seen: Double) throws {
        let style = try Self.style(
            Self.layerStyle(
                #""layout": {"icon-image": "a", "icon-size": \#(size)}"#, features: [#"{"k": "x", "s": 1.5}"#]))
        #expect(Self.described(style.neededIcons()) == ["a [] \(largest)"])
        #expect(Self.described(style.neededIcons(sizes: .featuresSeen)) == ["a [] \(seen)"])
    }

    @Test func zoomCurvesTakeTheUpperCoveringStopAndCompositeTheLargerOfTwo() throws {
        // camera: at tile zoom z the value at the first stop >= z+1 (clamped to the last).
        let camera = try Self.style(
            Self.layerStyle(
                #""minzoom": 10, "maxzoom": 12, "layout": {"icon-image": "a", "icon-size": ["interpolate", ["linear"], ["zoom"], 10, 1, 11, 3, 20, 2]}"#,
                features: ["{}"]))
        let layer = try #require(camera.layers.first)
        #expect(layer.tileZooms == [10, 11])
        #expect(layer.rasterSize(for: ExpressionFeature(), tileZoom: 10) == 3)
        #expect(layer.rasterSize(for: ExpressionFeature(), tileZoom: 11) == 2)
        #expect(Self.described(camera.neededIcons()) == ["a [] 3.0"])
        let composite = try Self.style(
            Self.layerStyle(
                #""layout": {"icon-image": "a", "icon-size": ["interpolate", ["linear"], ["zoom"], 5, ["get", "s"], 6, 1]}"#,
                features: [#"{"s": 4}"#]))
        let feature = ExpressionFeature(properties: ["s": .number(4)])
        #expect(try #require(composite.layers.first).rasterSize(for: feature, tileZoom: 5) == 4)
        #expect(try #require(composite.layers.first).rasterSize(for: feature, tileZoom: 9) == 1)
    }

    @Test func filtersAndZoomRangesDecideWhichFeaturesShow() throws {
        let layer = #""filter": ["==", ["get", "kind"], "shop"], "layout": {"icon-image": ["get", "icon"]}"#
        let style = try Self.style(
            Self.layerStyle(layer, features: [#"{"kind": "shop", "icon": "a"}"#, #"{"kind": "park", "icon": "b"}"#]))
        #expect(Self.described(style.neededIcons()) == ["a [] 1.0"])
        // Legacy filters mean what they meant.
        let legacy = try Self.style(
            Self.layerStyle(
                #""filter": ["all", ["==", "kind", "park"], ["!has", "closed"]], "layout": {"icon-image": ["get", "icon"]}"#,
                features: [
                    #"{"kind": "shop", "icon": "a"}"#, #"{"kind": "park", "icon": "b"}"#,
                    #"{"kind": "park", "icon": "c", "closed": true}"#,
                ]))
        #expect(Self.described(legacy.neededIcons()) == ["b [] 1.0"])
        // A step on zoom shows each icon in its own range of the layer's zooms.
        let stepped = try Self.style(
            Self.layerStyle(
                #""minzoom": 3, "maxzoom": 8, "layout": {"icon-image": ["step", ["zoom"], "small", 5, "large", 9, "never"]}"#,
                features: ["{}"]))
        #expect(Self.described(stepped.neededIcons()) == ["large [] 1.0", "small [] 1.0"])
    }

    @Test func sourcesWithoutDataGiveTheLiteralValuesAndSayWhatIsOpen() throws {
        let text = """
            {"version": 8, "schema": {"theme": {"default": "day", "type": "string"}},
             "sources": {"v": {"type": "vector", "url": "https://example.org/tiles.json"}},
             "layers": [{"id": "poi", "type": "symbol", "source": "v", "source-layer": "poi", "layout": {
               "icon-image": ["image", ["match", ["get", "class"], "park", "park", "shop", "shop", "dot"],
                              {"params": {"fill": ["match", ["config", "theme"], "night", "hsla(0, 0, 20, 1)", ["coalesce", ["get", "color"], "#ff0000"]]}}],
               "icon-size": ["step", ["zoom"], 1, 14, 1.5]}}]}
            """
        let style = try Self.style(text)
        let needed = style.neededIcons()
        #expect(Self.described(needed).contains("park [\"fill=#ff0000\"] 1.5"))
        #expect(Self.described(needed).contains("dot [] 1.5"))
        #expect(
            needed.warnings.contains {
                $0.contains("layer \"poi\"") && $0.contains("layers[0].layout.icon-image[2].params.fill")
            })
        // --config changes the schema default.
        let night = try Self.style(text, config: ["theme": .string("night")])
        #expect(Self.described(night.neededIcons()).contains("shop [\"fill=#333333\"] 1.5"))
        #expect(
            performing: { try Self.style(text, config: ["nope": .bool(true)]) },
            throws: {
                "\($0)" == "style.json: --config nope: the style's schema has no option \"nope\""
            })
    }

    @Test func samplesFromDataFillSourcesWithoutData() throws {
        let text =
            ##"{"version": 8, "sources": {"v": {"type": "vector"}}, "layers": [{"id": "l", "type": "symbol", "source": "v", "layout": {"icon-image": ["image", "flag", {"params": {"flag_color": ["get", "c"]}}]}}]}"##
        let style = try Self.style(text, data: ["samples.ndjson": "{\"c\": \"#00ff00\"}\n\n{\"c\": \"blue\"}\n"])
        #expect(
            Self.described(style.neededIcons()) == [
                "flag [] 1.0", "flag [\"flag_color=#0000ff\"] 1.0", "flag [\"flag_color=#00ff00\"] 1.0",
            ])
        #expect(
            performing: { try Self.style(text, data: ["bad.ndjson": "{\"c\": 1}\nnot json\n"]) },
            throws: {
                "\($0)" == "bad.ndjson: line 2: expected GeoJSON, or one JSON object of feature properties per line"
            })
    }

    @Test func emitsVariantsPickedByColorNumbersNotColorText() throws {
        let style = try Self.style(Self.helsinki)
        let emitted = style.emitted(
            sprite: .string("file:///out/sprite"), templates: ["flag": Self.flagTemplate],
            needed: style.neededIcons().icons.map(\.image))
        #expect(emitted.json["sprite"] == .string("file:///out/sprite"))
        let image = emitted.json["layers"]?.arrayValue?[1]["layout"]?["icon-image"]
        let key =
            ##"["let","iconr_color1",["to-rgba",["to-color",["get","flagColor"],"#000000"]],["case",["==",["at",3,["var","iconr_color1"]],0],"t",["concat",["round",["at",0,["var","iconr_color1"]]],",",["round",["at",1,["var","iconr_color1"]]],",",["round",["at",2,["var","iconr_color1"]]],",",["round",["*",["at",3,["var","iconr_color1"]],255]]]]]"##
        let expected =
            ##"["image",["match",KEY,"128,0,128,255","flag?flag_color=800080","255,0,0,255","flag?flag_color=ff0000","255,255,0,255","flag?flag_color=ffff00","flag"]]"##
        #expect(image?.serialized == expected.replacingOccurrences(of: "KEY", with: key))
        // Other layers and properties are kept.
        #expect(emitted.json["layers"]?.arrayValue?[2]["layout"]?["icon-image"] == .string("marker"))
        #expect(
            emitted.json["layers"]?.arrayValue?[1]["layout"]?["icon-size"]
                == style.json["layers"]?.arrayValue?[1]["layout"]?["icon-size"])
        #expect(emitted.warnings.isEmpty)
    }

    /// A runtime image id carries the largest icon-size of its layer (`#size=`), so that
    /// iconr.js rasterizes it at that size times the pixel ratio; at icon-size 1 it has none.
    @Test(arguments: [
        (#""icon-size": ["interpolate", ["linear"], ["zoom"], 10, 1, 16, 2.5],"#, "#size=2.5"),
        (#""icon-size": ["match", ["get", "kind"], "big", 3, 1],"#, "#size=3"),
        ("", nil),
    ])
    func runtimeImageIdsCarryTheLayersLargestIconSize(size: String, suffix: String?) throws {
        let text = Self.layerStyle(
            #""layout": {\#(size) "icon-image": ["image", "flag", {"params": {"flag_color": ["get", "c"]}}]}"#,
            features: [])
        let style = try Self.style(
            text.replacingOccurrences(
                of: #""data": {"type": "FeatureCollection", "features": []}"#, with: #""data": "points.geojson""#))
        let emitted = style.emitted(
            sprite: .string("s"), templates: ["flag": Self.flagTemplate], needed: [], runtimeImages: true)
        let image = try #require(emitted.json["layers"]?.arrayValue?[0]["layout"]?["icon-image"]?.serialized)
        #expect(image.hasPrefix(##"["image",["concat","iconr:flag?","flag_color=",["to-string""##), "\(image)")
        if let suffix {
            #expect(image.hasSuffix(#","\#(suffix)"]]"#), "\(image)")
        } else {
            #expect(!image.contains("#size"), "\(image)")
        }
    }

    /// `coalesce` over images named from data is chosen by name against the icons the sprite
    /// has (the first it has, else the first): MapLibre decides a coalesce when it lays a tile
    /// out, maybe before the sprite is loaded, and would keep a name the sprite lacks.
    @Test func coalesceOfNamesFromDataPicksTheFirstIconTheSpriteHas() throws {
        let text = Self.layerStyle(
            #""layout": {"icon-image": ["coalesce", ["image", ["get", "beta"]], ["image", "nope"], ["image", ["get", "maki"]]]}"#,
            features: [])
        let style = try Self.style(text)
        let emitted = style.emitted(sprite: .string("s"), templates: [:], needed: [], icons: ["bus", "cafe"])
        let image = try #require(emitted.json["layers"]?.arrayValue?[0]["layout"]?["icon-image"]?.serialized)
        #expect(
            image
                == ##"["match",["to-string",["get","beta"]],["bus","cafe"],["image",["to-string",["get","beta"]]],["match",["to-string",["get","maki"]],["bus","cafe"],["image",["to-string",["get","maki"]]],["image",["to-string",["get","beta"]]]]]"##
        )
        #expect(emitted.problems.isEmpty)
        // What each feature shows, evaluated as MapLibre would.
        let compiled = try CompiledExpression.compile(
            try JSONValue.parse(Array(image.utf8)), specification: StyleLayer.imageSpecification
        ).get()
        for (properties, shown) in [
            (["beta": "bus", "maki": "cafe"], "bus"), (["beta": "none", "maki": "cafe"], "cafe"),
            (["maki": "cafe"], "cafe"), (["beta": "x", "maki": "y"], "x"),
        ] {
            var context = EvaluationContext()
            context.feature = ExpressionFeature(properties: properties.mapValues { .string($0) })
            guard case .image(let resolved)? = try? compiled.evaluate(context) else {
                Issue.record("no image for \(properties)")
                continue
            }
            #expect(resolved.name == shown, "\(properties)")
        }
        // Without the list of icons (`style check`), coalesce stays as it is.
        let unknown = style.emitted(sprite: .string("s"), templates: [:], needed: [])
        #expect(
            unknown.json["layers"]?.arrayValue?[0]["layout"]?["icon-image"]?.arrayValue?.first == .string("coalesce"))
    }

    @Test func constantParamsBecomeTheVariantIdAndPartlyConstantOnesKeepTheirLabel() throws {
        let two = Self.template(
            ##"<m:parameter m:name="a" m:type="color" m:value="#000000"/><m:parameter m:name="b" m:type="color" m:value="#ffffff"/>"##
        )
        let text = Self.layerStyle(
            #""layout": {"icon-image": ["coalesce", ["image", "missing"], ["image", "two", {"params": {"a": "red", "b": ["get", "b"]}}]]}"#,
            features: [#"{"b": "rgba(255, 255, 0, 0.5)"}"#, #"{"b": "rgba(255, 0, 0, 0)"}"#])
        let style = try Self.style(text)
        let needed = style.neededIcons(imageExists: { $0 == "two" })
        #expect(
            Self.described(needed) == [
                "two [\"a=#ff0000\", \"b=#ff000000\"] 1.0", "two [\"a=#ff0000\", \"b=#ffff0080\"] 1.0",
            ])
        let emitted = style.emitted(sprite: .string("s"), templates: ["two": two], needed: needed.icons.map(\.image))
        let image = try #require(emitted.json["layers"]?.arrayValue?[0]["layout"]?["icon-image"])
        let serialized = image.serialized
        // coalesce keeps its images, so MapLibre still skips a missing one.
        #expect(
            serialized.hasPrefix(
                ##"["coalesce",["image","missing"],["image",["match",["concat","255,0,0,255","|",["let""##))
        // A translucent color and a fully transparent one are labelled by numbers.
        #expect(serialized.contains(##""255,0,0,255|255,255,0,128","two?a=ff0000&b=ffff0080""##))
        #expect(serialized.contains(##""255,0,0,255|t","two?a=ff0000&b=ff000000""##))
        // Told which icons the sprite has, coalesce drops the one it lacks.
        let known = style.emitted(
            sprite: .string("s"), templates: ["two": two], needed: needed.icons.map(\.image), icons: ["two"])
        let kept = try #require(known.json["layers"]?.arrayValue?[0]["layout"]?["icon-image"]?.serialized)
        #expect(kept.hasPrefix(##"["coalesce",["image",["match","##) && !kept.contains(##""missing""##))
        // All constant: the id itself.
        let constant = try Self.style(
            Self.layerStyle(
                #""layout": {"icon-image": ["image", "flag", {"params": {"flag_color": "red"}}]}"#, features: []))
        let constantEmitted = constant.emitted(
            sprite: .string("s"), templates: ["flag": Self.flagTemplate],
            needed: constant.neededIcons().icons.map(\.image))
        #expect(
            constantEmitted.json["layers"]?.arrayValue?[0]["layout"]?["icon-image"]?.serialized
                == ##"["image","flag?flag_color=ff0000"]"##)
    }

    @Test func dataDrivenNamesLaterSheetsAndMapboxOnlyPartsAreHandled() throws {
        let text = """
            {"version": 8, "schema": {"size": {"default": 2}}, "imports": [], "fog": {},
             "glyphs": "mapbox://fonts/mapbox/{fontstack}/{range}.pbf",
             "sources": {"s": {"type": "geojson", "data": {"type": "Feature", "geometry": {"type": "Point", "coordinates": [0, 0]},
               "properties": {"icon": "flag", "c": "#0000ff"}}}, "tiles": {"type": "vector", "url": "mapbox://mapbox.mapbox-streets-v8"}},
             "layers": [{"id": "l", "type": "symbol", "source": "s", "slot": "top", "layout": {
               "icon-image": ["image", ["get", "icon"], {"params": {"flag_color": ["get", "c"]}, "iconset": {"id": "pois"}}, "other", {}],
               "icon-size": ["config", "size"], "icon-size-scale-range": [0.8, 2]},
               "paint": {"icon-color": ["hsl", 0, 100, 50], "icon-emissive-strength": 1}},
               {"id": "m", "type": "model", "source": "s"}]}
            """
        let style = try Self.style(text)
        let needed = style.neededIcons()
        #expect(Self.described(needed) == ["flag [\"flag_color=#0000ff\"] 2.0"])
        let emitted = style.emitted(
            sprite: .array([]), templates: ["flag": Self.flagTemplate], needed: needed.icons.map(\.image),
            sheetOf: ["flag?flag_color=0000ff": "sprite-2"])
        let layers = try #require(emitted.json["layers"]?.arrayValue)
        #expect(layers.count == 1)
        let layout = layers[0]["layout"]
        #expect(layout?["icon-size"] == .number(2))
        #expect(layout?["icon-size-scale-range"] == nil)
        #expect(layers[0]["slot"] == nil)
        #expect(layers[0]["paint"]?["icon-color"] == .string("rgba(255,0,0,1)"))
        #expect(layers[0]["paint"]?["icon-emissive-strength"] == nil)
        #expect(emitted.json["schema"] == nil && emitted.json["imports"] == nil && emitted.json["fog"] == nil)
        let image = try #require(layout?["icon-image"]?.serialized)
        #expect(image.hasPrefix(##"["image",["match",["to-string",["get","icon"]],"flag",["match","##))
        #expect(image.contains(##""0,0,255,255","sprite-2:flag?flag_color=0000ff""##))
        for part in [
            "\"schema\"", "\"imports\"", "\"fog\"", "layer \"m\"", "\"slot\"", "\"icon-size-scale-range\"",
            "\"icon-emissive-strength\"",
            "second image", "\"iconset\"", "\"glyphs\" is a mapbox:// URL", "source \"tiles\" is a mapbox:// URL",
        ] {
            #expect(emitted.warnings.contains { $0.contains(part) }, "no warning names \(part)")
        }
    }

    /// Streets v12 writes `["zoom"]` inside `all` and comparisons of its filters; MapLibre
    /// evaluates filters at whole tile zooms, so each is one of a layer's stretches.
    @Test func filtersMayReadTheZoomAnywhere() throws {
        let style = try Self.style(
            #"""
            {"version": 8, "sources": {"s": {"type": "geojson", "data": {"type": "FeatureCollection", "features": [
               {"type": "Feature", "geometry": {"type": "Point", "coordinates": [0, 0]}, "properties": {"rank": 12}}]}}},
             "layers": [{"id": "l", "type": "symbol", "source": "s", "minzoom": 10, "maxzoom": 16,
               "filter": ["all", ["has", "rank"], ["<=", ["get", "rank"], ["step", ["zoom"], 5, 14, 15]]],
               "layout": {"icon-image": ["step", ["zoom"], "small", 15, "large"]}}]}
            """#)
        let layer = try #require(style.layers.first)
        let feature = ExpressionFeature(properties: ["rank": .number(12)])
        #expect(!layer.shows(feature, zoom: 13) && layer.shows(feature, zoom: 14))
        #expect(layer.distinctZooms == [10, 11, 12, 13, 14, 15])
        #expect(Set(style.neededIcons().icons.map(\.image.name)) == ["small", "large"])
    }

    /// The emitted copy is checked as MapLibre would load it: what it would reject is an
    /// error (`problems`), or, with `lenient`, removed with a warning.
    @Test func anEmittedStyleMapLibreWouldRejectIsCaught() throws {
        let text = #"""
            {"version": 8, "sources": {"s": {"type": "geojson", "data": {"type": "FeatureCollection", "features": []}}},
             "layers": [{"id": "l", "type": "symbol", "source": "s", "layout": {"icon-image": "flag",
               "visibility": ["case", ["==", ["get", "x"], 1], "none", "visible"]},
               "paint": {"icon-color": ["to-color", ["to-hsla", ["get", "c"]]], "icon-opacity": 0.5}},
               {"id": "zoomed", "type": "circle", "source": "s", "filter": ["==", ["get", "k"], 1],
                "paint": {"circle-radius": ["+", 1, ["zoom"]]}}]}
            """#
        let style = try Self.style(text)
        let strict = style.emitted(sprite: .string("s"), templates: [:], needed: [])
        #expect(
            strict.problems.map(\.description) == [
                #"layers[0] ("l").layout.visibility: expected "visible" or "none", found ["case",["==",["get","x"],1],"none","visible"]"#,
                #"layers[0] ("l").paint.icon-color: "to-hsla" is Mapbox-only: MapLibre has no such operator"#,
                #"layers[1] ("zoomed").paint.circle-radius: "zoom" expression may only be used as input to a top-level "step" or "interpolate" expression."#,
            ])
        let lenient = style.emitted(sprite: .string("s"), templates: [:], needed: [], lenient: true)
        #expect(lenient.problems.isEmpty)
        let layers = try #require(lenient.json["layers"]?.arrayValue)
        #expect(layers[0]["layout"]?["visibility"] == nil && layers[0]["paint"]?["icon-color"] == nil)
        #expect(layers[0]["paint"]?["icon-opacity"] == .number(0.5))
        #expect(layers[1]["paint"]?["circle-radius"] == nil && layers[1]["filter"] != nil)
        #expect(lenient.warnings.filter { $0.hasSuffix("removed it (--lenient)") }.count == 3)
        #expect(StyleDocument.mapLibreProblems(in: lenient.json).isEmpty)
    }

    /// Each `config` resolved says so, naming the option and where its value came from; one
    /// the schema lacks reads null, and a property that is then null is removed (Mapbox shows
    /// the default there; MapLibre rejects a null).
    @Test func configResolutionsAreListedAndANullPropertyIsRemoved() throws {
        let text = #"""
            {"version": 8, "schema": {"theme": {"default": "faded"}},
             "sources": {"s": {"type": "geojson", "data": {"type": "FeatureCollection", "features": []}}},
             "layers": [{"id": "l", "type": "symbol", "source": "s",
               "layout": {"visibility": ["case", ["==", ["config", "theme"], "faded"], "none", "visible"]},
               "paint": {"icon-color": ["config", "missing"], "icon-opacity": 0.5}}]}
            """#
        let emitted = try Self.style(text).emitted(sprite: .string("s"), templates: [:], needed: [])
        #expect(emitted.problems.isEmpty)
        let layer = try #require(emitted.json["layers"]?.arrayValue?.first)
        #expect(layer["layout"]?["visibility"] == .string("none"))
        #expect(layer["paint"]?["icon-color"] == nil && layer["paint"]?["icon-opacity"] == .number(0.5))
        #expect(
            emitted.warnings.contains(
                #"style.json: layers[0] ("l").layout.visibility: "config" "theme" is Mapbox-only: replaced by its value "faded" (--config theme=VALUE sets it, else the schema default)"#
            ))
        #expect(
            emitted.warnings.contains(
                #"style.json: layers[0] ("l").paint.icon-color: resolved to null: removed, so that its default applies (as in Mapbox)"#
            ))
    }

    /// `["at", k, ["to-hsla", color]]` from data becomes an expression on `to-rgba` that
    /// MapLibre evaluates: for 300 random colors, each component equals Mapbox's (within 1e-9).
    @Test func toHslaComponentsFromDataAreComputedFromToRGBA() throws {
        var generator = SystemRandomNumberGenerator()
        for component in 0..<4 {
            let original = ##"["at", \##(component), ["to-hsla", ["get", "c"]]]"##
            let text = Self.layerStyle(#""paint": {"icon-opacity": \#(original)}"#, features: [])
            let emitted = try Self.style(text).emitted(sprite: .string("s"), templates: [:], needed: [])
            #expect(emitted.problems.isEmpty, "\(emitted.problems)")
            let rewritten = try #require(emitted.json["layers"]?.arrayValue?[0]["paint"]?["icon-opacity"])
            #expect(!rewritten.serialized.contains("hsla"))
            let specification = PropertySpecification(type: "number")
            let mapbox = try CompiledExpression.compile(
                try JSONValue.parse(Array(original.utf8)), specification: specification
            ).get()
            let mapLibre = try CompiledExpression.compile(rewritten, specification: specification).get()
            for _ in 0..<300 {
                let channels = (0..<3).map { _ in Int.random(in: 0...255, using: &generator) }
                let alpha = Double(Int.random(in: 1...10, using: &generator)) / 10
                var context = EvaluationContext()
                context.feature = ExpressionFeature(properties: [
                    "c": .string("rgba(\(channels[0]), \(channels[1]), \(channels[2]), \(alpha))")
                ])
                guard case .number(let expected)? = try? mapbox.evaluate(context),
                    case .number(let found)? = try? mapLibre.evaluate(context)
                else {
                    Issue.record("component \(component) of \(channels) did not evaluate")
                    continue
                }
                #expect(abs(expected - found) < 1e-9, "component \(component) of \(channels), \(alpha)")
            }
        }
    }

    /// What the MapLibre style specification's table says of each property is checked: the
    /// layer types and properties MapLibre has, data and zoom where a property takes them,
    /// and the type of constants. Each would make GL JS reject the style.
    @Test(arguments: [
        (#""type": "cloud""#, #"type: MapLibre has no layer type "cloud""#),
        (
            #""type": "symbol", "layout": {"icon-glow": 2}"#,
            #"layout.icon-glow: MapLibre's symbol layers have no layout property "icon-glow""#
        ),
        (
            #""type": "fill", "paint": {"line-width": 2}"#,
            #"paint.line-width: MapLibre's fill layers have no paint property "line-width""#
        ),
        (#""type": "line", "layout": {"line-cap": ["get", "cap"]}"#, "layout.line-cap: data expressions not supported"),
        (
            #""type": "symbol", "layout": {"icon-allow-overlap": "yes"}"#,
            #"layout.icon-allow-overlap: expected a boolean, found "yes""#
        ),
        (
            #""type": "symbol", "layout": {"icon-rotation-alignment": "middle"}"#,
            #"layout.icon-rotation-alignment: expected one of "map", "viewport", "auto", found "middle""#
        ),
        (#""type": "symbol", "layout": {"icon-offset": [1]}"#, "layout.icon-offset: expected an array of 2, found [1]"),
        (
            #""type": "circle", "paint": {"circle-color": "nope"}"#,
            "paint.circle-color: Could not parse color from value 'nope'"
        ),
        (
            #""type": "circle", "paint": {"circle-radius": "big"}"#,
            #"paint.circle-radius: expected a number, found "big""#
        ),
        (
            #""type": "symbol", "layout": {"text-writing-mode": ["sideways"]}"#,
            #"layout.text-writing-mode: expected an array of one of "horizontal", "vertical", found ["sideways"]"#
        ),
    ])
    func propertiesAreCheckedAgainstMapLibresSpecification(layer: String, problem: String) throws {
        let text = #"""
            {"version": 8, "sources": {"s": {"type": "geojson", "data": {"type": "FeatureCollection", "features": []}}},
             "layers": [{"id": "l", "source": "s", \#(layer)}]}
            """#
        let style = try Self.style(text)
        let strict = style.emitted(sprite: .string("s"), templates: [:], needed: [])
        #expect(strict.problems.map(\.description) == [#"layers[0] ("l")."# + problem])
        let lenient = style.emitted(sprite: .string("s"), templates: [:], needed: [], lenient: true)
        #expect(lenient.problems.isEmpty && StyleDocument.mapLibreProblems(in: lenient.json).isEmpty)
        let removed = strict.problems.first?.dropsLayer == true ? "the layer" : "it"
        #expect(lenient.warnings.contains { $0.hasSuffix(problem + ": removed \(removed) (--lenient)") })
    }

    /// Every property of the table with a value it takes (the specification's defaults, and
    /// expressions, legacy functions and arrays of each kind) passes the check.
    @Test func valuesMapLibreTakesPassTheCheck() throws {
        let text = #"""
            {"version": 8, "glyphs": "http://127.0.0.1:9/{fontstack}/{range}.pbf",
             "sources": {"s": {"type": "geojson", "data": {"type": "FeatureCollection", "features": []}},
              "g": {"type": "geojson", "lineMetrics": true, "data": {"type": "FeatureCollection", "features": []}}},
             "layers": [
              {"id": "sym", "type": "symbol", "source": "s", "layout": {
                "icon-image": "{kind}-11", "icon-size": {"stops": [[10, 1], [16, 2]]}, "icon-offset": [0, -2],
                "icon-padding": [2, 4], "text-field": ["format", ["get", "name"], {"font-scale": 0.8}],
                "text-font": ["Open Sans Regular"], "text-variable-anchor": ["top", "bottom"],
                "text-variable-anchor-offset": ["top", [0, 1], "bottom", [0, -1]], "text-writing-mode": ["horizontal"],
                "icon-text-fit-padding": [1, 2, 3, 4], "symbol-placement": "line-center", "visibility": "visible",
                "text-size": ["interpolate", ["linear"], ["zoom"], 10, ["get", "size"], 16, 20]},
               "paint": {"text-color": ["case", ["boolean", ["feature-state", "hover"], false], "#f00", "hsl(0, 50%, 50%)"],
                "icon-opacity": {"property": "rank", "type": "interval", "stops": [[0, 1], [5, 0.5]]}}},
              {"id": "line", "type": "line", "source": "g", "layout": {"line-cap": "round", "line-join": ["get", "join"]},
               "paint": {"line-dasharray": [2, 1], "line-gradient": ["interpolate", ["linear"], ["line-progress"], 0, "red", 1, "blue"],
                "line-width": ["step", ["zoom"], 1, 10, 2]}},
              {"id": "heat", "type": "heatmap", "source": "s",
               "paint": {"heatmap-color": ["interpolate", ["linear"], ["heatmap-density"], 0, "rgba(0,0,0,0)", 1, "red"]}},
              {"id": "bg", "type": "background", "paint": {"background-color": "#ffffff", "background-opacity": 0.5}}]}
            """#
        let style = try Self.style(text)
        #expect(style.emitted(sprite: .string("s"), templates: [:], needed: []).problems.map(\.description) == [])
    }

    /// Mapbox v3's camera and light values become literals at the stated environment, and
    /// what they made constant is folded (`["<=", 0, 1]` would read as a legacy filter).
    @Test func mapboxCameraAndLightAreResolved() throws {
        let text = #"""
            {"version": 8, "pitch": 30, "sources": {"s": {"type": "geojson", "data": {"type": "FeatureCollection", "features": []}}},
             "layers": [{"id": "l", "type": "symbol", "source": "s",
               "filter": ["all", ["has", "k"], ["<=", ["distance-from-center"], 1], [">=", ["pitch"], 20], ["==", ["worldview"], "JP"]],
               "layout": {"icon-image": "flag"},
               "paint": {"icon-opacity": ["interpolate", ["linear"], ["measure-light", "brightness"], 0, 0, 1, 1],
                         "icon-halo-color": "hsla(0, 100, 50, 1)"}}]}
            """#
        var environment = MapboxEnvironment()
        environment.worldview = "JP"
        environment.lightBrightness = LightPreset.night.brightness
        let style = try StyleDocument(bytes: Array(text.utf8), file: "style.json", environment: environment)
        let emitted = style.emitted(sprite: .string("s"), templates: [:], needed: [])
        #expect(emitted.problems.isEmpty)
        let layer = try #require(emitted.json["layers"]?.arrayValue?.first)
        #expect(layer["filter"]?.serialized == #"["all",["has","k"],true,true,true]"#)
        #expect(layer["paint"]?["icon-opacity"] == .number(0.1))
        // Unitless saturation and lightness (Mapbox's percent) as MapLibre reads colors.
        #expect(layer["paint"]?["icon-halo-color"] == .string("rgba(255,0,0,1)"))
        for op in ["distance-from-center", "pitch", "worldview", "measure-light"] {
            #expect(
                emitted.warnings.contains {
                    $0.contains(#"layers[0] ("l")"#) && $0.contains("\"\(op)\" is Mapbox-only")
                })
        }
    }

    /// Layers that can never show (an empty zoom range, minzoom past 24, hidden) set no size,
    /// and a name from data (no params) is no reason for a warning.
    @Test func layersThatNeverShowSetNoSize() throws {
        let text = #"""
            {"version": 8, "sources": {"v": {"type": "vector", "url": "https://example.org/tiles.json"}},
             "layers": [{"id": "shown", "type": "symbol", "source": "v", "layout": {"icon-image": "dot"}},
               {"id": "empty", "type": "symbol", "source": "v", "minzoom": 12, "maxzoom": 10,
                "layout": {"icon-image": "dot", "icon-size": 3}},
               {"id": "high", "type": "symbol", "source": "v", "minzoom": 25, "layout": {"icon-image": "dot", "icon-size": 4}},
               {"id": "hidden", "type": "symbol", "source": "v", "layout": {"icon-image": "dot", "icon-size": 5, "visibility": "none"}},
               {"id": "named", "type": "symbol", "source": "v", "layout": {"icon-image": ["get", "maki"]}}]}
            """#
        let needed = try Self.style(text).neededIcons()
        #expect(Self.described(needed) == ["dot [] 1.0"])
        #expect(needed.warnings.isEmpty, "\(needed.warnings)")
    }

    @Test func errorsNameTheFileAndThePlace() {
        let bad = Self.helsinki.replacingOccurrences(of: #"["get", "flagColor"]"#, with: #"["fetch", "flagColor"]"#)
        #expect(
            performing: { try Self.style(bad) },
            throws: {
                "\($0)"
                    == "style.json: layers[1].layout.icon-image[2].params.flag_color[0]: Unknown expression \"fetch\". If you wanted a literal array, use [\"literal\", [...]]."
            })
        let literal = Self.helsinki.replacingOccurrences(of: #"["get", "flagColor"]"#, with: #""blurple""#)
        #expect(
            performing: { try Self.style(literal) },
            throws: {
                "\($0)"
                    == "style.json: layers[1].layout.icon-image[2].params.flag_color: Could not parse color from value 'blurple'"
            })
        let size = Self.helsinki.replacingOccurrences(of: #"2.0, 1.0]"#, with: #""big", 1.0]"#)
        #expect(
            performing: { try Self.style(size) },
            throws: {
                "\($0)" == "style.json: layers[1].layout.icon-size[2]: Expected number but found string instead."
            })
        // A GeoJSON URL without --data is not an error: the build says what it will do.
        let remote =
            #"{"version": 8, "sources": {"p": {"type": "geojson", "data": "https://example.org/points.geojson"}}, "layers": []}"#
        #expect((try? Self.style(remote))?.warnings.first?.contains("give the data with --data points.geojson") == true)
        let given = try? Self.style(remote, data: ["points.geojson": #"{"type": "FeatureCollection", "features": []}"#])
        #expect(given?.features["p"]?.isEmpty == true)
    }

    @Test func deepExpressionsFinishCleanly() throws {
        let deep = String(repeating: #"["coalesce", "#, count: 990) + #""a""# + String(repeating: "]", count: 990)
        #expect((try? Self.style(Self.layerStyle(#""layout": {"icon-image": \#(deep)}"#, features: ["{}"]))) != nil)
        let tooDeep =
            String(repeating: #"["coalesce", "#, count: 1_005) + #""a""# + String(repeating: "]", count: 1_005)
        #expect(throws: StyleError.self) {
            try Self.style(Self.layerStyle(#""layout": {"icon-image": \#(tooDeep)}"#, features: ["{}"]))
        }
    }
}
