import Dispatch
import Glibc
import IconrCore
import IconrRender
import IconrSystem
import Synchronization

/// What goes into a sprite and how it is laid out.
public struct SpriteOptions: Sendable {
    /// Pixel ratios to build, one sheet set each (`sprite`, `sprite@2x`, ...).
    public var ratios: [Double] = [1, 2]
    /// Empty pixels between images at 1x; times the ratio (rounded up) in each sheet.
    public var padding = 1
    /// The largest sheet side; icons that do not fit one sheet go to more sheets.
    public var maxSize = 4096
    /// Also read subfolders; their icons get ids `folder/name`.
    public var recursive = false
    /// Store pixel-identical images once; their ids share one rectangle.
    public var unique = false
    /// Leave out icons that fail instead of failing the build.
    public var skipInvalid = false
    /// An id found in several of the folders comes from the first of them (with a warning),
    /// as `iconr serve` looks names up, instead of being an error.
    public var firstFolderWins = false
    /// Replace characters that break style expressions or multi-sprite prefixes (`:`, `{`,
    /// `}`, control characters) in ids with `_`, instead of failing on them.
    public var sanitizeIDs = false
    /// Sprite ids drawn as signed distance fields (`sdf: true`), tinted by `icon-color`:
    /// ids or glob patterns (`*` any run of characters, `?` one), each of which must match.
    public var sdf: Set<String> = []
    /// Parameter variants by icon id.
    public var variants: [String: [SpriteVariant]] = [:]
    /// Size and time limits of each render.
    public var limits = RenderLimits.default
    /// Compress the sheets with Zopfli (much slower, some 5-10% smaller; needs libzopfli1).
    public var optimize = false

    /// Ratios 1 and 2, padding 1, sheets up to 4096 px, no variants.
    public init() {}
}

/// A parameterized variant of an icon to put in a sprite.
public struct SpriteVariant: Hashable, Sendable {
    /// The sprite id; nil for the generated one (see `SpriteID`).
    public var id: String?
    /// The parameters' colors of this variant.
    public var params: IconParameters
    /// Drawn at this many times each ratio, with `pixelRatio` to match, so that a style's
    /// `icon-size` of up to `scale` stays sharp. With no params and no id, it applies to the
    /// plain icon.
    public var scale: Double

    /// A variant of `params`, named `id` (or by `SpriteID`), drawn at `scale` times each ratio.
    public init(id: String? = nil, params: IconParameters, scale: Double = 1) {
        self.id = id
        self.params = params
        self.scale = scale
    }
}

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
        case .noIcons(let directories): "no SVG icons in \(directories.joined(separator: ", "))"
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
    /// Icon files and sidecars read: none when the listing found every file as stamped in the
    /// build served (`inputsUnchanged`).
    public let filesRead: Int
}

/// What a supervisor that runs an in-process build in a child process, and starts it again
/// after a crash or a timeout, tells the next attempt and hears from it.
package struct SpriteBuildRecovery: Sendable {
    /// Icons (by path) that crashed librsvg or rendered too long in an earlier attempt, with
    /// the reason: they are not rendered again, and fail (or are skipped) with that reason.
    package var failed: [String: String] = [:]
    /// Icons that were rendering when an attempt crashed: each renders alone, before the
    /// others, so that a crash among them names one.
    package var suspects: Set<String> = []
    /// Hear an icon's path right before librsvg works on it, and right after.
    package var willRender: (@Sendable (String) -> Void)?
    /// Called after librsvg work on a file ended (see `willRender`).
    package var didRender: (@Sendable (String) -> Void)?

    /// No failures known, no suspects, no listeners.
    package init() {}
}

/// Builds MapLibre/Mapbox sprite sheets from folders of icon templates: every icon under
/// its file name, the variants asked for, at every ratio. Icons render in parallel on all
/// cores through an `IconCache`.
///
/// `placement: .isolated(...)` renders in worker processes (a crash or timeout fails that
/// icon alone); `.inProcess` renders here with no time limit, faster, and is how `iconr
/// sprite` builds in the child process it supervises (`SpriteBuildRecovery`).
public final class SpriteBuilder: Sendable {
    /// What goes into the sprite and how it is laid out.
    public let options: SpriteOptions
    /// Where rendered images are kept and looked up (memory and disk).
    public let cache: IconCache
    /// Where librsvg runs: in process, or in worker processes.
    public let placement: RenderPlacement
    /// The one path to a variant: its key, the caches, a render.
    private let renderer: IconRenderer

    /// A builder of sprites with `options`, its renders cached in `cache` and run where `placement` says.
    public init(options: SpriteOptions, cache: IconCache, placement: RenderPlacement) {
        self.options = options
        self.cache = cache
        self.placement = placement
        renderer = IconRenderer(cache: cache, placement: placement, limits: options.limits)
    }

