import Dispatch
import IconrCore
import IconrSystem

/// Limits that keep a render from taking the machine down.
public struct RenderLimits: Hashable, Sendable {
    /// The largest raster allowed; larger ones are refused before any allocation.
    public var maxSize: PixelSize
    /// The longest a render may take, in seconds; enforced by isolated rendering only.
    public var timeout: Double

    /// Limits of `maxSize` pixels a side and `timeout` seconds per render.
    public init(maxSize: PixelSize = PixelSize(width: 4096, height: 4096), timeout: Double = 20) {
        self.maxSize = maxSize
        self.timeout = timeout
    }

    /// 4096 x 4096 pixels, 20 seconds.
    public static let `default` = RenderLimits()
}

/// A document the backend has parsed in this process, drawn at any scale without parsing
/// it again (parsing is about half the cost of a small icon). Safe to use from many threads.
public final class LoadedSVG: Sendable {
    /// The SVG document as loaded.
    public let bytes: [UInt8]
    /// Width in pixels at scale 1.
    public let intrinsicWidth: Double
    /// Height in pixels at scale 1.
    public let intrinsicHeight: Double
    /// Where its relative references resolve; nil for a document that reads no file.
    public let baseFile: String?
    private let parsed: any ParsedSVG

    /// Parses `bytes` with `Rasterizer.backend`; `baseFile`: where relative references
    /// resolve (see `SVGBackend.load`), nil for none.
    public init(bytes: [UInt8], baseFile: String? = nil) throws(RenderError) {
        parsed = try Rasterizer.backend.load(bytes, baseFile: baseFile)
        (intrinsicWidth, intrinsicHeight) = parsed.intrinsicSize
        self.bytes = bytes
        self.baseFile = baseFile
    }

    /// Draws the document at `scale` into a `max(1, round(W*s)) x max(1, round(H*s))` raster,
    /// with `stylesheet` as its user stylesheet (a `SVGTemplate.Restyling`'s, for a document
    /// loaded from its marked bytes, and then on every draw).
    public func render(
        scale: Double, limits: RenderLimits = .default, stylesheet: [UInt8]? = nil
    ) throws(RenderError) -> RasterImage {
        guard scale.isFinite, scale > 0 else { throw RenderError.invalidScale(scale) }
        let size = PixelSize.raster(width: intrinsicWidth, height: intrinsicHeight, scale: scale)
        return try parsed.draw(size: size, limit: limits.maxSize, stylesheet: stylesheet)
    }

    /// The boxes of the elements with the given ids, in pixels at scale 1; ids not found are left out.
    func boxes(of elementIDs: [String]) -> [String: SVGMeasurement.Box] {
        var boxes: [String: SVGMeasurement.Box] = [:]
        for id in elementIDs {
            if let box = parsed.box(of: id) { boxes[id] = box }
        }
        return boxes
    }
}

/// Rasterizes SVG documents in the calling process, with the one backend in use.
public enum Rasterizer {
    /// What draws here: librsvg. A second backend (a type conforming to `SVGBackend`) is
    /// chosen on this line; cache keys follow its `identity`.
    public static let backend: any SVGBackend = LibrsvgBackend()

    /// The backend and its exact build, known without loading it (cache keys hold it, and a
    /// cache hit must not load the backend's libraries).
    public static let identity = backend.identity

    /// Opens the backend's libraries now rather than on the first render, so that a job that
    /// cannot render fails once, before it starts, instead of once per render.
    /// - Throws: `RenderError.drawingFailed` naming the library that cannot be opened.
    public static func loadLibraries() throws(RenderError) {
        try backend.prepare()
    }

    /// Starts opening the backend's libraries on another thread, for a job likely to render
    /// soon, which then waits only for what is left of the load (librsvg's ~45 libraries
    /// take 9-10 ms). `loadLibraries` reports a failure. Only for a process that will not
    /// `fork` without `exec` meanwhile: a child forked during the load would inherit the
    /// dynamic loader's lock held.
    public static func startLoadingLibraries() {
        DispatchQueue.global(qos: .userInitiated).async { try? backend.prepare() }
    }

    /// The intrinsic size of `svg` and the boxes of the elements with the given ids, in
    /// pixels at scale 1, as drawn (with their transforms); ids not found are left out.
    public static func measure(
        _ svg: [UInt8], elementIDs: [String], baseFile: String? = nil
    ) throws(RenderError) -> SVGMeasurement {
        let document = try LoadedSVG(bytes: svg, baseFile: baseFile)
        return SVGMeasurement(
            width: document.intrinsicWidth, height: document.intrinsicHeight,
            elementBoxes: document.boxes(of: elementIDs))
    }

    /// Loads and draws `svg` at `scale` into a `max(1, round(W*s)) x max(1, round(H*s))` raster.
    public static func render(
        _ svg: [UInt8], scale: Double, limits: RenderLimits = .default,
        baseFile: String? = nil
    ) throws(RenderError) -> RasterImage {
        guard scale.isFinite, scale > 0 else { throw RenderError.invalidScale(scale) }
        return try LoadedSVG(bytes: svg, baseFile: baseFile).render(scale: scale, limits: limits)
    }

    /// `image` scaled to `size` by the backend's best filter (for bitmap icons drawn at
    /// another ratio), straight RGBA in and out.
    public static func resample(_ image: RasterImage, to size: PixelSize) throws(RenderError) -> RasterImage {
        try backend.resample(image, to: size)
    }
}

/// A document's size and the boxes of some of its elements, in pixels at scale 1.
public struct SVGMeasurement: Hashable, Sendable {
    /// An element's box in pixels at scale 1 (`rsvg_handle_get_geometry_for_layer`).
    public struct Box: Hashable, Sendable {
        /// Left edge.
        public var x: Double
        /// Top edge.
        public var y: Double
        /// Width.
        public var width: Double
        /// Height.
        public var height: Double
    }

    /// The document's width in pixels at scale 1.
    public var width: Double
    /// The document's height in pixels at scale 1.
    public var height: Double
    /// The boxes of the elements asked for, by id (those found).
    public var elementBoxes: [String: Box]
}
