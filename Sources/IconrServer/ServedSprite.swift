import Glibc
import Iconr
import IconrCore
import IconrHTTP
import IconrStyle
import IconrSystem

/// The sprite of some icon folders (and, for a style, the variants it shows), built on the
/// first request and again when a file in them (or the style) changed, checked at most
/// every `recheckInterval`. One build at a time; requests during a build wait for it.
final class ServedSprite: Sendable {
    /// One build and what identifies its inputs.
    struct Current: Sendable {
        let build: SpriteBuild
        let style: StyleVariants?
        /// The content hash that `sprite.{hash}` URLs carry.
        let hash: String
        /// Sheet files by name (`sprite.png`, `sprite@2x.json`, `sprite-2.png`, ...) with their
        /// ETags, made once per build rather than hashing a sheet on every request.
        let files: [String: (bytes: [UInt8], tag: String)]
        let fingerprint: [UInt8]
        var checked: ContinuousClock.Instant
        /// The fingerprint of the folders while they had no icons and this build stayed
        /// served in their place (moved away or emptied for a moment); nil while they match it.
        var heldFor: [UInt8]? = nil
    }

    static let recheckInterval = Duration.seconds(2)

    let directories: [String]
    let stylePath: String?
    /// Its name among the server's sprites (its disk cache pack's), for metrics.
    private let pack: String
    private let spriteOptions: SpriteOptions
    /// Where its images are kept (its own pack of the disk cache), and where librsvg runs.
    private let cache: IconCache
    private let placement: RenderPlacement
    private let clock: CacheClock
    private let metrics: ServerMetrics
    private let current = Locked<Current?>(nil)
    /// A failed build while there is none to serve, and when: its answer is given again for
    /// `recheckInterval`, as a build is. Without it every request built again (and logged
    /// the failure again); after it a build is tried again, for failures that pass.
    private let failed = Locked<(answer: RouteError, at: ContinuousClock.Instant)?>(nil)
    /// Held while building: concurrent requests wait for one build.
    private let building = Locked<Void>(())
    /// Whether the next build serves folders without icons as an empty sprite even when a
    /// build with icons is served (after SIGHUP); else that build stays served.
    private let emptyTaken = Locked(false)
    /// Builds that a newer one replaced, by hash, with their files and until when their
    /// hashed names are answered: styles name `sprite.{hash}` and are cached for `maxAge`, so
    /// a client may ask for a replaced build's sheets that long after it was replaced.
    private let retired = Locked<
        [(hash: String, files: [String: (bytes: [UInt8], tag: String)], until: ContinuousClock.Instant)]
    >([])
    /// How long a replaced build's hashed files stay answerable (the styles' max-age and a
    /// margin); at most `retiredLimit` builds are kept.
    private let retiredFor: Duration
    static let retiredLimit = 8

    /// `pack` names this sprite's pack in the disk cache (each sprite writes its own); `theme`
    /// draws it in a theme's colors.
    init(
        directories: [String], style: String?, options: ServerOptions, placement: RenderPlacement, pack: String,
        metrics: ServerMetrics, theme: Theme? = nil
    ) {
        self.directories = directories
        self.pack = pack
        self.metrics = metrics
        retiredFor = .seconds(options.maxAge + 60)
        stylePath = style
        var spriteOptions = SpriteOptions()
        spriteOptions.ratios = options.spriteRatios
        spriteOptions.recursive = true
        spriteOptions.skipInvalid = true
        spriteOptions.sanitizeIDs = true
        // Several sets in one sprite (a style's): a name is the first set's, as /icons/ finds it.
        spriteOptions.firstFolderWins = true
        spriteOptions.followsLinksOut = options.followsLinks
        spriteOptions.limits = options.limits
        spriteOptions.theme = theme
        self.spriteOptions = spriteOptions
        // The server's one disk cache: the same folder, limit and eviction as its icons'.
        let disk = options.cacheDirectory.flatMap {
            try? DiskCache(directory: $0, byteLimit: options.cacheByteLimit, batch: pack, evictsInBackground: true)
        }
        clock = options.clock
        cache = IconCache(memoryLimit: 0, disk: disk)
        self.placement = placement
    }

    /// Reads the style once, so that one that does not parse stops the server at start; its
    /// warnings go to the log, and with `strict` an icon it shows that the sets lack is an error.
    func checkStyle(strict: Bool) throws {
        guard let stylePath else { return }
        let style = try StyleVariants(
            stylePath: stylePath, dataPaths: [], config: [:], directories: directories, recursive: true,
            firstFolderWins: true)
        if strict, !style.missingIcons.isEmpty {
            throw StyleError(
                message: "\(stylePath): --strict: the style shows icons the sets lack: "
                    + style.missingIcons.joined(separator: ", "))
        }
    }