    /// The icon files of `directories` (and subfolders when `recursive`) with their sprite ids.
    /// With `firstFolderWins`, an id in several folders is the first folder's.
    public static func iconFiles(
        in directories: [String], recursive: Bool, firstFolderWins: Bool = false
    ) throws(SpriteBuildError) -> [(id: String, path: String)] {
        try SpriteSources.find(
            in: directories, recursive: recursive, sanitizeIDs: true, firstFolderWins: firstFolderWins
        ).sources.map { ($0.id, $0.path) }
    }

    /// Renders and packs the icons of `directories`; `progress` hears (done, total) icons.
    public func build(
        directories: [String], progress: (@Sendable (Int, Int) -> Void)? = nil
    ) throws(SpriteBuildError) -> SpriteBuild {
        try build(directories: directories, recovery: SpriteBuildRecovery(), progress: progress)
    }

    /// `build(directories:progress:)` as an attempt of a supervised build, which `recovery`
    /// tells what earlier attempts found and which hears each file's renders.
    package func build(
        directories: [String], recovery: SpriteBuildRecovery, progress: (@Sendable (Int, Int) -> Void)? = nil
    ) throws(SpriteBuildError) -> SpriteBuild {
        let (sources, sourceWarnings, stamps) = try SpriteSources.find(
            in: directories, recursive: options.recursive,
            sanitizeIDs: options.sanitizeIDs, firstFolderWins: options.firstFolderWins)
        let known = Set(sources.map(\.id))
        if let unknown = options.variants.keys.sorted().first(where: { !known.contains($0) }) {
            throw SpriteBuildError.badVariants("the variants name icon \"\(unknown)\", which is not among the icons")
        }
        let statsBefore = cache.statistics
        let started = ContinuousClock.now
        // Files whose stamps are those of a recorded build hold its bytes: it is served
        // without reading them (a warm rebuild of osm-carto's 8.5 MB).
        let stampKey = SpriteInputs.stampKey(sources, stamps: stamps, options: options, recovery: recovery)
        let stampedKey = stampKey.flatMap { stampKey in
            cache.disk?.readBlob(stampKey).flatMap { SpriteInputs.key(inStampRecord: $0, stampKey: stampKey) }
        }
        if let stampedKey,
            let build = recordedBuild(stampedKey, sourceWarnings: sourceWarnings, started: started, filesRead: 0)
        {
            return build
        }
        let inputs = SpriteInputs(sources, stamps: stamps, options: options, recovery: recovery)
        /// Keeps the inputs' key under the stamps the listing saw, before the files were read:
        /// a file written since has other stamps, and is read again next time.
        func keepStamps() {
            guard let stampKey, let key = inputs.key else { return }
            cache.disk?.storeBlob(SpriteInputs.stampRecord(stampKey: stampKey, key: key), as: stampKey)
        }
        // A key the stamps led to was looked up already.
        if let key = inputs.key, key != stampedKey,
            let build = recordedBuild(
                key, sourceWarnings: sourceWarnings, started: started, filesRead: inputs.filesRead)
        {
            keepStamps()
            return build
        }
        // Only a build that renders loads librsvg and cairo (some 50 libraries).
        do {
            try Rasterizer.loadLibraries()
        } catch {
            throw SpriteBuildError.renderer(error)
        }
        let results = Locked<[Int: Result<SourceImages, SpriteFailure>]>([:])
        let done = Atomic<Int>(0)
        @Sendable func renderIcon(_ index: Int) {
            let result = render(sources[index], inputs: inputs, recovery: recovery)
            results.withLock { $0[index] = result }
            progress?(done.add(1, ordering: .relaxed).newValue, sources.count)
        }
        let alone = sources.indices.filter { !recovery.suspects.isDisjoint(with: sources[$0].paths) }
        let together = sources.indices.filter { recovery.suspects.isDisjoint(with: sources[$0].paths) }
        alone.forEach(renderIcon)
        DispatchQueue.concurrentPerform(iterations: together.count) { renderIcon(together[$0]) }
        var images: [SpriteImage] = [], failures: [SpriteFailure] = [], warnings: [String] = []
        var references: [String: [String]] = [:]
        for index in sources.indices {
            switch results.withLock({ $0[index] }) {
            case .success(let rendered)?:
                images += rendered.images
                warnings += rendered.warnings
                references.merge(rendered.references) { first, _ in first }
            case .failure(let failure)?: failures.append(failure)
            case nil:
                failures.append(
                    SpriteFailure(id: sources[index].id, path: sources[index].path, message: "was not rendered"))
            }
        }
        let ids = Dictionary(grouping: images, by: \.id)
        if let duplicate = ids.first(where: { Set($0.value.map(\.source)).count > 1 }) {
            throw SpriteBuildError.duplicateID(duplicate.key, Array(Set(duplicate.value.map(\.source))).sorted())
        }
        guard failures.isEmpty || options.skipInvalid else { throw SpriteBuildError.invalidIcons(failures) }
        if let unmatched = options.sdf.sorted().first(where: { pattern in
            !ids.keys.contains { SpriteID.matches($0, pattern: pattern) }
        }) {
            throw SpriteBuildError.unmatchedSDF(unmatched)
        }
        let statsAfter = cache.statistics
        let rendered = ContinuousClock.now
        // Sheets composed from exactly these images and options before are read back instead
        // of packed and encoded again (most of a warm rebuild).
        let compositionKey = compositionKey(images)
        let sheets: (files: [SpriteSheetFile], count: Int)
        var sheetsFromCache = false
        if let cached = cache.disk?.readBlob(compositionKey).flatMap({
            SheetArchive.sheets(from: $0, key: compositionKey)
        }) {
            sheets = cached
            sheetsFromCache = true
        } else {
            sheets = try compose(images)
            cache.disk?.storeBlob(SheetArchive.bytes(of: sheets, key: compositionKey), as: compositionKey)
        }
        let variantCount = Set(images.filter(\.isVariant).map(\.id)).count
        // A whole build is recorded under its inputs' key, for a rebuild to serve as it is.
        if let key = inputs.key, failures.isEmpty {
            let record = SpriteRecord(
                sheetsKey: compositionKey, icons: sources.count, variants: variantCount, images: images.count,
                warnings: warnings, references: references, referenced: IconReferences.fingerprint(of: references))
            cache.disk?.storeBlob(record.bytes(key: key), as: key)
            keepStamps()
        }
        // The entries written behind must be on disk before the next run looks for them.
        cache.disk?.flush()
        return SpriteBuild(
            sheets: sheets.files, sheetCount: sheets.count, icons: sources.count - failures.count,
            variants: variantCount, skipped: failures, warnings: sourceWarnings + warnings,
            renders: statsAfter.renders - statsBefore.renders,
            cacheHits: (statsAfter.memory.hits - statsBefore.memory.hits)
                + (statsAfter.diskHits - statsBefore.diskHits),
            renderSeconds: seconds(rendered - started), composeSeconds: seconds(ContinuousClock.now - rendered),
            sheetsFromCache: sheetsFromCache, inputsUnchanged: false, filesRead: inputs.filesRead)
    }

