import CPNG
import Dispatch
import Glibc
import IconrCore
import IconrSystem

/// Encodes RGBA rasters as PNG: unfiltered images written here and deflated by libdeflate,
/// adaptively filtered ones (photo-like sheets) by libpng.
public enum PNGEncoder {
    /// Straight RGBA without filters, deflated by libdeflate at `compressionLevel` (0 stores,
    /// 1 fastest to 12 smallest; 6 is its default): the fast path for single icons. libpng
    /// with zlib set up some 256 KiB of deflate state for every image, which was a third of
    /// `iconr serve`'s own CPU on misses of a 24 px icon.
    public static func encode(_ image: RasterImage, compressionLevel: Int = 6) throws(RenderError) -> [UInt8] {
        try encodeUnfiltered(
            Samples(rgba: image), image.size, level: Int32(min(max(compressionLevel, 0), 12)), memo: nil)
    }

    /// A small lossless encoding, for files that are published (sprite sheets): the pixels
    /// as a palette with transparency when there are at most 256 colors, else in the
    /// smallest color type that holds them exactly (gray with or without alpha, RGB, RGBA);
    /// deflate level 7, in bands (`Deflate.zlibInBands`: with a `memo`, only bands whose bytes
    /// changed since the last image of this shape are deflated again). A palette is written without filters; other types are encoded at level 2
    /// with and without libpng's adaptive filters, in parallel (a large image: a sample of
    /// its rows), and the smaller way wins.
    /// This used to try every color type both ways (20% of a build's CPU): on all 21 sheets of
    /// Maki, Temaki and openstreetmap-carto at ratios 1, 2 and 3, the palette won where it
    /// was possible (by 19-25%) and no filter always beat adaptive filtering (by 0-37%), but
    /// on photo-like RGBA icons (resvg's tests) adaptive filters win. The same pixels always
    /// give the same bytes.
    ///
    /// With `optimize`, unfiltered images are deflated at libdeflate's highest levels
    /// (`optimizedLevel`), and filtered ones by zlib at level 9: for sheets that are
    /// published once and downloaded often.
    public static func encodeSmallest(
        _ image: consuming RasterImage, optimize: Bool = false, memo: DeflateMemo? = nil
    ) throws(RenderError) -> [UInt8] {
        let noFilter: Int32 = 0x08, adaptive: Int32 = 0xF8
        let size = image.size
        let samples = Samples.smallest(of: image)
        // The pixels are not needed past this point: a large sheet's go before it is deflated.
        _ = consume image
        let level = optimize ? optimizedLevel(samples: size.width * size.height * samples.channels) : 7
        guard samples.colorType != PNG_COLOR_TYPE_PALETTE else {
            return try encodeUnfiltered(samples, size, level: level, memo: memo)
        }
        let filters = [noFilter, adaptive]
        let sizes = Locked<[Int]>([.max, .max])
        // The trial is on a sample of a large image (`Samples.sample`).
        let (trial, trialSize) = samples.sample(size)
        DispatchQueue.concurrentPerform(iterations: filters.count) { index in
            let bytes = (try? encode(trial, trialSize, compressionLevel: 2, filters: filters[index], strategy: 0))?
                .count
            sizes.withLock { $0[index] = bytes ?? .max }
        }
        // Ties go to no filter.
        guard sizes.withLock({ $0[0] <= $0[1] }) else {
            return try encode(samples, size, compressionLevel: optimize ? 9 : 7, filters: adaptive, strategy: 0)
        }
        return try encodeUnfiltered(samples, size, level: level, memo: memo)
    }

    /// libdeflate's level for `optimize`: 12, its near-optimal parsing, for images of up to
    /// 8 MiB of samples (palette sheets: Maki's and Temaki's came within 0.2-0.6% of
    /// zopflipng's bytes, in a tenth of Zopfli's time), which it deflates at about 2 MB/s of
    /// CPU; 10 above, at about 10 MB/s (openstreetmap-carto's RGBA sheets, 150 MB of samples:
    /// 31 s at 12, against 2.9 s for the whole build without `optimize`).
    static func optimizedLevel(samples: Int) -> Int32 {
        samples <= 8 << 20 ? 12 : 10
    }

