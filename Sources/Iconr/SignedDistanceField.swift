import IconrCore

/// Signed distance fields for `sdf: true` sprite images, which a map renderer tints with
/// `icon-color` and scales without blur. Computed from a render at `supersampling` times the
/// ratio: an exact Euclidean distance transform (Felzenszwalb and Huttenlocher) of the
/// shape's inside and outside, sampled at each output pixel's centre. Encoded as Mapbox's
/// tools do (tiny-sdf): alpha = 255 - 255 * (d / radius + cutoff), d the signed distance in
/// output pixels (positive outside), so the edge is 191 and the renderer's 0.75 cut-off
/// finds it; color channels are black. The image gains a border (`SDFField.border`) on every
/// side: by default as wide as the field reaches outside the edge, radius x (1 - cutoff),
/// 6 px at 1x, where MapLibre draws the widest halo (`icon-halo-width` 6 at `icon-size` 1).
enum SignedDistanceField {
    static let supersampling = 4.0

    static func make(from supersampled: RasterImage, ratio: Double, field: SDFField = SDFField()) -> RasterImage {
        let factor = Int(supersampling)
        let border = field.border(at: ratio) * factor
        let width = supersampled.size.width + 2 * border, height = supersampled.size.height + 2 * border
        var inside = [Bool](repeating: false, count: width * height)
        for y in 0..<supersampled.size.height {
            for x in 0..<supersampled.size.width
            where supersampled.pixels[(y * supersampled.size.width + x) * 4 + 3] >= 128 {
                inside[(y + border) * width + (x + border)] = true
            }
        }
        let toInside = DistanceTransform.squaredDistances(width, height) { inside[$0] }
        let toOutside = DistanceTransform.squaredDistances(width, height) { !inside[$0] }
        let size = PixelSize(width: width / factor, height: height / factor)
        var pixels = [UInt8](repeating: 0, count: size.width * size.height * 4)
        let rampLength = field.radius * ratio
        for y in 0..<size.height {
            for x in 0..<size.width {
                // The supersampled pixel nearest to this output pixel's centre.
                let index = min(height - 1, y * factor + factor / 2) * width + min(width - 1, x * factor + factor / 2)
                let outsideDistance = toInside[index].squareRoot(), insideDistance = toOutside[index].squareRoot()
                let signed = (outsideDistance > 0 ? outsideDistance : -insideDistance) / supersampling
                let value = 255 - 255 * (signed / rampLength + SDFField.cutoff)
                pixels[(y * size.width + x) * 4 + 3] = UInt8(max(0, min(255, value.rounded())))
            }
        }
        return RasterImage(size: size, pixels: pixels)
    }
}
