import Dispatch
import Glibc
import Iconr
import IconrCore
import IconrHTTP
import IconrSystem
import Synchronization

/// What `iconr serve` serves and how.
public struct ServerOptions: Sendable {
    /// Icon folders by set name (`maki`), in the order given: an icon name without a set
    /// prefix is looked up in each in turn.
    public var iconSets: [(name: String, directory: String)] = []
    /// Styles by name (`streets` for `/styles/streets.json`) and file.
    public var styles: [(name: String, path: String)] = []
    /// The disk cache; nil for memory only.
    public var cacheDirectory: String?
    /// The disk space the disk cache may take, in bytes.
    public var cacheByteLimit = 256 << 20
    /// The largest scale `/icons/` renders.
    public var maxScale = 4.0
    /// `Access-Control-Allow-Origin`; nil sends none.
    public var corsOrigin: String?
    /// The URL clients reach this server at, for the URLs inside styles; nil takes the
    /// request's `Host`.
    public var publicURL: String?
    /// Pixel ratios of the sprites served.
    public var spriteRatios: [Double] = [1, 2]
    /// Themes each set's sprite is served in too, at `/sprites/<set>/<theme>/sprite.json`.
    public var themes: [Theme] = []
    /// Renders waiting or running at most; past it a request that needs a render gets 503.
    /// Requests for a variant already queued wait for that render and take no place.
    public var renderQueueLimit = 32
    /// Renders run at once (each in its own worker process with isolated placement): twice
    /// the cores, since a render thread waits while its worker draws and the worker while the
    /// thread answers (misses under load: 3,813-3,961 variants/s against 3,662 with one per core).
    public var renderThreads = max(2, 2 * Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    /// How long a render may wait in the queue before its requests get 503 with
    /// `Retry-After` (a request behind slow renders waited up to queue / threads x timeout).
    public var queueWait = Duration.seconds(10)
    /// Whether icons that are symbolic links (or in linked folders) leading out of their
    /// `--icons` folder are served (`--follow-links`); by default they are not.
    public var followsLinks = false
    /// Whether a style that shows an icon the sets lack stops the server at start (`--strict`);
    /// by default it is a warning.
    public var strictStyles = false
    /// `Cache-Control: max-age` of URLs without a digest, in seconds.
    public var maxAge = 300
    /// Per-render limits (raster size, time).
    public var limits = RenderLimits.default
    /// What the sprites' and icon folders' rechecks go by (a test moves its own ahead).
    package var clock = CacheClock.system

    /// Nothing served yet: add `iconSets` (and `styles`).
    public init() {}
}

/// The routes of `iconr serve`, as a function from request to answer: icons with their
/// params at any scale, sprites of icon folders, styles emitted for MapLibre, `iconr.js`,
/// health and metrics. Thread-safe. What is cached (memory or disk) is answered at once;
/// renders and sprite builds answer later, from their own threads and bounded queues, so
/// that they never hold a caller's thread. librsvg runs in `placement` (isolated worker
/// processes for a server: a crashing icon fails its own requests).
public final class IconServer: Sendable {
    /// What it serves and how.
    public let options: ServerOptions
    private let libraries: [(name: String, library: IconLibrary)]
    private let renderer: IconRenderer
    private let sprites: [String: ServedSprite]
    private let styles: [String: ServedStyle]
    /// Failures that are the document's own (keyed by variant), answered at once until they
    /// expire: not timeouts (the machine may be loaded) or workers killed from outside.
    private let failures = Locked<[VariantKey: (message: String, until: ContinuousClock.Instant)]>([:])
    /// How long a document's failure is remembered.
    static let failureMemory = Duration.seconds(600)
    /// The ETag and `Iconr-Image` header of variants answered before, by format.
    private let answered = Locked<[AnsweredFile: (tag: String, metadata: String)]>([:])
    private struct AnsweredFile: Hashable {
        let key: VariantKey
        let format: ImageFormat
    }
    /// Renders waiting or running, sprite builds, and the documents made from builds (the
    /// catalog, the styles' copies): a client reloading the catalog never holds a sprite file.
    private let renders: WorkQueue
    private let builds = WorkQueue(threads: 2, limit: 256)
    private let documents = WorkQueue(threads: 1, limit: 64)
    /// The catalog page of the last builds, by what changes it (every section's hash).
    private let catalogPage = Locked<(key: String, page: [UInt8], tag: String)?>(nil)
    /// JSON and HTML bodies gzip-compressed, by their entity tag: a large sprite index is
    /// compressed once, not for every client.
    private let compressed = LRUCache<String, [UInt8]>(costLimit: 16 << 20)
    /// The answers to icon URLs whose variants memory holds, by URL.
    private let hitMemo = HitMemo()
    /// Variants with a halo baked in (`halo=`), by their own key.
    private let haloed = LRUCache<VariantKey, IconVariant>(costLimit: 32 << 20)
    /// Each request waiting for a variant being rendered, by key: one render for them all.
    private let waiters = Locked<[VariantKey: [@Sendable (Result<IconVariant, RouteError>) -> Void]]>([:])
    /// `iconr.js` and `iconr.mjs` for this server's largest scale, and their ETags.
    private let script: (body: [UInt8], tag: String)
    private let module: (body: [UInt8], tag: String)
    let metrics = ServerMetrics()
    /// Gives the HTTP server's open connections, for `/metrics` (`countConnections`).
    private let connectionCount = Locked<(@Sendable () -> Int)?>(nil)