    /// Has the next request check the files now, not up to `recheckInterval` later (SIGHUP).
    func recheck() {
        current.withLock { current in
            if let checked = current?.checked { current?.checked = checked - Self.recheckInterval * 2 }
            // An operator's SIGHUP takes the folders as they are: emptied on purpose, say.
            current?.heldFor = nil
        }
        emptyTaken.withLock { $0 = true }
        failed.withLock { $0 = nil }
    }

    /// The current build: the last one while its inputs are unchanged, else a new one.
    /// While a rebuild runs, other requests get the last build rather than wait (only the
    /// first build is waited for), so a long rebuild holds one server thread, not all.
    func build() -> Result<Current, RouteError> {
        let now = clock.now
        if let known = current.withLock({ $0 }) {
            if now - known.checked < Self.recheckInterval { return .success(known) }
            if let result = building.withLockIfAvailable({ _ in rebuildIfChanged() }) { return result }
            return .success(known)
        }
        return building.withLock { _ in rebuildIfChanged() }
    }

    /// The current build when it needs no check yet (checked within `recheckInterval`):
    /// answered on the caller's thread, with no queue; nil when a check or build is due.
    func freshBuild() -> Current? {
        guard let known = current.withLock({ $0 }), clock.now - known.checked < Self.recheckInterval else { return nil }
        return known
    }

    /// Under `building`'s lock: the last build if its inputs are unchanged, else a new one.
    private func rebuildIfChanged() -> Result<Current, RouteError> {
        if let known = current.withLock({ $0 }), clock.now - known.checked < Self.recheckInterval {
            return .success(known)
        }
        let unbuilt = current.withLock { $0 == nil }
        if unbuilt, let last = failed.withLock({ $0 }), clock.now - last.at < Self.recheckInterval {
            return .failure(last.answer)
        }
        var fingerprint: [UInt8] = []
        do {
            fingerprint = try self.fingerprint()
        } catch {
            // A set without icons is built as one: an empty sprite.
            guard case .noIcons? = error as? SpriteBuildError else {
                return .failure(unbuilt ? remembered(failure(error)) : failure(error))
            }
        }
        if var known = current.withLock({ $0 }), known.fingerprint == fingerprint || known.heldFor == fingerprint {
            known.checked = clock.now
            current.withLock { $0 = known }
            return .success(known)
        }
        do {
            var options = spriteOptions
            let style = try stylePath.map { path in
                try StyleVariants(
                    stylePath: path, dataPaths: [], config: [:], directories: directories, recursive: true,
                    firstFolderWins: true, followsLinksOut: spriteOptions.followsLinksOut)
            }
            style?.add(to: &options)
            // The library's job, one flavor of this sprite's options, its files named as served.
            let job = SpriteJob(
                folders: directories, options: options, style: style, stylePath: stylePath,
                outputs: SpriteOutputs(prefix: "sprite"))
            let product = try job.build(
                [job.served], cache: cache, recovery: SpriteBuildRecovery(), placement: placement, clock: clock)
            guard let built = product.flavors.first else { throw SpriteBuildError.noIcons(directories) }
            for warning in (style?.warnings ?? []) + product.warnings { Log.warning(warning) }
            metrics.spriteBuilt(failed: false)
            return .success(serve(built.build, files: built.files, style: style, fingerprint: fingerprint))
        } catch {
            // No icons, or none valid with no build before: an empty sprite, not an error, as
            // MapLibre fails a style's whole sprite array on one sprite that fails to load.
            let emptied: (reason: String, failed: Bool)? =
                switch error as? SpriteBuildError {
                case .noIcons?: ("it has no icons (.svg, .svgz, .png)", false)
                case .invalidIcons(let failures)? where current.withLock({ $0 == nil }):
                    ("every icon is invalid: " + failures.map(\.description).joined(separator: "; "), true)
                default: nil
                }
            // Folders that had icons and have none now (moved away, emptied for a moment, a
            // checkout in progress): the last good build stays served, its hashed URLs too,
            // until they have icons again or SIGHUP takes them as they are.
            if case .noIcons? = error as? SpriteBuildError, !emptyTaken.withLock({ $0 }),
                var known = current.withLock({ $0 }), known.build.icons > 0
            {
                Log.warning(
                    "\(directories.joined(separator: ", ")): no icons now (moved or emptied?): serving the last good "
                        + "sprite until they are back, or SIGHUP")
                known.checked = clock.now
                known.heldFor = fingerprint
                current.withLock { $0 = known }
                return .success(known)
            }
            if let emptied {
                metrics.spriteBuilt(failed: emptied.failed)
                Log.warning("the sprite of \(directories.joined(separator: ", ")) is empty: \(emptied.reason)")
                let build = SpriteBuild.empty(ratios: spriteOptions.ratios)
                return .success(
                    serve(
                        build, files: build.files(prefix: "sprite", minify: false), style: nil, fingerprint: fingerprint
                    ))
            }
            metrics.spriteBuilt(failed: true)
            // A rebuild that fails (a file half written) keeps the last build in service.
            if var known = current.withLock({ $0 }) {
                Log.warning(
                    "rebuilding the sprite of \(directories.joined(separator: ", ")) failed, serving the last build: \(error)"
                )
                known.checked = clock.now
                current.withLock { $0 = known }
                return .success(known)
            }
            return .failure(remembered(failure(error)))
        }
    }

