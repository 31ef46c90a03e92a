import IconrCore
import IconrRender
import IconrStyle

/// A build's sheets and other sprites (a style's own, its sprite iconsets) drawn into one
/// sheet per ratio (`iconr sprite --merge-sprites`), for clients that read one sprite URL,
/// not an array of them (OpenLayers' ol-mapbox-style). Each image of another sprite gets the
/// id a style names it by in an array (`extra:airport`; unprefixed from `default`), so the
/// style's names stay as written.
package enum SpriteMerge {
    /// Another sprite: the prefix of its files (`<prefix>[@2x].json|png`) and its sprite id.
    package struct Source: Sendable {
        /// The prefix of its files, a local path.
        package var path: String
        /// Its id in the style's sprite array (`default`: its images keep their ids).
        package var id: String

        /// A sprite whose files are at `path` (`out/sprite` for `out/sprite@2x.png`), named `id`.
        package init(path: String, id: String) {
            self.path = path
            self.id = id
        }
    }

    /// The largest sheet of another sprite read (a header may claim any size up to 2^31 a
    /// side): 16384 px a side, four times what MapLibre's sprites commonly are at 2x.
    static let foreignSheetLimit = PixelSize(width: 16_384, height: 16_384)

    /// The file prefix a sprite URL of the style at `stylePath` names: a `file://` URL's path,
    /// or a path (relative to the style's folder); nil for a URL of another scheme.
    static func localPath(ofSprite url: String, stylePath: String) -> String? {
        if url.hasPrefix("file://") { return String(url.dropFirst("file://".count)) }
        guard !url.containsUTF8("://") else { return nil }
        let folder = stylePath.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        return url.hasPrefix("/") || folder.isEmpty ? url : folder + "/" + url
    }

    /// The other sprites of `style` to merge: its `sprite` entries and its sprite iconsets
    /// (by the entry ids `StyleDocument.emitted` gives them), each a `file://` URL or a path
    /// (beside the style when relative). A remote URL is an error: iconr reads no network.
    package static func sources(of style: StyleDocument, stylePath: String) throws(StyleError) -> [Source] {
        let sprites = style.sprites(iconr: .string(""), sheetOf: [:], firstSheetIDs: [])
        var sources: [Source] = []
        for entry in sprites.value.arrayValue ?? [] {
            guard let id = entry["id"]?.stringValue, sprites.foreign.contains(id), let url = entry["url"]?.stringValue
            else { continue }
            guard let path = localPath(ofSprite: url, stylePath: stylePath) else {
                throw StyleError(
                    message: "\(stylePath): sprite \"\(id)\" is at \(url): --merge-sprites reads local sprites only "
                        + "(a file:// URL or a path); download it, or leave --merge-sprites out for a sprite array")
            }
            sources.append(Source(path: path, id: id))
        }
        return sources
    }

    /// `build` with `sources` drawn into it: one sheet per ratio holding every image of the
    /// build's sheets and of each source's sheet of that ratio, packed anew. An image id
    /// already taken, a source without a sheet of a ratio, or images that do not fit one
    /// sheet of `options.maxSize` a side are errors.
    package static func merged(
        _ build: SpriteBuild, with sources: [Source], options: SpriteOptions
    ) throws
        -> SpriteBuild
    {
        var sheets: [SpriteSheetFile] = []
        for ratio in Set(build.sheets.map(\.ratio)).sorted() {
            var images: [(id: String, entry: SpriteIndexEntry, pixels: RasterImage)] = []
            for sheet in build.sheets where sheet.ratio == ratio {
                // No larger than the sheet says it is (a cached archive is a file like any other).
                let decoded = try PNGDecoder.decode(sheet.png, maxSize: sheet.size)
                for (id, entry) in sheet.entries.sorted(by: { $0.key < $1.key }) {
                    guard let pixels = decoded.cropped(to: entry.rect) else {
                        throw StyleError(message: "image \"\(id)\" lies outside its sheet in the build")
                    }
                    images.append((id, entry, pixels))
                }
            }
            var taken = Set(images.map(\.id))
            for source in sources {
                let base = source.path + (ratio == 1 ? "" : "@\(ratio.shortText)x")
                let index = try IconrError.reading(base + ".json")
                guard let entries = SpriteIndex.entries(fromJSON: index) else {
                    throw StyleError(message: "\(base).json: not a sprite index")
                }
                let sheet = try PNGDecoder.decode(try IconrError.reading(base + ".png"), maxSize: foreignSheetLimit)
                for (name, entry) in entries.sorted(by: { $0.key < $1.key }) {
                    let id = source.id == "default" ? name : source.id + ":" + name
                    guard taken.insert(id).inserted else {
                        throw StyleError(message: "\(base).json: image \"\(id)\" is also in iconr's sprite")
                    }
                    guard let pixels = sheet.cropped(to: entry.rect) else {
                        throw StyleError(message: "\(base).json: image \"\(name)\" lies outside its sheet")
                    }
                    images.append((id, entry, pixels))
                }
            }
            let padding = Int((Double(options.padding) * ratio).rounded(.up))
            guard
                let packed = SpritePacker.pack(
                    images.map(\.pixels.size), padding: padding, maxSide: options.maxSize)
            else {
                throw StyleError(
                    message: "the merged sprite at \(ratio.shortText)x does not fit one sheet of \(options.maxSize) px "
                        + "a side (--max-size), and a client of one sprite URL reads one sheet")
            }
            var pixels = [UInt8](repeating: 0, count: packed.width * packed.height * 4)
            var entries: [String: SpriteIndexEntry] = [:]
            var imageArea = 0
            for (index, image) in images.enumerated() {
                guard let rect = packed.placements[index] else { continue }
                let width = image.pixels.size.width
                for row in 0..<image.pixels.size.height {
                    let from = row * width * 4, to = ((rect.y + row) * packed.width + rect.x) * 4
                    pixels.replaceSubrange(to..<to + width * 4, with: image.pixels.pixels[from..<from + width * 4])
                }
                var entry = image.entry
                entry.rect = PixelRect(x: rect.x, y: rect.y, width: width, height: image.pixels.size.height)
                entries[image.id] = entry
                imageArea += width * image.pixels.size.height
            }
            let size = PixelSize(width: packed.width, height: packed.height)
            let png = try PNGEncoder.encodeSmallest(
                RasterImage(size: size, pixels: pixels), optimize: options.optimize)
            let paddedArea = images.reduce(0) {
                $0 + ($1.pixels.size.width + padding) * ($1.pixels.size.height + padding)
            }
            let sheetArea = Double(max(size.width * size.height, 1))
            sheets.append(
                SpriteSheetFile(
                    ratio: ratio, sheet: 0, png: png, entries: entries, size: size, ids: entries.count,
                    images: entries.count, fill: Double(imageArea) / sheetArea,
                    packing: Double(paddedArea) / Double((size.width + padding) * (size.height + padding))))
        }
        return SpriteBuild(
            sheets: sheets, sheetCount: 1, icons: build.icons, variants: build.variants, skipped: build.skipped,
            warnings: build.warnings, renders: build.renders, cacheHits: build.cacheHits,
            renderSeconds: build.renderSeconds, composeSeconds: build.composeSeconds,
            sheetsFromCache: build.sheetsFromCache, inputsUnchanged: build.inputsUnchanged,
            iconsReused: build.iconsReused, filesRead: build.filesRead)
    }
}
