import CPNG
import IconrCore

/// An image of at most 256 colors as palette indexes, with each color's count of pixels: what
/// a sprite sheet that `PNGEncoder.encodeSmallest` wrote as a palette holds, read back from
/// that PNG. A rebuild draws only the images that changed into it, and `encoded` gives the
/// bytes `encodeSmallest` gives for the same pixels (the same palette, in the same order).
package struct PaletteImage: Sendable {
    package let size: PixelSize
    /// The colors as `0xRRGGBBAA`, in palette order (`ordered`).
    private var colors: [UInt32]
    /// How many pixels have each color.
    private var counts: [Int]
    /// A palette index for each pixel, row by row.
    private var indexes: [UInt8]

    /// The pixels of `png` when it is a palette PNG as `PNGEncoder` writes them (8-bit
    /// indexes, not interlaced, every row unfiltered, every index in the palette); else nil.
    package init?(png: [UInt8]) {
        guard png.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else { return nil }
        var header: ArraySlice<UInt8>?, palette: ArraySlice<UInt8>?, alpha: ArraySlice<UInt8> = []
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
        guard ended, let header, header.count == 13, let palette, palette.count % 3 == 0,
            alpha.count <= palette.count / 3
        else { return nil }
        let start = header.startIndex
        let width = bigEndian(start), height = bigEndian(start + 4)
        // 8 bits, palette, deflate, adaptive filtering's method, no interlace.
        guard header[(start + 8)...].elementsEqual([8, UInt8(PNG_COLOR_TYPE_PALETTE), 0, 0, 0]), width > 0,
            height > 0, width <= 1 << 16, height <= 1 << 16,
            let scanlines = Deflate.inflate(data[...], count: (width + 1) * height)
        else { return nil }
        let colorCount = palette.count / 3
        // The rows without their filter bytes (each 0: none), then how many pixels each index has.
        var indexes = [UInt8](repeating: 0, count: width * height)
        var histogram = [Int](repeating: 0, count: 256)
        var sound = true
        scanlines.withUnsafeBufferPointer { from in
            indexes.withUnsafeMutableBufferPointer { into in
                guard let source = from.baseAddress, let target = into.baseAddress else { return }
                for row in 0..<height {
                    guard source[row * (width + 1)] == 0 else {
                        sound = false
                        return
                    }
                    (target + row * width).update(from: source + row * (width + 1) + 1, count: width)
                }
            }
        }
        histogram.withUnsafeMutableBufferPointer { counts in
            indexes.withUnsafeBufferPointer { pixels in
                for index in pixels { counts[Int(index)] += 1 }
            }
        }
        // Every index names a color of the palette.
        if histogram[colorCount...].contains(where: { $0 != 0 }) { sound = false }
        let counts = Array(histogram.prefix(colorCount))
        guard sound else { return nil }
        let first = palette.startIndex
        let colors = (0..<colorCount).map { index -> UInt32 in
            let base = first + index * 3
            let opacity = index < alpha.count ? alpha[alpha.startIndex + index] : 255
            return UInt32(palette[base]) << 24 | UInt32(palette[base + 1]) << 16 | UInt32(palette[base + 2]) << 8
                | UInt32(opacity)
        }
        // Written by `PNGEncoder`, the palette is in its order, each color once.
        guard colors == Self.ordered(colors), Set(colors).count == colors.count else { return nil }
        self.size = PixelSize(width: width, height: height)
        self.colors = colors
        self.counts = counts
        self.indexes = indexes
    }

    /// Draws `image` with its top left corner at (`x`, `y`), replacing the pixels there.
    /// False, and the image unchanged, when `image` does not fit inside or the pixels would
    /// then have more than 256 colors.
    package mutating func draw(_ image: RasterImage, x: Int, y: Int) -> Bool {
        let (width, height) = (image.size.width, image.size.height)
        guard x >= 0, y >= 0, width <= size.width - x, height <= size.height - y else { return false }
        // The image's pixels as slots: the palette's, then the colors it adds.
        var slots: [UInt32: Int] = [:]
        for (slot, color) in colors.enumerated() { slots[color] = slot }
        var all = colors
        var drawn = [Int](repeating: 0, count: width * height)
        image.pixels.withUnsafeBytes { raw in
            let words = raw.bindMemory(to: UInt32.self)
            var last: UInt32 = 0, lastSlot = -1
            for index in drawn.indices {
                if lastSlot < 0 || words[index] != last {
                    last = words[index]
                    let color = Self.color(of: last)
                    if let slot = slots[color] {
                        lastSlot = slot
                    } else {
                        lastSlot = all.count
                        slots[color] = lastSlot
                        all.append(color)
                    }
                }
                drawn[index] = lastSlot
            }
        }
        // The counts the pixels would have.
        var counts = counts + Array(repeating: 0, count: all.count - colors.count)
        for row in 0..<height {
            for column in 0..<width {
                counts[Int(indexes[(y + row) * size.width + x + column])] -= 1
                counts[drawn[row * width + column]] += 1
            }
        }
        let kept = all.indices.filter { counts[$0] > 0 }
        guard kept.count <= 256 else { return false }
        // A color gone or one new: the palette is made again, and every index follows it.
        var target = Array(0..<all.count)
        if kept.count != colors.count || all.count != colors.count {
            let palette = Self.ordered(kept.map { all[$0] })
            var newSlots: [UInt32: Int] = [:]
            for (slot, color) in palette.enumerated() { newSlots[color] = slot }
            target = all.map { newSlots[$0] ?? 0 }
            if colors.indices.contains(where: { target[$0] != $0 }) {
                var moved = [UInt8](repeating: 0, count: 256)
                for slot in colors.indices { moved[slot] = UInt8(target[slot]) }
                indexes.withUnsafeMutableBufferPointer { pixels in
                    for index in pixels.indices { pixels[index] = moved[Int(pixels[index])] }
                }
            }
            self.counts = palette.map { counts[slots[$0] ?? 0] }
            colors = palette
        } else {
            self.counts = counts
        }
        for row in 0..<height {
            for column in 0..<width {
                indexes[(y + row) * size.width + x + column] = UInt8(target[drawn[row * width + column]])
            }
        }
        return true
    }

    /// The PNG that `PNGEncoder.encodeSmallest` makes of these pixels (`optimize` and
    /// `memo` as there).
    package func encoded(optimize: Bool, memo: DeflateMemo?) throws(RenderError) -> [UInt8] {
        try PNGEncoder.encodeUnfiltered(
            Samples(paletteOf: colors, rows: indexes), size,
            level: optimize ? PNGEncoder.optimizedLevel(samples: indexes.count) : 7, memo: memo)
    }

    /// `0xRRGGBBAA` of a pixel read as a little-endian word of its RGBA bytes.
    static func color(of word: UInt32) -> UInt32 {
        let word = UInt32(littleEndian: word)
        return (word & 0xFF) << 24 | (word >> 8 & 0xFF) << 16 | (word >> 16 & 0xFF) << 8 | word >> 24
    }

    /// The palette order: translucent colors first, so that tRNS can stop at the last of
    /// them; then by value.
    static func ordered(_ colors: [UInt32]) -> [UInt32] {
        colors.sorted { a, b in (a & 0xFF == 255 ? 1 : 0, a) < (b & 0xFF == 255 ? 1 : 0, b) }
    }
}