    /// Checks the folders and styles (a style that does not parse fails here, not on a request).
    /// - Throws: `IconrError` naming the folder or file.
    public init(options: ServerOptions, placement: RenderPlacement) throws {
        self.options = options
        // One document holds at most half the render threads: many colors of one slow icon
        // leave the others to everything else.
        renders = WorkQueue(
            threads: options.renderThreads, limit: options.renderQueueLimit,
            perGroup: max(1, options.renderThreads / 2), maxWait: options.queueWait)
        let source = Array(IconrJS.script(maxScale: options.maxScale).utf8)
        script = (source, Self.entityTag(source))
        let moduleSource = Array(IconrJS.module(maxScale: options.maxScale).utf8)
        module = (moduleSource, Self.entityTag(moduleSource))
        let disk = try options.cacheDirectory.map { directory throws(IconrError) in
            try DiskCache(
                directory: directory, byteLimit: options.cacheByteLimit, evictsInBackground: true,
                writesInBackground: true)
        }
        let cache = IconCache(memoryLimit: 128 << 20, disk: disk)
        renderer = IconRenderer(cache: cache, placement: placement, limits: options.limits)
        var libraries: [(String, IconLibrary)] = []
        var sprites: [String: ServedSprite] = [:]
        for set in options.iconSets {
            guard FileReader.isFolder(set.directory) else {
                throw IconrError.notAFolder(set.directory)
            }
            // An empty folder serves (icons added later are found), but is likely the wrong one.
            do {
                _ = try SpriteBuilder.iconFiles(
                    in: [set.directory], recursive: true, followsLinksOut: options.followsLinks)
            } catch {
                Log.warning("set \"\(set.name)\": \(error), so far")
            }
            libraries.append(
                (
                    set.name,
                    IconLibrary(
                        directory: set.directory, renderer: renderer, clock: options.clock,
                        followsLinksOut: options.followsLinks)
                ))
            sprites[set.name] = ServedSprite(
                directories: [set.directory], style: nil, options: options, placement: placement,
                pack: "serve-set-" + set.name, metrics: metrics)
            for theme in options.themes {
                sprites[set.name + "/" + theme.name] = ServedSprite(
                    directories: [set.directory], style: nil, options: options, placement: placement,
                    pack: "serve-set-" + set.name + "-" + theme.name, metrics: metrics, theme: theme)
            }
        }
        self.libraries = libraries
        self.sprites = sprites
        var styles: [String: ServedStyle] = [:]
        for style in options.styles {
            let sprite = ServedSprite(
                directories: options.iconSets.map(\.directory), style: style.path, options: options,
                placement: placement, pack: "serve-style-" + style.name, metrics: metrics)
            try sprite.checkStyle(strict: options.strictStyles)
            styles[style.name] = ServedStyle(name: style.name, sprite: sprite)
        }
        self.styles = styles
    }

    /// Returns when the disk cache has written every variant rendered so far (its writes run
    /// behind the answers) and no eviction runs (the sprites' caches share its space): for a
    /// server that stops.
    package func finishWriting() {
        renderer.cache.disk?.flush()
        renderer.cache.disk?.finishEvicting()
    }

    /// Answers one request: at once when nothing must be rendered or built, else later,
    /// from the render or build queue. Never throws, never traps: every failure is a status
    /// and a one-line JSON body.
    public func answer(to request: HTTPRequest) -> HTTPAnswer {
        let started = ContinuousClock.now
        // A compressed file's tag is its plain one's, marked: the routes compare plain tags.
        let encoding = ContentEncoding(request)
        let (route, reply) = route(encoding.plainTags(request))
        @Sendable func finished(_ response: HTTPResponse) -> HTTPResponse {
            self.finished(encoding.encoded(response, compressed: compressed), route: route, started: started)
        }
        switch reply {
        case .now(let response):
            return .now(finished(response))
        case .later(let work), .document(let work):
            let (queue, name) =
                if case .document = reply { (documents, "the document queue") } else { (builds, "the build queue") }
            return .later { send in
                let queued = queue.submit {
                    let response = finished(work())
                    return { send(response) }
                }
                if !queued {
                    send(finished(Self.error(Self.full(name))))
                }
            }
        case .render(let job, let respond):
            return .later { send in
                self.render(job) { result in
                    var response = respond(result)
                    if response.status == 200 { response.headers.append((Self.cacheHeader, "render")) }
                    send(finished(response))
                }
            }
        }
    }

