import Dispatch
import Glibc
import IconrCore
import IconrRender
import IconrStyle
import IconrSystem

/// A folder of icon templates that a renderer asks for variants by name:
///
/// ```swift
/// let library = IconLibrary(directory: "icons")
/// let selected = try await library.icon(named: "flag", params: ["flag_color": "#800080"], scale: 2)
/// ```
///
/// Templates load on first use and reload when their file changes (checked at most once a
/// second per icon). Variants come from the `IconCache`. Safe to use from any thread.
public final class IconLibrary: Sendable {
    /// The folder of templates, without a trailing slash.
    public let directory: String
    /// The one path to variants: key, memory and disk cache, render.
    public let renderer: IconRenderer
    /// The renderer's cache.
    public var cache: IconCache { renderer.cache }
    /// Loaded templates by name, with when their file was last checked for changes.
    private let templates = Locked<[String: (file: TemplateFile, checked: ContinuousClock.Instant)]>([:])
    /// Names found missing, with when (at most 4,096 remembered).
    private let absent = Locked<[String: ContinuousClock.Instant]>([:])

    /// How often a template's file is checked for changes.
    static let recheckInterval = Duration.seconds(1)
    /// What `recheckInterval` is measured by.
    private let clock: CacheClock
    /// Whether a file that a link leads out of the folder to is read.
    private let followsLinksOut: Bool

    /// Renders in process by default, the fastest; `placement: .isolated(...)` runs librsvg in
    /// worker processes, for icons from untrusted sources.
    public convenience init(
        directory: String, cache: IconCache = IconCache(), placement: RenderPlacement = .inProcess,
        limits: RenderLimits = .default
    ) {
        self.init(directory: directory, renderer: IconRenderer(cache: cache, placement: placement, limits: limits))
    }

    /// A library whose variants come from `renderer` (several libraries can share one).
    public convenience init(directory: String, renderer: IconRenderer) {
        self.init(directory: directory, renderer: renderer, clock: .system)
    }

    /// A library whose files' rechecks go by `clock`; unless `followsLinksOut`, a name whose
    /// file is a symbolic link (or in a linked folder) leading out of the folder is unknown.
    package init(directory: String, renderer: IconRenderer, clock: CacheClock, followsLinksOut: Bool = true) {
        self.directory = directory.hasSuffix("/") && directory.count > 1 ? String(directory.dropLast()) : directory
        self.renderer = renderer
        self.clock = clock
        self.followsLinksOut = followsLinksOut
    }

    /// The icon names the directory holds (`*.svg` and `*.svgz` without the extension, in
    /// any letter case), sorted.
    public var names: [String] {
        FileReader.names(in: directory).filter { !$0.hasPrefix(".") && IconSource.iconName(path: $0) != $0 }
            .map { IconSource.iconName(path: $0) }.sorted()
    }

    /// The template named `name`: `flag` for `flag.svg` (or `.svgz`), `roads/shield` for one
    /// in a subfolder; loaded on first use and reloaded when its file changed.
    /// - Throws: `IconrError.unknownIcon` (also for names that would leave the folder:
    ///   `..`, hidden files, absolute paths), `.folder` (the folder is not there), `.template`,
    ///   `.read`.
    public func source(named name: String) throws(IconrError) -> IconSource {
        try template(named: name).source
    }

    /// The variant of icon `name` with `params` (color text in the style specification's
    /// syntax) at `scale`, from the cache or rendered now, without blocking the caller's
    /// thread while it renders (a memory hit answers at once).
    /// - Throws: `IconrError.unknownIcon`, `.parameter` (a bad color), `.unknownParameter` (a
    ///   name the icon does not declare), `.template`, `.render`.
    public func icon(
        named name: String, params: [String: String] = [:], scale: Double = 1
    ) async throws(IconrError) -> IconVariant {
        let request = try declared(request(named: name, text: params, scale: scale), name: name)
        return try await renderer.variant(of: request.source, request.resolved, scale: scale, key: request.key)
    }

    /// `icon(named:params:scale:)` for synchronous code: the calling thread waits for a render.
    public func blockingIcon(
        named name: String, params: [String: String] = [:], scale: Double = 1
    ) throws(IconrError) -> IconVariant {
        let request = try declared(request(named: name, text: params, scale: scale), name: name)
        return try renderer.variant(of: request.source, request.resolved, scale: scale, key: request.key)
    }