    /// The build recorded under `key` (`SpriteRecord`), when its references still lead to the
    /// same files and its sheets' archive is sound; else nil.
    private func recordedBuild(
        _ key: String, sourceWarnings: [String], started: ContinuousClock.Instant, filesRead: Int
    ) -> SpriteBuild? {
        guard let disk = cache.disk, let record = disk.readBlob(key).flatMap({ SpriteRecord(bytes: $0, key: key) }),
            record.isCurrent,
            let sheets = disk.readBlob(record.sheetsKey).flatMap({
                SheetArchive.sheets(from: $0, key: record.sheetsKey)
            })
        else { return nil }
        return SpriteBuild(
            sheets: sheets.files, sheetCount: sheets.count, icons: record.icons, variants: record.variants,
            skipped: [], warnings: sourceWarnings + record.warnings, renders: 0, cacheHits: record.images,
            renderSeconds: seconds(ContinuousClock.now - started), composeSeconds: 0, sheetsFromCache: true,
            inputsUnchanged: true, filesRead: filesRead)
    }

    /// Every image of one icon: plain and variants, at every ratio, each ratio from the
    /// icon's file for that ratio (`name@2x.svg`) or else from its base file.
    private func render(
        _ source: SpriteSource, inputs: SpriteInputs, recovery: SpriteBuildRecovery
    ) -> Result<SourceImages, SpriteFailure> {
        var all = SourceImages()
        for (file, ratios) in source.files(for: options.ratios) {
            switch render(source, file: file, ratios: ratios, inputs: inputs, recovery: recovery) {
            case .success(let rendered):
                all.images += rendered.images
                all.warnings += rendered.warnings
                all.references.merge(rendered.references) { first, _ in first }
            case .failure(let failure): return .failure(failure)
            }
        }
        return .success(all)
    }