    /// Has `/metrics` show the open connections `count` gives (the HTTP server's).
    public func countConnections(_ count: @escaping @Sendable () -> Int) {
        connectionCount.withLock { $0 = count }
    }

    /// Has the next requests check every icon, sprite and style file now (SIGHUP), not when
    /// their recheck interval ends.
    public func recheck() {
        hitMemo.forget()
        for (_, library) in libraries { library.recheck() }
        for sprite in sprites.values { sprite.recheck() }
        for style in styles.values { style.sprite.recheck() }
    }

    /// The response header that says where a variant came from: `memory`, `disk` or `render`
    /// (for the request log and the duration metric; clients may read it as a cache status).
    public static let cacheHeader = "Iconr-Cache"

    /// `answer(to:)`, waiting for a later answer on this thread.
    public func respond(to request: HTTPRequest) -> HTTPResponse {
        switch answer(to: request) {
        case .now(let response): return response
        case .later(let start):
            let done = DispatchSemaphore(value: 0)
            let response = Locked<HTTPResponse?>(nil)
            start { sent in
                response.withLock { $0 = $0 ?? sent }
                done.signal()
            }
            done.wait()
            return response.withLock { $0 } ?? Self.error(500, "no response")
        }
    }

    /// CORS headers, and the request counted and timed (by route and cache tier).
    private func finished(_ response: HTTPResponse, route: String, started: ContinuousClock.Instant) -> HTTPResponse {
        var finished = response
        if let origin = options.corsOrigin {
            finished.headers.append(("Access-Control-Allow-Origin", origin))
            finished.headers.append(("Access-Control-Expose-Headers", "ETag, Iconr-Image, Retry-After"))
            if origin != "*" { finished.headers.append(("Vary", "Origin")) }
        }
        let tier = finished.headers.last { $0.name == Self.cacheHeader }?.value ?? "none"
        metrics.answered(
            route: route, status: finished.status, cache: tier, seconds: Self.seconds(ContinuousClock.now - started))
        return finished
    }

    /// A route's reply: a response, work for the build queue or the document queue, or a
    /// variant to render.
    private enum Reply {
        case now(HTTPResponse)
        case later(@Sendable () -> HTTPResponse)
        case document(@Sendable () -> HTTPResponse)
        case render(RenderJob, respond: @Sendable (Result<IconVariant, RouteError>) -> HTTPResponse)
    }

    /// A variant to render.
    private struct RenderJob: Sendable {
        let source: IconSource
        let resolved: ResolvedParameters
        let scale: Double
        let key: VariantKey
    }

