import Dispatch
import Glibc
import IconrCore
import IconrRender
import IconrSystem

/// Where librsvg runs: in this process (fastest), or in reusable `iconr render-worker`
/// processes, where a document that crashes librsvg or renders past `RenderLimits.timeout`
/// fails alone and the caller lives on.
public enum RenderPlacement: Sendable {
    case inProcess
    case isolated(IsolatedRenderer)
}

/// A parameterized SVG icon: read and scanned in Swift at once (metadata, parameters, the
/// digest of its bytes and of the files it draws), loaded by librsvg only when it is first
/// measured or rendered, so that a cache hit never loads it.
///
/// ```swift
/// let flag = try IconSource(path: "icons/flag.svg")
/// let icon = try flag.render(params: ["flag_color": "#800080"], scale: 2)
/// let png = try icon.png
/// ```
public final class IconSource: Sendable {
    /// The file name without `.svg`, e.g. `flag`.
    public let name: String
    /// The path it was read from, when it came from a file; used in error messages.
    public let path: String?
    /// The scanned template: parameters, metadata, the paints they edit.
    public let template: SVGTemplate
    /// SHA-256 of the bytes and of every file the document draws: what variant keys use.
    public let digest: String
    /// What reading it found (each a line naming the file): template problems, references
    /// that cannot be drawn.
    public let warnings: [String]
    /// Where relative references resolve; nil for a document without any.
    private let baseFile: String?
    /// For a themed source (`themed(_:)`), the template as its file has it and the theme:
    /// a recolored variant is the theme applied to that template with the parameters given.
    private let theming: (plain: SVGTemplate, theme: Theme)?
    /// The document as librsvg loaded it in this process, once it was needed.
    private let loaded = Locked<LoadedSVG?>(nil)
    /// What recoloring keeps (one lock, made with the source: each generic type the Swift
    /// runtime makes at start costs a cache hit some 60,000 instructions).
    private let recoloring = Locked(Recoloring())

    private struct Recoloring: Sendable {
        /// The last recolored document and the thread that loaded it: the ratios of one
        /// variant render in a row (a sprite build), and parsing is about half the cost of a
        /// small icon. Only that thread takes or replaces it: a librsvg tree freed by another
        /// thread takes the allocator's lock of the thread that made it for each of its
        /// thousands of blocks, and two threads recoloring one icon then spent a third of
        /// their time waiting.
        var last: (params: ResolvedParameters, document: LoadedSVG, thread: pthread_t)?
        /// How parameters restyle the loaded template instead, when they can
        /// (`SVGTemplate.Restyling`): nil until the first recolored render works it out, so
        /// that a cache hit never does.
        var restyling: SVGTemplate.Restyling??
        /// Its marked document once loaded: every variant is drawn from that one parse.
        var restyled: LoadedSVG?
        /// Recolored renders in process that the last rewritten document could not serve.
        var variants = 0
    }

    /// The parameters the template declares, with their defaults.
    public var parameters: [TemplateParameter] { template.parameters }

    /// Reads and scans a template file (`.svg`, or gzip-compressed `.svgz`).
    public convenience init(path: String) throws(IconrError) {
        let bytes = try IconrError.readingTemplate(path)
        try self.init(name: Self.iconName(path: path), bytes: bytes, path: path)
    }

    /// Scans a template held in memory. With a `path`, the files it refers to are read
    /// relative to it (see `IconReferences`); without one it can draw no other file.
    public init(name: String, bytes: [UInt8], path: String? = nil) throws(IconrError) {
        guard !bytes.isEmpty else {
            throw IconrError.template(TemplateError(file: path, location: nil, message: "the file is empty"))
        }
        do {
            template = try SVGTemplate(bytes: bytes, file: path)
        } catch {
            throw IconrError.template(error)
        }
        self.name = name
        self.path = path
        let file = path ?? name + ".svg"
        var warnings = template.warnings.map { "\(file):\($0)" }
        if let path, !template.externalReferences.isEmpty {
            let (digest, referenceWarnings) = IconReferences.digest(of: bytes, template: template, path: path)
            self.digest = digest
            warnings += referenceWarnings
            baseFile = path
        } else {
            digest = SHA256.hex(bytes)
            baseFile = nil
        }
        self.warnings = warnings
        theming = nil
    }

    /// A themed copy of `plain`: the themed document scanned, its digest that of the plain
    /// one and the theme's rules (the themed bytes alone do not say which paints a parameter binds).
    private init(themed plain: IconSource, theme whole: Theme) throws(IconrError) {
        // A rule of the theme may give this icon a theme of its own.
        let theme = whole.theme(forIcon: plain.name)
        let bytes = theme.apply(to: plain.template)
        do {
            template = try SVGTemplate(bytes: bytes, file: plain.path)
        } catch {
            throw IconrError.template(error)
        }
        name = plain.name
        path = plain.path
        digest = SHA256.hex(Array("\(plain.digest) theme \(theme.rulesKey)".utf8))
        warnings = plain.warnings
        baseFile = plain.baseFile
        theming = (plain.theming?.plain ?? plain.template, theme)
    }

