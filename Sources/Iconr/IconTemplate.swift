import FoundationEssentials
import IconrRender

/// A parameterized SVG icon, ready to render at any scale with any parameter values.
///
/// ```swift
/// let flag = try IconTemplate(contentsOf: URL(fileURLWithPath: "icons/flag.svg"))
/// let icon = try flag.render(params: ["flag_color": "#800080"], scale: 2)
/// let png = try icon.pngData()
/// ```
public struct IconTemplate: Sendable {
    /// The file name without `.svg`, e.g. `flag`.
    public let name: String
    /// The path it was read from, when it came from a file; used in error messages.
    public let path: String?
    public let template: SVGTemplate
    /// Width and height at scale 1, in pixels.
    public let intrinsicWidth: Double
    public let intrinsicHeight: Double
    /// The document as loaded in this process, drawn again for renders that change no
    /// color; nil when the template was loaded in an isolated worker.
    private let loaded: LoadedSVG?

    public var parameters: [TemplateParameter] { template.parameters }
    public var warnings: [TemplateWarning] { template.warnings }

    /// Reads and checks a template file: its XML with librsvg, its metadata with iconr.
    /// With `isolation`, librsvg loads it in a worker process (loading alone can crash it),
    /// within `limits.timeout`.
    public init(contentsOf url: URL, isolation: IsolatedRenderer? = nil, limits: RenderLimits = .default) throws(IconrError) {
        try self.init(path: url.relativePath, isolation: isolation, limits: limits)
    }

    /// Like `init(contentsOf:)`, from a file path.
    public init(path: String, isolation: IsolatedRenderer? = nil, limits: RenderLimits = .default) throws(IconrError) {
        let bytes = try IconrError.readingTemplate(path)
        try self.init(name: Self.iconName(path: path), bytes: bytes, path: path, isolation: isolation, limits: limits)
    }

    /// The icon name of a template file: its file name without `.svg` or `.svgz`, in any
    /// letter case (`icons/flag.svg` is `flag`).
    public static func iconName(path: String) -> String {
        let fileName = path.split(separator: "/").last.map(String.init) ?? path
        let lowered = fileName.lowercased()
        return [".svgz", ".svg"].first { lowered.hasSuffix($0) }.map { String(fileName.dropLast($0.count)) } ?? fileName
    }

    /// Checks a template held in memory. `path` only names it in errors.
    public init(name: String, bytes: [UInt8], path: String? = nil, isolation: IsolatedRenderer? = nil,
                limits: RenderLimits = .default) throws(IconrError) {
        guard !bytes.isEmpty else {
            throw IconrError.template(TemplateError(file: path, location: nil, message: "the file is empty"))
        }
        do {
            if let isolation {
                (intrinsicWidth, intrinsicHeight) = try isolation.intrinsicSize(of: bytes, timeout: limits.timeout)
                loaded = nil
            } else {
                let document = try LoadedSVG(bytes: bytes)
                (intrinsicWidth, intrinsicHeight) = (document.intrinsicWidth, document.intrinsicHeight)
                loaded = document
            }
        } catch {
            throw IconrError.render(error, file: path)
        }
        do {
            template = try SVGTemplate(bytes: bytes, file: path)
        } catch {
            throw IconrError.template(error)
        }
        self.name = name
        self.path = path
    }

    /// The raster size at `scale`: `max(1, round(W*s)) x max(1, round(H*s))`.
    public func pixelSize(scale: Double) -> PixelSize {
        PixelSize.raster(width: intrinsicWidth, height: intrinsicHeight, scale: scale)
    }

    /// Checks parameter values (color text in the style specification's syntax). Unknown
    /// names are ignored and listed in the result.
    public func resolve(_ params: [String: String]) throws(IconrError) -> ResolvedParameters {
        do {
            return try template.resolve(params)
        } catch {
            throw IconrError.parameter(error, file: path)
        }
    }

    /// Renders the icon with `params` applied at `scale` (1 for 1x, 2 for 2x, any finite
    /// number > 0). In-process unless `isolation` names an isolated renderer.
    public func render(params: [String: String] = [:], scale: Double = 1,
                       limits: RenderLimits = .default, isolation: IsolatedRenderer? = nil) throws(IconrError) -> RenderedIcon {
        try render(resolve(params), scale: scale, limits: limits, isolation: isolation)
    }

    /// Renders with parameters already resolved against this template: in a worker with
    /// `isolation`; else from the loaded document when no color changes; else by loading the
    /// document with the new colors.
    public func render(_ params: ResolvedParameters, scale: Double = 1,
                       limits: RenderLimits = .default, isolation: IsolatedRenderer? = nil) throws(IconrError) -> RenderedIcon {
        let rendered: Result<RasterImage, RenderError>
        if let isolation {
            rendered = Result { () throws(RenderError) in try isolation.render(template.apply(params), scale: scale, limits: limits) }
        } else if let loaded, params.replacements.isEmpty {
            rendered = Result { () throws(RenderError) in try loaded.render(scale: scale, limits: limits) }
        } else {
            return try template.render(params, scale: scale, limits: limits, file: path)
        }
        do {
            return RenderedIcon(image: try rendered.get(), scale: scale, template: template)
        } catch {
            throw IconrError.render(error, file: path)
        }
    }
}

extension SVGTemplate {
    /// Renders with `params` applied, in this process, loading the final document once:
    /// the way for one-shot renders (no `IconTemplate` to load first). `file` names it in errors.
    /// With `baseFile`, relative references resolve against it (see `IconReferences`).
    public func render(_ params: ResolvedParameters, scale: Double, limits: RenderLimits = .default,
                       file: String? = nil, baseFile: String? = nil) throws(IconrError) -> RenderedIcon {
        do {
            let image = try Rasterizer.render(apply(params), scale: scale, limits: limits, baseFile: baseFile)
            return RenderedIcon(image: image, scale: scale, template: self)
        } catch {
            throw IconrError.render(error, file: file)
        }
    }
}