    /// Without filters, as a PNG written here: deflated by libdeflate at `level` in bands
    /// (smaller than zlib's at the same level, in a third to a half of zlib's time: a Maki
    /// 2x sheet 6.6 ms instead of 13.6 ms). Large sheets used to go to zlib in pieces on
    /// every core, but the sheets of a build are encoded side by side, so CPU time is what
    /// counts: openstreetmap-carto's 4096 x 4096 RGBA sheet takes libdeflate 302 ms at level
    /// 7 (3,398,845 bytes) and zlib 783 ms (3,505,982 bytes), one core each.
    static func encodeUnfiltered(
        _ samples: Samples, _ size: PixelSize, level: Int32, memo: DeflateMemo?
    ) throws(RenderError) -> [UInt8] {
        let rowBytes = size.width * samples.channels
        // Each row with its filter byte (0: none) in front.
        var scanlines = [UInt8](repeating: 0, count: size.height * (rowBytes + 1))
        scanlines.withUnsafeMutableBufferPointer { target in
            samples.rows.withUnsafeBufferPointer { source in
                guard let into = target.baseAddress, let from = source.baseAddress else { return }
                for row in 0..<size.height {
                    (into + row * (rowBytes + 1) + 1).update(from: from + row * rowBytes, count: rowBytes)
                }
            }
        }
        let shape =
            "\(size.width)x\(size.height) color type \(samples.colorType) palette \(SHA256.hex(samples.palette + samples.alpha))"
        let stream = try Deflate.zlibInBands(scanlines, level: level, memo: memo, name: shape).stream
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        func chunk(_ type: String, _ data: [UInt8]) {
            let typed = Array(type.utf8) + data
            png += withUnsafeBytes(of: UInt32(data.count).bigEndian, Array.init) + typed
            let crc = typed.withUnsafeBufferPointer {
                UInt32(truncatingIfNeeded: crc32(0, $0.baseAddress, uInt($0.count)))
            }
            png += withUnsafeBytes(of: crc.bigEndian, Array.init)
        }
        chunk(
            "IHDR",
            withUnsafeBytes(of: UInt32(size.width).bigEndian, Array.init)
                + withUnsafeBytes(of: UInt32(size.height).bigEndian, Array.init)
                + [8, UInt8(samples.colorType), 0, 0, 0])
        if samples.colorType == PNG_COLOR_TYPE_PALETTE {
            chunk("PLTE", samples.palette)
            if !samples.alpha.isEmpty { chunk("tRNS", samples.alpha) }
        }
        // IDAT chunks of at most 1 GiB (a chunk's length is below 2^31).
        var offset = 0
        repeat {
            let end = min(stream.count, offset + (1 << 30))
            chunk("IDAT", Array(stream[offset..<end]))
            offset = end
        } while offset < stream.count
        chunk("IEND", [])
        return png
    }

    private static func encode(
        _ samples: Samples, _ size: PixelSize, compressionLevel: Int32, filters: Int32,
        strategy: Int32
    ) throws(RenderError) -> [UInt8] {
        var buffer = CPNG_Buffer()
        var error = CPNG_Error()
        defer { free(buffer.data) }
        let succeeded = samples.rows.withUnsafeBufferPointer { rows in
            samples.palette.withUnsafeBufferPointer { palette in
                samples.alpha.withUnsafeBufferPointer { alpha in
                    CPNG_encode(
                        rows.baseAddress, png_uint_32(size.width), png_uint_32(size.height),
                        size.width * samples.channels, samples.colorType, palette.baseAddress,
                        Int32(samples.palette.count / 3), alpha.baseAddress, Int32(samples.alpha.count),
                        compressionLevel, filters, strategy, &buffer, &error)
                }
            }
        }
        guard succeeded != 0 else {
            throw RenderError.encodingFailed(error.text)
        }
        return Array(UnsafeBufferPointer(start: buffer.data, count: buffer.length))
    }
}