    /// This icon in `theme`'s colors (or those of the theme's first rule whose glob matches its
    /// name): its document recolored (`Theme.apply`), a template of its own with its own
    /// digest, so that its variants are cached apart. A parameter given to it recolors only the
    /// paints it binds in the file's template.
    public func themed(_ theme: Theme) throws(IconrError) -> IconSource {
        try IconSource(themed: self, theme: theme)
    }

    /// The template as the file has it (for a themed source, before the theme): sprite ids
    /// and a style's variants are named after its defaults, whatever the theme.
    public var fileTemplate: SVGTemplate { theming?.plain ?? template }

    /// Whether `params` change no paint of the document as scanned. (For a themed source,
    /// parameters whose themed defaults are one color may still bind different paints.)
    private func drawsAsFile(_ params: ResolvedParameters) -> Bool {
        params.replacements.isEmpty && (theming == nil || params.effectiveValues.isEmpty)
    }

    /// The document librsvg draws for `params`: the template with them applied, or for a
    /// themed source the theme applied to the file's template with them given.
    private func document(_ params: ResolvedParameters) -> [UInt8] {
        guard let theming else { return template.apply(params) }
        return theming.theme.apply(to: theming.plain, given: params.effectiveValues)
    }

    /// The icon name of a template file: its file name without `.svg` or `.svgz`, in any
    /// letter case (`icons/flag.svg` is `flag`).
    public static func iconName(path: String) -> String {
        let fileName = path.split(separator: "/").last.map(String.init) ?? path
        let lowered = fileName.lowercased()
        return [".svgz", ".svg"].first { lowered.hasSuffix($0) }.map { String(fileName.dropLast($0.count)) } ?? fileName
    }

    /// Which of this template's default colors `params` replace. Unknown names are ignored
    /// and listed in the result.
    public func resolve(_ params: IconParameters) -> ResolvedParameters {
        template.resolve(params)
    }

    /// The error for the first name `resolved` was given that this template does not declare,
    /// naming the icon `icon` (its own name when nil); nil when every name is declared.
    package func undeclared(in resolved: ResolvedParameters, icon: String? = nil) -> UnknownParameterError? {
        UnknownParameterError(unknownNames: resolved.unknownNames, icon: icon ?? name, declared: parameters.map(\.name))
    }

    /// Parses color text (the style specification's syntax) for this template's parameters.
    /// - Throws: `IconrError.parameter` naming this file, the parameter and the value.
    func parameters(parsing text: [String: String]) throws(IconrError) -> IconParameters {
        do {
            return try IconParameters(parsing: text)
        } catch {
            throw IconrError.parameter(error, file: path)
        }
    }

    /// The cache key of this icon with `params` at `scale`.
    public func key(_ params: ResolvedParameters, scale: Double) -> VariantKey {
        VariantKey(name: name, templateDigest: digest, params: params, scale: scale)
    }

    /// Width and height at scale 1 in pixels, as librsvg measures them (it loads here).
    public func intrinsicSize(
        placement: RenderPlacement = .inProcess,
        limits: RenderLimits = .default
    ) throws(IconrError) -> (width: Double, height: Double) {
        do {
            switch placement {
            case .isolated(let workers):
                return try workers.intrinsicSize(of: template.bytes, timeout: limits.timeout, baseFile: baseFile)
            case .inProcess:
                let document = try loadedDocument()
                return (document.intrinsicWidth, document.intrinsicHeight)
            }
        } catch {
            throw IconrError.render(error, file: path)
        }
    }

    /// The raster size at `scale`: `max(1, round(W*s)) x max(1, round(H*s))`.
    public func pixelSize(
        scale: Double, placement: RenderPlacement = .inProcess,
        limits: RenderLimits = .default
    ) throws(IconrError) -> PixelSize {
        let size = try intrinsicSize(placement: placement, limits: limits)
        return PixelSize.raster(width: size.width, height: size.height, scale: scale)
    }

    /// Renders the icon with `params` applied at `scale` (1 for 1x, 2 for 2x, any finite
    /// number > 0), uncached. `IconRenderer` is the cached way.
    public func render(
        params: [String: String] = [:], scale: Double = 1, placement: RenderPlacement = .inProcess,
        limits: RenderLimits = .default
    ) throws(IconrError) -> IconVariant {
        try render(resolve(parameters(parsing: params)), scale: scale, placement: placement, limits: limits)
    }

