import CRsvg
import Glibc
import IconrCore

/// The raw work iconr is measured against: librsvg loads the bytes, cairo draws them at a
/// scale, and cairo's own libpng writer encodes the PNG. No template, no substitution, no
/// checks beyond the libraries' own. For benchmarks only; `Rasterizer` is the real thing.
public enum ReferencePipeline {
    /// Returns the PNG's size in bytes, or nil when any step fails.
    public static func renderPNG(_ svg: [UInt8], scale: Double) -> Int? {
        guard let api = try? Librsvg.load() else { return nil }
        guard
            let handle = svg.withUnsafeBufferPointer({
                api.rsvg_handle_new_from_data($0.baseAddress, gsize($0.count), nil)
            })
        else {
            return nil
        }
        defer { api.g_object_unref(UnsafeMutableRawPointer(handle)) }
        // Width and height, else the viewBox (Temaki's icons have only a viewBox: without it
        // the bench timed parsing alone for them).
        var width = 0.0, height = 0.0
        if api.rsvg_handle_get_intrinsic_size_in_pixels(handle, &width, &height) == 0 {
            guard let viewBox = api.viewBoxSize(of: handle) else { return nil }
            (width, height) = viewBox
        }
        guard width > 0, height > 0, width.isFinite, height.isFinite else { return nil }
        let pixelWidth = Int32((width * scale).rounded()), pixelHeight = Int32((height * scale).rounded())
        guard let surface = api.cairo_image_surface_create(CAIRO_FORMAT_ARGB32, pixelWidth, pixelHeight) else {
            return nil
        }
        defer { api.cairo_surface_destroy(surface) }
        guard let context = api.cairo_create(surface) else { return nil }
        defer { api.cairo_destroy(context) }
        api.cairo_scale(context, scale, scale)
        var viewport = RsvgRectangle(x: 0, y: 0, width: width, height: height)
        guard api.rsvg_handle_render_document(handle, context, &viewport, nil) != 0 else { return nil }
        var length = 0
        let status = api.cairo_surface_write_to_png_stream(
            surface,
            { closure, _, count in
                closure!.assumingMemoryBound(to: Int.self).pointee += Int(count)
                return CAIRO_STATUS_SUCCESS
            }, &length)
        return status == CAIRO_STATUS_SUCCESS ? length : nil
    }
}
