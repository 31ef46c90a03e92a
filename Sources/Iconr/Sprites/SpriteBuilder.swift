import Dispatch
import IconrCore
import IconrRender
import IconrSystem
import Synchronization

/// Builds MapLibre/Mapbox sprite sheets from folders of icon templates: every icon under
/// its file name, the variants asked for, at every ratio. Icons render in parallel on all
/// cores through an `IconCache`.
///
/// `placement: .isolated(...)` renders in worker processes (a crash or timeout fails that
/// icon alone); `.inProcess` renders here with no time limit, faster, and is how `iconr
/// sprite` builds in the child process it supervises (`SpriteBuildRecovery`). In process, a
/// build that finds a file changed starts loading librsvg on another thread at once
/// (`Rasterizer.startLoadingLibraries`): its process should not `fork` without `exec` while
/// it builds.
public final class SpriteBuilder: Sendable {
    /// What goes into the sprite and how it is laid out.
    public let options: SpriteOptions
    /// Where rendered images are kept and looked up (memory and disk).
    public let cache: IconCache
    /// Where librsvg runs: in process, or in worker processes.
    public let placement: RenderPlacement
    /// The one path to a variant: its key, the caches, a render.
    private let renderer: IconRenderer
    /// What tells a settled file stamp (2 s old) from a fresh one.
    private let clock: CacheClock

    /// A builder of sprites with `options`, its renders cached in `cache` and run where `placement` says.
    public convenience init(options: SpriteOptions, cache: IconCache, placement: RenderPlacement) {
        self.init(options: options, cache: cache, placement: placement, clock: .system)
    }

    /// A builder that tells settled file stamps by `clock`.
    package init(options: SpriteOptions, cache: IconCache, placement: RenderPlacement, clock: CacheClock) {
        self.options = options
        self.cache = cache
        self.placement = placement
        self.clock = clock
        renderer = IconRenderer(cache: cache, placement: placement, limits: options.limits)
    }

    /// The icon files of `directories` (and subfolders when `recursive`) with their sprite ids.
    /// With `firstFolderWins`, an id in several folders is the first folder's.
    public static func iconFiles(
        in directories: [String], recursive: Bool, firstFolderWins: Bool = false
    ) throws(SpriteBuildError) -> [(id: String, path: String)] {
        try iconFiles(in: directories, recursive: recursive, firstFolderWins: firstFolderWins, followsLinksOut: true)
    }

