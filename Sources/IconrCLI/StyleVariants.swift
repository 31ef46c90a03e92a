import Iconr
import IconrCore

/// What `iconr sprite --style` adds: the variants (and scales) a style's symbol layers show
/// for their features, and the style copy for `--emit-style`.
struct StyleVariants {
    let style: StyleDocument
    let needed: [(image: ImageReference, scale: Double)]
    let templates: [String: SVGTemplate]
    /// The ids of the icons in the folders.
    let icons: Set<String>

    init(stylePath: String, dataPaths: [String], config: [String], directories: [String], recursive: Bool, console: Console) throws {
        var data: [String: [UInt8]] = [:]
        for path in dataPaths {
            data[path.split(separator: "/").last.map(String.init) ?? path] = try IconrError.reading(path)
        }
        var overrides: [String: JSONValue] = [:]
        for option in config {
            guard let equals = option.firstIndex(of: "="), equals != option.startIndex else {
                throw UsageError(message: "--config expects NAME=VALUE, found '\(option)'")
            }
            let text = String(option[option.index(after: equals)...])
            // A JSON value (true, 2, "x", [..]) as it is; anything else is a string.
            overrides[String(option[..<equals])] = (try? JSONValue.parse(Array(text.utf8))) ?? .string(text)
        }
        let bytes = try IconrError.reading(stylePath)
        style = try StyleDocument(bytes: bytes, file: stylePath, data: data, config: overrides)
        let files = Dictionary(try SpriteBuilder.iconFiles(in: directories, recursive: recursive).map { ($0.id, $0.path) },
                               uniquingKeysWith: { first, _ in first })
        let names = Set(files.keys)
        icons = names
        let all = style.neededIcons(imageExists: { names.contains($0) })
        all.warnings.forEach { console.warning($0) }
        for name in Set(all.icons.map(\.image.name)).sorted() where files[name] == nil {
            console.warning("\(stylePath): the style shows icon \"\(name)\", which is not among the icons")
        }
        needed = all.icons.filter { files[$0.image.name] != nil }
        var templates: [String: SVGTemplate] = [:]
        for name in Set(needed.map(\.image.name)) {
            templates[name] = files[name].flatMap { try? IconrError.readingTemplate($0) }.flatMap { try? SVGTemplate(bytes: $0) }
        }
        self.templates = templates
    }

    /// Adds the needed variants (the plain icon when no parameter is given) at their scales.
    func add(to options: inout SpriteOptions) {
        for (image, scale) in needed {
            let params = image.params.mapValues(\.hexString)
            options.variants[image.name, default: []].append(SpriteVariant(params: params, scale: scale))
        }
    }

    /// The sprite id of an image the style shows.
    func spriteID(_ image: ImageReference) -> String {
        guard !image.params.isEmpty, let template = templates[image.name] else { return image.name }
        return SpriteID.variant(of: image.name, template.resolve(colors: image.params))
    }

    /// The style for MapLibre: `sprite` as given, parameterized images prebaked, ids in later
    /// sheets prefixed with their sheet's name; its warnings go to the console.
    func emitted(sprite: JSONValue, sheetOf: [String: String], console: Console) -> [UInt8] {
        let icons = icons
        let emitted = style.emitted(sprite: sprite, templates: templates, needed: needed.map(\.image), sheetOf: sheetOf,
                                    imageExists: { icons.contains($0) })
        emitted.warnings.forEach { console.warning($0) }
        return Array((emitted.json.serialized + "\n").utf8)
    }
}
