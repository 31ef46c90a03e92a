import CRsvg
import Glibc

/// librsvg and cairo, opened on first use: the binary does not link them, so a process that
/// never renders never loads them (and the ~50 libraries they bring). The functions below
/// are the C ones by their names, called through the table `dlsym` filled.
enum Librsvg {
    /// The library file Debian's librsvg2-2 package installs (cairo, GObject and GIO come with it).
    static let soname = "librsvg-2.so.2"

    /// The library file's name, size and modification time, found as the dynamic linker would
    /// (`LD_LIBRARY_PATH`, then the multiarch and plain library folders), without loading it.
    static let fileIdentity: String = {
        let folders =
            (getenv("LD_LIBRARY_PATH").map { String(cString: $0).split(separator: ":").map(String.init) } ?? [])
            + [
                "/usr/local/lib", "/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
                "/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib", "/lib",
            ]
        for folder in folders {
            var info = stat()
            guard stat(folder + "/" + soname, &info) == 0 else { continue }
            return "\(fileName(of: folder + "/" + soname)) \(info.st_size) \(info.st_mtim.tv_sec)"
        }
        return soname + " (not found)"
    }()

    /// The name of the file `path`'s own links lead to (`librsvg-2.so.2.48.0`). Only the
    /// file's links are followed, not its folders' as `realpath` does: a cache hit asks for
    /// this, and `realpath` took it eleven system calls.
    static func fileName(of path: String) -> String {
        var path = path
        var target = [UInt8](repeating: 0, count: 4096)
        for _ in 0..<8 {
            let length = target.withUnsafeMutableBytes { bytes in
                bytes.baseAddress.map { readlink(path, $0.assumingMemoryBound(to: CChar.self), bytes.count) } ?? -1
            }
            guard length > 0, length < target.count else { break }
            let link = String(decoding: target[..<length], as: UTF8.self)
            guard !link.hasPrefix("/") else {
                path = link
                continue
            }
            let folder = path.utf8.lastIndex(of: UInt8(ascii: "/")).map { String(path[...$0]) } ?? ""
            path = folder + link
        }
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return path }
        return String(path[path.utf8.index(after: slash)...])
    }

    /// The function table, or why it could not be made.
    private static let loaded: Result<Table, RenderError> = {
        // Lazily bound: of the ~50 libraries, those not linked with BIND_NOW (X11, xcb,
        // fontconfig, ...) then bind only the functions a render calls, not ~1,200 others
        // (2.3 million fewer instructions in a cold `iconr render`, by callgrind). Debian's
        // packages keep the libraries' symbols in step; our own functions are checked below.
        // The shared libstdc++, which librsvg's tree needs (through ICU) and a release iconr
        // does not link (the Makefile puts the static one in), is loaded first, into the
        // global scope: as a deep dependency of librsvg, each of its ~1,700 symbol bindings
        // searched through the ~45 libraries before it, 4.7 million instructions instead of
        // 1.9. Where it is missing, librsvg's own load says what is.
        _ = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_GLOBAL)
        // The tree looks up its symbols in itself first (RTLD_DEEPBIND): each lookup used to
        // walk iconr and the libraries it links before reaching the tree's own, 2.5 of a cold
        // render's 21.2 million instructions. Sanitizer runtimes refuse RTLD_DEEPBIND (they
        // could not intercept the tree's calls), so a build under ThreadSanitizer or
        // AddressSanitizer (its runtime's entry point is there to find) opens it as before.
        let sanitized = dlsym(nil, "__tsan_init") != nil || dlsym(nil, "__asan_init") != nil
        guard let library = dlopen(soname, RTLD_LAZY | RTLD_GLOBAL | (sanitized ? 0 : RTLD_DEEPBIND)) else {
            return .failure(
                .drawingFailed("cannot load \(soname): \(dlerror().map { String(cString: $0) } ?? "not found")"))
        }
        var missing: [String] = []
        // A function not found is noted and stands in as a null pointer: the table is then
        // thrown away, never called.
        func symbol<T>(_ name: String, as _: T.Type) -> T {
            let address = dlsym(library, name)
            if address == nil { missing.append(name) }
            return unsafeBitCast(address, to: T.self)
        }
        let api = IconrLibrsvg(
            rsvg_handle_new_from_data: symbol(
                "rsvg_handle_new_from_data",
                as: (@convention(c) (UnsafePointer<UInt8>?, gsize, UnsafeMutablePointer<UnsafeMutablePointer<GError>?>?)
                    -> OpaquePointer?).self),
            rsvg_handle_new_from_stream_sync: symbol(
                "rsvg_handle_new_from_stream_sync",
                as: (@convention(c) (
                    OpaquePointer?, OpaquePointer?, RsvgHandleFlags, OpaquePointer?,
                    UnsafeMutablePointer<UnsafeMutablePointer<GError>?>?
                ) -> OpaquePointer?).self),
            rsvg_handle_set_dpi: symbol(
                "rsvg_handle_set_dpi", as: (@convention(c) (OpaquePointer?, Double) -> Void).self),
            rsvg_handle_get_intrinsic_size_in_pixels: symbol(
                "rsvg_handle_get_intrinsic_size_in_pixels",
                as: (@convention(c) (OpaquePointer?, UnsafeMutablePointer<Double>?, UnsafeMutablePointer<Double>?) ->
                    gboolean).self),
            rsvg_handle_get_intrinsic_dimensions: symbol(
                "rsvg_handle_get_intrinsic_dimensions",
                as: (@convention(c) (
                    OpaquePointer?, UnsafeMutablePointer<gboolean>?, UnsafeMutablePointer<RsvgLength>?,
                    UnsafeMutablePointer<gboolean>?, UnsafeMutablePointer<RsvgLength>?, UnsafeMutablePointer<gboolean>?,
                    UnsafeMutablePointer<RsvgRectangle>?
                ) -> Void).self),
            rsvg_handle_get_geometry_for_layer: symbol(
                "rsvg_handle_get_geometry_for_layer",
                as: (@convention(c) (
                    OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<RsvgRectangle>?,
                    UnsafeMutablePointer<RsvgRectangle>?, UnsafeMutablePointer<RsvgRectangle>?,
                    UnsafeMutablePointer<UnsafeMutablePointer<GError>?>?
                ) -> gboolean).self),
            rsvg_handle_render_document: symbol(
                "rsvg_handle_render_document",
                as: (@convention(c) (
                    OpaquePointer?, OpaquePointer?, UnsafePointer<RsvgRectangle>?,
                    UnsafeMutablePointer<UnsafeMutablePointer<GError>?>?
                ) -> gboolean).self),
            rsvg_handle_set_stylesheet: symbol(
                "rsvg_handle_set_stylesheet",
                as: (@convention(c) (
                    OpaquePointer?, UnsafePointer<UInt8>?, gsize, UnsafeMutablePointer<UnsafeMutablePointer<GError>?>?
                ) -> gboolean).self),
            g_object_unref: symbol("g_object_unref", as: (@convention(c) (UnsafeMutableRawPointer?) -> Void).self),
            g_error_free: symbol("g_error_free", as: (@convention(c) (UnsafeMutablePointer<GError>?) -> Void).self),
            g_memory_input_stream_new_from_data: symbol(
                "g_memory_input_stream_new_from_data",
                as: (@convention(c) (UnsafeRawPointer?, gssize, (@convention(c) (UnsafeMutableRawPointer?) -> Void)?) ->
                    OpaquePointer?).self),
            g_file_new_for_path: symbol(
                "g_file_new_for_path", as: (@convention(c) (UnsafePointer<CChar>?) -> OpaquePointer?).self),
            cairo_image_surface_create: symbol(
                "cairo_image_surface_create", as: (@convention(c) (cairo_format_t, Int32, Int32) -> OpaquePointer?).self
            ),
            cairo_image_surface_create_for_data: symbol(
                "cairo_image_surface_create_for_data",
                as: (@convention(c) (UnsafeMutablePointer<UInt8>?, cairo_format_t, Int32, Int32, Int32) ->
                    OpaquePointer?).self),
            cairo_surface_destroy: symbol("cairo_surface_destroy", as: (@convention(c) (OpaquePointer?) -> Void).self),
            cairo_surface_status: symbol(
                "cairo_surface_status", as: (@convention(c) (OpaquePointer?) -> cairo_status_t).self),
            cairo_surface_flush: symbol("cairo_surface_flush", as: (@convention(c) (OpaquePointer?) -> Void).self),
            cairo_image_surface_get_stride: symbol(
                "cairo_image_surface_get_stride", as: (@convention(c) (OpaquePointer?) -> Int32).self),
            cairo_image_surface_get_data: symbol(
                "cairo_image_surface_get_data",
                as: (@convention(c) (OpaquePointer?) -> UnsafeMutablePointer<UInt8>?).self),
            cairo_format_stride_for_width: symbol(
                "cairo_format_stride_for_width", as: (@convention(c) (cairo_format_t, Int32) -> Int32).self),
            cairo_surface_write_to_png_stream: symbol(
                "cairo_surface_write_to_png_stream",
                as: (@convention(c) (OpaquePointer?, cairo_write_func_t?, UnsafeMutableRawPointer?) -> cairo_status_t)
                    .self),
            cairo_create: symbol("cairo_create", as: (@convention(c) (OpaquePointer?) -> OpaquePointer?).self),
            cairo_destroy: symbol("cairo_destroy", as: (@convention(c) (OpaquePointer?) -> Void).self),
            cairo_status: symbol("cairo_status", as: (@convention(c) (OpaquePointer?) -> cairo_status_t).self),
            cairo_status_to_string: symbol(
                "cairo_status_to_string", as: (@convention(c) (cairo_status_t) -> UnsafePointer<CChar>?).self),
            cairo_scale: symbol("cairo_scale", as: (@convention(c) (OpaquePointer?, Double, Double) -> Void).self),
            cairo_set_source_surface: symbol(
                "cairo_set_source_surface",
                as: (@convention(c) (OpaquePointer?, OpaquePointer?, Double, Double) -> Void).self),
            cairo_get_source: symbol("cairo_get_source", as: (@convention(c) (OpaquePointer?) -> OpaquePointer?).self),
            cairo_pattern_set_filter: symbol(
                "cairo_pattern_set_filter", as: (@convention(c) (OpaquePointer?, cairo_filter_t) -> Void).self),
            cairo_pattern_set_extend: symbol(
                "cairo_pattern_set_extend", as: (@convention(c) (OpaquePointer?, cairo_extend_t) -> Void).self),
            cairo_paint: symbol("cairo_paint", as: (@convention(c) (OpaquePointer?) -> Void).self))
        guard missing.isEmpty else {
            return .failure(.drawingFailed("\(soname) lacks \(missing.joined(separator: ", "))"))
        }
        return .success(Table(api: api))
    }()

    /// The table once loaded; immutable C function pointers, safe to share.
    private final class Table: @unchecked Sendable {
        let api: IconrLibrsvg
        init(api: IconrLibrsvg) { self.api = api }
    }

    /// The function table, the libraries loaded on the first call.
    /// - Throws: `RenderError.drawingFailed` naming the library or the functions it lacks.
    static func load() throws(RenderError) -> IconrLibrsvg {
        switch loaded {
        case .success(let table): return table.api
        case .failure(let error): throw error
        }
    }
}