    /// `blockingIcon(named:params:scale:)` with the parameters' colors by name.
    public func blockingIcon(
        named name: String, params: IconParameters, scale: Double = 1
    ) throws(IconrError) -> IconVariant {
        let request = try declared(request(named: name, params: params, scale: scale), name: name)
        return try renderer.variant(of: request.source, request.resolved, scale: scale, key: request.key)
    }

    /// `request`, unless it gives a parameter its icon does not declare (the same error as
    /// the command line's and the server's).
    private func declared(
        _ request: (source: IconSource, resolved: ResolvedParameters, key: VariantKey), name: String
    ) throws(IconrError) -> (source: IconSource, resolved: ResolvedParameters, key: VariantKey) {
        if let error = request.source.undeclared(in: request.resolved, icon: name) {
            throw IconrError.unknownParameter(error, file: path(of: name))
        }
        return request
    }

    /// What a request for a variant needs before it is made: the source, the parameters
    /// resolved against it and the variant's key (remembered for repeated requests, as
    /// `icon(named:params:scale:)` does). The server checks its failure memory and queue
    /// between this and `IconRenderer.variant`.
    package func request(
        named name: String, params: IconParameters, scale: Double
    ) throws(IconrError)
        -> (source: IconSource, resolved: ResolvedParameters, key: VariantKey)
    {
        guard scale.isFinite, scale > 0 else { throw IconrError.render(.invalidScale(scale), file: path(of: name)) }
        let file = try template(named: name)
        let (key, resolved) = file.key(params, scale: scale)
        return (file.source, resolved, key)
    }

    /// `request(named:params:scale:)` with color text, parsed once per distinct request.
    private func request(
        named name: String, text: [String: String], scale: Double
    ) throws(IconrError)
        -> (source: IconSource, resolved: ResolvedParameters, key: VariantKey)
    {
        guard scale.isFinite, scale > 0 else { throw IconrError.render(.invalidScale(scale), file: path(of: name)) }
        let file = try template(named: name)
        let (key, resolved) = try file.key(text: text, scale: scale)
        return (file.source, resolved, key)
    }

    private func path(of name: String) -> String {
        directory + "/" + name + ".svg"
    }

    /// Until when the template of `name`, as the last request found it, stands without its
    /// file being checked again (nil when none is loaded): what remembers an answer may keep
    /// it that long.
    package func trustedUntil(named name: String) -> ContinuousClock.Instant? {
        templates.withLock { $0[name] }.map { $0.checked + Self.recheckInterval }
    }

    /// Has the next request for each template check its file now (and look again for names
    /// found missing), not when `recheckInterval` ends.
    package func recheck() {
        templates.withLock { templates in
            for name in templates.keys { templates[name]?.checked = clock.now - Self.recheckInterval * 2 }
        }
        absent.withLock { $0.removeAll() }
    }

    /// The current template for `name`, loading or reloading it when its file changed.
    private func template(named name: String) throws(IconrError) -> TemplateFile {
        let now = clock.now
        if let current = templates.withLock({ $0[name] }), now - current.checked < Self.recheckInterval {
            return current.file
        }
        // Each folder level a plain name: never `..`, a hidden file or an absolute path.
        let levels = name.split(separator: "/", omittingEmptySubsequences: false)
        guard levels.allSatisfy({ !$0.isEmpty && !$0.hasPrefix(".") && !$0.utf8.contains(0) }) else {
            throw IconrError.unknownIcon(name, directory: directory)
        }
        // A name found missing is not looked for again within the interval: a server with
        // several sets asks each set in turn, and stat-ing four file names per request per set
        // would be the hot path's I/O.
        if let missing = absent.withLock({ $0[name] }), now - missing < Self.recheckInterval {
            throw IconrError.unknownIcon(name, directory: directory)
        }
        var info = stat()
        let candidates = [".svg", ".svgz", ".SVG", ".SVGZ"].map { directory + "/" + name + $0 }
        guard
            let path = candidates.first(where: { stat($0, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG }),
            followsLinksOut || FileReader.realPath(directory).map({ FileReader.isWithin($0, path) }) == true
        else {
            // A folder that is not there (a typo, a moved set) is said as such, not as an icon.
            guard FileReader.isFolder(directory) else { throw IconrError.notAFolder(directory) }
            absent.withLock { missing in
                if missing.count >= 4096 { missing.removeAll(keepingCapacity: true) }
                missing[name] = now
            }
            throw IconrError.unknownIcon(name, directory: directory)
        }
        let version = FileStamp(info)
        if let current = templates.withLock({ $0[name] }), current.file.version == version {
            templates.withLock { $0[name] = (current.file, now) }
            return current.file
        }
        let file = TemplateFile(source: try IconSource(path: path), version: version)
        templates.withLock { $0[name] = (file, now) }
        return file
    }
}

/// One version of a library's template file, and the keys of the requests seen: a repeated
/// request skips parsing colors and building its key, what keeps a memory hit under a
/// microsecond.
private final class TemplateFile: Sendable {
    let source: IconSource
    let version: FileStamp
    private let keys = Locked<[Request: (VariantKey, ResolvedParameters)]>([:])
    private static let maxRemembered = 4096

