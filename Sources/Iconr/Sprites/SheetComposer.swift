import Dispatch
import IconrCore
import IconrRender
import IconrSystem

/// The composition stage of a sprite build: packs the images into sheets, draws and encodes
/// each, and names the whole by a key (everything that decides the sheets).
struct SheetComposer: Sendable {
    let options: SpriteOptions

    /// Sheets of more RGBA bytes than this are composed one at a time (16 MiB: a 2048 x
    /// 2048 sheet; Maki's and Temaki's sheets are 0.2-5 MB).
    static let largeSheetBytes = 16 << 20

    /// Which image each id has at each ratio, and the layouts they make.
    struct Plan {
        /// The ratios, largest first.
        let ratios: [Double]
        /// The sprite ids, sorted.
        let ids: [String]
        /// For each ratio, each id's image (an index in the build's images).
        let drawn: [[Int]]
        let layouts: [SpritePacker.Layout]
        /// The digest of everything that decides the packing.
        let layoutsKey: String
    }

    /// The plan of `images`; an error when an id has no image at some ratio.
    func plan(_ images: [SpriteImage]) throws(SpriteBuildError) -> Plan {
        let ratios = options.ratios.sorted(by: >)
        let ids = Array(Set(images.map(\.id))).sorted()
        // Images are named by their index in `images`, not copied (a copy is some 270 bytes,
        // 13 MB for 50,000 images).
        var byRatio: [Double: [String: Int]] = [:]
        for (index, image) in images.enumerated() where byRatio[image.ratio]?[image.id] == nil {
            byRatio[image.ratio, default: [:]][image.id] = index
        }
        // Every id has an image at every ratio (an icon that failed one has none).
        let drawn = try ratios.map { ratio throws(SpriteBuildError) -> [Int] in
            try ids.map { id throws(SpriteBuildError) -> Int in
                guard let index = byRatio[ratio]?[id] else {
                    throw SpriteBuildError.sheet("no image of \"\(id)\" at \(ratio.shortText)x")
                }
                return index
            }
        }
        byRatio = [:]
        let layouts = try ratios.indices.map { index throws(SpriteBuildError) in
            SpritePacker.Layout(
                sizes: drawn[index].map { images[$0].size }, padding: padding(at: ratios[index]),
                sharing: options.unique ? try sharing(drawn[index].map { images[$0] }) : nil)
        }
        return Plan(ratios: ratios, ids: ids, drawn: drawn, layouts: layouts, layoutsKey: layoutsKey(layouts))
    }

    /// Packs the images into sheets. Which ids share a sheet is decided for all ratios at
    /// once (`SpritePacker.groups`), so that every ratio's sheet N holds the same ids (a style
    /// names a sheet once for all ratios). Layouts packed before are read back from `cache`.
    func compose(
        _ images: [SpriteImage], plan: Plan, cache: SpriteBuildCache
    ) throws(SpriteBuildError)
        -> ComposedSheets
    {
        guard !plan.ratios.isEmpty else { return ([], 0) }
        let packed: Packing
        if let known = knownPacking(for: plan, cache: cache) {
            packed = known
        } else {
            packed = SpritePacker.groups(plan.layouts, maxSide: options.maxSize)
            cache.packings.record(packed, under: plan.layoutsKey)
        }
        if let item = packed.tooLarge.first {
            throw SpriteBuildError.sheet("\"\(plan.ids[item])\" is larger than the \(options.maxSize) px sheet limit")
        }
        // Every sheet of every ratio draws and encodes on its own: small ones in parallel,
        // large ones (whose deflate bands use every core anyway) one at a time, so that a
        // build holds one large sheet's pixels at once, not one per core.
        let sheets = try eachSheet(of: plan, images: images, packed: packed) { sheet throws(SpriteBuildError) in
            var pixels = [UInt8](repeating: 0, count: sheet.size.width * sheet.size.height * 4)
            for (member, rect) in sheet.drawn {
                guard let image = images[member].image else {
                    throw SpriteBuildError.sheet("the pixels of \"\(images[member].id)\" were not drawn")
                }
                Self.draw(image, at: rect, into: &pixels, width: sheet.size.width)
            }
            do {
                // The sheet's pixels go to the encoder, which lets them go once it has its samples.
                return try PNGEncoder.encodeSmallest(
                    RasterImage(size: sheet.size, pixels: consume pixels), optimize: options.optimize,
                    memo: cache.deflateMemo)
            } catch {
                throw SpriteBuildError.sheet(
                    "cannot encode sheet \(sheet.number + 1) at \(sheet.ratio.shortText)x: \(error)")
            }
        }
        return (sheets, packed.groups.count)
    }

