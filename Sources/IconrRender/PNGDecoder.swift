import CPNG
import Glibc
import IconrCore

/// Decodes PNG files into straight 8-bit RGBA with libpng's simplified API.
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

    private static func message(of image: inout png_image) -> String {
        withUnsafeBytes(of: &image.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
