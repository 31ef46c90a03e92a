import CPNG
import Dispatch
import Glibc
import IconrCore

/// Encodes RGBA rasters as PNG with libpng.
public enum PNGEncoder {
    /// Straight RGBA at zlib level `compressionLevel` (0 fastest to 9 smallest; 6 is
    /// libpng's default): the fast path for single icons.
    public static func encode(_ image: RasterImage, compressionLevel: Int = 6) throws(RenderError) -> [UInt8] {
        try encode(Samples(rgba: image), image.size, compressionLevel: Int32(compressionLevel), filters: 0, strategy: 0)
    }

    /// The smallest of several lossless encodings, for files that are published (sprite
    /// sheets): the pixels in every color type that holds them exactly (palette with
    /// transparency when there are at most 256 colors, gray with or without alpha, RGB,
    /// RGBA), each with and without libpng's adaptive filters, as optipng tries. The trials
    /// only rank the candidates, at zlib level 2 (a third of level 6's time); the winner is
    /// encoded again at level 7. On the Maki sheet at 2x (measured with zlib on its
    /// 219 KB of rows): level 7 takes 9 ms, 8 takes 32 ms for 4% fewer bytes, 9 takes 110 ms;
    /// level 7 stays within 6% of `optipng -o2`. The same pixels always give the same bytes.
    public static func encodeSmallest(_ image: RasterImage) throws(RenderError) -> [UInt8] {
        let noFilter: Int32 = 0x08, adaptive: Int32 = 0xF8
        let trials = Samples.reductions(of: image).flatMap { samples in [noFilter, adaptive].map { (samples, $0) } }
        // The trials are independent: run them on all cores. Ties go to the earlier trial.
        let sizes = Locked<[Int: Int]>([:])
        DispatchQueue.concurrentPerform(iterations: trials.count) { index in
            let size = (try? encode(trials[index].0, image.size, compressionLevel: 2, filters: trials[index].1, strategy: 0))?.count
            sizes.withLock { $0[index] = size ?? .max }
        }
        let sorted = sizes.withLock { $0 }.sorted { ($0.value, $0.key) < ($1.value, $1.key) }
        let best = trials[sorted[0].key]
        return try encode(best.0, image.size, compressionLevel: 7, filters: best.1, strategy: 0)
    }

    private static func encode(_ samples: Samples, _ size: PixelSize, compressionLevel: Int32, filters: Int32,
                               strategy: Int32) throws(RenderError) -> [UInt8] {
        var buffer = CPNG_Buffer()
        var error = CPNG_Error()
        defer { free(buffer.data) }
        let succeeded = samples.rows.withUnsafeBufferPointer { rows in
            samples.palette.withUnsafeBufferPointer { palette in
                samples.alpha.withUnsafeBufferPointer { alpha in
                    CPNG_encode(rows.baseAddress, png_uint_32(size.width), png_uint_32(size.height),
                                size.width * samples.channels, samples.colorType, palette.baseAddress,
                                Int32(samples.palette.count / 3), alpha.baseAddress, Int32(samples.alpha.count),
                                compressionLevel, filters, strategy, &buffer, &error)
                }
            }
        }
        guard succeeded != 0 else {
            let message = withUnsafeBytes(of: &error.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            throw RenderError.encodingFailed(message)
        }
        return Array(UnsafeBufferPointer(start: buffer.data, count: buffer.length))
    }
}

/// Pixel rows in one PNG color type.
private struct Samples {
    var colorType: Int32
    var channels: Int
    var rows: [UInt8]
    var palette: [UInt8] = []
    var alpha: [UInt8] = []

    init(colorType: Int32, channels: Int, rows: [UInt8], palette: [UInt8] = [], alpha: [UInt8] = []) {
        self.colorType = colorType
        self.channels = channels
        self.rows = rows
        self.palette = palette
        self.alpha = alpha
    }

    init(rgba image: RasterImage) {
        self.init(colorType: PNG_COLOR_TYPE_RGB_ALPHA, channels: 4, rows: image.pixels)
    }

    /// Every color type that holds `image` exactly, the smallest sample size first.
    static func reductions(of image: RasterImage) -> [Samples] {
        let pixels = image.pixels
        let count = pixels.count / 4
        var isGray = true, isOpaque = true
        var seen = Set<UInt32>()
        var order: [UInt32] = []
        for index in 0..<count {
            let r = pixels[index * 4], g = pixels[index * 4 + 1], b = pixels[index * 4 + 2], a = pixels[index * 4 + 3]
            if r != g || g != b { isGray = false }
            if a != 255 { isOpaque = false }
            if order.count <= 256, seen.insert(UInt32(r) << 24 | UInt32(g) << 16 | UInt32(b) << 8 | UInt32(a)).inserted {
                order.append(UInt32(r) << 24 | UInt32(g) << 16 | UInt32(b) << 8 | UInt32(a))
            }
        }
        var candidates: [Samples] = []
        if order.count <= 256 {
            // Translucent colors first, so that tRNS can stop at the last of them; then by value.
            let sorted = order.sorted { a, b in
                let (alphaA, alphaB) = (a & 0xFF, b & 0xFF)
                return (alphaA == 255 ? 1 : 0, a) < (alphaB == 255 ? 1 : 0, b)
            }
            var indexOf: [UInt32: UInt8] = [:]
            var palette: [UInt8] = [], alpha: [UInt8] = []
            for (index, color) in sorted.enumerated() {
                indexOf[color] = UInt8(index)
                palette += [UInt8(color >> 24), UInt8(color >> 16 & 0xFF), UInt8(color >> 8 & 0xFF)]
                alpha.append(UInt8(color & 0xFF))
            }
            let translucent = alpha.lastIndex { $0 != 255 }.map { $0 + 1 } ?? 0
            let rows = (0..<count).map { index -> UInt8 in
                let key = UInt32(pixels[index * 4]) << 24 | UInt32(pixels[index * 4 + 1]) << 16
                    | UInt32(pixels[index * 4 + 2]) << 8 | UInt32(pixels[index * 4 + 3])
                return indexOf[key]!
            }
            candidates.append(Samples(colorType: PNG_COLOR_TYPE_PALETTE, channels: 1, rows: rows, palette: palette,
                                      alpha: Array(alpha.prefix(translucent))))
        }
        if isGray && isOpaque {
            candidates.append(Samples(colorType: PNG_COLOR_TYPE_GRAY, channels: 1, rows: (0..<count).map { pixels[$0 * 4] }))
        } else if isGray {
            var rows = [UInt8](repeating: 0, count: count * 2)
            for index in 0..<count {
                rows[index * 2] = pixels[index * 4]
                rows[index * 2 + 1] = pixels[index * 4 + 3]
            }
            candidates.append(Samples(colorType: PNG_COLOR_TYPE_GRAY_ALPHA, channels: 2, rows: rows))
        } else if isOpaque {
            var rows = [UInt8](repeating: 0, count: count * 3)
            for index in 0..<count {
                rows[index * 3] = pixels[index * 4]
                rows[index * 3 + 1] = pixels[index * 4 + 1]
                rows[index * 3 + 2] = pixels[index * 4 + 2]
            }
            candidates.append(Samples(colorType: PNG_COLOR_TYPE_RGB, channels: 3, rows: rows))
        } else {
            candidates.append(Samples(rgba: image))
        }
        return candidates
    }
}