    private func route(_ request: HTTPRequest) -> (String, Reply) {
        // HTTP/1.1 requires Host (RFC 9112 3.2); both lengths at once is how requests are
        // smuggled past proxies (RFC 9112 6.1): refused, and the connection closed.
        if request.version == "HTTP/1.1", request.headers["host"] == nil {
            return ("other", .now(Self.error(400, "an HTTP/1.1 request needs a Host header")))
        }
        if request.headers["content-length"] != nil, request.headers["transfer-encoding"] != nil {
            var response = Self.error(400, "a request with both Content-Length and Transfer-Encoding")
            response.headers.append(("Connection", "close"))
            return ("other", .now(response))
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            var response = Self.error(405, "method \(request.method) is not allowed: iconr serves GET and HEAD")
            response.headers.append(("Allow", "GET, HEAD"))
            return ("other", .now(response))
        }
        guard
            request.path.utf8.count + request.query.reduce(0, { $0 + $1.name.utf8.count + $1.value.utf8.count + 2 })
                <= 8192
        else {
            return ("other", .now(Self.error(414, "the URL is longer than 8192 bytes")))
        }
        guard request.query.count <= Self.queryLimit else {
            return ("other", .now(Self.error(414, "the query has more than \(Self.queryLimit) parameters")))
        }
        guard request.headerBytes <= 16384 else {
            return ("other", .now(Self.error(431, "the request headers are larger than 16384 bytes")))
        }
        // An icon URL answered from memory before: its answer, if it still stands.
        let url = HitMemo.url(of: request)
        if let known = hitMemo.answer(for: url, request: request, now: options.clock.now, cache: renderer.cache) {
            return ("icons", .now(known))
        }
        guard let bytes = request.decodedPath, !bytes.contains(0), let path = String(validating: bytes, as: UTF8.self)
        else {
            return ("other", .now(Self.error(400, "the path is not valid percent-encoded UTF-8")))
        }
        let levels = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        switch levels.first {
        case "icons" where levels.count >= 2:
            return ("icons", icon(levels.dropFirst().joined(separator: "/"), request: request, url: url))
        case "sprites" where levels.count == 3 || levels.count == 4:
            let set = levels.dropFirst().dropLast().joined(separator: "/"), file = levels[levels.count - 1]
            return (
                "sprites",
                spriteFile(sprites[set], file: file, request: request) {
                    self.sprite(set: set, file: file, request: request)
                }
            )
        case "styles" where levels.count == 2:
            return ("styles", .document { self.style(file: levels[1], request: request) })
        case "styles" where levels.count == 3:
            return (
                "sprites",
                spriteFile(styles[levels[1]]?.sprite, file: levels[2], request: request) {
                    self.styleSprite(name: levels[1], file: levels[2], request: request)
                }
            )
        case "iconr.js" where levels.count == 1, "iconr.mjs" where levels.count == 1:
            let body = levels[0] == "iconr.js" ? script : module
            return (
                "iconr.js",
                .now(
                    Self.cached(
                        body.body, type: "text/javascript; charset=utf-8", maxAge: options.maxAge, tag: body.tag,
                        request: request))
            )
        case "health" where levels.count == 1:
            return ("health", .now(Self.json(200, #"{"status":"ok"}"#)))
        case "metrics" where levels.count == 1:
            let text = metrics.text(
                cache: renderer.cache.statistics, journalRepairs: renderer.cache.disk?.journalRepairs ?? 0,
                pendingRenders: renders.count, openConnections: connectionCount.withLock { $0 }?())
            return (
                "metrics",
                .now(
                    HTTPResponse(
                        status: 200,
                        headers: [
                            ("Content-Type", "text/plain; version=0.0.4; charset=utf-8"),
                            ("Cache-Control", "no-store"),
                        ], body: Array(text.utf8)))
            )
        case "catalog" where levels.count == 1:
            return ("catalog", .document { self.catalog(request) })
        case "" where levels.count == 1:
            // A browser gets the catalog; other clients the routes as JSON.
            if request.headers["accept"]?.containsUTF8("text/html") == true {
                return ("catalog", .document { self.catalog(request) })
            }
            return ("index", .now(Self.json(200, index())))
        default:
            return ("other", .now(Self.error(404, "no such route: \(path) (see /)")))
        }
    }

    // MARK: Icons

    /// `/icons/{name}[@{S}x].{format}?{param}={color}&...[&halo=W[,COLOR[,BLUR]]]` (`format`:
    /// an `ImageFormat`'s name, `png`); `name` may carry a set prefix (`maki:bar`); `halo`
    /// bakes a halo around the icon, as `iconr render --halo` does. `url` is the request's
    /// as it came, which a memory hit's answer is remembered by.
    private func icon(_ file: String, request: HTTPRequest, url: String) -> Reply {
        guard let dot = file.lastIndex(of: "."), let format = ImageFormat.named(String(file[file.index(after: dot)...]))
        else {
            let formats = ImageFormat.all.map { "." + $0.name }.joined(separator: " or ")
            return .now(Self.error(404, "icon URLs end in \(formats): /icons/{name}[@{S}x].png"))
        }
        var name = String(file[..<dot])
        var scale = 1.0
        if let at = name.lastIndex(of: "@"), name.hasSuffix("x") {
            let text = name[name.index(after: at)..<name.index(before: name.endIndex)]
            guard let parsed = Self.decimal(text), parsed >= 0.01, parsed <= options.maxScale else {
                return .now(
                    Self.error(
                        400, "invalid scale '\(text)': expected a number from 0.01 to \(options.maxScale.shortText)"))
            }
            scale = parsed
            name = String(name[..<at])
        }
        var text: [String: String] = [:]
        for (rawName, rawValue) in request.query {
            guard let nameBytes = HTTPRequest.percentDecoded(rawName, plusIsSpace: true),
                let valueBytes = HTTPRequest.percentDecoded(rawValue, plusIsSpace: true),
                !nameBytes.contains(0), !valueBytes.contains(0)
            else {
                return .now(Self.error(400, "the query is not valid percent-encoded text"))
            }
            text[String(decoding: nameBytes, as: UTF8.self)] = String(decoding: valueBytes, as: UTF8.self)
        }
        // `halo` is no parameter: a ring baked around the drawn variant.
        let haloText = text.removeValue(forKey: "halo")
        let halo = haloText.flatMap { Halo(parsing: $0) }
        if let text = haloText, halo == nil {
            return .now(
                Self.error(
                    400,
                    "invalid halo '\(text)': expected WIDTH[,COLOR[,BLUR]], width and blur from 0 to 32 (halo=2,white)")
            )
        }
        // Colors are parsed here, once; a bad one is the client's mistake.
        let params: IconParameters
        do {
            params = try IconParameters(parsing: text)
        } catch {
            return .now(Self.error(400, error.description))
        }
        let prepared: Found
        switch lookUp(name, params: params, scale: scale) {
        case .success(let found): prepared = found
        case .failure(let error): return .now(Self.error(error))
        }
        let (source, resolved, key) = (prepared.source, prepared.resolved, prepared.key)
        if let unknown = source.undeclared(in: resolved, icon: name) {
            return .now(Self.error(400, unknown.description))
        }
        // From memory, else from the disk cache; the header says which. The answer is
        // remembered for the URL (memory holds the variant now) while its file stands.
        if let stored = renderer.cachedVariant(of: source, scale: scale, key: key) {
            let answers: IconAnswers
            switch iconAnswers(stored.variant, halo: halo, as: format) {
            case .success(let made): answers = made
            case .failure(let error): return .now(Self.error(error))
            }
            if let until = prepared.library.trustedUntil(named: prepared.id) {
                hitMemo.remember(
                    HitMemo.Answer(
                        key: key, ok: answers.ok.tiered("memory"), notModified: answers.notModified.tiered("memory"),
                        tag: answers.tag, until: until),
                    for: url)
            }
            let response = Self.holds(request, tag: answers.tag) ? answers.notModified : answers.ok
            return .now(response.tiered(stored.fromMemory ? "memory" : "disk"))
        }
        if let failure = failures.withLock({ $0[key] }), ContinuousClock.now < failure.until {
            return .now(Self.error(500, failure.message))
        }
        let job = RenderJob(source: source, resolved: resolved, scale: scale, key: key)
        return .render(job) { result in
            switch result {
            case .success(let variant): self.iconResponse(variant, halo: halo, as: format, request: request)
            case .failure(let error): Self.error(error)
            }
        }
    }

    /// Renders `job` once for every request waiting for its variant, in the render queue;
    /// a full queue is a 503 for all of them. A failure that is the document's own is
    /// remembered.
    private func render(_ job: RenderJob, then respond: @escaping @Sendable (Result<IconVariant, RouteError>) -> Void) {
        let isFirst = waiters.withLock { waiting -> Bool in
            if waiting[job.key] != nil {
                waiting[job.key]?.append(respond)
                return false
            }
            waiting[job.key] = [respond]
            return true
        }
        guard isFirst else { return }
        @Sendable func finish(_ result: Result<IconVariant, RouteError>) {
            for waiter in waiters.withLock({ $0.removeValue(forKey: job.key) ?? [] }) { waiter(result) }
        }
        let waited =
            "waited \(Self.seconds(options.queueWait).shortText) s in the render queue behind slower renders; try again"
        let queued = renders.submit(group: job.key.templateDigest) {
            let started = ContinuousClock.now
            let result: Result<IconVariant, RouteError>
            do throws(IconrError) {
                let variant = try self.renderer.variant(of: job.source, job.resolved, scale: job.scale, key: job.key)
                self.metrics.rendered(seconds: Self.seconds(ContinuousClock.now - started))
                result = .success(variant)
            } catch {
                result = .failure(self.failed(job.key, error))
            }
            return { finish(result) }
        } expired: {
            finish(.failure(RouteError(status: 503, message: waited)))
        }
        if !queued { finish(.failure(Self.full("the render queue"))) }
    }

    /// A render's failure as a status: 400 for a raster past the limits, else 500,
    /// remembered when it is the document's own (not a timeout or a worker killed from outside).
    private func failed(_ key: VariantKey, _ error: IconrError) -> RouteError {
        let message = Self.withoutFile(error)
        var documentsOwn = true
        if case .render(let renderError, _) = error {
            if case .tooLarge = renderError { return RouteError(status: 400, message: message) }
            switch renderError {
            case .crashed(let signal):
                metrics.workerCrashed()
                documentsOwn = signal != SIGKILL
            case .crashedInIconr: metrics.workerCrashed()
            case .timedOut:
                metrics.workerCrashed()
                documentsOwn = false
            case .workerFailed: documentsOwn = false
            default: break
            }
        }
        if documentsOwn {
            failures.withLock { known in
                if known.count >= 10_000 { known.removeAll() }
                known[key] = (message, ContinuousClock.now + Self.failureMemory)
            }
        }
        return RouteError(status: 500, message: message)
    }

    /// The file of `variant` (with `halo` baked in, if any) in `format`, with its tag and
    /// `Iconr-Image` metadata: a 200, or a 304 for a client that holds it.
    private func iconResponse(
        _ variant: IconVariant, halo: Halo?, as format: ImageFormat, request: HTTPRequest
    ) -> HTTPResponse {
        switch iconAnswers(variant, halo: halo, as: format) {
        case .success(let answers): Self.holds(request, tag: answers.tag) ? answers.notModified : answers.ok
        case .failure(let error): Self.error(error)
        }
    }

    /// A variant's file as a 200 and as a 304, and its tag.
    private struct IconAnswers {
        let ok: HTTPResponse
        let notModified: HTTPResponse
        let tag: String
    }

    /// The answers for the file of `variant` (with `halo` baked in, if any) in `format`, with
    /// its tag and `Iconr-Image` metadata.
    private func iconAnswers(
        _ variant: IconVariant, halo: Halo?, as format: ImageFormat
    ) -> Result<IconAnswers, RouteError> {
        let variant = halo.map { haloedVariant(variant, $0) } ?? variant
        let file: [UInt8]
        do {
            file = try variant.encoded(as: format)
        } catch {
            return .failure(RouteError(status: 500, message: Self.withoutFile(error)))
        }
        // A variant's tag and metadata are made once per format: a memory hit then costs no hashing.
        let answer = AnsweredFile(key: variant.key, format: format)
        let headers =
            answered.withLock { $0[answer] }
            ?? {
                let made = (tag: Self.entityTag(file), metadata: Self.imageMetadata(variant).serialized)
                answered.withLock { known in
                    if known.count >= 8192 { known.removeAll(keepingCapacity: true) }
                    known[answer] = made
                }
                return made
            }()
        let common = [
            ("ETag", headers.tag), ("Cache-Control", "public, max-age=\(options.maxAge)"),
            ("Iconr-Image", headers.metadata),
        ]
        return .success(
            IconAnswers(
                ok: HTTPResponse(status: 200, headers: [("Content-Type", format.mediaType)] + common, body: file),
                notModified: HTTPResponse(status: 304, headers: common), tag: headers.tag))
    }

    /// `variant` with `halo` baked in, made once and kept while memory allows (a hit then
    /// costs what a plain one does).
    private func haloedVariant(_ variant: IconVariant, _ halo: Halo) -> IconVariant {
        let key = variant.key.haloed(halo)
        if let known = haloed.value(for: key) { return known }
        let made = variant.haloed(halo)
        haloed.insert(made, for: key, cost: made.image.pixels.count * 2)
        return made
    }

    /// An icon found: its source, its parameters resolved, its variant's key, and the library
    /// and name it was found by.
    private struct Found {
        let source: IconSource
        let resolved: ResolvedParameters
        let key: VariantKey
        let library: IconLibrary
        let id: String
    }

    /// The icon for a name with an optional `set:` prefix, its parameters resolved and its key.
    private func lookUp(_ name: String, params: IconParameters, scale: Double) -> Result<Found, RouteError> {
        var candidates = libraries
        var id = name
        if let colon = name.firstIndex(of: ":"), let set = libraries.first(where: { $0.name == name[..<colon] }) {
            candidates = [set]
            id = String(name[name.index(after: colon)...])
        }
        for (_, library) in candidates {
            do {
                let found = try library.request(named: id, params: params, scale: scale)
                return .success(
                    Found(source: found.source, resolved: found.resolved, key: found.key, library: library, id: id))
            } catch {
                // A set's folder gone for a moment holds no icon: the next set may.
                if case .unknownIcon = error { continue }
                if case .folder = error { continue }
                return .failure(RouteError(status: 500, message: Self.withoutFile(error)))
            }
        }
        return .failure(RouteError(status: 404, message: "unknown icon \"\(name)\""))
    }

    /// The metadata a renderer's `addImage` takes, as the `Iconr-Image` header carries it:
    /// stretch areas and content box in the variant's pixels, as a sprite index has them.
    static func imageMetadata(_ variant: IconVariant) -> JSONValue {
        var fields: [String: JSONValue] = [
            "width": .number(Double(variant.size.width)), "height": .number(Double(variant.size.height)),
            "pixelRatio": .number(variant.pixelRatio),
        ]
        func areas(_ areas: [StretchArea]) -> JSONValue {
            .array(areas.map { .array([.number($0.start), .number($0.end)]) })
        }
        if !variant.stretchX.isEmpty { fields["stretchX"] = areas(variant.stretchX) }
        if !variant.stretchY.isEmpty { fields["stretchY"] = areas(variant.stretchY) }
        if let box = variant.content {
            fields["content"] = .array([box.left, box.top, box.right, box.bottom].map { .number($0) })
        }
        return .object(fields)
    }

    // MARK: Sprites and styles

    /// `/sprites/{set}[/{theme}]/sprite[.{hash}][-N][@{R}x].json|png`
    private func sprite(set: String, file: String, request: HTTPRequest) -> HTTPResponse {
        guard let sprite = sprites[set] else {
            if let slash = set.firstIndex(of: "/"), sprites[String(set[..<slash])] != nil {
                let themes = options.themes.map(\.name)
                return Self.error(
                    404,
                    "unknown theme \"\(set[set.index(after: slash)...])\" (themes: "
                        + (themes.isEmpty ? "none; iconr serve --theme adds them" : themes.joined(separator: ", "))
                        + ")")
            }
            return Self.error(
                404, "unknown icon set \"\(set)\" (sets: \(libraries.map(\.name).joined(separator: ", ")))")
        }
        return sprite.respond(file: file, request: request, maxAge: options.maxAge)
    }

    /// A sprite file's reply: at once from a build that needs no check, else `later` on the
    /// build queue (which checks, and builds when the files changed).
    private func spriteFile(
        _ sprite: ServedSprite?, file: String, request: HTTPRequest, later: @escaping @Sendable () -> HTTPResponse
    ) -> Reply {
        guard let sprite, let current = sprite.freshBuild() else { return .later(later) }
        return .now(sprite.respond(file: file, from: current, request: request, maxAge: options.maxAge))
    }

    /// `/styles/{name}.json`: the style for MapLibre, its sprite on this server.
    private func style(file: String, request: HTTPRequest) -> HTTPResponse {
        guard file.hasSuffix(".json"), let style = styles[String(file.dropLast(5))] else {
            return Self.error(
                404,
                "unknown style \"\(file)\" (styles: \(styles.keys.sorted().map { $0 + ".json" }.joined(separator: ", ")))"
            )
        }
        if let base = options.publicURL { return style.respond(base: base, request: request, maxAge: options.maxAge) }
        // Without --public-url the URLs inside follow the Host the client used: a plain host
        // name or address and port, nothing else, and caches must keep one copy per Host.
        let host = request.headers["host"] ?? "localhost"
        guard !host.isEmpty, host.utf8.count <= 255,
            host.utf8.allSatisfy({ byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || [UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "]")]
                        .contains(byte)
            })
        else {
            return Self.error(400, "invalid Host header")
        }
        var response = style.respond(base: "http://" + host, request: request, maxAge: options.maxAge)
        response.headers.append(("Vary", "Host"))
        return response
    }

    /// `/styles/{name}/sprite[.{hash}][-N][@{R}x].json|png`: a style's sprite with the variants it shows.
    private func styleSprite(name: String, file: String, request: HTTPRequest) -> HTTPResponse {
        guard let style = styles[name] else { return Self.error(404, "unknown style \"\(name)\"") }
        return style.sprite.respond(file: file, request: request, maxAge: options.maxAge)
    }

    /// `/catalog`: every set's icons, in each theme, and each style's variants on one page,
    /// colors redrawn through `/icons/` (`CatalogPage`); the sheets by their hashed URLs. Made
    /// once for each set of builds, on the document queue.
    private func catalog(_ request: HTTPRequest) -> HTTPResponse {
        /// One section: its sprite, the path its sheets are under, and how it is shown.
        struct Part {
            var name: String
            var sprite: ServedSprite
            var path: String
            var live: String? = nil
            var listsParameters = false
            var isStyle = false
            var theme: Theme? = nil
        }
        var parts: [Part] = []
        for library in libraries {
            guard let sprite = sprites[library.name] else { continue }
            parts.append(
                Part(
                    name: library.name, sprite: sprite, path: "/sprites/\(library.name)/",
                    live: "/icons/\(library.name):", listsParameters: true))
            for theme in options.themes {
                guard let themed = sprites[library.name + "/" + theme.name] else { continue }
                parts.append(
                    Part(
                        name: "\(library.name) (theme \(theme.name))", sprite: themed,
                        path: "/sprites/\(library.name)/\(theme.name)/", listsParameters: true, theme: theme))
            }
        }
        for (name, style) in styles.sorted(by: { $0.key < $1.key }) {
            parts.append(
                Part(
                    name: "style \(name) (its icons and variants)", sprite: style.sprite, path: "/styles/\(name)/",
                    isStyle: true))
        }
        let builds = parts.map { part in (part, part.sprite.build()) }
        let key = builds.map { part, build in
            part.path + ((try? build.get())?.hash ?? "-") + "\0"
                + String(decoding: (try? build.get())?.fingerprint ?? [], as: UTF8.self)
        }.joined(separator: "\n")
        if let known = catalogPage.withLock({ $0 }), known.key == key {
            return Self.cached(
                known.page, type: "text/html; charset=utf-8", maxAge: 0, revalidate: true, tag: known.tag,
                request: request)
        }
        var sections: [CatalogPage.Section] = []
        for (part, build) in builds {
            guard case .success(let current) = build else { continue }
            let files =
                part.listsParameters
                ? (try? SpriteBuilder.iconFiles(
                    in: part.sprite.directories, recursive: true, followsLinksOut: options.followsLinks)) ?? [] : []
            let prefix = part.path + "sprite." + current.hash
            sections.append(
                CatalogPage.Section(
                    name: part.name, build: current.build,
                    sheetURL: { ratio, sheet in SpriteBuild.sheetBase(prefix, sheet: sheet, ratio: ratio) + ".png" },
                    files: files, liveIcons: part.live, ids: part.isStyle ? current.style?.spriteIDs : nil,
                    theme: part.theme))
        }
        let page = CatalogPage.html(title: "iconr catalog", sections: sections)
        let tag = Self.entityTag(page)
        catalogPage.withLock { $0 = (key, page, tag) }
        return Self.cached(
            page, type: "text/html; charset=utf-8", maxAge: 0, revalidate: true, tag: tag, request: request)
    }

    private func index() -> String {
        let sets = JSONValue.array(libraries.map { .string($0.name) })
        let styleNames = JSONValue.array(styles.keys.sorted().map { .string($0) })
        return JSONValue.object([
            "iconr": .string(IconrVersion.string), "sets": sets, "styles": styleNames,
            "routes": .array(ServedRoutes.all.map { .string($0.path) }),
        ]).serialized
    }

    // MARK: Responses

    /// A body that caches: a strong ETag from its SHA-256, `304` when the client has it.
    static func cached(
        _ body: [UInt8], type: String, maxAge: Int, immutable: Bool = false, revalidate: Bool = false,
        tag known: String? = nil, request: HTTPRequest
    ) -> HTTPResponse {
        let tag = known ?? entityTag(body)
        let control =
            immutable ? "public, max-age=31536000, immutable" : revalidate ? "no-cache" : "public, max-age=\(maxAge)"
        let headers = [("ETag", tag), ("Cache-Control", control)]
        if holds(request, tag: tag) {
            return HTTPResponse(status: 304, headers: headers)
        }
        return HTTPResponse(status: 200, headers: [("Content-Type", type)] + headers, body: body)
    }

    /// Whether `request`'s `If-None-Match` names `tag` (weakly or not) or `*`.
    static func holds(_ request: HTTPRequest, tag: String) -> Bool {
        guard let match = request.headers["if-none-match"] else { return false }
        return match.split(separator: ",").contains {
            let text = $0.trimmingSpaces
            return text == tag || text == "W/" + tag || text == "*"
        }
    }

    /// A strong entity tag: the first 128 bits of the body's SHA-256, quoted.
    static func entityTag(_ body: [UInt8]) -> String {
        "\"" + String(SHA256.hex(body).prefix(32)) + "\""
    }

    /// Query parameters a request may have (an icon's are a handful).
    static let queryLimit = 64

    /// The answer to a request still waiting when the server stops.
    public static let stopping = error(RouteError(status: 503, message: "the server is stopping; try again"))

    /// The 503 of a full `queue`.
    static func full(_ queue: String) -> RouteError {
        RouteError(status: 503, message: "\(queue) is full; try again")
    }

    /// A route's failure as a response; a 503 says when to try again (`Retry-After: 1`).
    static func error(_ failure: RouteError) -> HTTPResponse {
        var response = error(failure.status, failure.message)
        if failure.status == 503 { response.headers.append(("Retry-After", "1")) }
        return response
    }

    static func json(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")],
            body: Array((text + "\n").utf8))
    }

    /// `{"error": "..."}` with `status`.
    static func error(_ status: Int, _ message: String) -> HTTPResponse {
        json(status, JSONValue.object(["error": .string(message)]).serialized)
    }

    /// An error's line without the server's own file paths (clients know icons by name).
    static func withoutFile(_ error: any Error) -> String {
        (error as? IconrError)?.reason ?? "\(error)"
    }

    /// A plain decimal (`2`, `1.5`), not `0x10`, `1e3` or `inf`.
    static func decimal(_ text: Substring) -> Double? {
        guard !text.isEmpty,
            text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: ".") })
        else {
            return nil
        }
        return Double(text)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// A route's failure: its status and message.
struct RouteError: Error {
    let status: Int
    let message: String
}

extension Substring {
    var trimmingSpaces: Substring {
        var text = self
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return text
    }
}

extension HTTPResponse {
    /// This response with the `Iconr-Cache` header naming `tier` (`memory`, `disk`).
    fileprivate func tiered(_ tier: String) -> HTTPResponse {
        var response = self
        response.headers.append((IconServer.cacheHeader, tier))
        return response
    }
}