    /// `iconFiles(in:recursive:firstFolderWins:)`, leaving out icons whose links lead out of
    /// their folder unless `followsLinksOut`.
    package static func iconFiles(
        in directories: [String], recursive: Bool, firstFolderWins: Bool = false, followsLinksOut: Bool,
        names: [String: String] = [:]
    ) throws(SpriteBuildError) -> [(id: String, path: String)] {
        try SpriteSources.find(
            in: directories, recursive: recursive, sanitizeIDs: true, firstFolderWins: firstFolderWins,
            followsLinksOut: followsLinksOut, names: names
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
    ///
    /// It finds the sources, walks the rebuild ladder (`SpriteBuildCache`) until a level
    /// answers, draws what is left, composes or patches the sheets, and records every level
    /// for the next build.
    package func build(
        directories: [String], recovery: SpriteBuildRecovery, progress: (@Sendable (Int, Int) -> Void)? = nil
    ) throws(SpriteBuildError) -> SpriteBuild {
        let (sources, sourceWarnings, stamps) = try SpriteSources.find(
            in: directories, recursive: options.recursive,
            sanitizeIDs: options.sanitizeIDs, firstFolderWins: options.firstFolderWins,
            followsLinksOut: options.followsLinksOut, names: options.folderNames)
        let known = Set(sources.map(\.id))
        if let unknown = options.variants.keys.sorted().first(where: { !known.contains($0) }) {
            throw SpriteBuildError.badVariants("the variants name icon \"\(unknown)\", which is not among the icons")
        }
        let statsBefore = cache.statistics
        let started = ContinuousClock.now
        let ladder = SpriteBuildCache(disk: cache.disk)
        func recorded(_ inputsKey: String, filesRead: Int) -> SpriteBuild? {
            guard let (record, sheets) = ladder.recordedBuild(inputsKey) else { return nil }
            return SpriteBuild(
                sheets: sheets.files, sheetCount: sheets.count, icons: record.icons, variants: record.variants,
                skipped: [], warnings: sourceWarnings + record.warnings, renders: 0, cacheHits: record.images,
                renderSeconds: seconds(ContinuousClock.now - started), composeSeconds: 0, sheetsFromCache: true,
                inputsUnchanged: true, iconsReused: 0, filesRead: filesRead)
        }
        // Stamps: files whose stamps are those of a recorded build hold its bytes, and it is
        // served without reading them (a warm rebuild of osm-carto's 8.5 MB).
        let now = clock.wallNanoseconds
        let stampKey = SpriteInputs.stampKey(sources, stamps: stamps, options: options, recovery: recovery, now: now)
        let stampedKey = stampKey.flatMap { ladder.stamps.lookup($0) }
        if let stampedKey, let build = recorded(stampedKey, filesRead: 0) { return build }
        // Sets: an icon whose files have the stamps the last build of this set recorded
        // holds the bytes it read then, and is not read again.
        let retrying = !recovery.failed.isEmpty || !recovery.suspects.isEmpty
        let setKey = retrying || options.unique ? nil : SpriteSetRecord.key(of: sources, options: options)
        let last = setKey.flatMap { ladder.sets.lookup($0) }
        let fileStamps = sources.map { SpriteInputs.stamps(of: $0, stamps: stamps, now: now) }
        let inputs = SpriteInputs(
            sources, stamps: stamps, options: options, recovery: recovery,
            unchanged: last?.unchangedIcons(sources, stamps: fileStamps) ?? [:])
        let inputsKey = inputs.key, filesRead = inputs.filesRead
        /// Keeps the inputs' key under the stamps the listing saw before the files were read:
        /// a file written since has other stamps, and is read again next time.
        func recordStamps() {
            guard let stampKey, let inputsKey else { return }
            ladder.stamps.record(inputsKey, under: stampKey)
        }
        // Builds: the files' bytes lead to a recorded build (the key the stamps led to was
        // looked up already).
        if let inputsKey, inputsKey != stampedKey, let build = recorded(inputsKey, filesRead: filesRead) {
            recordStamps()
            return build
        }
        // A file changed: librsvg loads on another core while the last build's icons are
        // matched and its sheets read. (Not sooner: a rebuild within 2 s of a change, whose
        // stamps are too new to be trusted, is served above, and a load beside it slowed it
        // by a fifth.)
        if case .inProcess = placement { Rasterizer.startLoadingLibraries() }
        // Icons whose files are as the last build of this set read them are taken from its
        // record, not parsed or drawn: their pixels are in its sheets. Those it had with other
        // files are new: drawn without asking the cache (whose pack is read whole for a
        // lookup: 5.8 MB on Temaki).
        let digests = sources.map { inputs.digests(of: $0) }
        let (taken, changed) = last?.icons(sources, digests: digests) ?? ([:], [])
        // The files' bytes (as many as the images' own bytes on Maki) go once they are drawn,
        // unless the taken icons may have to be drawn after all.
        let keptInputs = taken.isEmpty ? nil : inputs
        // The last sheets are read back on another core while librsvg loads and draws.
        let lastSheets = Locked<LastSheets?>(nil)
        let readingLastSheets = DispatchGroup()
        if let last, !taken.isEmpty {
            let maxSize = options.maxSize
            DispatchQueue.global().async(group: readingLastSheets) {
                let sheets = SheetComposer.lastSheets(last, maxSize: maxSize, cache: ladder)
                lastSheets.withLock { $0 = sheets }
            }
        }
        // Draw what is left.
        var results = try renderImages(
            of: sources, indices: sources.indices.filter { taken[$0] == nil }, inputs: consume inputs,
            changed: changed, recovery: recovery, progress: progress, done: taken.count)
        results.merge(taken.mapValues { .success($0) }) { drawn, _ in drawn }
        var (images, failures, warnings, references) = try checked(results, of: sources)
        var statsAfter = cache.statistics
        let rendered = ContinuousClock.now
        // Compose or patch. Sheets: those composed from exactly these images and options
        // before are read back instead of packed and encoded again (most of a warm rebuild).
        let composer = SheetComposer(options: options)
        var plan = try composer.plan(images)
        let compositionKey = composer.compositionKey(images)
        let sheets: ComposedSheets
        var sheetsFromCache = false, iconsReused = 0
        readingLastSheets.wait()
        if let cached = ladder.sheets.lookup(compositionKey) {
            sheets = cached
            sheetsFromCache = true
            iconsReused = taken.count
        } else if let last, let lastSheets = lastSheets.withLock({ $0 }),
            let patched = composer.patch(
                images, plan: plan, last: lastSheets, layoutsKey: last.layoutsKey, cache: ladder)
        {
            // Packings: the last sheets, with the same packing, take the icons drawn again.
            sheets = patched
            iconsReused = taken.count
        } else {
            if let keptInputs {
                // The last sheets cannot take the new images: the taken icons are drawn too.
                results.merge(
                    try renderImages(
                        of: sources, indices: taken.keys.sorted(), inputs: keptInputs, changed: [],
                        recovery: recovery, progress: nil, done: 0)
                ) { _, drawn in drawn }
                (images, failures, warnings, references) = try checked(results, of: sources)
                statsAfter = cache.statistics
                plan = try composer.plan(images)
            }
            sheets = try composer.compose(images, plan: plan, cache: ladder)
        }
        let variantCount = Set(images.filter(\.isVariant).map(\.id)).count
        // Record every level: the sheets always (the packing was recorded as it was found);
        // a whole build's record, its stamps and its set's record when no icon failed.
        if !sheetsFromCache { ladder.sheets.record(sheets, under: compositionKey) }
        if failures.isEmpty {
            if let inputsKey {
                let record = SpriteRecord(
                    sheetsKey: compositionKey, icons: sources.count, variants: variantCount, images: images.count,
                    warnings: warnings, references: references,
                    referenced: IconReferences.fingerprint(of: references))
                ladder.builds.record(record, under: inputsKey)
                recordStamps()
            }
            if let setKey {
                let record = SpriteSetRecord(
                    sources, made: results, digests: digests, stamps: fileStamps, sheetsKey: compositionKey,
                    layoutsKey: plan.layoutsKey)
                ladder.sets.record(record, under: setKey)
            }
        }
        ladder.flush()
        let takenImages = taken.values.reduce(0) { $0 + $1.images.count }
        return SpriteBuild(
            sheets: sheets.files, sheetCount: sheets.count, icons: sources.count - failures.count,
            variants: variantCount, skipped: failures, warnings: sourceWarnings + warnings,
            renders: statsAfter.renders - statsBefore.renders,
            cacheHits: (statsAfter.memory.hits - statsBefore.memory.hits)
                + (statsAfter.diskHits - statsBefore.diskHits) + (iconsReused > 0 ? takenImages : 0),
            renderSeconds: seconds(rendered - started), composeSeconds: seconds(ContinuousClock.now - rendered),
            sheetsFromCache: sheetsFromCache, inputsUnchanged: false, iconsReused: iconsReused, filesRead: filesRead)
    }

    /// Every image of the icons at `indices` of `sources`, on all cores (suspects of an
    /// earlier crash first, one at a time), those of `changed` icons without asking the disk
    /// cache; `progress` hears them done after `done` others.
    private func renderImages(
        of sources: [SpriteSource], indices: [Int], inputs: consuming SpriteInputs, changed: Set<Int>,
        recovery: SpriteBuildRecovery, progress: (@Sendable (Int, Int) -> Void)?, done: Int
    ) throws(SpriteBuildError) -> [Int: Result<SourceImages, SpriteFailure>] {
        guard !indices.isEmpty else { return [:] }
        // Only a build that renders loads librsvg and cairo (some 50 libraries).
        do {
            try Rasterizer.loadLibraries()
        } catch {
            throw SpriteBuildError.renderer(error)
        }
        let results = Locked<[Int: Result<SourceImages, SpriteFailure>]>([:])
        do {
            // The stage (and the files' bytes it reads) lives only while icons are drawn.
            let stage = SpriteImageRenderer(
                options: options, renderer: renderer, placement: placement, inputs: inputs, recovery: recovery)
            let done = Atomic<Int>(done)
            @Sendable func renderIcon(_ index: Int) {
                let result = stage.images(of: sources[index], isNew: changed.contains(index))
                results.withLock { $0[index] = result }
                progress?(done.add(1, ordering: .relaxed).newValue, sources.count)
            }
            let alone = indices.filter { !recovery.suspects.isDisjoint(with: sources[$0].paths) }
            let together = indices.filter { recovery.suspects.isDisjoint(with: sources[$0].paths) }
            alone.forEach(renderIcon)
            DispatchQueue.concurrentPerform(iterations: together.count) { renderIcon(together[$0]) }
        }
        // librsvg's parsing and drawing freed much more than the images keep, in every
        // thread's arena: given back before the sheets are drawn.
        Allocator.returnFreedMemory()
        return results.withLock { $0 }
    }

    /// The images of every icon in `sources` order, checked as a whole: no id from two files,
    /// failures only with `skipInvalid` and while some icon is left, every `sdf` pattern matched.
    private func checked(
        _ results: [Int: Result<SourceImages, SpriteFailure>], of sources: [SpriteSource]
    ) throws(SpriteBuildError) -> (
        images: [SpriteImage], failures: [SpriteFailure], warnings: [String], references: [String: [String]]
    ) {
        var images: [SpriteImage] = [], failures: [SpriteFailure] = [], warnings: [String] = []
        var references: [String: [String]] = [:]
        // One allocation: grown by doubling, the array of 50,000 images peaked at 40 MB.
        images.reserveCapacity(results.values.reduce(0) { $0 + ((try? $1.get())?.images.count ?? 0) })
        for index in sources.indices {
            switch results[index] {
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
        // Every icon failing leaves nothing to build, skipped or not.
        guard failures.isEmpty || (options.skipInvalid && !images.isEmpty) else {
            throw SpriteBuildError.invalidIcons(failures)
        }
        if let unmatched = options.sdf.sorted().first(where: { pattern in
            !ids.keys.contains { SpriteID.matches($0, pattern: pattern) }
        }) {
            throw SpriteBuildError.unmatchedSDF(unmatched)
        }
        return (images, failures, warnings, references)
    }
}

private func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}
