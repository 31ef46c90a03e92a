import IconrCore

/// Mapbox's `imports` (a style made of other styles, as Mapbox Standard's roots are) written
/// into one style that MapLibre reads.
extension StyleDocument {
    /// `root` with the styles of its `imports` written in: each import's style (given by its
    /// id in `given`, as `--import ID=FILE` gives it, else the import's inline `data`) adds its
    /// sources, its `schema` (defaults set by the import's `config`) and its layers, in the
    /// import's order; the root's own layers go into the import's `slot` layers by their
    /// `slot`, the rest on top, as Mapbox stacks them. An id the root has already is prefixed
    /// with the import's (`basemap/water`). An import that is neither given nor inline is
    /// left out with a warning naming its URL; a style whose layers all come from imports
    /// left out is an error, since its copy would be an empty map.
    static func resolvingImports(
        _ root: JSONValue, given: [String: [UInt8]], file: String, depth: Int = 0
    ) throws(StyleError) -> (json: JSONValue, warnings: [String]) {
        guard case .object(var style) = root, case .array(let imports)? = style["imports"], !imports.isEmpty else {
            return (root, [])
        }
        guard depth < 8 else { throw StyleError(message: "\(file): imports nest more than 8 deep") }
        var warnings: [String] = []
        var sources = style["sources"]?.objectValue ?? [:]
        var schema = style["schema"]?.objectValue ?? [:]
        var layerIDs = Set((style["layers"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue })
        var importedLayers: [JSONValue] = []
        var missing: [(place: String, id: String, url: String)] = []
        for (index, entry) in imports.enumerated() {
            let id = entry["id"]?.stringValue ?? ""
            let url = entry["url"]?.stringValue ?? "(no url)"
            let place = "imports[\(index)] (\"\(id)\")"
            var imported: JSONValue
            if let bytes = given[id] {
                do {
                    imported = try JSONValue.parse(bytes)
                } catch {
                    throw StyleError(message: "\(file): --import \(id): not a JSON style: \(error)")
                }
            } else if let data = entry["data"] {
                imported = data
            } else {
                missing.append((place, id, url))
                continue
            }
            guard imported.objectValue != nil else {
                throw StyleError(message: "\(file): \(place): the imported style is not a JSON object")
            }
            let nested = try resolvingImports(imported, given: given, file: "\(file): \(place)", depth: depth + 1)
            imported = nested.json
            warnings += nested.warnings
            // Its sources, renamed where the root has the id already.
            var sourceNames: [String: String] = [:]
            for (sourceID, source) in (imported["sources"]?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
                let name = sources[sourceID] == nil ? sourceID : "\(id)/\(sourceID)"
                sourceNames[sourceID] = name
                sources[name] = source
            }
            // Its schema, with the import's config as the defaults.
            let config = entry["config"]?.objectValue ?? [:]
            for (name, option) in (imported["schema"]?.objectValue ?? [:]) where schema[name] == nil {
                guard case .object(var fields) = option else { continue }
                if let value = config[name] { fields["default"] = value }
                schema[name] = .object(fields)
            }
            for key in ["glyphs", "sprite"] where style[key] == nil { style[key] = imported[key] }
            for case .object(var layer) in imported["layers"]?.arrayValue ?? [] {
                if let layerID = layer["id"]?.stringValue, layerIDs.contains(layerID) {
                    layer["id"] = .string("\(id)/\(layerID)")
                }
                if let layerID = layer["id"]?.stringValue { layerIDs.insert(layerID) }
                if let source = layer["source"]?.stringValue, let name = sourceNames[source] {
                    layer["source"] = .string(name)
                }
                importedLayers.append(.object(layer))
            }
        }
        let own = style["layers"]?.arrayValue ?? []
        if importedLayers.isEmpty && !missing.isEmpty
            && own.allSatisfy({ $0["type"]?.stringValue == "slot" })
        {
            let first = missing[0]
            throw StyleError(
                message: "\(file): \(first.place): the style's layers all come from \(first.url), which iconr cannot "
                    + "read: give that style with --import \(first.id.isEmpty ? "ID" : first.id)=FILE")
        }
        for entry in missing {
            warnings.append(
                "\(file): \(entry.place): removed the Mapbox import of \(entry.url): its layers are not in the copy "
                    + "(--import \(entry.id.isEmpty ? "ID" : entry.id)=FILE adds them)")
        }
        // The root's layers into the imports' slots, by their `slot`; the rest on top.
        var layers: [JSONValue] = []
        var placed = Set<Int>()
        for layer in importedLayers {
            guard layer["type"] == .string("slot"), let slot = layer["id"]?.stringValue else {
                layers.append(layer)
                continue
            }
            for (index, item) in own.enumerated() where item["slot"]?.stringValue == slot && !placed.contains(index) {
                layers.append(item)
                placed.insert(index)
            }
        }
        layers += own.indices.filter { !placed.contains($0) }.map { own[$0] }
        style["layers"] = .array(layers)
        style["sources"] = .object(sources)
        if !schema.isEmpty { style["schema"] = .object(schema) }
        style["imports"] = nil
        return (.object(style), warnings)
    }
}
