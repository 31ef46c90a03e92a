import CPNG

/// Raw deflate at libdeflate's fastest level, for bytes that only this program reads back
/// (large images in the sprite cache's packs), where time counts more than size.
package enum QuickDeflate {
    /// `bytes` deflated, or nil when libdeflate cannot (out of memory).
    package static func compress(_ bytes: [UInt8]) -> [UInt8]? {
        guard let compressor = libdeflate_alloc_compressor(1) else { return nil }
        defer { libdeflate_free_compressor(compressor) }
        let bound = libdeflate_deflate_compress_bound(compressor, bytes.count)
        let compressed = bytes.withUnsafeBufferPointer { input in
            [UInt8](unsafeUninitializedCapacity: bound) { output, count in
                count = libdeflate_deflate_compress(
                    compressor, input.baseAddress, input.count, output.baseAddress, bound)
            }
        }
        return compressed.isEmpty ? nil : compressed
    }

    /// The `count` bytes that `bytes` inflate to, or nil when they are not a deflate stream of
    /// exactly that many.
    package static func decompress(_ bytes: ArraySlice<UInt8>, count: Int) -> [UInt8]? {
        guard let decompressor = libdeflate_alloc_decompressor() else { return nil }
        defer { libdeflate_free_decompressor(decompressor) }
        var succeeded = false
        let inflated = bytes.withUnsafeBufferPointer { input in
            [UInt8](unsafeUninitializedCapacity: count) { output, written in
                succeeded =
                    libdeflate_deflate_decompress(
                        decompressor, input.baseAddress, input.count, output.baseAddress, count, nil)
                    == LIBDEFLATE_SUCCESS
                written = succeeded ? count : 0
            }
        }
        return succeeded ? inflated : nil
    }
}
