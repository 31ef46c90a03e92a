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

    /// Packs the images into sheets. Which ids share a sheet is decided for all ratios at
    /// once (`SpritePacker.groups`), so that every ratio's sheet N holds the same ids (a style
    /// names a sheet once for all ratios). Layouts packed before are read back from `cache`.
    func compose(_ images: [SpriteImage], cache: SpriteBuildCache) throws(SpriteBuildError) -> ComposedSheets {
        let ratios = options.ratios.sorted(by: >)
        guard !ratios.isEmpty else { return ([], 0) }
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
        let layouts = ratios.indices.map { index in
            SpritePacker.Layout(
                sizes: drawn[index].map { images[$0].image.size }, padding: padding(at: ratios[index]),
                sharing: options.unique ? sharing(drawn[index].map { images[$0].image }) : nil)
        }
        let layoutsKey = layoutsKey(layouts)
        let packed: Packing
        if let known = cache.packing(layoutsKey) {
            packed = known
        } else {
            packed = SpritePacker.groups(layouts, maxSide: options.maxSize)
            cache.keep(packed, layoutsKey: layoutsKey)
        }
        if let item = packed.tooLarge.first {
            throw SpriteBuildError.sheet("\"\(ids[item])\" is larger than the \(options.maxSize) px sheet limit")
        }
        // Every sheet of every ratio draws and encodes on its own: small ones in parallel,
        // large ones (whose deflate bands use every core anyway) one at a time, so that a
        // build holds one large sheet's pixels at once, not one per core.
        let jobs = ratios.indices.flatMap { ratio in packed.groups.indices.map { (ratio, $0) } }
        let files = Locked<[Int: Result<SpriteSheetFile, SpriteBuildError>]>([:])
        @Sendable func compose(_ index: Int) {
            let (ratio, sheet) = jobs[index]
            let group = packed.groups[sheet]
            let file = Result { () throws(SpriteBuildError) in
                try composeSheet(
                    group.members.map { drawn[ratio][$0] }, of: images,
                    placements: group.members.map { group.sheets[ratio].placements[$0] },
                    size: PixelSize(width: group.sheets[ratio].width, height: group.sheets[ratio].height),
                    ratio: ratios[ratio], sheet: sheet, memo: cache.deflateMemo)
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
        return (sheets.sorted { ($0.ratio, $0.sheet) < ($1.ratio, $1.sheet) }, packed.groups.count)
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
    private func sharing(_ images: [RasterImage]) -> [Int] {
        var first: [RasterImage: Int] = [:]
        return images.indices.map { index in
            if let earlier = first[images[index]] { return earlier }
            first[images[index]] = index
            return index
        }
    }

    private func padding(at ratio: Double) -> Int {
        Int((Double(options.padding) * ratio).rounded(.up))
    }

    /// Draws one sheet's images (`members` of `all`) at their placements and encodes it.
    private func composeSheet(
        _ members: [Int], of all: [SpriteImage], placements: [PixelRect?], size: PixelSize, ratio: Double,
        sheet: Int, memo: DeflateMemo?
    ) throws(SpriteBuildError) -> SpriteSheetFile {
        let images = members.lazy.map { all[$0] }
        let size = PixelSize(width: max(1, size.width), height: max(1, size.height))
        let padding = padding(at: ratio)
        var pixels = [UInt8](repeating: 0, count: size.width * size.height * 4)
        var entries: [String: SpriteIndexEntry] = [:]
        entries.reserveCapacity(members.count)
        var drawn = Set<PixelRect>()
        var imageArea = 0, paddedArea = 0
        for (image, placement) in zip(images, placements) {
            guard let rect = placement, rect.width == image.image.size.width, rect.height == image.image.size.height,
                rect.x >= 0, rect.y >= 0, rect.maxX <= size.width, rect.maxY <= size.height
            else {
                throw SpriteBuildError.sheet(
                    "\"\(image.id)\" has no place in sheet \(sheet + 1) at \(ratio.shortText)x")
            }
            var entry = image.entry
            entry.rect = rect
            entries[image.id] = entry
            // Ids that share a rectangle (`unique`) have the same pixels: draw them once.
            guard drawn.insert(rect).inserted else { continue }
            image.image.pixels.withUnsafeBufferPointer { from in
                for row in 0..<rect.height {
                    let target = ((rect.y + row) * size.width + rect.x) * 4
                    pixels.replaceSubrange(
                        target..<(target + rect.width * 4),
                        with: from[(row * rect.width * 4)..<((row + 1) * rect.width * 4)])
                }
            }
            imageArea += rect.width * rect.height
            paddedArea += (rect.width + padding) * (rect.height + padding)
        }
        let png: [UInt8]
        do {
            // The sheet's pixels go to the encoder, which lets them go once it has its samples.
            png = try PNGEncoder.encodeSmallest(
                RasterImage(size: size, pixels: consume pixels), optimize: options.optimize, memo: memo)
        } catch {
            throw SpriteBuildError.sheet("cannot encode sheet \(sheet + 1) at \(ratio.shortText)x: \(error)")
        }
        let sheetArea = Double(size.width * size.height)
        let paddedSheet = Double((size.width + padding) * (size.height + padding))
        return SpriteSheetFile(
            ratio: ratio, sheet: sheet, png: png, entries: entries, size: size, ids: images.count,
            images: drawn.count, fill: Double(imageArea) / sheetArea, packing: Double(paddedArea) / paddedSheet)
    }
}
