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
    /// indexes, not interlaced, every row unfiltered, every index in the palette) of at most
    /// `maxSize`; else nil.
    package init?(png: [UInt8], maxSize: PixelSize = RenderLimits.default.maxSize) {
        // Other color types are not inflated for nothing (openstreetmap-carto's RGBA sheets).
        guard UnfilteredPNG.colorType(of: png) == PNG_COLOR_TYPE_PALETTE,
            let read = UnfilteredPNG(png: png, maxSize: maxSize),
            read.colorType == PNG_COLOR_TYPE_PALETTE
        else { return nil }
        self.init(read)
    }

    /// The palette image `read` holds; nil when an index is past its palette, or the palette
    /// is not in `PNGEncoder`'s order with each color once.
    init?(_ read: UnfilteredPNG) {
        let colorCount = read.palette.count / 3
        // How many pixels each index has; every index names a color of the palette.
        var histogram = [Int](repeating: 0, count: 256)
        histogram.withUnsafeMutableBufferPointer { counts in
            read.rows.withUnsafeBufferPointer { pixels in
                for index in pixels { counts[Int(index)] += 1 }
            }
        }
        guard !histogram[colorCount...].contains(where: { $0 != 0 }) else { return nil }
        let colors = (0..<colorCount).map { index -> UInt32 in
            let opacity = index < read.alpha.count ? read.alpha[index] : 255
            return UInt32(read.palette[index * 3]) << 24 | UInt32(read.palette[index * 3 + 1]) << 16
                | UInt32(read.palette[index * 3 + 2]) << 8 | UInt32(opacity)
        }
        guard colors == Self.ordered(colors), Set(colors).count == colors.count else { return nil }
        self.size = read.size
        self.colors = colors
        self.counts = Array(histogram.prefix(colorCount))
        self.indexes = read.rows
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
