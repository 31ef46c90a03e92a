import IconrCore
import IconrRender
import IconrSystem

/// A rendered variant as a renderer uses it: pixels, PNG bytes, and the metadata that
/// `icon-text-fit` needs, all at the variant's pixel ratio.
public struct IconVariant: Hashable, Sendable {
    /// Everything lives in one shared object: a memory-cache hit hands out a copy, and
    /// copying one reference is a single retain where the fields took about ten.
    private let storage: Storage

    /// The variant `key` names, drawn as `image`; its areas are the template's, times the
    /// key's scale. `png` is the image's PNG when it was read as one (a disk-cache hit).
    init(key: VariantKey, image: RasterImage, template: SVGTemplate, png: [UInt8]? = nil) {
        storage = Storage(
            key: key, image: image, stretchX: template.stretchX.map { $0.scaled(by: key.scale) },
            stretchY: template.stretchY.map { $0.scaled(by: key.scale) },
            content: template.content?.scaled(by: key.scale),
            png: png)
    }

    /// The variant `key` names, drawn as `image`, with its areas in the image's pixels.
    init(key: VariantKey, image: RasterImage, stretchX: [StretchArea], stretchY: [StretchArea], content: ContentBox?) {
        storage = Storage(key: key, image: image, stretchX: stretchX, stretchY: stretchY, content: content, png: nil)
    }

    /// What it is a variant of: icon, template digest, parameters, scale.
    public var key: VariantKey { storage.key }
    /// The pixels (straight RGBA) and their size.
    public var image: RasterImage { storage.image }

    /// The icon as a PNG file's bytes: `encoded(as: .png)`.
    public var png: [UInt8] {
        get throws(IconrError) { try storage.encoded(as: .png) }
    }

    /// The icon as a file in `format`: read from the disk cache, or encoded on first use
    /// (a sprite build, which only needs pixels, never pays for it) and kept.
    /// - Throws: `IconrError.render` when encoding fails (memory ran out).
    public func encoded(as format: ImageFormat) throws(IconrError) -> [UInt8] {
        try storage.encoded(as: format)
    }

    /// Two variants are equal when they are the same variant drawn alike.
    public static func == (lhs: IconVariant, rhs: IconVariant) -> Bool {
        lhs.storage === rhs.storage || (lhs.key == rhs.key && lhs.image == rhs.image)
    }

    /// Hashes the key.
    public func hash(into hasher: inout Hasher) { hasher.combine(key) }

    /// Width and height in pixels.
    public var size: PixelSize { image.size }
    /// Raster pixels per logical pixel: the scale it was rendered at.
    public var pixelRatio: Double { key.scale }
    /// Straight RGBA, `size.width * size.height * 4` bytes.
    public var pixels: [UInt8] { image.pixels }
    /// Horizontal stretch areas in pixels at the variant's ratio.
    public var stretchX: [StretchArea] { storage.stretchX }
    /// Vertical stretch areas in pixels at the variant's ratio.
    public var stretchY: [StretchArea] { storage.stretchY }
    /// The content box (for `icon-text-fit`) in pixels at the variant's ratio.
    public var content: ContentBox? { storage.content }

    /// What it costs to keep in memory, counting the PNG as at most as large as the pixels.
    var byteCost: Int { image.pixels.count * 2 + key.identity.utf8.count + 128 }
}

/// A variant's key, pixels and areas, and its files, each encoded once when first asked for.
private final class Storage: Sendable {
    let key: VariantKey
    let image: RasterImage
    let stretchX: [StretchArea]
    let stretchY: [StretchArea]
    let content: ContentBox?
    private let files: Locked<[ImageFormat: [UInt8]]>

    init(
        key: VariantKey, image: RasterImage, stretchX: [StretchArea], stretchY: [StretchArea], content: ContentBox?,
        png: [UInt8]?
    ) {
        self.key = key
        self.image = image
        self.stretchX = stretchX
        self.stretchY = stretchY
        self.content = content
        files = Locked(png.map { [.png: $0] } ?? [:])
    }

    func encoded(as format: ImageFormat) throws(IconrError) -> [UInt8] {
        if let stored = files.withLock({ $0[format] }) { return stored }
        // Encoding straight RGBA into memory cannot fail but for lack of memory.
        let file: [UInt8]
        do {
            file = try format.encode(image)
        } catch {
            throw IconrError.render(error, file: nil)
        }
        files.withLock { $0[format] = file }
        return file
    }
}