    /// The images of one file of an icon, at the sheet `ratios` it serves.
    private func render(
        _ source: SpriteSource, file: SpriteSource.File, ratios: [Double], inputs: SpriteInputs,
        recovery: SpriteBuildRecovery
    ) -> Result<SourceImages, SpriteFailure> {
        func failure(_ message: String) -> Result<SourceImages, SpriteFailure> {
            .failure(SpriteFailure(id: source.id, path: file.path, message: message))
        }
        if let reason = recovery.failed[file.path] { return failure(reason) }
        var bytes: [UInt8]
        do {
            // Scanning is watched like renders (as reading was): a supervisor's time limit covers it.
            recovery.willRender?(file.path)
            defer { recovery.didRender?(file.path) }
            bytes = try inputs.bytes(of: file.path).get()
            guard !bytes.isEmpty else { return failure("the file is empty") }
            if Gzip.isCompressed(bytes) { bytes = try Gzip.decompress(bytes) }
        } catch let error as FileReadError {
            return failure(error.reason)
        } catch {
            return failure("\(error)")
        }
        if PNGDecoder.isPNG(bytes) {
            return bitmapImages(source, file: file, png: bytes, ratios: ratios, inputs: inputs).map {
                SourceImages(images: $0.images, warnings: $0.warnings)
            }.mapError {
                SpriteFailure(id: source.id, path: file.path, message: $0.description)
            }
        }
        // The one way to a variant (`IconRenderer`), as for `iconr render` and `IconLibrary`.
        let icon: IconSource
        do {
            recovery.willRender?(file.path)
            defer { recovery.didRender?(file.path) }
            icon = try IconSource(name: source.id, bytes: bytes, path: file.path)
        } catch {
            // The failure names the file already.
            return failure(error.reason)
        }
        let template = icon.template
        var wanted: [(id: String, params: ResolvedParameters, isVariant: Bool, scale: Double)] =
            [(source.id, template.resolve(colors: [:]), false, 1)]
        for variant in options.variants[source.id] ?? [] {
            let resolved = template.resolve(variant.params)
            let id = variant.id ?? SpriteID.variant(of: source.id, resolved)
            if let existing = wanted.firstIndex(where: { $0.id == id }) {
                wanted[existing].scale = max(wanted[existing].scale, variant.scale)
            } else {
                wanted.append((id, resolved, true, variant.scale))
            }
        }
        var warnings = icon.warnings
        var areas = (
            stretchX: template.stretchX, stretchY: template.stretchY, content: template.content,
            placeholder: ContentBox?.none
        )
        if areas.stretchX.isEmpty, areas.stretchY.isEmpty, areas.content == nil, !template.legacyAreaIDs.isEmpty {
            let measurement: SVGMeasurement
            do {
                recovery.willRender?(file.path)
                defer { recovery.didRender?(file.path) }
                measurement = try icon.measure(
                    elementIDs: template.legacyAreaIDs, placement: placement, limits: options.limits)
            } catch {
                return failure(error.reason)
            }
            let legacy = LegacyAreas.areas(
                ids: template.legacyAreaIDs,
                boxes: measurement.elementBoxes.mapValues { ($0.x, $0.y, $0.width, $0.height) })
            areas = (legacy.stretchX, legacy.stretchY, legacy.content, legacy.placeholder)
            warnings += legacy.problems.map { "\(file.path): \($0)" }
        }
        // A sidecar `name.json` replaces what it gives.
        var sidecar: SpriteSidecar?
        switch Self.sidecar(of: file.path, inputs: inputs) {
        case .success(let found?):
            sidecar = found
            warnings += found.unknownKeys.map {
                "\(Self.sidecarPath(of: file.path)): ignoring the unknown key \"\($0)\""
            }
            areas = (
                found.stretchX ?? areas.stretchX, found.stretchY ?? areas.stretchY, found.content ?? areas.content,
                found.placeholder ?? areas.placeholder
            )
        case .success(nil): break
        case .failure(let error): return failure("\(Self.sidecarPath(of: file.path)): \(error)")
        }
        var images: [SpriteImage] = []
        var reportedProblems = Set<String>()
        for (id, params, isVariant, variantScale) in wanted {
            let sdf = sidecar?.sdf ?? options.sdf.contains { SpriteID.matches(id, pattern: $0) }
            for sheetRatio in ratios {
                // The image's own ratio: the sheet's, times the variant's scale.
                let ratio = sheetRatio * variantScale
                // A file for ratio R is drawn at 1 for R: its units are 1/R of a pixel at 1x.
                let drawn = ratio / file.unit
                // A signed distance field is computed from a render at 4 times the ratio.
                let scale = sdf ? drawn * SignedDistanceField.supersampling : drawn
                // Announced to the recovery's listeners: a supervisor pins a crash on this file.
                recovery.willRender?(file.path)
                let outcome = Result { () throws(IconrError) -> IconVariant in
                    try renderer.variant(of: icon, params, scale: scale)
                }
                recovery.didRender?(file.path)
                let variant: IconVariant
                switch outcome {
                case .success(let value): variant = value
                case .failure(let error): return failure(error.reason)
                }
                let key = variant.key
                let image = sdf ? SignedDistanceField.make(from: variant.icon.image, ratio: ratio) : variant.icon.image
                guard image.size.width <= options.maxSize, image.size.height <= options.maxSize else {
                    return failure(
                        "is \(image.size) at \(ratio.shortText)x, larger than the \(options.maxSize) px sheet limit")
                }
                let offset = sdf ? Double(SignedDistanceField.buffer) * ratio : 0
                let entry = SpriteIndexEntry(
                    rect: PixelRect(x: 0, y: 0, width: image.size.width, height: image.size.height), pixelRatio: ratio,
                    sdf: sdf,
                    content: areas.content.map {
                        let box = $0.scaled(by: drawn)
                        return ContentBox(
                            left: box.left + offset, top: box.top + offset, right: box.right + offset,
                            bottom: box.bottom + offset)
                    },
                    stretchX: areas.stretchX.map {
                        StretchArea(start: $0.start * drawn + offset, end: $0.end * drawn + offset)
                    },
                    stretchY: areas.stretchY.map {
                        StretchArea(start: $0.start * drawn + offset, end: $0.end * drawn + offset)
                    },
                    textFitWidth: sidecar?.textFitWidth, textFitHeight: sidecar?.textFitHeight,
                    placeholder: areas.placeholder.map {
                        let box = $0.scaled(by: drawn)
                        return ContentBox(
                            left: box.left + offset, top: box.top + offset, right: box.right + offset,
                            bottom: box.bottom + offset)
                    },
                    visible: sidecar?.visible)
                // Metadata that does not fit the image is left out with a warning (once an icon).
                let (valid, problems) = entry.validated()
                for problem in problems {
                    // One warning per id and field (`stretchX`, `content`, ...), not per ratio.
                    let field = "\(id) " + (problem.split(separator: " ").first.map(String.init) ?? problem)
                    guard reportedProblems.insert(field).inserted else { continue }
                    warnings.append(
                        "\(file.path): \(id == source.id ? "" : "\(id): ")\(problem) at \(ratio.shortText)x: it is left out"
                    )
                }
                images.append(
                    SpriteImage(
                        id: id, source: source.path, ratio: sheetRatio, image: image, entry: valid,
                        isVariant: isVariant,
                        contentKey: key.identity + (sdf ? " sdf" : "")))
            }
        }
        let references = template.externalReferences.isEmpty ? [:] : [file.path: template.externalReferences]
        return .success(SourceImages(images: images, warnings: warnings, references: references))
    }

