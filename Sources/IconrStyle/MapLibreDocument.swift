import IconrCore

/// The rest of the MapLibre style specification (version 8, as MapLibre GL JS 5 carries it),
/// beside the layout and paint properties of `MapLibreProperties`: what the style document is
/// validated by. GL JS refuses to load a style with any validation error, so iconr checks the
/// whole document as GL JS's `validateStyleMin` does: the root, sources by type, `sprite`,
/// `glyphs`, `light`, `sky`, `terrain`, `projection`, `transition`, and each layer (`id` present
/// and unique, its type, its source, `ref`). `Tests/MapLibre/spec_table.py --document` prints
/// `listing` from GL JS itself, and a test compares the two.
package enum MapLibreDocument {
    /// The sections, each property with the fields validation reads (`type`, `value`,
    /// `length`, `values`, `required`, `default`, `minimum`, `maximum`; `parameters` and
    /// `interpolated` for one that takes expressions).
    package static let listing = """
        {
          "$root": {
            "bearing": {"default": 0, "type": "number"},
            "center": {"type": "array", "value": "number"},
            "centerAltitude": {"type": "number"},
            "glyphs": {"type": "string"},
            "layers": {"required": true, "type": "array", "value": "layer"},
            "light": {"type": "light"},
            "metadata": {"type": "*"},
            "name": {"type": "string"},
            "pitch": {"default": 0, "type": "number"},
            "projection": {"type": "projection"},
            "roll": {"default": 0, "type": "number"},
            "sky": {"type": "sky"},
            "sources": {"required": true, "type": "sources"},
            "sprite": {"type": "sprite"},
            "terrain": {"type": "terrain"},
            "transition": {"type": "transition"},
            "version": {"required": true, "type": "enum", "values": [8]},
            "zoom": {"type": "number"}
          },
          "layer": {
            "filter": {"type": "filter"},
            "id": {"required": true, "type": "string"},
            "layout": {"type": "layout"},
            "maxzoom": {"maximum": 24, "minimum": 0, "type": "number"},
            "metadata": {"type": "*"},
            "minzoom": {"maximum": 24, "minimum": 0, "type": "number"},
            "paint": {"type": "paint"},
            "source": {"type": "string"},
            "source-layer": {"type": "string"},
            "type": {"required": true, "type": "enum", "values": ["fill", "line", "symbol", "circle", "heatmap", "fill-extrusion", "raster", "hillshade", "background"]}
          },
          "light": {
            "anchor": {"default": "viewport", "interpolated": false, "parameters": ["zoom"], "type": "enum", "values": ["map", "viewport"]},
            "color": {"default": "#ffffff", "interpolated": true, "parameters": ["zoom"], "type": "color"},
            "intensity": {"default": 0.5, "interpolated": true, "maximum": 1, "minimum": 0, "parameters": ["zoom"], "type": "number"},
            "position": {"default": [1.15, 210, 30], "interpolated": true, "length": 3, "parameters": ["zoom"], "type": "array", "value": "number"}
          },
          "projection": {
            "type": {"default": "mercator", "interpolated": true, "parameters": ["zoom"], "type": "projectionDefinition"}
          },
          "sky": {
            "atmosphere-blend": {"default": 0.8, "interpolated": true, "maximum": 1, "minimum": 0, "parameters": ["zoom"], "type": "number"},
            "fog-color": {"default": "#ffffff", "interpolated": true, "parameters": ["zoom"], "type": "color"},
            "fog-ground-blend": {"default": 0.5, "interpolated": true, "maximum": 1, "minimum": 0, "parameters": ["zoom"], "type": "number"},
            "horizon-color": {"default": "#ffffff", "interpolated": true, "parameters": ["zoom"], "type": "color"},
            "horizon-fog-blend": {"default": 0.8, "interpolated": true, "maximum": 1, "minimum": 0, "parameters": ["zoom"], "type": "number"},
            "sky-color": {"default": "#88C6FC", "interpolated": true, "parameters": ["zoom"], "type": "color"},
            "sky-horizon-blend": {"default": 0.8, "interpolated": true, "maximum": 1, "minimum": 0, "parameters": ["zoom"], "type": "number"}
          },
          "source_geojson": {
            "attribution": {"type": "string"},
            "buffer": {"default": 128, "maximum": 512, "minimum": 0, "type": "number"},
            "cluster": {"default": false, "type": "boolean"},
            "clusterMaxZoom": {"type": "number"},
            "clusterMinPoints": {"type": "number"},
            "clusterProperties": {"type": "*"},
            "clusterRadius": {"default": 50, "minimum": 0, "type": "number"},
            "data": {"required": true, "type": "*"},
            "filter": {"type": "*"},
            "generateId": {"default": false, "type": "boolean"},
            "lineMetrics": {"default": false, "type": "boolean"},
            "maxzoom": {"default": 18, "type": "number"},
            "promoteId": {"type": "promoteId"},
            "tolerance": {"default": 0.375, "type": "number"},
            "type": {"required": true, "type": "enum", "values": ["geojson"]}
          },
          "source_image": {
            "coordinates": {"length": 4, "required": true, "type": "array", "value": {"length": 2, "type": "array", "value": "number"}},
            "type": {"required": true, "type": "enum", "values": ["image"]},
            "url": {"required": true, "type": "string"}
          },
          "source_raster": {
            "*": {"type": "*"},
            "attribution": {"type": "string"},
            "bounds": {"default": [-180, -85.051129, 180, 85.051129], "length": 4, "type": "array", "value": "number"},
            "maxzoom": {"default": 22, "type": "number"},
            "minzoom": {"default": 0, "type": "number"},
            "scheme": {"default": "xyz", "type": "enum", "values": ["xyz", "tms"]},
            "tileSize": {"default": 512, "type": "number"},
            "tiles": {"type": "array", "value": "string"},
            "type": {"required": true, "type": "enum", "values": ["raster"]},
            "url": {"type": "string"},
            "volatile": {"default": false, "type": "boolean"}
          },
          "source_raster_dem": {
            "*": {"type": "*"},
            "attribution": {"type": "string"},
            "baseShift": {"default": 0, "type": "number"},
            "blueFactor": {"default": 1, "type": "number"},
            "bounds": {"default": [-180, -85.051129, 180, 85.051129], "length": 4, "type": "array", "value": "number"},
            "encoding": {"default": "mapbox", "type": "enum", "values": ["terrarium", "mapbox", "custom"]},
            "greenFactor": {"default": 1, "type": "number"},
            "maxzoom": {"default": 22, "type": "number"},
            "minzoom": {"default": 0, "type": "number"},
            "redFactor": {"default": 1, "type": "number"},
            "tileSize": {"default": 512, "type": "number"},
            "tiles": {"type": "array", "value": "string"},
            "type": {"required": true, "type": "enum", "values": ["raster-dem"]},
            "url": {"type": "string"},
            "volatile": {"default": false, "type": "boolean"}
          },
          "source_vector": {
            "*": {"type": "*"},
            "attribution": {"type": "string"},
            "bounds": {"default": [-180, -85.051129, 180, 85.051129], "length": 4, "type": "array", "value": "number"},
            "maxzoom": {"default": 22, "type": "number"},
            "minzoom": {"default": 0, "type": "number"},
            "promoteId": {"type": "promoteId"},
            "scheme": {"default": "xyz", "type": "enum", "values": ["xyz", "tms"]},
            "tiles": {"type": "array", "value": "string"},
            "type": {"required": true, "type": "enum", "values": ["vector"]},
            "url": {"type": "string"},
            "volatile": {"default": false, "type": "boolean"}
          },
          "source_video": {
            "coordinates": {"length": 4, "required": true, "type": "array", "value": {"length": 2, "type": "array", "value": "number"}},
            "type": {"required": true, "type": "enum", "values": ["video"]},
            "urls": {"required": true, "type": "array", "value": "string"}
          },
          "terrain": {
            "exaggeration": {"default": 1, "minimum": 0, "type": "number"},
            "source": {"required": true, "type": "string"}
          },
          "transition": {
            "delay": {"default": 0, "minimum": 0, "type": "number"},
            "duration": {"default": 300, "minimum": 0, "type": "number"}
          }
        }
        """

    /// `listing` parsed (a test checks that it parses).
    static let specification: JSONValue = (try? JSONValue.parse(Array(listing.utf8))) ?? .object([:])

    /// The properties of section `name` (`$root`, `source_vector`, `layer`, ...).
    static func section(_ name: String) -> [String: JSONValue] {
        specification[name]?.objectValue ?? [:]
    }
}

