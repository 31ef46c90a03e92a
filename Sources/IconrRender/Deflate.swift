import CPNG
import IconrSystem

/// zlib streams made and read by libdeflate in one call: the sheets' image data
/// (`PNGEncoder`) and the sprite cache's large pack entries.
package enum Deflate {
    /// libdeflate compressors not in use, by level. Each is reused: making one clears its
    /// hash tables, which cost more than deflating a small image (a cold Maki build spent
    /// 24 ms of CPU in libdeflate with a new one per image, 20 ms reusing them).
    private static let idleCompressors = Locked<[Int32: [Compressor]]>([:])

    /// A libdeflate compressor, owned by one thread at a time.
    private struct Compressor: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// `data` as one zlib stream at `level` (1 fastest to 12).
    package static func zlib(_ data: [UInt8], level: Int32) throws(RenderError) -> [UInt8] {
        guard
            let compressor = idleCompressors.withLock({ $0[level]?.popLast() })?.pointer
                ?? libdeflate_alloc_compressor(level)
        else {
            throw .encodingFailed("libdeflate cannot make a compressor (out of memory)")
        }
        defer { idleCompressors.withLock { $0[level, default: []].append(Compressor(pointer: compressor)) } }
        let bound = libdeflate_zlib_compress_bound(compressor, data.count)
        let stream = data.withUnsafeBufferPointer { input in
            [UInt8](unsafeUninitializedCapacity: bound) { output, count in
                count = libdeflate_zlib_compress(compressor, input.baseAddress, input.count, output.baseAddress, bound)
            }
        }
        guard !stream.isEmpty else { throw .encodingFailed("libdeflate could not compress the image") }
        return stream
    }

    /// The `count` bytes that the zlib stream `bytes` inflates to, or nil when it is not a
    /// sound stream of exactly that many.
    package static func inflate(_ bytes: ArraySlice<UInt8>, count: Int) -> [UInt8]? {
        guard let decompressor = libdeflate_alloc_decompressor() else { return nil }
        defer { libdeflate_free_decompressor(decompressor) }
        var succeeded = false
        let inflated = bytes.withUnsafeBufferPointer { input in
            [UInt8](unsafeUninitializedCapacity: count) { output, written in
                succeeded =
                    libdeflate_zlib_decompress(
                        decompressor, input.baseAddress, input.count, output.baseAddress, count, nil)
                    == LIBDEFLATE_SUCCESS
                written = succeeded ? count : 0
            }
        }
        return succeeded ? inflated : nil
    }
}