    /// `build` made the current one, answered from now on; the one it replaces is retired.
    private func serve(
        _ build: SpriteBuild, files: [(bytes: [UInt8], path: String)], style: StyleVariants?, fingerprint: [UInt8]
    ) -> Current {
        let made = Current(
            build: build, style: style, hash: SpriteBuild.contentHash(files),
            files: Dictionary(
                files.map { ($0.path, (bytes: $0.bytes, tag: IconServer.entityTag($0.bytes))) },
                uniquingKeysWith: { first, _ in first }),
            fingerprint: fingerprint, checked: clock.now)
        if let replaced = current.withLock({ $0 }), replaced.hash != made.hash {
            let now = clock.now
            retired.withLock { retired in
                retired.removeAll { $0.until <= now || $0.hash == made.hash }
                retired.append((replaced.hash, replaced.files, now + retiredFor))
                if retired.count > Self.retiredLimit { retired.removeFirst(retired.count - Self.retiredLimit) }
            }
        }
        emptyTaken.withLock { $0 = false }
        current.withLock { $0 = made }
        failed.withLock { $0 = nil }
        metrics.spriteIsEmpty(pack, build.icons == 0)
        return made
    }

    /// `answer`, kept as the last build's failure.
    private func remembered(_ answer: RouteError) -> RouteError {
        failed.withLock { $0 = (answer, clock.now) }
        return answer
    }

    /// A failed build's status and line for clients, which know sets by name, not by the
    /// server's folders: those go to the server's log.
    private func failure(_ error: any Error) -> RouteError {
        switch error as? SpriteBuildError {
        case .noIcons?: return RouteError(status: 404, message: "the set has no icons (.svg, .svgz, .png)")
        case .sheet(let message)?: return RouteError(status: 500, message: message)
        case nil:
            // A style's errors begin with its file; clients know it as the style they asked for.
            var message = IconServer.withoutFile(error)
            if let stylePath, message.hasPrefix(stylePath + ": ") {
                message = "the style: " + message.dropFirst(stylePath.count + 2)
            }
            return RouteError(status: 500, message: message)
        case _?:
            Log.warning("building the sprite of \(directories.joined(separator: ", ")) failed: \(error)")
            return RouteError(status: 500, message: "the sprite could not be built (the server's log says why)")
        }
    }

    /// `sprite[.{hash}][-N][@{R}x].json|png`: a sheet or its index. A hashed name is immutable,
    /// and answered while it is the current build's and for `retiredFor` after a newer build
    /// replaced it. An unhashed name is the current build's, revalidated on every use
    /// (`no-cache`, by its ETag), so that no cache pairs one build's index with another's sheet.
    func respond(file: String, request: HTTPRequest, maxAge: Int) -> HTTPResponse {
        switch build() {
        case .success(let built): respond(file: file, from: built, request: request, maxAge: maxAge)
        case .failure(let error): IconServer.error(error)
        }
    }

    /// `respond(file:request:maxAge:)` from the build `current`.
    func respond(file: String, from current: Current, request: HTTPRequest, maxAge: Int) -> HTTPResponse {
        guard file.hasPrefix("sprite"), file.hasSuffix(".json") || file.hasSuffix(".png") else {
            return IconServer.error(404, "sprite files are sprite[@{R}x].json and sprite[@{R}x].png")
        }
        var name = file
        var immutable = false
        var files = current.files
        if file.hasPrefix("sprite.") && !file.hasPrefix("sprite.json") && !file.hasPrefix("sprite.png") {
            let hash = String(file.dropFirst("sprite.".count).prefix(current.hash.count))
            if hash != current.hash {
                let now = clock.now
                guard let old = retired.withLock({ $0.last { $0.hash == hash && $0.until > now } }) else {
                    return IconServer.error(
                        404,
                        "no sprite with hash \(hash) (the icons changed; the current one is sprite.\(current.hash))")
                }
                files = old.files
            }
            name = "sprite" + file.dropFirst("sprite.".count + current.hash.count)
            immutable = true
        }
        guard let file = files[name] else {
            let ratios = spriteOptions.ratios.map { $0 == 1 ? "" : "@\($0.shortText)x" }.joined(separator: ", ")
            return IconServer.error(
                404, "no sprite file \(file) (ratios served: \(ratios.isEmpty ? "1" : "1x" + ratios))")
        }
        let type = name.hasSuffix(".png") ? "image/png" : "application/json"
        return IconServer.cached(
            file.bytes, type: type, maxAge: maxAge, immutable: immutable, revalidate: !immutable, tag: file.tag,
            request: request)
    }