/// GL JS's validation of a style document outside its layers' properties (see
/// `StyleDocument.mapLibreProblems`), its messages word for word where it has them.
struct DocumentCheck {
    let style: JSONValue
    var problems: [MapLibreProblem] = []

    /// The root keys whose problems `--lenient` cannot remove: the document needs them.
    private static let essentialKeys: Set<String> = ["version", "sources", "layers", "glyphs", "sprite"]

    /// Checks the root object, its sources and its other sections (not `layers`' items).
    mutating func root() {
        guard case .object(let root) = style else {
            report("", "object expected, \(style.specificationTypeName) found")
            return
        }
        let specification = MapLibreDocument.section("$root")
        for (key, value) in root.sorted(by: { $0.key < $1.key }) {
            // Other keys are left to the renderer (GL JS validates them with "*": nothing).
            guard let property = specification[key]?.objectValue else { continue }
            switch key {
            case "layers":
                if case .array = value { continue }
                report(key, "array expected, \(value.specificationTypeName) found")
            case "glyphs":
                guard case .string(let url) = value else {
                    report(key, "string expected, \(value.specificationTypeName) found")
                    continue
                }
                if !url.containsUTF8("{fontstack}") {
                    report(key, "\"glyphs\" url must include a \"{fontstack}\" token")
                }
                if !url.containsUTF8("{range}") { report(key, "\"glyphs\" url must include a \"{range}\" token") }
            default:
                check(value, property, at: key)
            }
        }
        missing(in: root, of: specification, at: "")
    }