    /// The packing found before for `plan`'s layouts, when it is one for them: every sheet
    /// within `maxSize`, one per ratio, and only the plan's items. An archive is checked by a
    /// plain digest, so a planted one must reach neither an index nor an allocation.
    private func knownPacking(for plan: Plan, cache: SpriteBuildCache) -> Packing? {
        guard let packing = cache.packings.lookup(plan.layoutsKey) else { return nil }
        let items = plan.ids.indices
        let fits =
            packing.tooLarge.allSatisfy(items.contains)
            && packing.groups.allSatisfy { group in
                group.sheets.count == plan.ratios.count && group.members.allSatisfy(items.contains)
                    && group.sheets.allSatisfy { $0.width <= options.maxSize && $0.height <= options.maxSize }
            }
        return fits ? packing : nil
    }

    /// The last build's sheets (`last.sheetsKey`) read back from the cache as palettes, by
    /// ratio and number (a sheet that is not a palette has none); nil when they are not in
    /// the cache. A sheet past `maxSize` on a side is left out (an archive is checked by a plain
    /// digest: its sizes must not ask for any allocation). Read while the changed icons are
    /// drawn (`SpriteBuilder`), on another core.
    static func lastSheets(_ last: SpriteSetRecord, maxSize: Int, cache: SpriteBuildCache) -> LastSheets? {
        guard let previous = cache.sheets.lookup(last.sheetsKey) else { return nil }
        var palettes: [SheetNumber: PaletteImage] = [:], pngs: [SheetNumber: [UInt8]] = [:]
        for file in previous.files where file.size.width <= maxSize && file.size.height <= maxSize {
            let number = SheetNumber(ratio: file.ratio, sheet: file.sheet)
            palettes[number] = PaletteImage(png: file.png, maxSize: file.size)
            pngs[number] = file.png
        }
        return LastSheets(count: previous.count, palettes: palettes, pngs: pngs)
    }

    /// The sheets of `images` drawn from the last build's: `last` (`lastSheets`), composed
    /// with the same packing (`plan.layoutsKey` is `layoutsKey`), with only the images that
    /// have pixels (the icons drawn again) drawn into them: into a palette read back when it
    /// holds their colors, else into the last sheet's decoded pixels. The same sheets
    /// `compose` makes, byte for byte; nil when they cannot be made so: another packing,
    /// `unique`, a last sheet missing or not of this size.
    func patch(
        _ images: [SpriteImage], plan: Plan, last: LastSheets, layoutsKey: String, cache: SpriteBuildCache
    ) -> ComposedSheets? {
        guard !options.unique, !plan.ratios.isEmpty, plan.layoutsKey == layoutsKey,
            let packed = knownPacking(for: plan, cache: cache), packed.tooLarge.isEmpty,
            last.count == packed.groups.count
        else { return nil }
        // Thrown where a sheet cannot be patched (and never shown: `compose` makes them all then).
        let notPatched = SpriteBuildError.sheet("the last build's sheet cannot be patched")
        return try? (
            eachSheet(of: plan, images: images, packed: packed) { sheet throws(SpriteBuildError) in
                let number = SheetNumber(ratio: sheet.ratio, sheet: sheet.number)
                // A sheet none of whose images changed is the last one, to the byte (three of
                // openstreetmap-carto's six after one icon changed).
                if let png = last.pngs[number], sheet.drawn.allSatisfy({ images[$0.member].image == nil }) {
                    return png
                }
                do {
                    if var palette = last.palettes[number], palette.size == sheet.size,
                        sheet.drawn.allSatisfy({ member, rect in
                            images[member].image.map { palette.draw($0, x: rect.x, y: rect.y) } ?? true
                        })
                    {
                        return try palette.encoded(optimize: options.optimize, memo: cache.deflateMemo)
                    }
                    // Not a palette (RGBA), or past 256 colors now: its pixels, with the new
                    // images drawn, encoded as a whole build encodes them (only the bands that
                    // changed are deflated).
                    guard let png = last.pngs[number] else { throw notPatched }
                    let lastImage =
                        try UnfilteredPNG(png: png, maxSize: sheet.size)?.rgba
                        ?? PNGDecoder.decode(png, maxSize: sheet.size)
                    guard lastImage.size == sheet.size else { throw notPatched }
                    var pixels = lastImage.pixels
                    _ = consume lastImage
                    for (member, rect) in sheet.drawn {
                        if let image = images[member].image {
                            Self.draw(image, at: rect, into: &pixels, width: sheet.size.width)
                        }
                    }
                    return try PNGEncoder.encodeSmallest(
                        RasterImage(size: sheet.size, pixels: consume pixels), optimize: options.optimize,
                        memo: cache.deflateMemo)
                } catch {
                    throw notPatched
                }
            }, packed.groups.count
        )
    }

