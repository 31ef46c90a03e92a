import CPNG
import Glibc
import IconrCore

/// Encodes RGBA rasters as PNG with libpng.
public enum PNGEncoder {
    /// `compressionLevel` is zlib's 0 (fastest) to 9 (smallest); 6 is libpng's default.
    public static func encode(_ image: RasterImage, compressionLevel: Int = 6) throws(RenderError) -> [UInt8] {
        var buffer = CPNG_Buffer()
        var error = CPNG_Error()
        defer { free(buffer.data) }
        let succeeded = image.pixels.withUnsafeBufferPointer { pixels in
            CPNG_encode_rgba(pixels.baseAddress, png_uint_32(image.size.width), png_uint_32(image.size.height),
                             image.size.width * 4, Int32(compressionLevel), 0, &buffer, &error)
        }
        guard succeeded != 0 else {
            let message = withUnsafeBytes(of: &error.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            throw RenderError.encodingFailed(message)
        }
        return Array(UnsafeBufferPointer(start: buffer.data, count: buffer.length))
    }
}