    private mutating func report(_ path: String, _ message: String) {
        let key = String(path.split(separator: ".").first.map { $0.split(separator: "[").first ?? $0 } ?? "")
        let removal: MapLibreProblem.Removal = Self.essentialKeys.contains(key) || path.isEmpty ? .none : .rootKey
        problems.append(MapLibreProblem(path: path, message: message, removal: removal))
    }

    private mutating func missing(
        in object: [String: JSONValue], of specification: [String: JSONValue], at path: String
    ) {
        for (name, property) in specification.sorted(by: { $0.key < $1.key })
        where property["required"] == .bool(true) && property["default"] == nil && object[name] == nil {
            report(path, "missing required property \"\(name)\"")
        }
    }

    /// `value` against the specification of one property (`validate` in GL JS).
    private mutating func check(_ value: JSONValue, _ property: [String: JSONValue], at path: String) {
        let type = property["type"]?.stringValue ?? "*"
        func expected(_ what: String) { report(path, "\(what) expected, \(value.specificationTypeName) found") }
        if type == "projectionDefinition" {
            switch value {
            case .string: return
            case .array(let items):
                let transition =
                    items.count == 3 && items[0].stringValue != nil && items[1].stringValue != nil
                    && { if case .number = items[2] { true } else { false } }()
                let expression = ["interpolate", "step", "literal"].contains(items.first?.stringValue ?? "")
                if !transition && !expression {
                    report(path, "projection expected, invalid array \(value.serialized) found")
                }
            default: report(path, "projection expected, invalid type \"\(value.specificationTypeName)\" found")
            }
            return
        }
        if let parameters = property["parameters"]?.arrayValue,
            StyleDocument.isExpression(value) || LegacyFunction.isFunction(value)
        {
            let specification = PropertySpecification(
                type: type, value: property["value"]?.stringValue, propertyType: "data-constant",
                parameters: parameters.compactMap(\.stringValue), interpolated: property["interpolated"] == .bool(true))
            if let message = StyleDocument.expressionProblem(value, specification: specification) {
                report(path, message)
            }
            return
        }
        switch type {
        case "*": return
        case "string": if value.stringValue == nil { expected("string") }
        case "boolean": if case .bool = value {} else { expected("boolean") }
        case "number":
            guard case .number(let number) = value else { return expected("number") }
            if case .number(let minimum)? = property["minimum"], number < minimum {
                report(path, "\(number.javaScriptText) is less than the minimum value \(minimum.javaScriptText)")
            }
            if case .number(let maximum)? = property["maximum"], number > maximum {
                report(path, "\(number.javaScriptText) is greater than the maximum value \(maximum.javaScriptText)")
            }
        case "color":
            guard case .string(let text) = value else { return expected("color") }
            if StyleColor(css: text) == nil { report(path, "color expected, \"\(text)\" found") }
        case "enum":
            let values = property["values"]?.arrayValue ?? []
            if !values.contains(value) {
                let list = values.map { $0.stringValue ?? $0.serialized }.joined(separator: ", ")
                report(path, "expected one of [\(list)], \(value.serialized) found")
            }
        case "array":
            guard case .array(let items) = value else { return expected("array") }
            if case .number(let length)? = property["length"], items.count != Int(length) {
                return report(path, "array length \(Int(length)) expected, length \(items.count) found")
            }
            var item: [String: JSONValue] = ["type": property["value"] ?? .string("*")]
            if let values = property["values"] { item["values"] = values }
            if case .object(let nested)? = property["value"] { item = nested }
            for (index, element) in items.enumerated() { check(element, item, at: "\(path)[\(index)]") }
        case "sources":
            guard case .object(let sources) = value else { return expected("object") }
            for (id, source) in sources.sorted(by: { $0.key < $1.key }) { self.source(source, at: "\(path).\(id)") }
        case "sprite": sprite(value, at: path)
        case "promoteId":
            if case .object(let keys) = value {
                for (layer, key) in keys.sorted(by: { $0.key < $1.key }) where key.stringValue == nil {
                    report("\(path).\(layer)", "string expected, \(key.specificationTypeName) found")
                }
            } else if value.stringValue == nil {
                expected("string")
            }
        case "light", "sky", "terrain", "projection":
            // GL JS checks their members only: a required one missing goes unreported.
            section(value, MapLibreDocument.section(type), at: path, transitions: type == "light", required: false)
        default:
            section(value, MapLibreDocument.section(type), at: path)
        }
    }

