import CRsvg
import Glibc
import IconrCore
import Synchronization

/// How many documents the calling thread loaded into librsvg, and how many handles are alive
/// in the process: what proves that a cache hit never loads librsvg and that no handle leaks.
package enum LibrsvgCounters {
    static let live = Atomic<Int>(0)
    private static let threadLoads: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// librsvg handles alive in this process now.
    package static var documentsAlive: Int { live.load(ordering: .relaxed) }
    /// Loads made by the calling thread: unaffected by work on other threads.
    package static var documentsLoadedOnThisThread: Int { Int(bitPattern: pthread_getspecific(threadLoads)) }

    static func countLoad() {
        live.add(1, ordering: .relaxed)
        pthread_setspecific(threadLoads, UnsafeRawPointer(bitPattern: documentsLoadedOnThisThread + 1))
    }
}

/// A document loaded by librsvg. Owns its `RsvgHandle`; never shared between threads.
final class SVGDocument {
    private let handle: OpaquePointer
    private let api: IconrLibrsvg

    /// Loads `bytes`. With no `baseFile` the document has no base URI and cannot reach other
    /// files; with one, librsvg resolves relative references (`<image href="x.png">`, `<use>`
    /// of another file, CSS `url()`) against it, and loads only files in that file's folder
    /// and below (its own rule: no parent folders, no other schemes, no network).
    init(bytes: [UInt8], baseFile: String? = nil) throws(RenderError) {
        let api = try Librsvg.load()
        self.api = api
        var error: UnsafeMutablePointer<GError>?
        let handle = bytes.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            guard let baseFile else {
                return api.rsvg_handle_new_from_data(buffer.baseAddress, gsize(buffer.count), &error)
            }
            // The stream reads the caller's bytes in place; the handle is fully loaded on return.
            let stream = api.g_memory_input_stream_new_from_data(buffer.baseAddress, gssize(buffer.count), nil)
            let base = api.g_file_new_for_path(baseFile)
            defer {
                api.g_object_unref(UnsafeMutableRawPointer(stream))
                api.g_object_unref(UnsafeMutableRawPointer(base))
            }
            return api.rsvg_handle_new_from_stream_sync(stream, base, RSVG_HANDLE_FLAGS_NONE, nil, &error)
        }
        guard let handle else {
            throw RenderError.invalidDocument(consumeMessage(error, fallback: "librsvg could not load it"))
        }
        self.handle = handle
        LibrsvgCounters.countLoad()
        api.rsvg_handle_set_dpi(handle, 96)
    }

    deinit {
        api.g_object_unref(UnsafeMutableRawPointer(handle))
        LibrsvgCounters.live.subtract(1, ordering: .relaxed)
    }

    /// Width and height in pixels: from `width`/`height`, else from the viewBox, else (as
    /// `rsvg-convert` does) the size of what the document draws.
    func intrinsicSize() throws(RenderError) -> (width: Double, height: Double) {
        var width = 0.0, height = 0.0
        if api.rsvg_handle_get_intrinsic_size_in_pixels(handle, &width, &height) != 0 {
            guard width > 0, height > 0, width.isFinite, height.isFinite else { throw RenderError.noIntrinsicSize }
            return (width, height)
        }
        if let size = api.viewBoxSize(of: handle) { return size }
        var unit = RsvgRectangle(x: 0, y: 0, width: 1, height: 1)
        var ink = RsvgRectangle(), logical = RsvgRectangle()
        var error: UnsafeMutablePointer<GError>?
        guard api.rsvg_handle_get_geometry_for_layer(handle, nil, &unit, &ink, &logical, &error) != 0 else {
            throw RenderError.invalidDocument(consumeMessage(error, fallback: "librsvg could not measure it"))
        }
        guard ink.width > 0, ink.height > 0, ink.width.isFinite, ink.height.isFinite else {
            throw RenderError.noIntrinsicSize
        }
        return (ink.width, ink.height)
    }

    /// Sets the user stylesheet the document is drawn with, in place of the last one. A
    /// property an earlier stylesheet set keeps its value until another sets it.
    func setStylesheet(_ css: [UInt8]) throws(RenderError) {
        var error: UnsafeMutablePointer<GError>?
        let set = css.withUnsafeBufferPointer { buffer in
            api.rsvg_handle_set_stylesheet(handle, buffer.baseAddress, gsize(buffer.count), &error)
        }
        guard set != 0 else {
            throw RenderError.drawingFailed(consumeMessage(error, fallback: "librsvg refused the stylesheet"))
        }
    }

    /// The box of the element with `id` as drawn into a `width` x `height` viewport (its
    /// geometry without stroke, with every transform above it), or nil when there is none.
    func box(of id: String, width: Double, height: Double) -> SVGMeasurement.Box? {
        var viewport = RsvgRectangle(x: 0, y: 0, width: width, height: height)
        var ink = RsvgRectangle(), logical = RsvgRectangle()
        var error: UnsafeMutablePointer<GError>?
        guard api.rsvg_handle_get_geometry_for_layer(handle, "#" + id, &viewport, &ink, &logical, &error) != 0 else {
            if let error { api.g_error_free(error) }
            return nil
        }
        return SVGMeasurement.Box(x: logical.x, y: logical.y, width: logical.width, height: logical.height)
    }

    /// Draws the document, whose intrinsic size is `intrinsic`, stretched to fill `size` exactly.
    func render(
        size: PixelSize, intrinsic: (width: Double, height: Double), limit: PixelSize
    ) throws(RenderError) -> RasterImage {
        guard size.width <= limit.width, size.height <= limit.height else {
            throw RenderError.tooLarge(size, limit: limit)
        }
        // cairo's surface and the straight copy each take 4 bytes a pixel. Asking for both
        // first turns a failed allocation into an error, not a crash (Swift traps on one).
        guard let probe = malloc(size.width * size.height * 8) else { throw RenderError.outOfMemory(size) }
        free(probe)
        guard let surface = api.cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(size.width), Int32(size.height))
        else {
            throw RenderError.drawingFailed("cairo_image_surface_create returned nothing")
        }
        defer { api.cairo_surface_destroy(surface) }
        try check(api.cairo_surface_status(surface))
        guard let context = api.cairo_create(surface) else {
            throw RenderError.drawingFailed("cairo_create returned nothing")
        }
        defer { api.cairo_destroy(context) }
        api.cairo_scale(context, Double(size.width) / intrinsic.width, Double(size.height) / intrinsic.height)
        var viewport = RsvgRectangle(x: 0, y: 0, width: intrinsic.width, height: intrinsic.height)
        var error: UnsafeMutablePointer<GError>?
        guard api.rsvg_handle_render_document(handle, context, &viewport, &error) != 0 else {
            throw RenderError.drawingFailed(consumeMessage(error, fallback: "librsvg could not render it"))
        }
        try check(api.cairo_status(context))
        api.cairo_surface_flush(surface)
        return Self.straightRGBA(surface, size: size, api: api)
    }

    private func check(_ status: cairo_status_t) throws(RenderError) {
        guard status == CAIRO_STATUS_SUCCESS else {
            throw RenderError.drawingFailed(
                api.cairo_status_to_string(status).map { String(cString: $0) } ?? "cairo status \(status.rawValue)")
        }
    }

    /// cairo's native-endian premultiplied ARGB to straight RGBA, rounding as cairo's own
    /// PNG writer (and so `rsvg-convert`) does.
    static func straightRGBA(_ surface: OpaquePointer, size: PixelSize, api: IconrLibrsvg) -> RasterImage {
        let stride = Int(api.cairo_image_surface_get_stride(surface))
        guard let source = api.cairo_image_surface_get_data(surface) else {
            return RasterImage(size: size, pixels: [UInt8](repeating: 0, count: size.width * size.height * 4))
        }
        let pixels = [UInt8](unsafeUninitializedCapacity: size.width * size.height * 4) { output, count in
            for y in 0..<size.height {
                let row = UnsafeRawPointer(source + y * stride).assumingMemoryBound(to: UInt32.self)
                var offset = y * size.width * 4
                for x in 0..<size.width {
                    let argb = row[x]
                    let alpha = argb >> 24
                    var red = (argb >> 16) & 0xFF, green = (argb >> 8) & 0xFF, blue = argb & 0xFF
                    if alpha == 0 {
                        // cairo may leave color in fully transparent pixels; its PNG writer clears it.
                        red = 0
                        green = 0
                        blue = 0
                    } else if alpha != 255 {
                        red = (red * 255 + alpha / 2) / alpha
                        green = (green * 255 + alpha / 2) / alpha
                        blue = (blue * 255 + alpha / 2) / alpha
                    }
                    output[offset] = UInt8(truncatingIfNeeded: red)
                    output[offset + 1] = UInt8(truncatingIfNeeded: green)
                    output[offset + 2] = UInt8(truncatingIfNeeded: blue)
                    output[offset + 3] = UInt8(truncatingIfNeeded: alpha)
                    offset += 4
                }
            }
            count = size.width * size.height * 4
        }
        return RasterImage(size: size, pixels: pixels)
    }
}

