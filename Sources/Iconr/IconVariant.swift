
/// A rendered variant as a renderer uses it: pixels, PNG bytes, and the metadata that
/// `icon-text-fit` needs, all at the variant's pixel ratio.
public struct IconVariant: Hashable, Sendable {
    public let key: VariantKey
    public let icon: RenderedIcon
    private let encoded: EncodedPNG

    init(key: VariantKey, icon: RenderedIcon, png: [UInt8]? = nil) {
        self.key = key
        self.icon = icon
        encoded = EncodedPNG(png)
    }

    /// The icon as a PNG file's bytes: read from the disk cache, or encoded on first use
    /// (a sprite build, which only needs pixels, never pays for it).
    public var png: [UInt8] { encoded.bytes(of: icon) }

    public static func == (lhs: IconVariant, rhs: IconVariant) -> Bool { lhs.key == rhs.key && lhs.icon == rhs.icon }

    public func hash(into hasher: inout Hasher) { hasher.combine(key) }

    public var size: PixelSize { icon.size }
    /// Raster pixels per logical pixel: the scale it was rendered at.
    public var pixelRatio: Double { icon.scale }
    /// Straight RGBA, `size.width * size.height * 4` bytes.
    public var pixels: [UInt8] { icon.pixels }
    public var stretchX: [StretchArea] { icon.stretchX }
    public var stretchY: [StretchArea] { icon.stretchY }
    public var content: ContentBox? { icon.content }

    /// What it costs to keep in memory, counting the PNG as at most as large as the pixels.
    var byteCost: Int { icon.pixels.count * 2 + key.identity.utf8.count + 128 }
}

/// A variant's PNG bytes, encoded once when first asked for.
private final class EncodedPNG: Sendable {
    private let bytes: Locked<[UInt8]?>

    init(_ bytes: [UInt8]?) {
        self.bytes = Locked(bytes)
    }

    func bytes(of icon: RenderedIcon) -> [UInt8] {
        bytes.withLock { stored in
            if let stored { return stored }
            // Encoding straight RGBA into memory cannot fail but for lack of memory.
            let png = (try? icon.pngData()) ?? []
            stored = png
            return png
        }
    }
}