    /// An object of a section (`light`, `transition`, a source type): its keys by the
    /// section, unknown keys refused unless the section has `*`, required keys present.
    private mutating func section(
        _ value: JSONValue, _ specification: [String: JSONValue], at path: String, transitions: Bool = false,
        required: Bool = true
    ) {
        guard case .object(let object) = value else {
            return report(path, "object expected, \(value.specificationTypeName) found")
        }
        for (key, member) in object.sorted(by: { $0.key < $1.key }) {
            let place = path.isEmpty ? key : "\(path).\(key)"
            if let property = specification[key]?.objectValue {
                check(member, property, at: place)
            } else if transitions, key.hasSuffix("-transition"), specification[String(key.dropLast(11))] != nil {
                section(member, MapLibreDocument.section("transition"), at: place)
            } else if let any = specification["*"]?.objectValue {
                check(member, any, at: place)
            } else {
                report(place, "unknown property \"\(key)\"")
            }
        }
        if required { missing(in: object, of: specification, at: path) }
    }

    /// A source, by its type (`validateSource`).
    private mutating func source(_ value: JSONValue, at path: String) {
        guard case .object(let source) = value else {
            return report(path, "object expected, \(value.specificationTypeName) found")
        }
        guard let type = source["type"] else { return report(path, "\"type\" is required") }
        switch type.stringValue {
        case "vector", "raster", "geojson", "video", "image":
            section(value, MapLibreDocument.section("source_" + (type.stringValue ?? "")), at: path)
        case "raster-dem":
            let custom = source["encoding"] == .string("custom")
            for key in ["redFactor", "greenFactor", "blueFactor", "baseShift"] where !custom && source[key] != nil {
                let encoding = source["encoding"].map { "\($0.serialized)" } ?? "Default"
                report(
                    "\(path).\(key)",
                    "\"\(key)\" is only valid when \"encoding\" is set to \"custom\". \(encoding) encoding found")
            }
            let others = source.filter {
                custom || !["redFactor", "greenFactor", "blueFactor", "baseShift"].contains($0.key)
            }
            section(.object(others), MapLibreDocument.section("source_raster_dem"), at: path)
        case "canvas":
            report(path, "Please use runtime APIs to add canvas sources, rather than including them in stylesheets.")
        default:
            report(
                "\(path).type",
                "expected one of [vector, raster, raster-dem, geojson, video, image], \(type.serialized) found")
        }
    }