    /// Copies `image` into the RGBA `pixels` of a sheet `width` pixels wide, at `rect` (its
    /// size, inside the sheet: `sheetFile` checked it).
    private static func draw(_ image: RasterImage, at rect: PixelRect, into pixels: inout [UInt8], width: Int) {
        image.pixels.withUnsafeBufferPointer { from in
            for row in 0..<rect.height {
                let target = ((rect.y + row) * width + rect.x) * 4
                pixels.replaceSubrange(
                    target..<(target + rect.width * 4),
                    with: from[(row * rect.width * 4)..<((row + 1) * rect.width * 4)])
            }
        }
    }

    /// One sheet of one ratio to draw: where each of its images goes.
    struct Sheet {
        let ratio: Double
        let number: Int
        let size: PixelSize
        /// The rectangles to draw, with the image each shows (ids that share one, `unique`, once).
        let drawn: [(member: Int, rect: PixelRect)]
    }

    /// The files of every sheet of every ratio, each encoded by `encode`: small ones in
    /// parallel, large ones one at a time. Each sheet's index and figures come from its
    /// placements.
    private func eachSheet(
        of plan: Plan, images: [SpriteImage], packed: Packing,
        encode: @Sendable (Sheet) throws(SpriteBuildError) -> [UInt8]
    ) throws(SpriteBuildError) -> [SpriteSheetFile] {
        let jobs = plan.ratios.indices.flatMap { ratio in packed.groups.indices.map { (ratio, $0) } }
        let files = Locked<[Int: Result<SpriteSheetFile, SpriteBuildError>]>([:])
        @Sendable func compose(_ index: Int) {
            let (ratio, sheet) = jobs[index]
            let group = packed.groups[sheet]
            let file = Result { () throws(SpriteBuildError) -> SpriteSheetFile in
                try sheetFile(
                    group.members.map { plan.drawn[ratio][$0] }, of: images,
                    placements: group.members.map { group.sheets[ratio].placements[$0] },
                    size: PixelSize(width: group.sheets[ratio].width, height: group.sheets[ratio].height),
                    ratio: plan.ratios[ratio], sheet: sheet, encode: encode)
            }
            files.withLock { $0[index] = file }
        }
        let isLarge = jobs.map { ratio, sheet in
            packed.groups[sheet].sheets[ratio].width * packed.groups[sheet].sheets[ratio].height * 4
                > Self.largeSheetBytes
        }
        jobs.indices.filter { isLarge[$0] }.forEach(compose)
        let small = jobs.indices.filter { !isLarge[$0] }
        DispatchQueue.concurrentPerform(iterations: small.count) { compose(small[$0]) }
        let results = files.withLock { $0 }
        let sheets = try jobs.indices.map { index throws(SpriteBuildError) -> SpriteSheetFile in
            guard let result = results[index] else { throw SpriteBuildError.sheet("a sheet was not composed") }
            return try result.get()
        }
        return sheets.sorted { ($0.ratio, $0.sheet) < ($1.ratio, $1.sheet) }
    }
    /// The digest of everything that decides the sheets: the layout options, and each
    /// image's id, ratio, content key and index metadata.
    func compositionKey(_ images: [SpriteImage]) -> String {
        var bytes = Array(
            ("sheets \(IconrVersion.string) ratios \(options.ratios.sorted().map(\.shortText)) padding \(options.padding) "
                + "max \(options.maxSize) unique \(options.unique) optimize \(options.optimize)\n").utf8)
        bytes.reserveCapacity(images.count * 160)
        for image in images.sorted(by: { ($0.ratio, $0.id) < ($1.ratio, $1.id) }) {
            bytes += (image.id + "\u{0}" + image.ratio.shortText + "\u{0}" + image.contentKey + "\u{0}").utf8
            image.entry.writeJSON(to: &bytes, minified: true)
            bytes.append(0x0A)
        }
        return SHA256.hex(bytes)
    }

