import IconrCore
import IconrStyle

/// What a style adds to a sprite (`iconr sprite --style`, `iconr serve --style`): the
/// variants (and scales) its symbol layers show for their features, and its copy for MapLibre.
package struct StyleVariants: Sendable {
    package let style: StyleDocument
    package let needed: [(image: ImageReference, scale: Double)]
    /// The needed variants drawn larger than their features show them, so that the largest
    /// icon-size their layer can reach is sharp, with the scale their features alone need.
    package let raised: [ImageReference: Double]
    package let templates: [String: SVGTemplate]
    /// The ids of the icons in the folders.
    package let icons: Set<String>
    /// Those drawn from SVG files (not PNG ones): the icons that can have variants.
    private let drawnIcons: Set<String>
    /// What reading it found, a line each: parameters that come from data, icons it shows
    /// that the folders lack.
    package private(set) var warnings: [String]
    /// The icons the style shows that the folders lack, sorted (each warned of in `warnings`).
    package let missingIcons: [String]
    /// The icons each symbol layer shows, in the style's order.
    package let layers: [LayerIcons]
    /// The halos baked into each layer's images, by layer id (`bakeHalos`).
    package private(set) var halos: [String: LayerHalos] = [:]
    /// The ids of the style's own sprite entries whose index is a local file (a `file://` URL
    /// or a path beside the style), by entry id.
    package let ownSprites: [String: Set<String>]

    /// Reads the style at `stylePath` (with `--data` files, `--config` values and the files of
    /// its Mapbox imports by import id, `--import`) and finds
    /// what it shows of the icons in `directories` (with `firstFolderWins`, an id in several
    /// of them is the first one's).
    package init(
        stylePath: String, dataPaths: [String], config overrides: [String: JSONValue],
        imports: [String: String] = [:], directories: [String],
        recursive: Bool, firstFolderWins: Bool = false, environment: MapboxEnvironment = MapboxEnvironment(),
        sizes: IconSizes = .layerLargest, followsLinksOut: Bool = true, folderNames: [String: String] = [:]
    ) throws {
        var data: [String: [UInt8]] = [:]
        for path in dataPaths {
            data[path.split(separator: "/").last.map(String.init) ?? path] = try IconrError.reading(path)
        }
        let bytes = try IconrError.reading(stylePath)
        style = try StyleDocument(
            bytes: bytes, file: stylePath, data: data, config: overrides, environment: environment,
            imports: Self.reading(imports: imports))
        let files = Dictionary(
            try SpriteBuilder.iconFiles(
                in: directories, recursive: recursive, firstFolderWins: firstFolderWins,
                followsLinksOut: followsLinksOut, names: folderNames
            ).map {
                ($0.id, $0.path)
            },
            uniquingKeysWith: { first, _ in first })
        let names = Set(files.keys)
        icons = names
        drawnIcons = Set(files.filter { !$0.value.lowercased().hasSuffix(".png") }.keys)
        ownSprites = Self.localSpriteIndexes(of: style, stylePath: stylePath)
        let all = style.neededIcons(imageExists: { names.contains($0) }, sizes: sizes)
        var warnings = all.warnings
        var missing: [String] = []
        for name in Set(all.icons.map(\.image.name)).sorted() where files[name] == nil {
            missing.append(name)
            warnings.append(
                "\(stylePath): the style shows icon \"\(name)\", which is not among the icons"
                    + Self.suggestion(for: name, among: names))
        }
        missingIcons = missing
        layers = all.layers
        needed = all.icons.filter { files[$0.image.name] != nil }
        raised = all.raised.filter { files[$0.key.name] != nil }
        var templates: [String: SVGTemplate] = [:]
        // The icons of every variant needed, and every icon an `image` names with params
        // (a variant from data at run time needs its parameters' defaults).
        for name in Set(needed.map(\.image.name)).union(Self.parameterizedImageNames(in: style.json))
        where files[name] != nil {
            templates[name] = files[name].flatMap { try? IconrError.readingTemplate($0) }.flatMap {
                try? SVGTemplate(bytes: $0)
            }
        }
        self.templates = templates
        // A name computed from data can be any icon of the folders: read those only then.
        var everyIcon: [String: SVGTemplate]?
        let templatesOfEveryIcon = { () -> [String: SVGTemplate] in
            if let everyIcon { return everyIcon }
            var all: [String: SVGTemplate] = [:]
            for (name, path) in files {
                all[name] =
                    templates[name] ?? (try? IconrError.readingTemplate(path)).flatMap { try? SVGTemplate(bytes: $0) }
            }
            everyIcon = all
            return all
        }
        self.warnings =
            warnings + Self.unknownParameters(in: style, templates: templates, everyIcon: templatesOfEveryIcon)
    }

    /// ` (did you mean 'cafe'?)` for a name the folders lack: the id that differs only in a
    /// size suffix (`cafe-15` and `cafe`, either way round), else the nearest by spelling.
    package static func suggestion(for name: String, among icons: Set<String>) -> String {
        func stem(_ id: String) -> String {
            guard let dash = id.lastIndex(of: "-"), id.index(after: dash) != id.endIndex,
                id[id.index(after: dash)...].utf8.allSatisfy({ (48...57).contains($0) })
            else { return id }
            return String(id[..<dash])
        }
        let wanted = stem(name)
        if let same = icons.sorted().first(where: { stem($0) == wanted }) { return " (did you mean '\(same)'?)" }
        return didYouMean(name, among: icons.sorted())
    }

    /// The ids in the index of each of `style`'s own sprite entries that is a local file.
    static func localSpriteIndexes(of style: StyleDocument, stylePath: String) -> [String: Set<String>] {
        var indexes: [String: Set<String>] = [:]
        for entry in style.json["sprite"]?.arrayValue ?? [] {
            guard let id = entry["id"]?.stringValue, let url = entry["url"]?.stringValue,
                let path = SpriteMerge.localPath(ofSprite: url, stylePath: stylePath),
                let bytes = try? IconrError.reading(path + ".json"),
                let index = (try? JSONValue.parse(bytes))?.objectValue
            else { continue }
            indexes[id] = Set(index.keys)
        }
        return indexes
    }

    /// The files of `--import ID=FILE`, read, by import id.
    package static func reading(imports: [String: String]) throws -> [String: [UInt8]] {
        var styles: [String: [UInt8]] = [:]
        for (id, path) in imports { styles[id] = try IconrError.reading(path) }
        return styles
    }

    /// A warning for each param name of a layer's `image` that no icon the layer can show
    /// declares: Mapbox ignores it, so the icon keeps its default (a misspelt name gives black
    /// flags). A name some of those icons declare is meant for them (Mapbox Standard passes
    /// params that some of its icons lack).
    static func unknownParameters(
        in style: StyleDocument, templates: [String: SVGTemplate], everyIcon: () -> [String: SVGTemplate]
    ) -> [String] {
        var warnings: [String] = []
        for (index, layer) in (style.json["layers"]?.arrayValue ?? []).enumerated() {
            guard let iconImage = layer["layout"]?["icon-image"] else { continue }
            let place = "\(style.file): layer \"\(layer["id"]?.stringValue ?? "layers[\(index)]")\": "
            for (name, params) in images(in: iconImage) {
                // An icon the folders lack is warned of already.
                let shown = name.map { templates[$0].map { [$0] } ?? [] } ?? Array(everyIcon().values)
                guard !shown.isEmpty else { continue }
                let declared = Array(Set(shown.flatMap { $0.parameters.map(\.name) })).sorted()
                for param in params.sorted() where !declared.contains(param) {
                    let error =
                        name.flatMap {
                            UnknownParameterError(unknownNames: [param], icon: $0, declared: declared)?.description
                        }
                        ?? "unknown parameter '\(param)': no icon the layer can show declares it"
                        + didYouMean(param, among: declared)
                    let warning = place + "icon-image: " + error + "; ignored, as Mapbox does"
                    if !warnings.contains(warning) { warnings.append(warning) }
                }
            }
        }
        return warnings
    }

    /// Every `["image", name, {"params": {...}}]` in `json`: its literal name (nil when
    /// computed) and its param names.
    static func images(in json: JSONValue) -> [(name: String?, params: [String])] {
        switch json {
        case .array(let items):
            var found = items.flatMap { images(in: $0) }
            if items.count >= 3, items[0] == .string("image"), let params = items[2].objectValue?["params"] {
                found.append((items[1].stringValue, Array((params.objectValue ?? [:]).keys)))
            }
            return found
        case .object(let fields): return fields.values.flatMap { images(in: $0) }
        default: return []
        }
    }

    /// The literal names of `["image", name, {"params": ...}]` anywhere in `json`.
    static func parameterizedImageNames(in json: JSONValue) -> Set<String> {
        Set(images(in: json).compactMap(\.name))
    }

    /// Adds the needed variants (the plain icon when no parameter is given) at their scales,
    /// and each baked halo's variants (`bakeHalos`).
    package func add(to options: inout SpriteOptions) {
        for (image, scale) in needed {
            let params = IconParameters(image.params)
            options.variants[image.name, default: []].append(SpriteVariant(params: params, scale: scale))
        }
        for layer in layers {
            guard let baked = halos[layer.id] else { continue }
            // Every id the copy's layer can name of the icons drawn with its halo: each variant
            // of them, and each plain icon (the copy's fallback for colors nobody prebaked).
            for name in (baked.icons ?? []).sorted() {
                let variants = [(ImageReference(name: name), 1.0)] + needed.filter { $0.image.name == name }
                for (image, scale) in variants {
                    for (_, halo) in baked.halos {
                        options.variants[name, default: []].append(
                            SpriteVariant(params: IconParameters(image.params), scale: scale, halo: halo))
                    }
                }
            }
        }
    }

    /// Has `add(to:)` and `emitted` bake the halos each symbol layer asks for into its images
    /// (`--bake-halos`): layers whose icons are SDF (`sdf`, as `--sdf` takes them) keep theirs
    /// to the renderer. Adds a warning for each layer whose halos cannot be baked, or only
    /// for some features.
    package mutating func bakeHalos(sdf: Set<String>) {
        let shown = Dictionary(layers.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for layer in style.json["layers"]?.arrayValue ?? [] {
            guard let id = layer["id"]?.stringValue, let icons = shown[id] else { continue }
            let (baked, warning) = style.bakedHalos(of: layer)
            if let warning { warnings.append(warning) }
            guard var baked else { continue }
            let isSDF = { (name: String) in sdf.contains { SpriteID.matches(name, pattern: $0) } }
            if !icons.namesFromData, icons.names.contains(where: isSDF) {
                warnings.append(
                    "\(style.file): layer \"\(id)\": shows SDF icons, whose halos the renderer draws: none baked")
                continue
            }
            // The icons drawn with the halo: the layer's (any, for names from data), not SDF
            // ones (a pattern may match) nor PNG ones (drawn as they are).
            baked.icons = (icons.namesFromData ? self.icons : icons.names).intersection(drawnIcons).filter {
                !isSDF($0)
            }
            halos[id] = baked
        }
    }

    /// What drawing the `raised` variants larger cost in `build`: how many there are, and the
    /// sheet pixels they take beyond their features' own size, of all image pixels, at the
    /// build's largest ratio.
    package func headroomCost(in build: SpriteBuild) -> (variants: Int, extraPixels: Int, imagePixels: Int) {
        guard let ratio = build.sheets.map(\.ratio).max() else { return (raised.count, 0, 0) }
        var rectangles: [String: SpriteIndexEntry] = [:]
        for sheet in build.sheets where sheet.ratio == ratio {
            rectangles.merge(sheet.entries) { first, _ in first }
        }
        let sizes = Dictionary(needed.map { ($0.image, $0.scale) }, uniquingKeysWith: max)
        var extra = 0.0
        for (image, featureScale) in raised {
            guard let entry = rectangles[spriteID(image)], let scale = sizes[image], scale > 0 else { continue }
            let area = Double(entry.rect.width * entry.rect.height)
            extra += area * (1 - (featureScale / scale) * (featureScale / scale))
        }
        let total = rectangles.values.reduce(0) { $0 + $1.rect.width * $1.rect.height }
        return (raised.count, Int(extra.rounded()), total)
    }

    /// The sprite ids of every image the style shows (its variants and the plain icons it names).
    package var spriteIDs: Set<String> { Set(needed.map { spriteID($0.image) }) }

    /// The sprite id of an image the style shows.
    package func spriteID(_ image: ImageReference) -> String {
        guard !image.params.isEmpty, let template = templates[image.name] else { return image.name }
        return SpriteID.variant(of: image.name, template.resolve(colors: image.params))
    }

    /// The style for MapLibre with `build`'s sheets at `prefix` as its sprite (beside the
    /// style's own sprites, when it has an array of them), parameterized images prebaked, ids
    /// in later sheets prefixed with their sheet's name, and its warnings. With
    /// `runtimeImages`, colors nobody prebaked name an image a client fetches (see
    /// `StyleDocument.emitted`). A style MapLibre would not load is an error naming each part
    /// (`StyleError`), unless `lenient` removes those parts (a warning each) and the rest loads.
    /// With `merged`, `build`'s one sheet holds the style's own sprites too (`SpriteMerge`).
    /// `sheetName` names later sheets' ids (`sprite-2`; by default the prefix's last part).
    package func emitted(
        build: SpriteBuild, prefix: String, sheetName: String? = nil, runtimeImages: Bool = false,
        lenient: Bool = false, merged: Bool = false
    ) throws(StyleError) -> (json: [UInt8], warnings: [String]) {
        let emitted = style.emitted(
            sprite: build.spriteValue(prefix: prefix, sheetName: sheetName), templates: templates,
            needed: needed.map(\.image),
            sheetOf: build.sheetNames(prefix: prefix, sheetName: sheetName), firstSheetIDs: build.firstSheetIDs,
            runtimeImages: runtimeImages, lenient: lenient,
            icons: merged ? icons.union(build.firstSheetIDs) : icons, ownSprites: merged ? [:] : ownSprites,
            merged: merged, halos: halos)
        if !emitted.problems.isEmpty {
            throw StyleError(
                message: "\(style.file): the style for MapLibre would not load: "
                    + emitted.problems.map(\.description).joined(separator: "; ")
                    + (emitted.problems.allSatisfy { $0.removal != .none } ? " (--lenient removes these parts)" : ""))
        }
        return (Array((emitted.json.serialized + "\n").utf8), emitted.warnings)
    }
}
