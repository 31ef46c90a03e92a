import IconrCore

/// Limits that keep a render from taking the machine down.
public struct RenderLimits: Hashable, Sendable {
    /// The largest raster allowed; larger ones are refused before any allocation.
    public var maxSize: PixelSize
    /// The longest a render may take, in seconds; enforced by isolated rendering only.
    public var timeout: Double

    public init(maxSize: PixelSize = PixelSize(width: 4096, height: 4096), timeout: Double = 20) {
        self.maxSize = maxSize
        self.timeout = timeout
    }

    public static let `default` = RenderLimits()
}

/// Rasterizes SVG documents with librsvg and cairo in the calling process.
public enum Rasterizer {
    /// The size in pixels of `svg` at scale 1 (from width/height, else the viewBox).
    public static func intrinsicSize(of svg: [UInt8]) throws(RenderError) -> (width: Double, height: Double) {
        try SVGDocument(bytes: svg).intrinsicSize()
    }

    /// Draws `svg` at `scale` into a `max(1, round(W*s)) x max(1, round(H*s))` raster.
    public static func render(_ svg: [UInt8], scale: Double, limits: RenderLimits = .default) throws(RenderError) -> RasterImage {
        guard scale.isFinite, scale > 0 else { throw RenderError.invalidScale(scale) }
        let document = try SVGDocument(bytes: svg)
        let intrinsic = try document.intrinsicSize()
        let size = PixelSize.raster(width: intrinsic.width, height: intrinsic.height, scale: scale)
        return try document.render(size: size, limit: limits.maxSize)
    }
}