    /// What the build depends on: every icon file's path, size, modification time and inode,
    /// and the style's.
    private func fingerprint() throws -> [UInt8] {
        var text = ""
        let paths =
            try SpriteBuilder.iconFiles(
                in: directories, recursive: true, firstFolderWins: true, followsLinksOut: spriteOptions.followsLinksOut
            ).map(\.path)
            + (stylePath.map { [$0] } ?? [])
        for path in paths {
            var info = stat()
            guard stat(path, &info) == 0 else { continue }
            text += "\(path)\0\(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec) \(info.st_ino)\n"
        }
        return Array(SHA256.hex(Array(text.utf8)).utf8)
    }
}

/// A style given with `--style`, emitted for MapLibre with its sprite on this server: once
/// per build (its sheets' hash and its files' fingerprint), with a stand-in for the server's
/// base URL that each answer replaces, so another `Host` costs a substitution, not an emission.
final class ServedStyle: Sendable {
    let name: String
    let sprite: ServedSprite
    /// The copy emitted for the last build, with `baseStandIn` for the base URL.
    private let document = Locked<(memo: String, json: [UInt8])?>(nil)
    /// The answers made from it by base URL (a few base URLs at most), with their ETags.
    private let answers = Locked<[String: (json: [UInt8], tag: String)]>([:])

    /// What the emitted copy has where the server's base URL goes (a reserved name, which no
    /// style can mean), as the JSON writer writes it.
    static let baseStandIn = Array(JSONValue.string("http://iconr-base.invalid").serialized.utf8.dropFirst().dropLast())

    init(name: String, sprite: ServedSprite) {
        self.name = name
        self.sprite = sprite
    }

    func respond(base: String, request: HTTPRequest, maxAge: Int) -> HTTPResponse {
        let current: ServedSprite.Current
        switch sprite.build() {
        case .success(let built): current = built
        case .failure(let error): return IconServer.error(error)
        }
        guard let style = current.style else { return IconServer.error(500, "the style was not read") }
        // The style's own edits change no sheet (the hash) but the build's fingerprint.
        let memo = current.hash + "\0" + String(decoding: current.fingerprint, as: UTF8.self)
        if let known = answers.withLock({ $0[base + "\0" + memo] }) {
            return IconServer.cached(
                known.json, type: "application/json", maxAge: maxAge, tag: known.tag, request: request)
        }
        let json: [UInt8]
        if let known = document.withLock({ $0 }), known.memo == memo {
            json = known.json
        } else {
            // The sprite URL carries the build's hash: the style and its sheets always match.
            let standIn = String(decoding: Self.baseStandIn, as: UTF8.self)
            do {
                json = try style.emitted(
                    build: current.build, prefix: "\(standIn)/styles/\(name)/sprite.\(current.hash)",
                    sheetName: "sprite", runtimeImages: true
                ).json
            } catch {
                return IconServer.error(500, error.message)
            }
            document.withLock { $0 = (memo, json) }
        }
        let answer = Self.replacing(Self.baseStandIn, in: json, with: JSONValue.string(base).serialized)
        let tag = IconServer.entityTag(answer)
        answers.withLock { known in
            if known.count >= 64 { known.removeAll() }
            known[base + "\0" + memo] = (answer, tag)
        }
        return IconServer.cached(answer, type: "application/json", maxAge: maxAge, tag: tag, request: request)
    }

    /// `json` with every `standIn` replaced by the JSON string `quoted`'s contents.
    static func replacing(_ standIn: [UInt8], in json: [UInt8], with quoted: String) -> [UInt8] {
        let replacement = Array(quoted.utf8.dropFirst().dropLast())
        var output: [UInt8] = []
        output.reserveCapacity(json.count + 256)
        var cursor = 0
        while let found = json.firstOffset(of: standIn, from: cursor) {
            output += json[cursor..<found]
            output += replacement
            cursor = found + standIn.count
        }
        output += json[cursor...]
        return output
    }
}
