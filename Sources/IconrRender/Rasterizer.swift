import CRsvg
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

/// A document librsvg has loaded in this process, kept so that it can be drawn again at any
/// scale without parsing it again (parsing is about half the cost of a small icon).
/// Thread-safe: librsvg handles are not, so one render at a time uses the loaded handle and
/// a render that finds it busy loads its own copy instead of waiting.
public final class LoadedSVG: Sendable {
    /// The SVG document as loaded.
    public let bytes: [UInt8]
    /// Width and height in pixels at scale 1.
    public let intrinsicWidth: Double
    /// Height in pixels at scale 1.
    public let intrinsicHeight: Double
    /// Where its relative references resolve; nil for a document that reads no file.
    public let baseFile: String?
    private let document: Locked<GuardedHandle>

    /// `baseFile`: where relative references resolve (see `SVGDocument`); nil for none.
    public init(bytes: [UInt8], baseFile: String? = nil) throws(RenderError) {
        let document = try SVGDocument(bytes: bytes, baseFile: baseFile)
        (intrinsicWidth, intrinsicHeight) = try document.intrinsicSize()
        self.bytes = bytes
        self.baseFile = baseFile
        self.document = Locked(GuardedHandle(document: document))
    }

    /// The loaded librsvg handle, which is not thread-safe: it may cross threads only inside
    /// `document`'s lock, which every use holds (`withLockIfAvailable`), and it is never
    /// handed out. That is what makes this box, and no other, `@unchecked Sendable`.
    private struct GuardedHandle: @unchecked Sendable {
        let document: SVGDocument
    }

    /// Draws the document at `scale` into a `max(1, round(W*s)) x max(1, round(H*s))` raster.
    public func render(scale: Double, limits: RenderLimits = .default) throws(RenderError) -> RasterImage {
        guard scale.isFinite, scale > 0 else { throw RenderError.invalidScale(scale) }
        let size = PixelSize.raster(width: intrinsicWidth, height: intrinsicHeight, scale: scale)
        let intrinsic = (intrinsicWidth, intrinsicHeight)
        let result = document.withLockIfAvailable { handle -> Result<RasterImage, RenderError> in
            Result { () throws(RenderError) in
                try handle.document.render(size: size, intrinsic: intrinsic, limit: limits.maxSize)
            }
        }
        if let result { return try result.get() }
        return try SVGDocument(bytes: bytes, baseFile: baseFile).render(
            size: size, intrinsic: intrinsic, limit: limits.maxSize)
    }
}

/// Rasterizes SVG documents with librsvg and cairo in the calling process.
public enum Rasterizer {
    /// Opens librsvg and cairo now rather than on the first render, so that a job that
    /// cannot render fails once, before it starts, instead of once per render.
    /// - Throws: `RenderError.drawingFailed` naming the library that cannot be opened.
    public static func loadLibraries() throws(RenderError) {
        _ = try Librsvg.load()
    }

    /// Which librsvg renders here, known without loading it (cache keys use it, and a cache
    /// hit must not load librsvg): its library file's name, size and modification time,
    /// e.g. `librsvg-2.so.2.48.0 6402920 1700000000`; any upgrade changes it.
    public static let librsvgVersion = Librsvg.fileIdentity

    /// The intrinsic size of `svg` and the boxes of the elements with the given ids, in
    /// pixels at scale 1, as drawn (with their transforms); ids not found are left out.
    public static func measure(
        _ svg: [UInt8], elementIDs: [String], baseFile: String? = nil
    ) throws(RenderError) -> SVGMeasurement {
        let document = try SVGDocument(bytes: svg, baseFile: baseFile)
        let (width, height) = try document.intrinsicSize()
        var boxes: [String: SVGMeasurement.Box] = [:]
        for id in elementIDs {
            if let box = document.box(of: id, width: width, height: height) { boxes[id] = box }
        }
        return SVGMeasurement(width: width, height: height, elementBoxes: boxes)
    }

    /// Loads and draws `svg` at `scale` into a `max(1, round(W*s)) x max(1, round(H*s))` raster.
    public static func render(
        _ svg: [UInt8], scale: Double, limits: RenderLimits = .default,
        baseFile: String? = nil
    ) throws(RenderError) -> RasterImage {
        guard scale.isFinite, scale > 0 else { throw RenderError.invalidScale(scale) }
        return try LoadedSVG(bytes: svg, baseFile: baseFile).render(scale: scale, limits: limits)
    }
}

extension Rasterizer {
    /// `image` scaled to `size` by cairo with its best filter (for bitmap icons drawn at
    /// another ratio), straight RGBA in and out.
    public static func resample(_ image: RasterImage, to size: PixelSize) throws(RenderError) -> RasterImage {
        guard size.width <= 32767, size.height <= 32767, image.size.width > 0, image.size.height > 0 else {
            throw RenderError.tooLarge(size, limit: PixelSize(width: 32767, height: 32767))
        }
        let api = try Librsvg.load()
        let sourceStride = Int(api.cairo_format_stride_for_width(CAIRO_FORMAT_ARGB32, Int32(image.size.width)))
        // cairo wants premultiplied native-endian ARGB.
        var premultiplied = [UInt8](repeating: 0, count: sourceStride * image.size.height)
        premultiplied.withUnsafeMutableBytes { raw in
            guard let start = raw.baseAddress else { return }
            for y in 0..<image.size.height {
                let row = start.advanced(by: y * sourceStride).assumingMemoryBound(to: UInt32.self)
                for x in 0..<image.size.width {
                    let index = (y * image.size.width + x) * 4
                    let alpha = UInt32(image.pixels[index + 3])
                    func channel(_ value: UInt8) -> UInt32 { (UInt32(value) * alpha + 127) / 255 }
                    row[x] =
                        alpha << 24 | channel(image.pixels[index]) << 16 | channel(image.pixels[index + 1]) << 8
                        | channel(image.pixels[index + 2])
                }
            }
        }
        let result = premultiplied.withUnsafeMutableBytes { raw -> Result<RasterImage, RenderError> in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self),
                let source = api.cairo_image_surface_create_for_data(
                    base, CAIRO_FORMAT_ARGB32, Int32(image.size.width),
                    Int32(image.size.height), Int32(sourceStride)),
                let target = api.cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(size.width), Int32(size.height))
            else { return .failure(.drawingFailed("cairo could not make a surface")) }
            defer {
                api.cairo_surface_destroy(source)
                api.cairo_surface_destroy(target)
            }
            guard api.cairo_surface_status(target) == CAIRO_STATUS_SUCCESS, let context = api.cairo_create(target)
            else {
                return .failure(.outOfMemory(size))
            }
            defer { api.cairo_destroy(context) }
            api.cairo_scale(
                context, Double(size.width) / Double(image.size.width), Double(size.height) / Double(image.size.height))
            api.cairo_set_source_surface(context, source, 0, 0)
            api.cairo_pattern_set_filter(api.cairo_get_source(context), CAIRO_FILTER_BEST)
            // Edge pixels extend instead of fading into transparent black.
            api.cairo_pattern_set_extend(api.cairo_get_source(context), CAIRO_EXTEND_PAD)
            api.cairo_paint(context)
            api.cairo_surface_flush(target)
            return .success(SVGDocument.straightRGBA(target, size: size, api: api))
        }
        return try result.get()
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
