import CPNG
import Glibc
import IconrCore

/// Decodes PNG files into straight 8-bit RGBA with libpng's simplified API (unfiltered RGBA,
/// as the sprite cache writes it, by libdeflate).
public enum PNGDecoder {
    /// Whether `bytes` start with the PNG signature.
    public static func isPNG(_ bytes: [UInt8]) -> Bool {
        bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    }

    /// Decodes `bytes`, refusing (before allocating anything for the pixels) an image wider
    /// or taller than `maxSize`, as its header may claim any size up to 2^31 a side.
    public static func decode(
        _ bytes: [UInt8], maxSize: PixelSize = RenderLimits.default.maxSize
    ) throws(RenderError) -> RasterImage {
        if let image = try decodeUnfilteredRGBA(bytes, maxSize: maxSize) { return image }
        var image = png_image()
        image.version = png_uint_32(PNG_IMAGE_VERSION)
        defer { png_image_free(&image) }
        let began = bytes.withUnsafeBytes { png_image_begin_read_from_memory(&image, $0.baseAddress, $0.count) }
        guard began != 0 else { throw RenderError.decodingFailed("not a PNG: \(message(of: &image))") }
        image.format = CPNG_FORMAT_RGBA
        let size = PixelSize(width: Int(image.width), height: Int(image.height))
        guard size.width <= maxSize.width, size.height <= maxSize.height else {
            throw RenderError.tooLarge(size, limit: maxSize)
        }
        var pixels = [UInt8](repeating: 0, count: size.width * size.height * 4)
        let finished = pixels.withUnsafeMutableBytes { png_image_finish_read(&image, nil, $0.baseAddress, 0, nil) }
        guard finished != 0 else { throw RenderError.decodingFailed("corrupt PNG: \(message(of: &image))") }
        return RasterImage(size: size, pixels: pixels)
    }

    /// The fast path for PNGs as `PNGEncoder.encodeQuickly` writes them (the sprite cache's
    /// entries): 8-bit RGBA, not interlaced, every row unfiltered, no chunk that changes
    /// colors (only IHDR, IDAT, IEND and private ancillary chunks), each chunk's CRC
    /// checked. Inflated by libdeflate straight into the scanlines, which must come out at
    /// exactly their size: 2-3 times faster than libpng with zlib. Nil for any other PNG.
    private static func decodeUnfilteredRGBA(
        _ bytes: [UInt8], maxSize: PixelSize
    ) throws(RenderError) -> RasterImage? {
        guard isPNG(bytes), bytes.count >= 8 + 25 else { return nil }
        func word(_ offset: Int) -> Int {
            Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8
                | Int(bytes[offset + 3])
        }
        // The IDAT chunks' data: read in place when there is one (the cache writes one).
        var idats: [Range<Int>] = []
        var size: PixelSize?
        var offset = 8
        var ended = false
        while offset + 12 <= bytes.count, !ended {
            let length = word(offset)
            guard length <= bytes.count - offset - 12 else { return nil }
            let type = word(offset + 4)
            let data = (offset + 8)..<(offset + 8 + length)
            let crc = bytes.withUnsafeBufferPointer {
                UInt32(truncatingIfNeeded: crc32(0, $0.baseAddress.map { $0 + offset + 4 }, uInt(length + 4)))
            }
            guard crc == UInt32(word(offset + 8 + length)) else { return nil }
            switch type {
            case 0x4948_4452:  // IHDR
                // 8-bit RGBA, deflate, standard filters, not interlaced.
                guard size == nil, length == 13,
                    bytes[data.lowerBound + 8...data.lowerBound + 12].elementsEqual([8, 6, 0, 0, 0])
                else { return nil }
                size = PixelSize(width: word(data.lowerBound), height: word(data.lowerBound + 4))
            case 0x4944_4154: idats.append(data)  // IDAT
            case 0x4945_4E44: ended = true  // IEND
            default:
                // Ancillary (bit 5 of the first letter) and private (of the second) only.
                guard type & 0x2020_0000 == 0x2020_0000 else { return nil }
            }
            offset += 12 + length
        }
        guard ended, let size, size.width > 0, size.height > 0 else { return nil }
        guard size.width <= maxSize.width, size.height <= maxSize.height else {
            throw RenderError.tooLarge(size, limit: maxSize)
        }
        let rowBytes = size.width * 4
        let scanlineCount = size.height * (rowBytes + 1)
        guard let decompressor = libdeflate_alloc_decompressor() else { return nil }
        defer { libdeflate_free_decompressor(decompressor) }
        let compressed = idats.count == 1 ? bytes[idats[0]] : ArraySlice(idats.flatMap { bytes[$0] })
        var pixels = [UInt8](repeating: 0, count: scanlineCount)
        let result = compressed.withUnsafeBytes { input in
            pixels.withUnsafeMutableBytes { output in
                libdeflate_zlib_decompress(
                    decompressor, input.baseAddress, input.count, output.baseAddress, output.count, nil)
            }
        }
        guard result == LIBDEFLATE_SUCCESS,
            stride(from: 0, to: scanlineCount, by: rowBytes + 1).allSatisfy({ pixels[$0] == 0 })
        else { return nil }
        // The rows move forward over their filter bytes, in place.
        pixels.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            for row in 0..<size.height {
                memmove(base + row * rowBytes, base + row * (rowBytes + 1) + 1, rowBytes)
            }
        }
        pixels.removeLast(size.height)
        return RasterImage(size: size, pixels: pixels)
    }

    private static func message(of image: inout png_image) -> String {
        withUnsafeBytes(of: &image.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