extension CPNG_Error {
    /// The message the C side wrote (NUL-terminated in a fixed buffer).
    var text: String {
        withUnsafeBytes(of: message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}

/// Pixel rows in one PNG color type.
struct Samples {
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

    /// Bands of 16 rows when the rows hold more than 1 MiB (for a trial encoding, whose
    /// relative sizes the sample keeps), else all of them: every eighth band, or fewer so
    /// that the sample holds about 2 MiB (the trials of openstreetmap-carto's 4096 x 4096
    /// sheet took 150 ms with every eighth).
    func sample(_ size: PixelSize) -> (Samples, PixelSize) {
        let rowBytes = size.width * channels
        guard rowBytes * size.height > 1 << 20, size.height >= 256 else { return (self, size) }
        var sampled: [UInt8] = []
        var rowCount = 0
        for band in stride(from: 0, to: size.height, by: 16 * max(8, (rowBytes * size.height) >> 21)) {
            let end = min(size.height, band + 16)
            sampled += rows[band * rowBytes..<end * rowBytes]
            rowCount += end - band
        }
        var copy = self
        copy.rows = sampled
        return (copy, PixelSize(width: size.width, height: rowCount))
    }

    /// Palette samples: `colors` (`0xRRGGBBAA`, in `PaletteImage.ordered` order) and an index a pixel.
    init(paletteOf colors: [UInt32], rows: [UInt8]) {
        let palette = colors.flatMap { [UInt8($0 >> 24), UInt8($0 >> 16 & 0xFF), UInt8($0 >> 8 & 0xFF)] }
        let alpha = colors.map { UInt8($0 & 0xFF) }
        let translucent = alpha.lastIndex { $0 != 255 }.map { $0 + 1 } ?? 0
        self.init(
            colorType: PNG_COLOR_TYPE_PALETTE, channels: 1, rows: rows, palette: palette,
            alpha: Array(alpha.prefix(translucent)))
    }

    init(rgba image: RasterImage) {
        self.init(colorType: PNG_COLOR_TYPE_RGB_ALPHA, channels: 4, rows: image.pixels)
    }

    /// `image` as a palette when it has at most 256 colors, else in the smallest color type
    /// that holds it exactly.
    static func smallest(of image: RasterImage) -> Samples {
        let pixels = image.pixels
        let count = pixels.count / 4
        var isGray = true, isOpaque = true
        // The distinct colors (up to 257) in an open-addressing table: a Set and a Dictionary
        // hashed every pixel (9% of a build's time on Temaki).
        var table = ColorTable()
        pixels.withUnsafeBytes { raw in
            let words = raw.bindMemory(to: UInt32.self)
            var last: UInt32 = 0, hasLast = false
            for index in 0..<count {
                let word = UInt32(littleEndian: words[index])
                if hasLast, word == last { continue }
                last = word
                hasLast = true
                let r = word & 0xFF, g = word >> 8 & 0xFF, b = word >> 16 & 0xFF, a = word >> 24
                if r != g || g != b { isGray = false }
                if a != 255 { isOpaque = false }
                if table.count <= 256 {
                    table.insert(r << 24 | g << 16 | b << 8 | a)
                } else if !isGray && !isOpaque {
                    // RGBA whatever the rest holds: a 4096 px sheet need not be read to its end.
                    break
                }
            }
        }
        if table.count <= 256 {
            let palette = PaletteImage.ordered(table.colors)
            var indexes = ColorTable()
            for (index, color) in palette.enumerated() { indexes.insert(color, value: UInt8(index)) }
            var rows = [UInt8](repeating: 0, count: count)
            pixels.withUnsafeBytes { raw in
                let words = raw.bindMemory(to: UInt32.self)
                var last: UInt32 = 0, lastIndex: UInt8 = 0, hasLast = false
                for index in 0..<count {
                    let word = words[index]
                    if !hasLast || word != last {
                        last = word
                        hasLast = true
                        lastIndex = indexes.value(of: PaletteImage.color(of: word))
                    }
                    rows[index] = lastIndex
                }
            }
            return Samples(paletteOf: palette, rows: rows)
        }
        if isGray && isOpaque {
            return Samples(colorType: PNG_COLOR_TYPE_GRAY, channels: 1, rows: (0..<count).map { pixels[$0 * 4] })
        } else if isGray {
            var rows = [UInt8](repeating: 0, count: count * 2)
            for index in 0..<count {
                rows[index * 2] = pixels[index * 4]
                rows[index * 2 + 1] = pixels[index * 4 + 3]
            }
            return Samples(colorType: PNG_COLOR_TYPE_GRAY_ALPHA, channels: 2, rows: rows)
        } else if isOpaque {
            var rows = [UInt8](repeating: 0, count: count * 3)
            for index in 0..<count {
                rows[index * 3] = pixels[index * 4]
                rows[index * 3 + 1] = pixels[index * 4 + 1]
                rows[index * 3 + 2] = pixels[index * 4 + 2]
            }
            return Samples(colorType: PNG_COLOR_TYPE_RGB, channels: 3, rows: rows)
        } else {
            return Samples(rgba: image)
        }
    }
}

/// A small set of RGBA colors (with an 8-bit value each) by open addressing: 1024 slots for at
/// most 257 colors, so probes stay short. Keys are `0xRRGGBBAA`.
private struct ColorTable {
    private var keys = [UInt32](repeating: 0, count: 1024)
    private var used = [Bool](repeating: false, count: 1024)
    private var values = [UInt8](repeating: 0, count: 1024)
    private(set) var colors: [UInt32] = []
    var count: Int { colors.count }

    private func slot(of key: UInt32) -> Int {
        var slot = Int((key &* 0x9E37_79B1) >> 22)
        while used[slot], keys[slot] != key { slot = (slot + 1) & 1023 }
        return slot
    }

    mutating func insert(_ key: UInt32, value: UInt8 = 0) {
        let slot = slot(of: key)
        guard !used[slot] else { return }
        used[slot] = true
        keys[slot] = key
        values[slot] = value
        colors.append(key)
    }

    /// The value of a key that was inserted.
    func value(of key: UInt32) -> UInt8 {
        values[slot(of: key)]
    }
}