    /// A request as it came: color text (from a caller that has text) or colors.
    private enum Request: Hashable {
        case text([String: String], scale: Double)
        case colors(IconParameters, scale: Double)
    }

    init(source: IconSource, version: FileStamp) {
        self.source = source
        self.version = version
    }

    func key(text: [String: String], scale: Double) throws(IconrError) -> (VariantKey, ResolvedParameters) {
        let request = Request.text(text, scale: scale)
        if let known = keys.withLock({ $0[request] }) { return known }
        return try remember(request, made(source.parameters(parsing: text), scale: scale))
    }

    func key(_ params: IconParameters, scale: Double) -> (VariantKey, ResolvedParameters) {
        let request = Request.colors(params, scale: scale)
        if let known = keys.withLock({ $0[request] }) { return known }
        return remember(request, made(params, scale: scale))
    }

    private func made(_ params: IconParameters, scale: Double) -> (VariantKey, ResolvedParameters) {
        let resolved = source.resolve(params)
        return (source.key(resolved, scale: scale), resolved)
    }

    private func remember(
        _ request: Request, _ made: (VariantKey, ResolvedParameters)
    ) -> (VariantKey, ResolvedParameters) {
        keys.withLock { known in
            if known.count >= Self.maxRemembered { known.removeAll(keepingCapacity: true) }
            known[request] = made
        }
        return made
    }
}

extension IconLibrary {
    /// The icon a style `layer` shows for `feature` at `zoom` and `pixelRatio`, as Mapbox
    /// rasterizes it: `icon-image` (evaluated at the tile's zoom) picks the icon and its
    /// parameter colors, and the raster is `icon-size` by Mapbox's rules for the tile's zoom
    /// (`StyleLayer.rasterSize`) times the pixel ratio. Nil when the layer shows no icon for
    /// this feature (its filter, its zoom range, or its `icon-image`).
    public func icon(
        for feature: ExpressionFeature, layer: StyleLayer, zoom: Double, pixelRatio: Double,
        context: EvaluationContext = EvaluationContext()
    ) throws(IconrError) -> IconVariant? {
        let tileZoom = max(0, zoom.rounded(.down))
        guard layer.tileZooms.contains(tileZoom), layer.shows(feature, zoom: tileZoom, context: context) else {
            return nil
        }
        // Asked only by coalesce, so most features never touch the disk here.
        let directory = directory
        var imageContext = context
        if imageContext.availableImages == nil {
            imageContext.imageExists = { access(directory + "/" + $0 + ".svg", F_OK) == 0 }
        }
        guard let image = layer.image(for: feature, zoom: tileZoom, context: imageContext) else { return nil }
        let scale = layer.rasterSize(for: feature, tileZoom: tileZoom, context: context) * pixelRatio
        // Styles pass params some of a layer's icons lack on purpose: Mapbox ignores those.
        let declared = Set(try source(named: image.name).parameters.map(\.name))
        let params = image.params.filter { declared.contains($0.key) }.mapValues(\.color)
        return try blockingIcon(named: image.name, params: IconParameters(params), scale: max(scale, 0.01))
    }
}