/// The message of a GError, which it frees, on one line: libxml2's
/// `Error domain 1 code 77 on line 3 column 1 of data: Premature end of data\n`
/// becomes `line 3 column 1: Premature end of data`.
private func consumeMessage(_ error: UnsafeMutablePointer<GError>?, fallback: String) -> String {
    guard let error else { return fallback }
    defer { (try? Librsvg.load())?.g_error_free(error) }
    guard let raw = error.pointee.message.map({ String(cString: $0) }) else { return fallback }
    let message = raw.split(whereSeparator: \.isNewline).map { $0.drop(while: \.isWhitespace) }
        .filter { !$0.isEmpty }.joined(separator: "; ")
    return message.isEmpty ? fallback : withoutLibxmlPrefix(message)
}

/// `message` with its first `Error domain <n> code <n> on <place> of data: ` (libxml2's) cut
/// to `<place>: `. Scanned by hand: one regular expression here linked Swift's regex engine,
/// 3,100 relocations that every start applied (see `firstOffset(of:from:)`).
func withoutLibxmlPrefix(_ message: String) -> String {
    let bytes = Array(message.utf8)
    func has(_ literal: String, at index: Int) -> Bool {
        index <= bytes.count && bytes[index...].starts(with: literal.utf8)
    }
    func afterDigits(_ index: Int) -> Int? {
        var end = index
        while end < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[end]) { end += 1 }
        return end > index ? end : nil
    }
    for start in bytes.indices where has("Error domain ", at: start) {
        guard let domainEnd = afterDigits(start + 13), has(" code ", at: domainEnd),
            let codeEnd = afterDigits(domainEnd + 6), has(" on ", at: codeEnd),
            let placeEnd = bytes.firstOffset(of: Array(" of data: ".utf8), from: codeEnd + 4)
        else { continue }
        let place = bytes[(codeEnd + 4)..<placeEnd]
        let rest = bytes[(placeEnd + 10)...]
        return String(decoding: bytes[..<start] + place + Array(": ".utf8) + rest, as: UTF8.self)
    }
    return message
}

extension IconrLibrsvg {
    /// The width and height of the document's viewBox, nil when it has none of positive size.
    func viewBoxSize(of handle: OpaquePointer) -> (width: Double, height: Double)? {
        var hasViewBox: gboolean = 0
        var viewBox = RsvgRectangle()
        rsvg_handle_get_intrinsic_dimensions(handle, nil, nil, nil, nil, &hasViewBox, &viewBox)
        guard hasViewBox != 0, viewBox.width > 0, viewBox.height > 0 else { return nil }
        return (viewBox.width, viewBox.height)
    }
}