    /// Renders with parameters already resolved against this template, in a worker when
    /// isolated: the loaded document when no color changes; else the marked template loaded
    /// once and restyled (`SVGTemplate.Restyling`) when the template allows it; else the
    /// document with the new colors, loaded anew.
    /// - Throws: `IconrError.render` (a document librsvg refuses, a raster too large, a crash
    ///   or timeout in a worker).
    public func render(
        _ params: ResolvedParameters, scale: Double, placement: RenderPlacement = .inProcess,
        limits: RenderLimits = .default
    ) throws(IconrError) -> IconVariant {
        let image = try renderImage(params, scale: scale, placement: placement, limits: limits)
        return IconVariant(key: key(params, scale: scale), image: image, template: template)
    }

    /// The pixels of `render(_:scale:placement:limits:)`, for a cache that names them itself.
    func renderImage(
        _ params: ResolvedParameters, scale: Double, placement: RenderPlacement, limits: RenderLimits
    ) throws(IconrError) -> RasterImage {
        do {
            let image: RasterImage
            switch placement {
            case .isolated(let workers):
                if !params.replacements.isEmpty, theming == nil, let restyling = restyling(inProcessFor: nil) {
                    image = try workers.render(
                        restyling.bytes, scale: scale, limits: limits, stylesheet: restyling.stylesheet(params))
                } else {
                    image = try workers.render(
                        document(params), scale: scale, limits: limits, baseFile: baseFile)
                }
            case .inProcess where drawsAsFile(params):
                image = try loadedDocument().render(scale: scale, limits: limits)
            case .inProcess:
                if theming == nil, let restyling = restyling(inProcessFor: params) {
                    image = try restyledDocument(restyling).render(
                        scale: scale, limits: limits, stylesheet: restyling.stylesheet(params))
                } else {
                    image = try recoloredDocument(params).render(scale: scale, limits: limits)
                }
            }
            return image
        } catch {
            throw IconrError.render(error, file: path)
        }
    }

    /// Measures the document and the boxes of the elements with `elementIDs` (spritezero's
    /// `mapbox-stretch` rectangles), with librsvg where `placement` says.
    /// - Throws: `IconrError.render` naming this file.
    package func measure(
        elementIDs: [String], placement: RenderPlacement, limits: RenderLimits
    ) throws(IconrError) -> SVGMeasurement {
        do {
            switch placement {
            case .isolated(let workers):
                return try workers.measure(
                    template.bytes, elementIDs: elementIDs, timeout: limits.timeout, baseFile: baseFile)
            case .inProcess:
                return try Rasterizer.measure(template.bytes, elementIDs: elementIDs, baseFile: baseFile)
            }
        } catch {
            throw IconrError.render(error, file: path)
        }
    }

    private func recoloredDocument(_ params: ResolvedParameters) throws(RenderError) -> LoadedSVG {
        if let last = recoloring.withLock({ $0.last }), last.params == params { return last.document }
        let document = try LoadedSVG(bytes: document(params), baseFile: baseFile)
        let thread = pthread_self()
        var replaced: (params: ResolvedParameters, document: LoadedSVG, thread: pthread_t)? = (params, document, thread)
        recoloring.withLock { state in
            // Another thread's document stays.
            if state.last == nil || state.last?.thread == thread { swap(&state.last, &replaced) }
        }
        // The last document is freed here, outside the lock.
        return document
    }

    /// The template's restyling, worked out once. In process (`params` given) only from the
    /// second variant on, and not for the variant whose rewritten document is loaded already
    /// (its other ratios): a single variant is drawn sooner rewritten (one parse) than
    /// restyled (a parse and the stylesheet's cascade). Render workers keep the marked
    /// documents they loaded, so they restyle from the first.
    private func restyling(inProcessFor params: ResolvedParameters?) -> SVGTemplate.Restyling? {
        let (known, variants) = recoloring.withLock { state -> (SVGTemplate.Restyling??, Int) in
            guard let params else { return (state.restyling, 0) }
            if state.last?.params == params { return (.some(nil), 0) }
            state.variants += 1
            return (state.restyling, state.variants)
        }
        if params != nil, variants < 2 { return nil }
        if let known { return known }
        let restyling = template.restyling
        return recoloring.withLock { state in
            if state.restyling == nil { state.restyling = .some(restyling) }
            return state.restyling ?? restyling
        }
    }

    /// The marked document of `restyling`, loaded once (it reads no other file).
    private func restyledDocument(_ restyling: SVGTemplate.Restyling) throws(RenderError) -> LoadedSVG {
        if let document = recoloring.withLock({ $0.restyled }) { return document }
        let document = try LoadedSVG(bytes: restyling.bytes)
        return recoloring.withLock { state in
            if state.restyled == nil { state.restyled = document }
            return state.restyled ?? document
        }
    }

