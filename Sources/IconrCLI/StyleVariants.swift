import Iconr

/// What `iconr sprite --style` adds: the variants (and scales) a style's symbol layers show
/// for their features, and the style copy for `--emit-style`.
struct StyleVariants {
    let style: StyleDocument
    let needed: [(image: ImageReference, scale: Double)]
    let templates: [String: SVGTemplate]

    init(stylePath: String, dataPaths: [String], directories: [String], recursive: Bool, console: Console) throws {
        var data: [String: JSONValue] = [:]
        for path in dataPaths {
            let name = path.split(separator: "/").last.map(String.init) ?? path
            let bytes = try IconrError.reading(path)
            do {
                data[name] = try JSONValue.parse(bytes)
            } catch {
                throw IconrError.io("not GeoJSON: \(error)", file: path)
            }
        }
        let bytes = try IconrError.reading(stylePath)
        style = try StyleDocument(bytes: bytes, file: stylePath, data: data)
        let files = Dictionary(uniqueKeysWithValues: try SpriteBuilder.iconFiles(in: directories, recursive: recursive).map { ($0.id, $0.path) })
        let all = style.neededIcons(imageExists: { files[$0] != nil })
        for name in Set(all.map(\.image.name)).sorted() where files[name] == nil {
            console.warning("\(stylePath): the style shows icon \"\(name)\", which is not among the icons")
        }
        needed = all.filter { files[$0.image.name] != nil }
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

    /// The style for MapLibre: sprite at `spriteURL`, parameterized images prebaked.
    func emitted(spriteURL: String) -> [UInt8] {
        Array((style.emitted(spriteURL: spriteURL, templates: templates, needed: needed.map(\.image)).serialized + "\n").utf8)
    }
}
