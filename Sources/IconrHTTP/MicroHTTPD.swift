import CMicroHTTPD
import Glibc

/// GNU libmicrohttpd, opened when the first server starts: the binary does not link it, so
/// the commands that do not serve never load it (nor GnuTLS, which it brings).
enum MicroHTTPD {
    /// The library file Debian's libmicrohttpd12 package installs.
    static let soname = "libmicrohttpd.so.12"

    private static let loaded: Result<Table, HTTPServerError> = {
        guard let library = dlopen(soname, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "not found"
            return .failure(.library("cannot load \(soname) (Debian's libmicrohttpd12): \(reason)"))
        }
        var missing: [String] = []
        // A function not found is noted and stands in as a null pointer: the table is then
        // thrown away, never called.
        func symbol<T>(_ name: String, as _: T.Type) -> T {
            let address = dlsym(library, name)
            if address == nil { missing.append(name) }
            return unsafeBitCast(address, to: T.self)
        }
        let api = IconrMicroHTTPD(
            MHD_start_daemon: symbol("MHD_start_daemon", as: UnsafeMutableRawPointer.self),
            MHD_stop_daemon: symbol("MHD_stop_daemon", as: (@convention(c) (OpaquePointer?) -> Void).self),
            MHD_quiesce_daemon: symbol("MHD_quiesce_daemon", as: (@convention(c) (OpaquePointer?) -> Int32).self),
            MHD_lookup_connection_value: symbol(
                "MHD_lookup_connection_value",
                as: (@convention(c) (OpaquePointer?, Int32, UnsafePointer<CChar>?) -> UnsafePointer<CChar>?).self),
            MHD_get_connection_values: symbol(
                "MHD_get_connection_values",
                as: (@convention(c) (OpaquePointer?, Int32, MHD_KeyValueIterator?, UnsafeMutableRawPointer?) -> Int32)
                    .self),
            MHD_create_response_from_buffer: symbol(
                "MHD_create_response_from_buffer",
                as: (@convention(c) (Int, UnsafeMutableRawPointer?, Int32) -> OpaquePointer?).self),
            MHD_add_response_header: symbol(
                "MHD_add_response_header",
                as: (@convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32).self),
            MHD_queue_response: symbol(
                "MHD_queue_response", as: (@convention(c) (OpaquePointer?, UInt32, OpaquePointer?) -> Int32).self),
            MHD_destroy_response: symbol("MHD_destroy_response", as: (@convention(c) (OpaquePointer?) -> Void).self),
            MHD_suspend_connection: symbol(
                "MHD_suspend_connection", as: (@convention(c) (OpaquePointer?) -> Void).self),
            MHD_resume_connection: symbol("MHD_resume_connection", as: (@convention(c) (OpaquePointer?) -> Void).self),
            MHD_get_connection_info: symbol("MHD_get_connection_info", as: UnsafeMutableRawPointer.self))
        guard missing.isEmpty else {
            return .failure(.library("\(soname) lacks \(missing.joined(separator: ", "))"))
        }
        return .success(Table(api: api))
    }()

    /// The table once loaded; immutable C function pointers, safe to share.
    final class Table: @unchecked Sendable {
        let api: IconrMicroHTTPD
        init(api: IconrMicroHTTPD) { self.api = api }
    }

    /// The function table, the library loaded on the first call.
    /// - Throws: `HTTPServerError.library` naming the library or the functions it lacks.
    static func load() throws(HTTPServerError) -> Table {
        try loaded.get()
    }
}