    private func loadedDocument() throws(RenderError) -> LoadedSVG {
        if let document = loaded.withLock({ $0 }) { return document }
        let document = try LoadedSVG(bytes: template.bytes, baseFile: baseFile)
        loaded.withLock { $0 = document }
        return document
    }
}

/// The one way a variant is made: its key, the memory cache, the disk cache, and only on a
/// miss a render (librsvg loads then, not before). The CLI's `render`, `IconLibrary` and the
/// sprite builder all go through it.
public final class IconRenderer: Sendable {
    /// Where variants are kept: memory and, optionally, disk.
    public let cache: IconCache
    /// Where librsvg runs.
    public let placement: RenderPlacement
    /// Size and time limits of each render.
    public let limits: RenderLimits

    /// A renderer over `cache`, rendering where `placement` says within `limits`.
    public init(
        cache: IconCache = IconCache(), placement: RenderPlacement = .inProcess, limits: RenderLimits = .default
    ) {
        self.cache = cache
        self.placement = placement
        self.limits = limits
    }

    /// The variant of `source` with `params` at `scale`: cached, or rendered now (once, for
    /// concurrent requests of one variant).
    public func variant(
        of source: IconSource, _ params: ResolvedParameters, scale: Double
    ) throws(IconrError) -> IconVariant {
        try variant(of: source, params, scale: scale, lookingUp: true)
    }

    /// `variant(of:_:scale:)`; unless `lookingUp`, the disk cache is not asked first (a
    /// variant known to be new: a sprite rebuild's icon whose file changed).
    package func variant(
        of source: IconSource, _ params: ResolvedParameters, scale: Double, lookingUp: Bool
    ) throws(IconrError) -> IconVariant {
        guard scale.isFinite, scale > 0 else { throw IconrError.render(.invalidScale(scale), file: source.path) }
        return try variant(
            of: source, params, scale: scale, key: source.key(params, scale: scale), lookingUp: lookingUp)
    }

    /// `variant(of:_:scale:)` with the key already made (`IconLibrary` remembers the keys of
    /// repeated requests: building one costs more than a memory hit).
    package func variant(
        of source: IconSource, _ params: ResolvedParameters, scale: Double, key: VariantKey, lookingUp: Bool = true
    ) throws(IconrError) -> IconVariant {
        try cache.variant(
            for: key, maxSize: limits.maxSize, lookingUp: lookingUp,
            make: { image, png in IconVariant(key: key, image: image, template: source.template, png: png) },
            render: { () throws(IconrError) -> RasterImage in
                try source.renderImage(params, scale: scale, placement: placement, limits: limits)
            })
    }

    /// The variant for `key` if memory or disk holds it, with no render (`iconr serve`
    /// answers those at once and queues the rest), and whether memory had it.
    package func cachedVariant(
        of source: IconSource, scale: Double, key: VariantKey
    ) -> (variant: IconVariant, fromMemory: Bool)? {
        cache.storedVariant(for: key, maxSize: limits.maxSize) { image, png in
            IconVariant(key: key, image: image, template: source.template, png: png)
        }
    }

    /// Like `variant(of:_:scale:)`, with the parameters' colors by name.
    public func variant(
        of source: IconSource, params: IconParameters = IconParameters(), scale: Double = 1
    ) throws(IconrError) -> IconVariant {
        try variant(of: source, source.resolve(params), scale: scale)
    }

    /// `variant(of:_:scale:key:)` without blocking the caller's thread while it renders: a
    /// memory hit answers at once, a miss runs on a Dispatch worker; a cancelled task that
    /// has not started its render gets `CancellationError`'s `IconrError.cancelled`.
    /// (`IconLibrary.icon(named:params:scale:)` is the public door.)
    func variant(
        of source: IconSource, _ params: ResolvedParameters, scale: Double, key: VariantKey
    ) async throws(IconrError) -> IconVariant {
        if let hit = cache.memoryHit(for: key) { return hit }
        if Task.isCancelled { throw IconrError.cancelled }
        // The result goes through a lock as well as the continuation. When the worker
        // resumes before the task has suspended, the task reads the result after an acquire
        // load inside the Swift runtime, which ThreadSanitizer cannot see: CI's run under
        // `--sanitize=thread` reported the new variant's fields as raced. The sanitizer sees
        // the mutex, and it costs nothing next to a render.
        let handoff = Locked(Result<IconVariant, IconrError>.failure(.cancelled))
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                let result = Result { () throws(IconrError) -> IconVariant in
                    try self.variant(of: source, params, scale: scale, key: key)
                }
                handoff.withLock { $0 = result }
                continuation.resume()
            }
        }
        return try handoff.withLock { $0 }.get()
    }
}
