import IconrCore
import IconrSystem

/// A rendered variant as a renderer uses it: pixels, PNG bytes, and the metadata that
/// `icon-text-fit` needs, all at the variant's pixel ratio.
public struct IconVariant: Hashable, Sendable {
    /// Everything lives in one shared object: a memory-cache hit hands out a copy, and
    /// copying one reference is a single retain where the fields took about ten.
    private let storage: Storage

    init(key: VariantKey, icon: RenderedIcon, png: [UInt8]? = nil) {
        storage = Storage(key: key, icon: icon, png: png)
    }

    /// What it is a variant of: icon, template digest, parameters, scale.
    public var key: VariantKey { storage.key }
    /// The rendered image and its metadata.
    public var icon: RenderedIcon { storage.icon }

    /// The icon as a PNG file's bytes: read from the disk cache, or encoded on first use
    /// (a sprite build, which only needs pixels, never pays for it).
    /// - Throws: `IconrError.render` when encoding fails (memory ran out).
    public var png: [UInt8] {
        get throws(IconrError) { try storage.png() }
    }

    /// Two variants are equal when they are the same variant drawn alike.
    public static func == (lhs: IconVariant, rhs: IconVariant) -> Bool {
        lhs.storage === rhs.storage || (lhs.key == rhs.key && lhs.icon == rhs.icon)
    }

    /// Hashes the key.
    public func hash(into hasher: inout Hasher) { hasher.combine(key) }

    /// Width and height in pixels.
    public var size: PixelSize { icon.size }
    /// Raster pixels per logical pixel: the scale it was rendered at.
    public var pixelRatio: Double { icon.scale }
    /// Straight RGBA, `size.width * size.height * 4` bytes.
    public var pixels: [UInt8] { icon.pixels }
    /// Horizontal stretch areas in pixels at the variant's ratio.
    public var stretchX: [StretchArea] { icon.stretchX }
    /// Vertical stretch areas in pixels at the variant's ratio.
    public var stretchY: [StretchArea] { icon.stretchY }
    /// The content box (for `icon-text-fit`) in pixels at the variant's ratio.
    public var content: ContentBox? { icon.content }

    /// What it costs to keep in memory, counting the PNG as at most as large as the pixels.
    var byteCost: Int { icon.pixels.count * 2 + key.identity.utf8.count + 128 }
}

/// A variant's key and pixels, and its PNG bytes, encoded once when first asked for.
private final class Storage: Sendable {
    let key: VariantKey
    let icon: RenderedIcon
    private let encoded: Locked<[UInt8]?>

    init(key: VariantKey, icon: RenderedIcon, png: [UInt8]?) {
        self.key = key
        self.icon = icon
        encoded = Locked(png)
    }

    func png() throws(IconrError) -> [UInt8] {
        if let stored = encoded.withLock({ $0 }) { return stored }
        // Encoding straight RGBA into memory cannot fail but for lack of memory.
        let png = try icon.pngData()
        encoded.withLock { $0 = png }
        return png
    }
}
