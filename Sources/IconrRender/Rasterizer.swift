import CRsvg
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

/// A document librsvg has loaded in this process, kept so that it can be drawn again at any
/// scale without parsing it again (parsing is about half the cost of a small icon).
/// Thread-safe: librsvg handles are not, so one render at a time uses the loaded handle and
/// a render that finds it busy loads its own copy instead of waiting.
public final class LoadedSVG: Sendable {
    public let bytes: [UInt8]
    /// Width and height in pixels at scale 1.
    public let intrinsicWidth: Double
    public let intrinsicHeight: Double
    private let document: Locked<SVGDocument>

    public init(bytes: [UInt8]) throws(RenderError) {
        let document = try SVGDocument(bytes: bytes)
        (intrinsicWidth, intrinsicHeight) = try document.intrinsicSize()
        self.bytes = bytes
        self.document = Locked(document)
    }

    /// Draws the document at `scale` into a `max(1, round(W*s)) x max(1, round(H*s))` raster.
    public func render(scale: Double, limits: RenderLimits = .default) throws(RenderError) -> RasterImage {
        guard scale.isFinite, scale > 0 else { throw RenderError.invalidScale(scale) }
        let size = PixelSize.raster(width: intrinsicWidth, height: intrinsicHeight, scale: scale)
        let intrinsic = (intrinsicWidth, intrinsicHeight)
        let result = document.withLockIfAvailable { document -> Result<RasterImage, RenderError> in
            Result { () throws(RenderError) in try document.render(size: size, intrinsic: intrinsic, limit: limits.maxSize) }
        }
        if let result { return try result.get() }
        return try SVGDocument(bytes: bytes).render(size: size, intrinsic: intrinsic, limit: limits.maxSize)
    }
}

/// Rasterizes SVG documents with librsvg and cairo in the calling process.
public enum Rasterizer {
    /// The version of the librsvg this process loaded, e.g. `2.54.7`.
    public static let librsvgVersion = "\(rsvg_major_version).\(rsvg_minor_version).\(rsvg_micro_version)"

    /// The intrinsic size of `svg` and the boxes of the elements with the given ids, in
    /// pixels at scale 1, as drawn (with their transforms); ids not found are left out.
    public static func measure(_ svg: [UInt8], elementIDs: [String]) throws(RenderError) -> SVGMeasurement {
        let document = try SVGDocument(bytes: svg)
        let (width, height) = try document.intrinsicSize()
        var boxes: [String: SVGMeasurement.Box] = [:]
        for id in elementIDs {
            if let box = document.box(of: id, width: width, height: height) { boxes[id] = box }
        }
        return SVGMeasurement(width: width, height: height, elementBoxes: boxes)
    }

    /// Loads and draws `svg` at `scale` into a `max(1, round(W*s)) x max(1, round(H*s))` raster.
    public static func render(_ svg: [UInt8], scale: Double, limits: RenderLimits = .default) throws(RenderError) -> RasterImage {
        guard scale.isFinite, scale > 0 else { throw RenderError.invalidScale(scale) }
        return try LoadedSVG(bytes: svg).render(scale: scale, limits: limits)
    }
}

/// A document's size and the boxes of some of its elements, in pixels at scale 1.
public struct SVGMeasurement: Hashable, Sendable {
    public struct Box: Hashable, Sendable {
        public var x: Double
        public var y: Double
        public var width: Double
        public var height: Double
    }

    public var width: Double
    public var height: Double
    public var elementBoxes: [String: Box]
}
