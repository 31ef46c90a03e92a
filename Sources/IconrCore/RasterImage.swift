/// A size in whole pixels.
public struct PixelSize: Hashable, Sendable, CustomStringConvertible {
    /// Pixels across.
    public var width: Int
    /// Pixels down.
    public var height: Int

    /// A size of `width` x `height` pixels.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// `48x48`.
    public var description: String { "\(width)x\(height)" }

    /// The raster size of an icon of intrinsic size `width` x `height` at `scale`, the way
    /// Mapbox computes it: `max(1, round(W*s)) x max(1, round(H*s))`.
    public static func raster(width: Double, height: Double, scale: Double) -> PixelSize {
        PixelSize(width: Self.side(width * scale), height: Self.side(height * scale))
    }

    private static func side(_ value: Double) -> Int {
        // Clamped so that absurd sizes stay representable and are refused by the size limit.
        let rounded = value.rounded()
        return rounded >= Double(Int32.max) ? Int(Int32.max) : max(1, Int(rounded))
    }
}

/// Straight (non-premultiplied) 8-bit RGBA pixels, rows top to bottom, no padding.
public struct RasterImage: Hashable, Sendable {
    /// Its size in pixels.
    public let size: PixelSize
    /// `size.width * size.height * 4` bytes: red, green, blue, alpha.
    public let pixels: [UInt8]

    /// An image of `size` from its RGBA bytes (`size.width * size.height * 4` of them).
    public init(size: PixelSize, pixels: [UInt8]) {
        precondition(pixels.count == size.width * size.height * 4, "pixel buffer does not match size")
        self.size = size
        self.pixels = pixels
    }

    /// The RGBA of the pixel at column `x`, row `y`.
    public subscript(x: Int, y: Int) -> (red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8) {
        let offset = (y * size.width + x) * 4
        return (pixels[offset], pixels[offset + 1], pixels[offset + 2], pixels[offset + 3])
    }

    /// The pixels of `rect` (a sprite entry's place in its sheet), or nil when it does not lie
    /// inside the image: an index read from a file may say anything.
    package func cropped(to rect: PixelRect) -> RasterImage? {
        guard rect.x >= 0, rect.y >= 0, rect.width >= 0, rect.height >= 0, rect.maxX <= size.width,
            rect.maxY <= size.height
        else { return nil }
        var cut: [UInt8] = []
        cut.reserveCapacity(rect.width * rect.height * 4)
        for row in rect.y..<rect.maxY {
            let start = (row * size.width + rect.x) * 4
            cut += pixels[start..<start + rect.width * 4]
        }
        return RasterImage(size: PixelSize(width: rect.width, height: rect.height), pixels: cut)
    }
}
