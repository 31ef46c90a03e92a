import CRsvg
import IconrCore
import IconrSystem

/// librsvg and cairo, in the calling process: the backend iconr ships.
public struct LibrsvgBackend: SVGBackend {
    /// A backend of the librsvg the dynamic linker finds (Debian's librsvg2-2).
    public init() {}

    /// `librsvg` and its library file's name, size and modification time, e.g.
    /// `librsvg librsvg-2.so.2.48.0 6402920 1700000000`: any upgrade changes it, and a cache
    /// hit learns it without loading librsvg.
    public var identity: String { "librsvg " + Librsvg.fileIdentity }

    /// Opens librsvg and cairo.
    /// - Throws: `RenderError.drawingFailed` naming the library that cannot be opened.
    public func prepare() throws(RenderError) {
        _ = try Librsvg.load()
    }

    /// Parses `bytes` with librsvg (see `SVGDocument` for how `baseFile` confines references).
    public func load(_ bytes: [UInt8], baseFile: String?) throws(RenderError) -> any ParsedSVG {
        try LibrsvgParsedSVG(bytes: bytes, baseFile: baseFile)
    }

    /// Scales with cairo's best filter; edge pixels extend instead of fading into transparent black.
    public func resample(_ image: RasterImage, to size: PixelSize) throws(RenderError) -> RasterImage {
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
            api.cairo_pattern_set_extend(api.cairo_get_source(context), CAIRO_EXTEND_PAD)
            api.cairo_paint(context)
            api.cairo_surface_flush(target)
            return .success(SVGDocument.straightRGBA(target, size: size, api: api))
        }
        return try result.get()
    }
}

/// A document librsvg has loaded, kept so that it can be drawn again at any scale without
/// parsing it again (parsing is about half the cost of a small icon). librsvg handles are
/// not thread-safe, so one use at a time takes the loaded handle, and a use that finds it
/// busy loads its own copy instead of waiting.
final class LibrsvgParsedSVG: ParsedSVG {
    let intrinsicSize: (width: Double, height: Double)
    private let bytes: [UInt8]
    private let baseFile: String?
    private let document: Locked<GuardedHandle>

    init(bytes: [UInt8], baseFile: String?) throws(RenderError) {
        let document = try SVGDocument(bytes: bytes, baseFile: baseFile)
        intrinsicSize = try document.intrinsicSize()
        self.bytes = bytes
        self.baseFile = baseFile
        self.document = Locked(GuardedHandle(document: document))
    }

    /// The loaded librsvg handle, which is not thread-safe: it may cross threads only inside
    /// `document`'s lock, which every use holds (`withLockIfAvailable`), and it is never
    /// handed out. That is what makes this box, and no other, `@unchecked Sendable`.
    private struct GuardedHandle: @unchecked Sendable {
        let document: SVGDocument
        /// The user stylesheet last set on it: setting the same one again (the ratios of one
        /// variant) would only cost its cascade again.
        var stylesheet: [UInt8]?
    }

    func draw(size: PixelSize, limit: PixelSize, stylesheet: [UInt8]?) throws(RenderError) -> RasterImage {
        let intrinsic = intrinsicSize
        let result = document.withLockIfAvailable { handle -> Result<RasterImage, RenderError> in
            Result { () throws(RenderError) in
                if let stylesheet, stylesheet != handle.stylesheet {
                    handle.stylesheet = nil
                    try handle.document.setStylesheet(stylesheet)
                    handle.stylesheet = stylesheet
                }
                return try handle.document.render(size: size, intrinsic: intrinsic, limit: limit)
            }
        }
        if let result { return try result.get() }
        let copy = try SVGDocument(bytes: bytes, baseFile: baseFile)
        if let stylesheet { try copy.setStylesheet(stylesheet) }
        return try copy.render(size: size, intrinsic: intrinsic, limit: limit)
    }

    func box(of id: String) -> SVGMeasurement.Box? {
        let (width, height) = intrinsicSize
        if let box = document.withLockIfAvailable({ $0.document.box(of: id, width: width, height: height) }) {
            return box
        }
        return (try? SVGDocument(bytes: bytes, baseFile: baseFile))?.box(of: id, width: width, height: height)
    }
}
