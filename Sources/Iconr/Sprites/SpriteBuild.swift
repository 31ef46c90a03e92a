import IconrCore
import IconrRender
import IconrSystem

/// An icon that could not go into the sprite, and why.
public struct SpriteFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// The icon's sprite id.
    public let id: String
    /// The file it came from.
    public let path: String
    /// Why it failed, without the path.
    public let message: String

    /// `path: message`, one line.
    public var description: String { "\(path): \(message)" }
}

/// Why a sprite could not be built.
public enum SpriteBuildError: Error, Sendable, CustomStringConvertible {
    case noIcons([String])
    case duplicateID(String, [String])
    case badVariants(String)
    /// An `sdf` id or pattern that matches no sprite id.
    case unmatchedSDF(String)
    /// A file name that would make an id a style cannot use: the file, the character.
    case badID(path: String, character: String)
    case invalidIcons([SpriteFailure])
    /// The images could not be laid out or encoded as sheets.
    case sheet(String)
    /// librsvg or cairo cannot be opened.
    case renderer(RenderError)

    /// One line (a list of invalid icons says how many; each is its own `SpriteFailure`).
    public var description: String {
        switch self {
        case .noIcons(let directories):
            // A folder that is not there says so, not that it has no icons.
            if let missing = directories.first(where: { !FileReader.isFolder($0) }) {
                "\(missing): \(FileReader.exists(missing) ? "not a folder" : "no such folder")"
            } else {
                "no icons (.svg, .svgz, .png) in \(directories.joined(separator: ", "))"
            }
        case .duplicateID(let id, let paths): "two icons have the id \"\(id)\": \(paths.joined(separator: " and "))"
        case .badVariants(let message): message
        case .unmatchedSDF(let pattern): "--sdf \"\(pattern)\" matches no sprite id"
        case .badID(let path, let character):
            "\(path): its id would hold \(character), which breaks style expressions or sprite prefixes "
                + "(rename it, or --sanitize-ids replaces such characters with _)"
        case .invalidIcons(let failures):
            "\(failures.count) icon\(failures.count == 1 ? " is" : "s are") invalid, no sheets written "
                + "(--skip-invalid leaves them out): " + failures.map(\.path).joined(separator: ", ")
        case .sheet(let message): message
        case .renderer(let error): "\(error)"
        }
    }
}

/// One sheet of one ratio: its PNG and index, ready to write.
public struct SpriteSheetFile: Sendable {
    /// The pixel ratio of this sheet (`sprite@2x` is 2).
    public let ratio: Double
    /// 0 for the first sheet, 1 for the second, ...
    public let sheet: Int
    /// The sheet's PNG file.
    public let png: [UInt8]
    /// The index entries by sprite id.
    public var entries: [String: SpriteIndexEntry] { parsedEntries.value }
    /// The entries, or the index they are parsed from when first asked for: a rebuild served
    /// from the cache writes the index as kept, and needs them only for a style or a preview.
    private let parsedEntries: LazyEntries
    /// The sheet's size in pixels.
    public let size: PixelSize
    /// Sprite ids in the sheet, and distinct images (fewer with `unique`).
    public let ids: Int
    /// Images drawn in it (fewer than `ids` when pixel-identical ones share one, `--unique`).
    public let images: Int
    /// Image pixels over sheet pixels.
    public let fill: Double
    /// Image pixels with their padding over sheet pixels: how tightly the packer worked.
    public let packing: Double
    /// The index in both layouts, made once (a rebuild writes them as its archive kept them).
    private let index: (pretty: [UInt8], minified: [UInt8])

    /// A sheet just composed, with its entries.
    init(
        ratio: Double, sheet: Int, png: [UInt8], entries: [String: SpriteIndexEntry], size: PixelSize, ids: Int,
        images: Int, fill: Double, packing: Double
    ) {
        self.init(
            ratio: ratio, sheet: sheet, png: png, entries: LazyEntries(entries), size: size, ids: ids, images: images,
            fill: fill, packing: packing,
            index: (SpriteIndex.json(entries, minified: false), SpriteIndex.json(entries, minified: true)))
    }

    /// A sheet read back from an archive, its entries parsed from `index.minified` when asked for.
    init(
        ratio: Double, sheet: Int, png: [UInt8], size: PixelSize, ids: Int, images: Int, fill: Double,
        packing: Double, index: (pretty: [UInt8], minified: [UInt8])
    ) {
        self.init(
            ratio: ratio, sheet: sheet, png: png, entries: LazyEntries(index: index.minified), size: size, ids: ids,
            images: images, fill: fill, packing: packing, index: index)
    }

    private init(
        ratio: Double, sheet: Int, png: [UInt8], entries: LazyEntries, size: PixelSize, ids: Int, images: Int,
        fill: Double, packing: Double, index: (pretty: [UInt8], minified: [UInt8])
    ) {
        self.ratio = ratio
        self.sheet = sheet
        self.png = png
        self.parsedEntries = entries
        self.size = size
        self.ids = ids
        self.images = images
        self.fill = fill
        self.packing = packing
        self.index = index
    }

    /// The sheet's index (`sprite.json`).
    public func json(minified: Bool = false) -> [UInt8] {
        minified ? index.minified : index.pretty
    }

    /// Entries given, or parsed once from an index on first use, by whichever thread asks.
    private final class LazyEntries: Sendable {
        private let state: Locked<(entries: [String: SpriteIndexEntry]?, index: [UInt8])>

        init(_ entries: [String: SpriteIndexEntry]) {
            state = Locked((entries, []))
        }

        init(index: [UInt8]) {
            state = Locked((nil, index))
        }

        /// The entries; an index that does not parse (an archive is checked by its digest
        /// before it is read, so only a defect could write one) has none.
        var value: [String: SpriteIndexEntry] {
            state.withLock { state in
                if let entries = state.entries { return entries }
                let entries = SpriteIndex.entries(fromJSON: state.index) ?? [:]
                state = (entries, [])
                return entries
            }
        }
    }
}

/// The result of a build.
public struct SpriteBuild: Sendable {
    /// Every sheet of every ratio.
    public let sheets: [SpriteSheetFile]
    /// Sheets per ratio (more than 1 when the images do not fit one `maxSize` sheet).
    public let sheetCount: Int
    /// Icons in the sprite (files that made it, not counting skipped ones).
    public let icons: Int
    /// Parameter variants in the sprite.
    public let variants: Int
    /// Icons left out with `skipInvalid`.
    public let skipped: [SpriteFailure]
    /// What the build noticed and went on from (a PNG icon enlarged for a ratio, ...).
    public let warnings: [String]
    /// Images rendered by librsvg in this build.
    public let renders: Int
    /// Images answered by the memory or disk cache.
    public let cacheHits: Int
    /// Seconds spent rendering (or reading the cache), and packing and encoding sheets.
    public let renderSeconds: Double
    /// Seconds spent packing, drawing and encoding the sheets.
    public let composeSeconds: Double
    /// Whether the sheets were read back from the disk cache instead of packed and encoded.
    public let sheetsFromCache: Bool
    /// Whether every file was as in an earlier build with the same options, so that build's
    /// sheets were served as they were, with nothing parsed, read from the cache or composed.
    public let inputsUnchanged: Bool
    /// Icons whose files were as in the last build of the same set (the same files and
    /// options): taken from it, their images not parsed, drawn or read from the cache, and
    /// only the others drawn into its sheets.
    public let iconsReused: Int
    /// Icon files and sidecars read: none when the listing found every file as stamped in the
    /// build served (`inputsUnchanged`).
    public let filesRead: Int
}
