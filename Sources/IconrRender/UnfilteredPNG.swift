import CPNG
import IconrCore

/// A PNG as `PNGEncoder` writes it without filters (every sheet that is not filtered, and
/// every single icon), read back exactly: its samples, their color type, and its palette.
/// libdeflate inflates it in a third of libpng's time (openstreetmap-carto's six sheets: 147
/// against 370 ms), and the samples are the ones encoded, with nothing converted.
package struct UnfilteredPNG: Sendable {
    package let size: PixelSize
    /// `PNG_COLOR_TYPE_GRAY`, `_GRAY_ALPHA`, `_RGB`, `_RGB_ALPHA` or `_PALETTE`.
    let colorType: Int32
    /// Samples a pixel: 1, 2, 3, 4 or (a palette index) 1.
    let channels: Int
    /// The rows without their filter bytes.
    let rows: [UInt8]
    /// A palette's RGB triples, and the alpha of its first entries (`tRNS`).
    let palette: [UInt8]
    let alpha: [UInt8]

    /// The samples of `png` when it is 8-bit, not interlaced, every row unfiltered, and at
    /// most `maxSize` (checked before anything is inflated: a header may claim any size); else nil.
    package init?(png: [UInt8], maxSize: PixelSize = RenderLimits.default.maxSize) {
        guard png.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else { return nil }
        var header: ArraySlice<UInt8>?, palette: ArraySlice<UInt8> = [], alpha: ArraySlice<UInt8> = []
        var data: [UInt8] = []
        var offset = 8
        var ended = false
        func bigEndian(_ at: Int) -> Int { png[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        while !ended, offset + 12 <= png.count {
            let length = bigEndian(offset)
            guard length <= png.count - offset - 12 else { return nil }
            let type = String(decoding: png[(offset + 4)..<(offset + 8)], as: UTF8.self)
            let body = png[(offset + 8)..<(offset + 8 + length)]
            switch type {
            case "IHDR": header = body
            case "PLTE": palette = body
            case "tRNS": alpha = body
            case "IDAT": data += body
            case "IEND": ended = true
            default: break
            }
            offset += 12 + length
        }
        guard ended, let header, header.count == 13 else { return nil }
        let start = header.startIndex
        let width = bigEndian(start), height = bigEndian(start + 4)
        let colorType = Int32(header[start + 9])
        let channels: Int
        switch colorType {
        case PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_PALETTE: channels = 1
        case PNG_COLOR_TYPE_GRAY_ALPHA: channels = 2
        case PNG_COLOR_TYPE_RGB: channels = 3
        case PNG_COLOR_TYPE_RGB_ALPHA: channels = 4
        default: return nil
        }
        // 8 bits, deflate, adaptive filtering's method, no interlace; a palette only with its
        // color type, and a tRNS only for a palette (as `PNGEncoder` writes them).
        guard header[start + 8] == 8, header[(start + 10)...].elementsEqual([0, 0, 0]), width > 0, height > 0,
            width <= maxSize.width, height <= maxSize.height,
            colorType == PNG_COLOR_TYPE_PALETTE
                ? !palette.isEmpty && palette.count % 3 == 0 && alpha.count <= palette.count / 3
                : palette.isEmpty && alpha.isEmpty,
            let scanlines = Deflate.inflate(data[...], count: (width * channels + 1) * height)
        else { return nil }
        let rowBytes = width * channels
        var rows = [UInt8](repeating: 0, count: rowBytes * height)
        var unfiltered = true
        scanlines.withUnsafeBufferPointer { from in
            rows.withUnsafeMutableBufferPointer { into in
                guard let source = from.baseAddress, let target = into.baseAddress else { return }
                for row in 0..<height {
                    guard source[row * (rowBytes + 1)] == 0 else {
                        unfiltered = false
                        return
                    }
                    (target + row * rowBytes).update(from: source + row * (rowBytes + 1) + 1, count: rowBytes)
                }
            }
        }
        guard unfiltered else { return nil }
        self.size = PixelSize(width: width, height: height)
        self.colorType = colorType
        self.channels = channels
        self.rows = rows
        self.palette = Array(palette)
        self.alpha = Array(alpha)
    }

    /// The color type in the header of `png` (its first chunk), without reading further.
    static func colorType(of png: [UInt8]) -> Int32? {
        guard png.count > 25, png[12..<16].elementsEqual("IHDR".utf8) else { return nil }
        return Int32(png[25])
    }

    /// The pixels as straight RGBA: the ones `PNGEncoder` reduced to these samples (gray
    /// repeated, opaque where there is no alpha). Nil for a palette index past its palette.
    package var rgba: RasterImage? {
        // RGBA samples are the pixels (openstreetmap-carto's 41 MB sheets are not copied).
        if colorType == PNG_COLOR_TYPE_RGB_ALPHA { return RasterImage(size: size, pixels: rows) }
        let count = size.width * size.height
        var pixels = [UInt8](repeating: 255, count: count * 4)
        var sound = true
        pixels.withUnsafeMutableBufferPointer { out in
            rows.withUnsafeBufferPointer { samples in
                switch colorType {
                case PNG_COLOR_TYPE_GRAY:
                    for index in 0..<count {
                        (out[index * 4], out[index * 4 + 1], out[index * 4 + 2]) =
                            (samples[index], samples[index], samples[index])
                    }
                case PNG_COLOR_TYPE_GRAY_ALPHA:
                    for index in 0..<count {
                        let gray = samples[index * 2]
                        (out[index * 4], out[index * 4 + 1], out[index * 4 + 2]) = (gray, gray, gray)
                        out[index * 4 + 3] = samples[index * 2 + 1]
                    }
                case PNG_COLOR_TYPE_RGB:
                    for index in 0..<count {
                        (out[index * 4], out[index * 4 + 1], out[index * 4 + 2]) =
                            (samples[index * 3], samples[index * 3 + 1], samples[index * 3 + 2])
                    }
                default:
                    let colors = palette.count / 3
                    for index in 0..<count {
                        let entry = Int(samples[index])
                        guard entry < colors else {
                            sound = false
                            return
                        }
                        (out[index * 4], out[index * 4 + 1], out[index * 4 + 2]) =
                            (palette[entry * 3], palette[entry * 3 + 1], palette[entry * 3 + 2])
                        out[index * 4 + 3] = entry < alpha.count ? alpha[entry] : 255
                    }
                }
            }
        }
        return sound ? RasterImage(size: size, pixels: pixels) : nil
    }
}
