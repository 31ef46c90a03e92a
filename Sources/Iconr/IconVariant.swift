/// A rendered variant as a renderer uses it: pixels, PNG bytes, and the metadata that
/// `icon-text-fit` needs, all at the variant's pixel ratio.
public struct IconVariant: Hashable, Sendable {
    public let key: VariantKey
    public let icon: RenderedIcon
    public let png: [UInt8]

    public var size: PixelSize { icon.size }
    /// Raster pixels per logical pixel: the scale it was rendered at.
    public var pixelRatio: Double { icon.scale }
    /// Straight RGBA, `size.width * size.height * 4` bytes.
    public var pixels: [UInt8] { icon.pixels }
    public var stretchX: [StretchArea] { icon.stretchX }
    public var stretchY: [StretchArea] { icon.stretchY }
    public var content: ContentBox? { icon.content }

    /// What it costs to keep in memory.
    var byteCost: Int { icon.pixels.count + png.count + key.identity.utf8.count + 128 }
}