    /// `sprite`: a URL, or `{id, url}` entries with unique ids and unique URLs.
    private mutating func sprite(_ value: JSONValue, at path: String) {
        guard case .array(let entries) = value else {
            if value.stringValue == nil { report(path, "string expected, \(value.specificationTypeName) found") }
            return
        }
        var ids: Set<String> = [], urls: Set<String> = []
        let entry: [String: JSONValue] = [
            "id": .object(["type": .string("string"), "required": .bool(true)]),
            "url": .object(["type": .string("string"), "required": .bool(true)]),
        ]
        for (index, item) in entries.enumerated() {
            if let id = item["id"]?.stringValue, !ids.insert(id).inserted {
                report(path, "all the sprites' ids must be unique, but \(id) is duplicated")
            }
            if let url = item["url"]?.stringValue, !urls.insert(url).inserted {
                report(path, "all the sprites' URLs must be unique, but \(url) is duplicated")
            }
            section(item, entry, at: "\(path)[\(index)]")
        }
    }

    /// What GL JS's `validateLayer` reports of layer `index` besides its properties: `type`
    /// or `ref`, a unique `id` (`previous`: the first index of each id before it), the ref
    /// layer or the source, and the keys of the layer section (`id`, zooms, `source`).
    func layer(_ layer: JSONValue, index: Int, previous: [String: Int]) -> [MapLibreProblem] {
        var problems: [MapLibreProblem] = []
        let id = layer["id"]?.stringValue ?? ""
        func problem(_ property: String, _ message: String) {
            problems.append(
                MapLibreProblem(layer: index, id: id, property: property, message: message, removal: .layer))
        }
        if layer["type"] == nil && layer["ref"] == nil { problem("type", "either \"type\" or \"ref\" is required") }
        if let first = previous[id] {
            problem("id", "duplicate layer id \"\(id)\", previously used at layers[\(first)]")
        }
        let layers = style["layers"]?.arrayValue ?? []
        var type = layer["type"]?.stringValue
        if let ref = layer["ref"] {
            for key in ["type", "source", "source-layer", "filter", "layout"] where layer[key] != nil {
                problem("ref", "\"\(key)\" is prohibited for ref layers")
            }
            // GL JS takes the last layer of that id, as its dereferencing does.
            if let target = layers.last(where: { $0["id"] == ref && $0["id"] != nil }) {
                if target["ref"] != nil { problem("ref", "ref cannot reference another ref layer") }
                type = target["type"]?.stringValue
            } else {
                problem("ref", "ref layer \"\(ref.stringValue ?? ref.serialized)\" not found")
            }
        } else if type != "background" {
            if let sourceID = layer["source"]?.stringValue {
                if let source = style["sources"]?[sourceID] {
                    let sourceType = source["type"]?.stringValue
                    let message: String? =
                        switch (sourceType, type) {
                        case ("vector", "raster"): "layer \"\(id)\" requires a raster source"
                        case (let kind, "hillshade") where kind != "raster-dem":
                            "layer \"\(id)\" requires a raster-dem source"
                        case ("raster", let kind) where kind != "raster": "layer \"\(id)\" requires a vector source"
                        case ("vector", _) where layer["source-layer"] == nil:
                            "layer \"\(id)\" must specify a \"source-layer\""
                        case ("raster-dem", let kind) where kind != "hillshade":
                            "raster-dem source can only be used with layer type 'hillshade'."
                        case (let kind, "line")
                        where layer["paint"]?["line-gradient"] != nil
                            && !(kind == "geojson" && source["lineMetrics"] == .bool(true)):
                            "layer \"\(id)\" specifies a line-gradient, which requires a GeoJSON source with `lineMetrics` enabled."
                        default: nil
                        }
                    if let message { problem("source", message) }
                } else {
                    problem("source", "source \"\(sourceID)\" not found")
                }
            } else if layer["source"] == nil {
                problem("source", "missing required property \"source\"")
            }
        }
        let specification = MapLibreDocument.section("layer")
        for (key, value) in (layer.objectValue ?? [:]).sorted(by: { $0.key < $1.key })
        where !["type", "filter", "layout", "paint"].contains(key) {
            guard let property = specification[key]?.objectValue else { continue }
            var nested = DocumentCheck(style: style)
            nested.check(value, property, at: key)
            for found in nested.problems {
                let removal: MapLibreProblem.Removal =
                    key == "minzoom" || key == "maxzoom" || key == "metadata" ? .property : .layer
                problems.append(
                    MapLibreProblem(
                        layer: index, id: id, property: found.property, message: found.message, removal: removal))
            }
        }
        if layer["id"] == nil { problem("id", "missing required property \"id\"") }
        return problems
    }
}