    /// `dir/name.json` for `dir/name.svg` (or `.svgz`, `.png`, `name@2x.svg`).
    static func sidecarPath(of iconPath: String) -> String {
        let slash = iconPath.lastIndex(of: "/").map { iconPath.index(after: $0) } ?? iconPath.startIndex
        let dot = iconPath[slash...].lastIndex(of: ".") ?? iconPath.endIndex
        return String(iconPath[..<dot]) + ".json"
    }

    /// The sidecar of an icon file (as `inputs` read it), nil when there is none.
    static func sidecar(of iconPath: String, inputs: SpriteInputs) -> Result<SpriteSidecar?, SidecarError> {
        switch inputs.sidecar(of: iconPath) {
        case .success(let bytes?): Result { () throws(SidecarError) in try SpriteSidecar(json: bytes) }
        case .success(nil): .success(nil)
        case .failure(let error): .failure(SidecarError(message: error.reason))
        }
    }

    /// A PNG icon's images: its pixels as they are at the ratio its file is for, scaled
    /// (cairo's best filter) for the others, with a warning where it is enlarged.
    private func bitmapImages(
        _ source: SpriteSource, file: SpriteSource.File, png: [UInt8],
        ratios: [Double], inputs: SpriteInputs
    ) -> Result<(images: [SpriteImage], warnings: [String]), RenderError> {
        if options.variants[source.id]?.isEmpty == false {
            return .failure(.invalidDocument("a PNG icon has no parameters, so it can have no variants"))
        }
        let pixels: RasterImage
        do {
            // The file may be larger than a sheet at the ratio it is for (name@2x.png built at
            // 1x only): what must fit the sheet is each ratio's image, checked below.
            let smallestScale = (ratios.min() ?? 1) / file.unit
            let side = min(
                max(Double(options.maxSize), (Double(options.maxSize) / smallestScale).rounded(.up)),
                Double(RenderLimits.default.maxSize.width * 4))
            pixels = try PNGDecoder.decode(png, maxSize: PixelSize(width: Int(side), height: Int(side)))
        } catch {
            return .failure(error)
        }
        var images: [SpriteImage] = [], warnings: [String] = []
        let digest = SHA256.hex(png)
        let sidecar: SpriteSidecar?
        switch Self.sidecar(of: file.path, inputs: inputs) {
        case .success(let found): sidecar = found
        case .failure(let error): return .failure(.invalidDocument("\(Self.sidecarPath(of: file.path)): \(error)"))
        }
        warnings += (sidecar?.unknownKeys ?? []).map {
            "\(Self.sidecarPath(of: file.path)): ignoring the unknown key \"\($0)\""
        }
        for ratio in ratios {
            let scale = ratio / file.unit
            let sdf = sidecar?.sdf ?? options.sdf.contains { SpriteID.matches(source.id, pattern: $0) }
            let size = PixelSize.raster(
                width: Double(pixels.size.width), height: Double(pixels.size.height), scale: scale)
            if size != pixels.size, scale > 1 {
                warnings.append(
                    "\(file.path): a PNG icon enlarged \(scale.shortText) times for \(ratio.shortText)x blurs; "
                        + "give \(source.id)@\(ratio.shortText)x.png or an SVG")
            }
            let image: RasterImage
            do {
                if sdf {
                    // A signed distance field is computed from 4 times the pixels, as for SVG icons.
                    let large = PixelSize.raster(
                        width: Double(pixels.size.width), height: Double(pixels.size.height),
                        scale: scale * SignedDistanceField.supersampling)
                    image = SignedDistanceField.make(from: try Rasterizer.resample(pixels, to: large), ratio: ratio)
                } else {
                    image = size == pixels.size ? pixels : try Rasterizer.resample(pixels, to: size)
                }
            } catch {
                return .failure(error)
            }
            guard image.size.width <= options.maxSize, image.size.height <= options.maxSize else {
                return .failure(
                    .tooLarge(image.size, limit: PixelSize(width: options.maxSize, height: options.maxSize)))
            }
            let offset = sdf ? Double(SignedDistanceField.buffer) * ratio : 0
            func placed(_ box: ContentBox) -> ContentBox {
                let scaled = box.scaled(by: scale)
                return ContentBox(
                    left: scaled.left + offset, top: scaled.top + offset, right: scaled.right + offset,
                    bottom: scaled.bottom + offset)
            }
            let entry = SpriteIndexEntry(
                rect: PixelRect(x: 0, y: 0, width: image.size.width, height: image.size.height), pixelRatio: ratio,
                sdf: sdf,
                content: sidecar?.content.map(placed),
                stretchX: (sidecar?.stretchX ?? []).map {
                    StretchArea(start: $0.start * scale + offset, end: $0.end * scale + offset)
                },
                stretchY: (sidecar?.stretchY ?? []).map {
                    StretchArea(start: $0.start * scale + offset, end: $0.end * scale + offset)
                },
                textFitWidth: sidecar?.textFitWidth, textFitHeight: sidecar?.textFitHeight,
                placeholder: sidecar?.placeholder.map(placed), visible: sidecar?.visible)
            let (valid, problems) = entry.validated()
            if ratio == ratios.first {
                warnings += problems.map { "\(file.path): \($0) at \(ratio.shortText)x: it is left out" }
            }
            images.append(
                SpriteImage(
                    id: source.id, source: source.path, ratio: ratio, image: image, entry: valid, isVariant: false,
                    contentKey: "png " + digest + " " + scale.shortText + (sdf ? " sdf" : "")))
        }
        return .success((images, warnings))
    }

