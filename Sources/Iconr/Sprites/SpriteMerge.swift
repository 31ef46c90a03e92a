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

    /// The other sprites of `style` to merge: its `sprite` entries and its sprite iconsets
    /// (by the entry ids `StyleDocument.emitted` gives them), each a `file://` URL or a path
    /// (beside the style when relative). A remote URL is an error: iconr reads no network.
    package static func sources(of style: StyleDocument, stylePath: String) throws(StyleError) -> [Source] {
        let folder = stylePath.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let sprites = style.sprites(iconr: .string(""), sheetOf: [:], firstSheetIDs: [])
        var sources: [Source] = []
        for entry in sprites.value.arrayValue ?? [] {
            guard let id = entry["id"]?.stringValue, sprites.foreign.contains(id), let url = entry["url"]?.stringValue
            else { continue }
            let path: String
            if url.hasPrefix("file://") {
                path = String(url.dropFirst("file://".count))
            } else if !url.containsUTF8("://") {
                path = url.hasPrefix("/") || folder.isEmpty ? url : folder + "/" + url
            } else {
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
                let decoded = try PNGDecoder.decode(sheet.png, maxSize: PixelSize(width: 1 << 16, height: 1 << 16))
                for (id, entry) in sheet.entries.sorted(by: { $0.key < $1.key }) {
                    images.append((id, entry, crop(decoded, entry.rect)))
                }
            }
            var taken = Set(images.map(\.id))
            for source in sources {
                let base = source.path + (ratio == 1 ? "" : "@\(ratio.shortText)x")
                let index = try IconrError.reading(base + ".json")
                guard let entries = SpriteIndex.entries(fromJSON: index) else {
                    throw StyleError(message: "\(base).json: not a sprite index")
                }
                let sheet = try PNGDecoder.decode(
                    try IconrError.reading(base + ".png"), maxSize: PixelSize(width: 1 << 16, height: 1 << 16))
                for (name, entry) in entries.sorted(by: { $0.key < $1.key }) {
                    let id = source.id == "default" ? name : source.id + ":" + name
                    guard taken.insert(id).inserted else {
                        throw StyleError(message: "\(base).json: image \"\(id)\" is also in iconr's sprite")
                    }
                    guard entry.rect.x >= 0, entry.rect.y >= 0, entry.rect.maxX <= sheet.size.width,
                        entry.rect.maxY <= sheet.size.height
                    else {
                        throw StyleError(message: "\(base).json: image \"\(name)\" lies outside its sheet")
                    }
                    images.append((id, entry, crop(sheet, entry.rect)))
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

    /// The pixels of `rect` in `image`.
    private static func crop(_ image: RasterImage, _ rect: PixelRect) -> RasterImage {
        var pixels: [UInt8] = []
        pixels.reserveCapacity(rect.width * rect.height * 4)
        for row in rect.y..<rect.maxY {
            let start = (row * image.size.width + rect.x) * 4
            pixels += image.pixels[start..<start + rect.width * 4]
        }
        return RasterImage(size: PixelSize(width: rect.width, height: rect.height), pixels: pixels)
    }
}
