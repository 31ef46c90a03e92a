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
}
