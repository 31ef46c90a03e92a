import CPNG
import Glibc

/// Zopfli, opened on first use (`iconr sprite --optimize`): a deflate encoder that spends
/// about a hundred times zlib's time for streams some 5-10% smaller.
enum Zopfli {
    /// The library file of Debian's libzopfli1.
    static let soname = "libzopfli.so.1"

    /// Pointers to C functions, set once and only called: safe to share across threads.
    private struct Functions: @unchecked Sendable {
        let initOptions: CPNG_ZopfliInitOptions
        let deflatePart: CPNG_ZopfliDeflatePart
    }

    private static let loaded: Result<Functions, RenderError> = {
        guard let library = dlopen(soname, RTLD_NOW | RTLD_LOCAL) else {
            return .failure(
                .encodingFailed(
                    "--optimize needs zopfli: cannot load \(soname) (apt-get install libzopfli1): "
                        + (dlerror().map { String(cString: $0) } ?? "not found")))
        }
        guard let initOptions = dlsym(library, "ZopfliInitOptions"),
            let deflatePart = dlsym(library, "ZopfliDeflatePart")
        else {
            return .failure(.encodingFailed("\(soname) lacks ZopfliInitOptions or ZopfliDeflatePart"))
        }
        return .success(
            Functions(
                initOptions: unsafeBitCast(initOptions, to: CPNG_ZopfliInitOptions.self),
                deflatePart: unsafeBitCast(deflatePart, to: CPNG_ZopfliDeflatePart.self)))
    }()

    /// Whether the library can be opened, and why not.
    static func check() throws(RenderError) {
        _ = try loaded.get()
    }

    /// Deflates `data[start..<end]` (with `data[..<start]` as the window it may refer to) as
    /// raw deflate blocks. A piece that is not the last ends with an empty stored block, so
    /// that it ends on a byte boundary and pieces made apart can be joined into one stream.
    static func deflatePiece(
        _ data: UnsafeBufferPointer<UInt8>, start: Int, end: Int, last: Bool
    ) throws(RenderError) -> [UInt8] {
        let functions = try loaded.get()
        var options = CPNG_ZopfliOptions()
        functions.initOptions(&options)
        // Zopfli's advice: 15 iterations for small inputs, 5 for several MB.
        options.numiterations = end - start > 1 << 20 ? 5 : 15
        var bitPointer: UInt8 = 0
        var output: UnsafeMutablePointer<UInt8>?
        var count = 0
        functions.deflatePart(&options, 2, last ? 1 : 0, data.baseAddress, start, end, &bitPointer, &output, &count)
        defer { free(output) }
        var bytes = output.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
        if !last { Deflate.appendEmptyStoredBlock(to: &bytes, usedBits: Int(bitPointer)) }
        return bytes
    }
}
