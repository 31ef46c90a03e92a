import IconrCore
import IconrRender

/// An icon rendered at one scale with one set of parameters.
public struct RenderedIcon: Hashable, Sendable {
    /// Straight RGBA pixels and their size.
    public let image: RasterImage
    /// Raster pixels per icon unit: the pixel ratio a renderer displays it at.
    public let scale: Double
    /// Stretch areas and content box in raster pixels (the template's, times `scale`).
    public let stretchX: [StretchArea]
    /// Vertical stretch areas in raster pixels.
    public let stretchY: [StretchArea]
    /// The content box in raster pixels.
    public let content: ContentBox?

    init(image: RasterImage, scale: Double, template: SVGTemplate) {
        self.image = image
        self.scale = scale
        stretchX = template.stretchX.map { $0.scaled(by: scale) }
        stretchY = template.stretchY.map { $0.scaled(by: scale) }
        content = template.content?.scaled(by: scale)
    }

    /// Width and height in pixels.
    public var size: PixelSize { image.size }
    /// Straight RGBA, `size.width * size.height * 4` bytes.
    public var pixels: [UInt8] { image.pixels }

    /// The icon as a PNG file's bytes (8-bit RGBA, zlib level `compressionLevel`).
    public func pngData(compressionLevel: Int = 6) throws(IconrError) -> [UInt8] {
        do {
            return try PNGEncoder.encode(image, compressionLevel: compressionLevel)
        } catch {
            throw IconrError.render(error, file: nil)
        }
    }
}
