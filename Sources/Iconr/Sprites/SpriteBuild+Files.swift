import IconrCore
import IconrRender
import IconrSystem

/// Where a build's sheets go and how a style names them: shared by `iconr sprite` (files)
/// and `iconr serve` (URLs), which name sheets alike.
extension SpriteBuild {
    /// Each ratio's sheets, every PNG with its JSON, and where they go under `prefix`.
    package func files(prefix: String, minify: Bool) -> [(bytes: [UInt8], path: String)] {
        sheets.sorted { ($0.ratio, $0.sheet) < ($1.ratio, $1.sheet) }.flatMap { sheet in
            let base = Self.sheetBase(prefix, sheet: sheet.sheet, ratio: sheet.ratio)
            return [(sheet.png, base + ".png"), (sheet.json(minified: minify), base + ".json")]
        }
    }

    /// Writes the sheets and their indexes under the names MapLibre reads (`out/sprite.png`
    /// and `.json`, `out/sprite@2x.png` and `.json`, `out/sprite-2...` for more sheets), and
    /// `alongWith` (a style, a preview), as `iconr sprite` does: each file whole, all of them
    /// or none (a sprite's PNG never stands beside an older JSON), the prefix's folder made
    /// when missing. Returns the paths written, in order.
    /// - Throws: `FileWriteError` naming the file or folder that could not be written.
    @discardableResult
    public func write(
        to prefix: String, minify: Bool = false, alongWith extra: [(bytes: [UInt8], path: String)] = []
    ) throws(FileWriteError) -> [String] {
        if let slash = prefix.lastIndex(of: "/"), slash != prefix.startIndex {
            let folder = String(prefix[..<slash])
            do {
                try FileReader.makeFolder(folder)
            } catch {
                throw FileWriteError(path: folder, problem: .system(error))
            }
        }
        let written = files(prefix: prefix, minify: minify) + extra
        try AtomicFile.writeTogether(written)
        return written.map(\.path)
    }

    /// A sprite of no icons: an empty index (`{}`) and a 1x1 transparent sheet at each of
    /// `ratios`, which renderers load without error (MapLibre fails a style's whole sprite
    /// array on one sprite that does not load).
    package static func empty(ratios: [Double]) -> SpriteBuild {
        let pixel = RasterImage(size: PixelSize(width: 1, height: 1), pixels: [0, 0, 0, 0])
        let png = (try? PNGEncoder.encode(pixel)) ?? []
        return SpriteBuild(
            sheets: ratios.map { ratio in
                SpriteSheetFile(
                    ratio: ratio, sheet: 0, png: png, entries: [:], size: pixel.size, ids: 0, images: 0, fill: 0,
                    packing: 0)
            }, sheetCount: 1, icons: 0, variants: 0, skipped: [], warnings: [], renders: 0, cacheHits: 0,
            renderSeconds: 0, composeSeconds: 0, sheetsFromCache: false, inputsUnchanged: false, iconsReused: 0,
            filesRead: 0)
    }

    /// A sheet's files without the extension: `out/sprite`, `out/sprite-2@2x`, ...
    package static func sheetBase(_ prefix: String, sheet: Int, ratio: Double) -> String {
        sheetPrefix(prefix, sheet: sheet) + (ratio == 1 ? "" : "@\(ratio.shortText)x")
    }

    /// `out/sprite` for the first sheet, `out/sprite-2` for the second, ...
    package static func sheetPrefix(_ prefix: String, sheet: Int) -> String {
        sheet == 0 ? prefix : "\(prefix)-\(sheet + 1)"
    }

    /// The style's `"sprite"` value: the prefix, or for several sheets
    /// `[{"id": "default", "url": ...}, {"id": "sprite-2", "url": ...}]`, later sheets' ids
    /// named `<sheetName>-N` (by default the prefix's last part; a theme's sheets keep the
    /// plain sprite's ids).
    package func spriteValue(prefix: String, sheetName: String? = nil) -> JSONValue {
        guard sheetCount > 1 else { return .string(prefix) }
        let name = sheetName ?? prefix.split(separator: "/").last.map(String.init) ?? prefix
        return .array(
            (0..<sheetCount).map { sheet in
                .object([
                    "id": .string(sheet == 0 ? "default" : "\(name)-\(sheet + 1)"),
                    "url": .string(Self.sheetURL(prefix, sheet: sheet)),
                ])
            })
    }

    /// A later sheet's URL: `-N` at the end of the prefix, before a URL's query or fragment
    /// (`https://x/sprite?key=k` -> `https://x/sprite-2?key=k`), where MapLibre adds `@2x.png`.
    static func sheetURL(_ prefix: String, sheet: Int) -> String {
        guard sheet > 0, prefix.containsUTF8("://"), let end = prefix.firstIndex(where: { $0 == "?" || $0 == "#" })
        else { return sheetPrefix(prefix, sheet: sheet) }
        return sheetPrefix(String(prefix[..<end]), sheet: sheet) + prefix[end...]
    }

    /// The sheet id (`sprite-2`) of each id outside the first sheet, as `spriteValue` names them.
    package func sheetNames(prefix: String, sheetName: String? = nil) -> [String: String] {
        let name = sheetName ?? prefix.split(separator: "/").last.map(String.init) ?? prefix
        var names: [String: String] = [:]
        for sheet in sheets where sheet.sheet > 0 {
            for id in sheet.entries.keys { names[id] = "\(name)-\(sheet.sheet + 1)" }
        }
        return names
    }

    /// The ids of the first sheet (whose ids `spriteValue` leaves unprefixed).
    package var firstSheetIDs: Set<String> {
        Set(sheets.filter { $0.sheet == 0 }.flatMap(\.entries.keys))
    }

    /// The first 12 hex digits of the SHA-256 of every file's name (without the folder) and bytes.
    package static func contentHash(_ files: [(bytes: [UInt8], path: String)]) -> String {
        var input: [UInt8] = []
        for file in files {
            input += Array((file.path.split(separator: "/").last.map(String.init) ?? file.path).utf8) + [0]
            input += Array(SHA256.hex(file.bytes).utf8)
        }
        return String(SHA256.hex(input).prefix(12))
    }
}
