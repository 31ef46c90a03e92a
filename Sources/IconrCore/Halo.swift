/// A halo baked into an icon's pixels: a ring `width` pixels at 1x (times the scale) around
/// what the icon draws, under it, in `color`, its outer edge softened over `blur` pixels.
/// MapLibre and Mapbox draw halos only around SDF icons; a full-color icon gets one this way.
/// The image grows by the ring on every side, so the icon stays centered.
public struct Halo: Hashable, Sendable {
    /// The ring's width in pixels at 1x.
    public var width: Double
    /// Its color (white by default), its alpha kept.
    public var color: Color
    /// How many pixels at 1x its outer edge fades over (0: a crisp, antialiased edge).
    public var blur: Double

    /// A ring `width` px wide at 1x in `color`, faded over `blur` px.
    public init(width: Double, color: Color = Color(red: 255, green: 255, blue: 255), blur: Double = 0) {
        self.width = width
        self.color = color
        self.blur = blur
    }

    /// `WIDTH[,COLOR[,BLUR]]` (`2`, `2,#000`, `1.5,white,1`): nil for anything else, or a width
    /// or blur outside 0-32.
    public init?(parsing text: String) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map {
            String($0.filter { $0 != " " })
        }
        guard (1...3).contains(parts.count), let width = Double(parts[0]), width > 0, width <= 32 else { return nil }
        var color = Color(red: 255, green: 255, blue: 255)
        if parts.count > 1 {
            guard let parsed = Color(css: parts[1]) else { return nil }
            color = parsed
        }
        var blur = 0.0
        if parts.count > 2 {
            guard let parsed = Double(parts[2]), parsed >= 0, parsed <= 32 else { return nil }
            blur = parsed
        }
        self.init(width: width, color: color, blur: blur)
    }

    /// `WIDTH,COLOR[,BLUR]` as `init(parsing:)` reads it: `2,#ffffff`, `1.5,#00000080,1`.
    public var text: String {
        "\(width.shortText),\(color.hexString)" + (blur > 0 ? ",\(blur.shortText)" : "")
    }

    /// The pixels the image grows by on each side at `scale`.
    public func border(at scale: Double) -> Int { Int(((width + blur) * scale).rounded(.up)) }

    /// What the halo adds to cache keys.
    package var keyText: String { " halo \(width.shortText) \(color.hexString) \(blur.shortText)" }

    /// `image` (drawn at `scale`) with the ring under it, `border(at:)` pixels larger on every side.
    public func apply(to image: RasterImage, scale: Double) -> RasterImage {
        let border = border(at: scale)
        let width = image.size.width + 2 * border, height = image.size.height + 2 * border
        // What the icon covers (at least half opaque) is the shape the ring goes around.
        var inside = [Bool](repeating: false, count: width * height)
        for y in 0..<image.size.height {
            for x in 0..<image.size.width where image.pixels[(y * image.size.width + x) * 4 + 3] >= 128 {
                inside[(y + border) * width + (x + border)] = true
            }
        }
        let distances = DistanceTransform.squaredDistances(width, height) { inside[$0] }
        let reach = self.width * scale, fade = max(1, blur * scale)
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let index = y * width + x
                // Coverage of the ring: full within its width, falling over `fade` pixels past it
                // (distances between pixel centres are half a pixel more than to the shape's edge).
                let distance = max(0, distances[index].squareRoot() - 0.5)
                let ring = min(1, max(0, (reach + fade / 2 - distance) / fade))
                let haloAlpha = ring * color.alpha
                // The icon's own pixel, if any, over the ring (straight alpha in and out).
                var iconRGBA: (Double, Double, Double, Double) = (0, 0, 0, 0)
                let ix = x - border, iy = y - border
                if ix >= 0, iy >= 0, ix < image.size.width, iy < image.size.height {
                    let p = image[ix, iy]
                    iconRGBA = (Double(p.red), Double(p.green), Double(p.blue), Double(p.alpha) / 255)
                }
                let alpha = iconRGBA.3 + haloAlpha * (1 - iconRGBA.3)
                guard alpha > 0 else { continue }
                func mixed(_ icon: Double, _ halo: UInt8) -> UInt8 {
                    let value = (icon * iconRGBA.3 + Double(halo) * haloAlpha * (1 - iconRGBA.3)) / alpha
                    return UInt8(min(255, max(0, value.rounded())))
                }
                pixels[index * 4] = mixed(iconRGBA.0, color.red)
                pixels[index * 4 + 1] = mixed(iconRGBA.1, color.green)
                pixels[index * 4 + 2] = mixed(iconRGBA.2, color.blue)
                pixels[index * 4 + 3] = UInt8(min(255, max(0, (alpha * 255).rounded())))
            }
        }
        return RasterImage(size: PixelSize(width: width, height: height), pixels: pixels)
    }
}