    /// The digest of everything that decides the packing: the sheet limit and each layout's
    /// padding, sizes and sharing.
    private func layoutsKey(_ layouts: [SpritePacker.Layout]) -> String {
        var text = "layouts \(IconrVersion.string) max \(options.maxSize)\n"
        for layout in layouts {
            text += "padding \(layout.padding)\n"
            for (index, size) in layout.sizes.enumerated() {
                text += "\(size.width) \(size.height) \(layout.sharing?[index] ?? index)\n"
            }
        }
        return SHA256.hex(Array(text.utf8))
    }

    /// For each image, the first image with the same pixels (itself when none before it has).
    private func sharing(_ images: [SpriteImage]) throws(SpriteBuildError) -> [Int] {
        var first: [RasterImage: Int] = [:]
        return try images.indices.map { index throws(SpriteBuildError) in
            guard let pixels = images[index].image else {
                throw SpriteBuildError.sheet("the pixels of \"\(images[index].id)\" were not drawn")
            }
            if let earlier = first[pixels] { return earlier }
            first[pixels] = index
            return index
        }
    }

    private func padding(at ratio: Double) -> Int {
        Int((Double(options.padding) * ratio).rounded(.up))
    }

    /// One sheet's file: its images (`members` of the build's) at their placements, checked
    /// against the sheet, encoded by `encode`.
    private func sheetFile(
        _ members: [Int], of images: [SpriteImage], placements: [PixelRect?], size: PixelSize, ratio: Double,
        sheet: Int, encode: (Sheet) throws(SpriteBuildError) -> [UInt8]
    ) throws(SpriteBuildError) -> SpriteSheetFile {
        let size = PixelSize(width: max(1, size.width), height: max(1, size.height))
        let padding = padding(at: ratio)
        var entries: [String: SpriteIndexEntry] = [:]
        entries.reserveCapacity(members.count)
        var drawn: [(member: Int, rect: PixelRect)] = []
        var rects = Set<PixelRect>()
        var imageArea = 0, paddedArea = 0
        for (member, placement) in zip(members, placements) {
            let image = images[member]
            guard let rect = placement, rect.width == image.size.width, rect.height == image.size.height,
                rect.x >= 0, rect.y >= 0, rect.maxX <= size.width, rect.maxY <= size.height
            else {
                throw SpriteBuildError.sheet(
                    "\"\(image.id)\" has no place in sheet \(sheet + 1) at \(ratio.shortText)x")
            }
            var entry = image.entry
            entry.rect = rect
            entries[image.id] = entry
            // Ids that share a rectangle (`unique`) have the same pixels: drawn once.
            guard rects.insert(rect).inserted else { continue }
            drawn.append((member, rect))
            imageArea += rect.width * rect.height
            paddedArea += (rect.width + padding) * (rect.height + padding)
        }
        let png = try encode(Sheet(ratio: ratio, number: sheet, size: size, drawn: drawn))
        let sheetArea = Double(size.width * size.height)
        let paddedSheet = Double((size.width + padding) * (size.height + padding))
        return SpriteSheetFile(
            ratio: ratio, sheet: sheet, png: png, entries: entries, size: size, ids: members.count,
            images: drawn.count, fill: Double(imageArea) / sheetArea, packing: Double(paddedArea) / paddedSheet)
    }
}

/// A sheet of a ratio.
struct SheetNumber: Hashable {
    let ratio: Double
    let sheet: Int
}

/// The last build's sheets (`SheetComposer.lastSheets`): how many there are a ratio, their
/// PNGs (decoded one at a time, when drawn), and those that are palettes read back.
struct LastSheets: Sendable {
    let count: Int
    let palettes: [SheetNumber: PaletteImage]
    let pngs: [SheetNumber: [UInt8]]
}
