import IconrCore
import IconrRender

/// What the last build of a set of icons (the same ids from the same paths, the same options,
/// versions and librsvg) made of each icon: the digests of its files, its warnings, and its
/// images without their pixels (id, ratio, content key, index entry), with the keys of its
/// sheets (`SheetArchive`) and of their packing. A rebuild takes every icon whose files have
/// the same digests from here instead of parsing and drawing it again, renders the others,
/// and draws only those into the last sheets (`SheetComposer.patch`). Icons whose files refer
/// to other files are not recorded: they are always drawn again.
struct SpriteSetRecord: Sendable, SealedRecordKind {
    /// One icon as the last build made it.
    struct Icon: Sendable {
        /// `SpriteInputs.digests(of:)` of its files when they were read.
        let digests: String
        /// `SpriteInputs.stamps(of:stamps:now:)` of its files then (empty when one was not settled).
        let stamps: [UInt8]
        let warnings: [String]
        let images: [Image]
    }

    /// One image of an icon, without its pixels.
    struct Image: Sendable {
        let id: String
        let ratio: Double
        let isVariant: Bool
        let contentKey: String
        /// Its index entry, at (0, 0) with the image's size.
        let entry: SpriteIndexEntry
    }

    /// The composition key of the sheets the build made.
    let sheetsKey: String
    /// The key of their packing (`SheetComposer.Plan.layoutsKey`).
    let layoutsKey: String
    /// The icons by id.
    let icons: [String: Icon]

    static let kindLine = "iconr set 3\n"

    /// The key of the set `sources` with `options`: the versions, the options, each icon's id
    /// and files (not their bytes).
    static func key(of sources: [SpriteSource], options: SpriteOptions) -> String {
        var text = "sprite set 1 iconr \(IconrVersion.string) \(Rasterizer.identity)\n"
        text += options.recordKeyText + "\n"
        for source in sources {
            text += "icon " + source.id + "\u{0}" + source.paths.joined(separator: "\u{0}") + "\n"
        }
        return SHA256.hex(Array(text.utf8))
    }

    /// What a build of `sources` made of them (`made`, by index), with their files' `digests`
    /// and `stamps` (by index), its sheets' and packing's keys. Icons that failed, or whose
    /// files refer to other files, are left out.
    init(
        _ sources: [SpriteSource], made: [Int: Result<SourceImages, SpriteFailure>], digests: [String?],
        stamps: [[UInt8]?], sheetsKey: String, layoutsKey: String
    ) {
        var icons: [String: Icon] = [:]
        for (index, source) in sources.enumerated() {
            guard case .success(let made)? = made[index], made.references.isEmpty, let digests = digests[index]
            else { continue }
            icons[source.id] = Icon(
                digests: digests, stamps: stamps[index] ?? [], warnings: made.warnings,
                images: made.images.map {
                    Image(
                        id: $0.id, ratio: $0.ratio, isVariant: $0.isVariant, contentKey: $0.contentKey, entry: $0.entry)
                })
        }
        self.init(sheetsKey: sheetsKey, layoutsKey: layoutsKey, icons: icons)
    }

    /// The digests (`SpriteInputs.digests(of:)`), by id, of the icons of `sources` whose files
    /// have the `stamps` (by index) this record kept: their bytes need not be read again.
    func unchangedIcons(_ sources: [SpriteSource], stamps: [[UInt8]?]) -> [String: String] {
        var unchanged: [String: String] = [:]
        for (index, source) in sources.enumerated() {
            if let stamped = stamps[index], let icon = icons[source.id], icon.stamps == stamped {
                unchanged[source.id] = icon.digests
            }
        }
        return unchanged
    }

    /// The icons of `sources` (by index) whose files have the recorded `digests` (by index),
    /// as this record holds them; and those it has with other digests (new images).
    func icons(_ sources: [SpriteSource], digests: [String?]) -> (taken: [Int: SourceImages], changed: Set<Int>) {
        var taken: [Int: SourceImages] = [:], changed = Set<Int>()
        for (index, source) in sources.enumerated() {
            if let digests = digests[index], let icon = icon(source, digests: digests) {
                taken[index] = icon
            } else if icons[source.id] != nil {
                changed.insert(index)
            }
        }
        return (taken, changed)
    }

    /// The icon `source` when its files still have `digests`.
    private func icon(_ source: SpriteSource, digests: String) -> SourceImages? {
        guard let icon = icons[source.id], icon.digests == digests else { return nil }
        return SourceImages(
            images: icon.images.map {
                SpriteImage(
                    id: $0.id, source: source.path, ratio: $0.ratio,
                    size: PixelSize(width: $0.entry.rect.width, height: $0.entry.rect.height), image: nil,
                    entry: $0.entry, isVariant: $0.isVariant, contentKey: $0.contentKey)
            }, warnings: icon.warnings)
    }