    /// Packs the images into sheets. Which ids share a sheet is decided for all ratios at
    /// once (`SpritePacker.groups`), so that every ratio's sheet N holds the same ids (a style
    /// names a sheet once for all ratios).
    private func compose(_ images: [SpriteImage]) throws(SpriteBuildError) -> (files: [SpriteSheetFile], count: Int) {
        let ratios = options.ratios.sorted(by: >)
        guard !ratios.isEmpty else { return ([], 0) }
        let ids = Array(Set(images.map(\.id))).sorted()
        let byRatio = Dictionary(grouping: images, by: \.ratio).mapValues { images in
            Dictionary(images.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        }
        // Every id has an image at every ratio (an icon that failed one has none).
        let drawn = try ratios.map { ratio throws(SpriteBuildError) -> [SpriteImage] in
            try ids.map { id throws(SpriteBuildError) -> SpriteImage in
                guard let image = byRatio[ratio]?[id] else {
                    throw SpriteBuildError.sheet("no image of \"\(id)\" at \(ratio.shortText)x")
                }
                return image
            }
        }
        let layouts = ratios.indices.map { index in
            SpritePacker.Layout(
                sizes: drawn[index].map(\.image.size), padding: padding(at: ratios[index]),
                sharing: options.unique ? sharing(drawn[index]) : nil)
        }
        let packed = SpritePacker.groups(layouts, maxSide: options.maxSize)
        if let item = packed.tooLarge.first {
            throw SpriteBuildError.sheet("\"\(ids[item])\" is larger than the \(options.maxSize) px sheet limit")
        }
        // Every sheet of every ratio draws and encodes on its own: in parallel.
        let jobs = ratios.indices.flatMap { ratio in packed.groups.indices.map { (ratio, $0) } }
        let files = Locked<[Int: Result<SpriteSheetFile, SpriteBuildError>]>([:])
        DispatchQueue.concurrentPerform(iterations: jobs.count) { index in
            let (ratio, sheet) = jobs[index]
            let group = packed.groups[sheet]
            let file = Result { () throws(SpriteBuildError) in
                try composeSheet(
                    group.members.map { drawn[ratio][$0] },
                    placements: group.members.map { group.sheets[ratio].placements[$0] },
                    size: PixelSize(width: group.sheets[ratio].width, height: group.sheets[ratio].height),
                    ratio: ratios[ratio], sheet: sheet)
            }
            files.withLock { $0[index] = file }
        }
        let results = files.withLock { $0 }
        let sheets = try jobs.indices.map { index throws(SpriteBuildError) -> SpriteSheetFile in
            guard let result = results[index] else { throw SpriteBuildError.sheet("a sheet was not composed") }
            return try result.get()
        }
        return (sheets.sorted { ($0.ratio, $0.sheet) < ($1.ratio, $1.sheet) }, packed.groups.count)
    }

    /// The digest of everything that decides the sheets: the layout options, and each
    /// image's id, ratio, content key and index metadata.
    private func compositionKey(_ images: [SpriteImage]) -> String {
        var text =
            "sheets \(IconrVersion.string) ratios \(options.ratios.sorted().map(\.shortText)) padding \(options.padding) "
            + "max \(options.maxSize) unique \(options.unique) optimize \(options.optimize)\n"
        for image in images.sorted(by: { ($0.ratio, $0.id) < ($1.ratio, $1.id) }) {
            text += image.id + "\u{0}" + image.ratio.shortText + "\u{0}" + image.contentKey + "\u{0}"
            text += image.entry.jsonValue.text(.minified) + "\n"
        }
        return SHA256.hex(Array(text.utf8))
    }

    /// For each image, the first image with the same pixels (itself when none before it has).
    private func sharing(_ images: [SpriteImage]) -> [Int] {
        var first: [RasterImage: Int] = [:]
        return images.indices.map { index in
            if let earlier = first[images[index].image] { return earlier }
            first[images[index].image] = index
            return index
        }
    }

    private func padding(at ratio: Double) -> Int {
        Int((Double(options.padding) * ratio).rounded(.up))
    }

    /// Draws one sheet's images at their placements and encodes it.
    private func composeSheet(
        _ images: [SpriteImage], placements: [PixelRect?], size: PixelSize, ratio: Double,
        sheet: Int
    ) throws(SpriteBuildError) -> SpriteSheetFile {
        let size = PixelSize(width: max(1, size.width), height: max(1, size.height))
        let padding = padding(at: ratio)
        var pixels = [UInt8](repeating: 0, count: size.width * size.height * 4)
        var entries: [String: SpriteIndexEntry] = [:]
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
            png = try PNGEncoder.encodeSmallest(RasterImage(size: size, pixels: pixels), optimize: options.optimize)
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

/// One image of one sprite id at one ratio.
/// What rendering an icon, or one of its files, gave: its images, its warnings, and the
/// references of its files to other files (by the path of the file that makes them).
private struct SourceImages: Sendable {
    var images: [SpriteImage] = []
    var warnings: [String] = []
    var references: [String: [String]] = [:]
}

private struct SpriteImage: Sendable {
    let id: String
    let source: String
    let ratio: Double
    let image: RasterImage
    let entry: SpriteIndexEntry
    let isVariant: Bool
    /// What determines the pixels: the variant's cache key (with the SDF flag), or a PNG's digest.
    let contentKey: String
}

/// An icon and its files: a base file (`name.svg`, `.svgz` or `.png`) and files for single
/// ratios (`name@2x.svg`), as sprite-one and spreet users lay them out.
struct SpriteSource: Sendable {
    struct File: Sendable {
        let path: String
        /// The ratio the file is drawn for at scale 1: 1 for the base file, R for `name@Rx`.
        let unit: Double
    }

    let id: String
    /// The path that names the icon in messages: the base file, else the first ratio's.
    let path: String
    let base: File?
    let perRatio: [Double: File]

    /// Every file of the icon.
    var paths: [String] { (base.map { [$0.path] } ?? []) + perRatio.values.map(\.path).sorted() }

    /// Which file draws which of `ratios`: a ratio's own file, else the base, else (no base)
    /// the file of the lowest ratio.
    func files(for ratios: [Double]) -> [(file: File, ratios: [Double])] {
        let fallback = base ?? perRatio.min { $0.key < $1.key }.map(\.value)
        var groups: [(file: File, ratios: [Double])] = []
        for ratio in ratios.sorted() {
            guard let file = perRatio[ratio] ?? fallback else { continue }
            if let index = groups.firstIndex(where: { $0.file.path == file.path }) {
                groups[index].ratios.append(ratio)
            } else {
                groups.append((file, [ratio]))
            }
        }
        return groups
    }
}

enum SpriteSources {
    /// The icon files of `directories` (and their subfolders when `recursive`), by id:
    /// `.svg`, `.svgz` and `.png` in any letter case, hidden files left out.
    /// An SVG and a PNG of one id: the SVG draws it, with a warning. `stamps` holds what the
    /// listing's `stat` said of every icon file and every `.json` file (sidecars among them).
    static func find(
        in directories: [String], recursive: Bool,
        sanitizeIDs: Bool, firstFolderWins: Bool = false
    ) throws(SpriteBuildError) -> (sources: [SpriteSource], warnings: [String], stamps: [String: FileStamp]) {
        var files: [(id: String, ratio: Double?, path: String)] = []
        var stamps: [String: FileStamp] = [:]
        var folderOf: [String: Int] = [:]
        for (index, directory) in directories.enumerated() {
            let root = directory.count > 1 && directory.hasSuffix("/") ? String(directory.dropLast()) : directory
            let before = files.count
            collect(root, prefix: "", recursive: recursive, into: &files, stamps: &stamps)
            for file in files[before...] where folderOf[file.path] == nil { folderOf[file.path] = index }
        }
        guard !files.isEmpty else { throw SpriteBuildError.noIcons(directories) }
        // Ids keep `/` for folders; what breaks `["image", id]`, `id:name` prefixes or
        // legacy `{token}` strings is an error, or replaced (collisions are then duplicates).
        for index in files.indices {
            guard let bad = files[index].id.unicodeScalars.first(where: isForbiddenInID) else { continue }
            guard sanitizeIDs else {
                throw SpriteBuildError.badID(path: files[index].path, character: "\"\(String(bad).escapedForMessage)\"")
            }
            files[index].id = String(
                String.UnicodeScalarView(files[index].id.unicodeScalars.map { isForbiddenInID($0) ? "_" : $0 }))
        }
        var sources: [SpriteSource] = [], warnings: [String] = []
        for (id, all) in Dictionary(grouping: files, by: \.id).sorted(by: { $0.key < $1.key }) {
            var group = all
            if firstFolderWins, let first = all.compactMap({ folderOf[$0.path] }).min() {
                group = all.filter { folderOf[$0.path] == first }
                for other in all where folderOf[other.path] != first {
                    warnings.append(
                        "\(other.path): left out, \(directories[first]) comes first and has the id \"\(id)\"")
                }
            }
            var bases = group.filter { $0.ratio == nil }
            let vectors = bases.filter { !$0.path.lowercased().hasSuffix(".png") }
            if vectors.count == 1, bases.count > 1 {
                for bitmap in bases where bitmap.path != vectors[0].path {
                    warnings.append("\(bitmap.path): left out, \(vectors[0].path) draws the id \"\(id)\"")
                }
                bases = vectors
            }
            if bases.count > 1 { throw SpriteBuildError.duplicateID(id, bases.map(\.path).sorted()) }
            var perRatio: [Double: SpriteSource.File] = [:]
            for file in group {
                guard let ratio = file.ratio else { continue }
                if let other = perRatio[ratio] {
                    throw SpriteBuildError.duplicateID("\(id)@\(ratio.shortText)x", [other.path, file.path].sorted())
                }
                perRatio[ratio] = SpriteSource.File(path: file.path, unit: ratio)
            }
            let base = bases.first.map { SpriteSource.File(path: $0.path, unit: 1) }
            guard let path = base?.path ?? perRatio.min(by: { $0.key < $1.key })?.value.path else { continue }
            sources.append(SpriteSource(id: id, path: path, base: base, perRatio: perRatio))
        }
        return (sources.sorted { $0.id < $1.id }, warnings, stamps)
    }

    private static func isForbiddenInID(_ scalar: Unicode.Scalar) -> Bool {
        scalar == ":" || scalar == "{" || scalar == "}" || scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// The icon id and ratio of a file name (`flag.svg`: flag; `flag@2x.SVGZ`: flag at 2),
    /// or nil for a file that is not an icon.
    static func icon(fileName: String) -> (id: String, ratio: Double?)? {
        let lowered = fileName.lowercased()
        guard let suffix = iconSuffixes.first(where: { lowered.hasSuffix($0) }) else { return nil }
        let stem = String(fileName.dropLast(suffix.count))
        guard !stem.isEmpty else { return nil }
        if let at = stem.lastIndex(of: "@"), stem[stem.index(after: at)...].hasSuffix("x"),
            let ratio = Double(stem[stem.index(after: at)...].dropLast()), ratio.isFinite, ratio > 0,
            at != stem.startIndex
        {
            return (String(stem[..<at]), ratio)
        }
        return (stem, nil)
    }

    /// The endings of icon files, in lower case.
    private static let iconSuffixes = [".svg", ".svgz", ".png"]

    /// Whether a file name ends like an icon or in `.json`, in any letter case: the files
    /// `collect` keeps (icons, and sidecars among the JSON files).
    private static func isListed(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return lowered.hasSuffix(".json") || iconSuffixes.contains { lowered.hasSuffix($0) }
    }

    /// `ancestors` are the folders (device, inode) being read above this one: a link back to
    /// one of them (`loop -> .`) is not followed again.
    private static func collect(
        _ directory: String, prefix: String, recursive: Bool,
        into files: inout [(id: String, ratio: Double?, path: String)], stamps: inout [String: FileStamp],
        ancestors: Set<[UInt64]> = []
    ) {
        var own = stat()
        guard stat(directory, &own) == 0 else { return }
        let identity = [UInt64(own.st_dev), UInt64(own.st_ino)]
        guard !ancestors.contains(identity) else { return }
        let listing = FileReader.listing(of: directory, folders: recursive, wanted: isListed)
        for entry in listing.sorted(by: { $0.name < $1.name }) {
            let path = directory + "/" + entry.name
            if entry.isFolder {
                collect(
                    path, prefix: prefix + entry.name + "/", recursive: true, into: &files, stamps: &stamps,
                    ancestors: ancestors.union([identity]))
                continue
            }
            // Icon files and JSON files (the sidecars among them) alike.
            stamps[path] = entry.stamp
            if let icon = icon(fileName: entry.name) { files.append((prefix + icon.id, icon.ratio, path)) }
        }
    }
}

private func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}
