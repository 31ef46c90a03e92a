import IconrCore
import IconrStyle

/// What a style adds to a sprite (`iconr sprite --style`, `iconr serve --style`): the
/// variants (and scales) its symbol layers show for their features, and its copy for MapLibre.
package struct StyleVariants: Sendable {
    package let style: StyleDocument
    package let needed: [(image: ImageReference, scale: Double)]
    package let templates: [String: SVGTemplate]
    /// The ids of the icons in the folders.
    package let icons: Set<String>
    /// What reading it found, a line each: parameters that come from data, icons it shows
    /// that the folders lack.
    package let warnings: [String]

    /// Reads the style at `stylePath` (with `--data` files and `--config` values) and finds
    /// what it shows of the icons in `directories` (with `firstFolderWins`, an id in several
    /// of them is the first one's).
    package init(
        stylePath: String, dataPaths: [String], config overrides: [String: JSONValue], directories: [String],
        recursive: Bool, firstFolderWins: Bool = false, environment: MapboxEnvironment = MapboxEnvironment()
    ) throws {
        var data: [String: [UInt8]] = [:]
        for path in dataPaths {
            data[path.split(separator: "/").last.map(String.init) ?? path] = try IconrError.reading(path)
        }
        let bytes = try IconrError.reading(stylePath)
        style = try StyleDocument(
            bytes: bytes, file: stylePath, data: data, config: overrides, environment: environment)
        let files = Dictionary(
            try SpriteBuilder.iconFiles(in: directories, recursive: recursive, firstFolderWins: firstFolderWins).map {
                ($0.id, $0.path)
            },
            uniquingKeysWith: { first, _ in first })
        let names = Set(files.keys)
        icons = names
        let all = style.neededIcons(imageExists: { names.contains($0) })
        var warnings = all.warnings
        for name in Set(all.icons.map(\.image.name)).sorted() where files[name] == nil {
            warnings.append("\(stylePath): the style shows icon \"\(name)\", which is not among the icons")
        }
        self.warnings = warnings
        needed = all.icons.filter { files[$0.image.name] != nil }
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
    }

    /// The literal names of `["image", name, {"params": ...}]` anywhere in `json`.
    static func parameterizedImageNames(in json: JSONValue) -> Set<String> {
        switch json {
        case .array(let items):
            var names = Set(items.flatMap { parameterizedImageNames(in: $0) })
            if items.count >= 3, items[0] == .string("image"), case .string(let name) = items[1],
                items[2].objectValue?["params"] != nil
            {
                names.insert(name)
            }
            return names
        case .object(let fields): return Set(fields.values.flatMap { parameterizedImageNames(in: $0) })
        default: return []
        }
    }

    /// Adds the needed variants (the plain icon when no parameter is given) at their scales.
    package func add(to options: inout SpriteOptions) {
        for (image, scale) in needed {
            let params = IconParameters(image.params)
            options.variants[image.name, default: []].append(SpriteVariant(params: params, scale: scale))
        }
    }

    /// The sprite id of an image the style shows.
    package func spriteID(_ image: ImageReference) -> String {
        guard !image.params.isEmpty, let template = templates[image.name] else { return image.name }
        return SpriteID.variant(of: image.name, template.resolve(colors: image.params))
    }

    /// The style for MapLibre: `sprite` as given, parameterized images prebaked, ids in later
    /// sheets prefixed with their sheet's name, and its warnings. With `runtimeImages`,
    /// colors nobody prebaked name an image a client fetches (see `StyleDocument.emitted`).
    /// A style MapLibre would not load is an error naming each part (`StyleError`), unless
    /// `lenient`, which removes those parts with a warning each.
    package func emitted(
        sprite: JSONValue, sheetOf: [String: String], runtimeImages: Bool = false, lenient: Bool = false
    ) throws(StyleError) -> (json: [UInt8], warnings: [String]) {
        let emitted = style.emitted(
            sprite: sprite, templates: templates, needed: needed.map(\.image), sheetOf: sheetOf,
            runtimeImages: runtimeImages, lenient: lenient, icons: icons)
        if !emitted.problems.isEmpty {
            throw StyleError(
                message: "\(style.file): the style for MapLibre would not load: "
                    + emitted.problems.map(\.description).joined(separator: "; ")
                    + " (--lenient removes these parts)")
        }
        return (Array((emitted.json.serialized + "\n").utf8), emitted.warnings)
    }
}