    /// The record as stored under `key` (`SealedRecordKind`): length-prefixed strings and
    /// little-endian numbers (JSON took a rebuild 5 ms to write and read on Temaki).
    func bytes(key: String) -> [UInt8] {
        var out = RecordWriter()
        out.bytes.reserveCapacity(icons.count * 400)
        out.string(sheetsKey)
        out.string(layoutsKey)
        out.count(icons.count)
        for (id, icon) in icons.sorted(by: { $0.key < $1.key }) {
            out.string(id)
            out.string(icon.digests)
            out.data(icon.stamps)
            out.count(icon.warnings.count)
            icon.warnings.forEach { out.string($0) }
            out.count(icon.images.count)
            for image in icon.images {
                out.string(image.id)
                out.number(image.ratio)
                out.flag(image.isVariant)
                out.string(image.contentKey)
                out.entry(image.entry)
            }
        }
        return Self.seal(out.bytes, key: key)
    }

    /// The record in `bytes`, or nil when they are not a sound record of `key`.
    init?(bytes: [UInt8], key: String) {
        guard let body = Self.open(bytes, key: key) else { return nil }
        var record = RecordReader(bytes: bytes, offset: body.startIndex)
        guard let sheetsKey = record.string(), let layoutsKey = record.string(),
            let iconCount = record.count()
        else { return nil }
        var icons: [String: Icon] = [:]
        icons.reserveCapacity(iconCount)
        for _ in 0..<iconCount {
            guard let id = record.string(), let digests = record.string(), let stamps = record.data(),
                let warningCount = record.count()
            else { return nil }
            var warnings: [String] = []
            for _ in 0..<warningCount {
                guard let warning = record.string() else { return nil }
                warnings.append(warning)
            }
            guard let imageCount = record.count() else { return nil }
            var images: [Image] = []
            for _ in 0..<imageCount {
                guard let imageID = record.string(), let ratio = record.number(), let isVariant = record.flag(),
                    let contentKey = record.string(), let entry = record.entry(), entry.rect.width > 0,
                    entry.rect.height > 0
                else { return nil }
                images.append(
                    Image(id: imageID, ratio: ratio, isVariant: isVariant, contentKey: contentKey, entry: entry))
            }
            icons[id] = Icon(digests: digests, stamps: stamps, warnings: warnings, images: images)
        }
        guard record.isAtEnd else { return nil }
        self.init(sheetsKey: sheetsKey, layoutsKey: layoutsKey, icons: icons)
    }

    init(sheetsKey: String, layoutsKey: String, icons: [String: Icon]) {
        self.sheetsKey = sheetsKey
        self.layoutsKey = layoutsKey
        self.icons = icons
    }
}

extension RecordWriter {
    mutating func box(_ box: ContentBox?) {
        flag(box != nil)
        if let box { [box.left, box.top, box.right, box.bottom].forEach { number($0) } }
    }

    mutating func areas(_ areas: [StretchArea]) {
        count(areas.count)
        for area in areas {
            number(area.start)
            number(area.end)
        }
    }

    mutating func optional(_ text: String?) {
        flag(text != nil)
        if let text { string(text) }
    }

    mutating func entry(_ entry: SpriteIndexEntry) {
        [entry.rect.x, entry.rect.y, entry.rect.width, entry.rect.height].forEach { count($0) }
        number(entry.pixelRatio)
        flag(entry.sdf)
        box(entry.content)
        areas(entry.stretchX)
        areas(entry.stretchY)
        optional(entry.textFitWidth)
        optional(entry.textFitHeight)
        box(entry.placeholder)
        bytes.append(entry.visible.map { $0 ? 2 : 1 } ?? 0)
    }
}

extension RecordReader {
    mutating func box() -> ContentBox?? {
        guard let present = flag() else { return nil }
        guard present else { return .some(nil) }
        guard let left = number(), let top = number(), let right = number(), let bottom = number() else { return nil }
        return ContentBox(left: left, top: top, right: right, bottom: bottom)
    }

    mutating func areas() -> [StretchArea]? {
        guard let count = count() else { return nil }
        var areas: [StretchArea] = []
        for _ in 0..<count {
            guard let start = number(), let end = number() else { return nil }
            areas.append(StretchArea(start: start, end: end))
        }
        return areas
    }

    mutating func optional() -> String?? {
        guard let present = flag() else { return nil }
        return present ? string().map { .some($0) } : .some(nil)
    }

    mutating func entry() -> SpriteIndexEntry? {
        guard let x = integer(), let y = integer(), let width = integer(), let height = integer(),
            let ratio = number(), let sdf = flag(), let content = box(), let stretchX = areas(),
            let stretchY = areas(), let textFitWidth = optional(), let textFitHeight = optional(),
            let placeholder = box(), let visible = take(1)?.first, visible <= 2
        else { return nil }
        return SpriteIndexEntry(
            rect: PixelRect(x: x, y: y, width: width, height: height), pixelRatio: ratio, sdf: sdf,
            content: content, stretchX: stretchX, stretchY: stretchY, textFitWidth: textFitWidth,
            textFitHeight: textFitHeight, placeholder: placeholder, visible: visible == 0 ? nil : visible == 2)
    }
}
