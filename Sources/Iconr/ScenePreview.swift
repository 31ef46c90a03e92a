import Glibc
import IconrCore
import IconrRender
import IconrStyle

/// A picture of a style's icons where its features are: each point feature's icon, taken
/// from the built sprite sheet, drawn at its Web Mercator position and its `icon-size` on a
/// plain background. Not a map renderer: no labels, lines or collisions; a quick look at
/// what the sprite gives each feature.
package enum ScenePreview {
    /// The largest preview side in pixels (at the sheets' ratio); larger ones are refused
    /// before anything is allocated.
    package static let maxSide = 8192

    /// Draws `size` logical pixels around the style's `center` at its `zoom`, at the pixel
    /// ratio of `sheets` (which must hold every id `spriteID` gives), as PNG bytes.
    package static func png(
        style: StyleDocument, sheets: [SpriteSheetFile], size: PixelSize,
        spriteID: (ImageReference) -> String
    ) throws -> [UInt8] {
        guard let sheet = sheets.first else { throw StyleError(message: "no sprite sheet to draw from") }
        let ratio = sheet.ratio
        let width = Int(Double(size.width) * ratio), height = Int(Double(size.height) * ratio)
        guard width <= maxSide, height <= maxSide else {
            throw StyleError(
                message:
                    "a preview of \(size.width)x\(size.height) at \(ratio.shortText)x is \(width)x\(height) pixels, "
                    + "larger than the \(maxSide) px limit")
        }
        let sheetImages = try Dictionary(
            uniqueKeysWithValues: sheets.map { ($0.sheet, try PNGDecoder.decode($0.png, maxSize: $0.size)) })
        let center =
            style.json["center"]?.arrayValue.flatMap { values -> (Double, Double)? in
                guard values.count >= 2, case .number(let longitude) = values[0], case .number(let latitude) = values[1]
                else { return nil }
                return (longitude, latitude)
            } ?? (0, 0)
        let zoom: Double = if case .number(let value)? = style.json["zoom"] { value } else { 0 }
        let background = backgroundColor(style)
        var canvas = [Double](repeating: 0, count: width * height * 3)
        for index in 0..<(width * height) {
            canvas[index * 3] = Double(background.red)
            canvas[index * 3 + 1] = Double(background.green)
            canvas[index * 3 + 2] = Double(background.blue)
        }
        let world = 512 * pow(2, zoom) * ratio
        func project(_ longitude: Double, _ latitude: Double) -> (Double, Double) {
            let radians = latitude * .pi / 180
            return ((longitude + 180) / 360 * world, (1 - log(tan(radians) + 1 / cos(radians)) / .pi) / 2 * world)
        }
        let origin = project(center.0, center.1)
        let tileZoom = max(0, zoom.rounded(.down))
        for layer in style.layers where layer.tileZooms.contains(tileZoom) {
            for feature in layer.source.flatMap({ style.features[$0] }) ?? [] {
                guard let point = feature.point, layer.shows(feature.feature, zoom: zoom, context: style.context),
                    let image = layer.image(for: feature.feature, zoom: zoom, context: style.context)
                else { continue }
                let id = spriteID(ImageReference(image))
                guard let file = sheets.first(where: { $0.entries[id] != nil }), let entry = file.entries[id],
                    let source = sheetImages[file.sheet]
                else { continue }
                var iconSize = 1.0
                var context = style.context
                context.zoom = zoom
                context.feature = feature.feature
                if let expression = layer.iconSize, case .number(let value)? = try? expression.evaluate(context) {
                    iconSize = value
                }
                let scale = iconSize * ratio / entry.pixelRatio
                let (x, y) = project(point.longitude, point.latitude)
                let centreX = x - origin.0 + Double(width) / 2, centreY = y - origin.1 + Double(height) / 2
                // A size of 0 draws nothing, as renderers do; a centre or size no canvas can
                // hold (a latitude past the pole, a huge zoom or size) is off the preview.
                let limit = 1e7
                guard scale > 0, scale < 1_000, abs(centreX) < limit, abs(centreY) < limit else { continue }
                draw(
                    source, entry.rect, scale: scale, centreX: centreX, centreY: centreY, into: &canvas, width: width,
                    height: height)
            }
        }
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for index in 0..<(width * height) {
            for channel in 0..<3 {
                pixels[index * 4 + channel] = UInt8(max(0, min(255, canvas[index * 3 + channel].rounded())))
            }
        }
        return try PNGEncoder.encode(RasterImage(size: PixelSize(width: width, height: height), pixels: pixels))
    }

    /// Draws the `rect` of `sheet` scaled by `scale` (each output pixel averages the source
    /// pixels it covers) and centred on the point, over the canvas.
    private static func draw(
        _ sheet: RasterImage, _ rect: PixelRect, scale: Double, centreX: Double, centreY: Double,
        into canvas: inout [Double], width: Int, height: Int
    ) {
        let outWidth = max(1, Int((Double(rect.width) * scale).rounded())),
            outHeight = max(1, Int((Double(rect.height) * scale).rounded()))
        let left = Int((centreX - Double(outWidth) / 2).rounded()),
            top = Int((centreY - Double(outHeight) / 2).rounded())
        // Only the part on the canvas: most features of a large source are off it.
        let columns = max(0, -left)..<max(max(0, -left), min(outWidth, width - left))
        let rows = max(0, -top)..<max(max(0, -top), min(outHeight, height - top))
        for oy in rows {
            for ox in columns {
                let x = left + ox, y = top + oy
                // Clamped to the rect before the conversion: a tiny scale (an icon-size of 1e-300)
                // puts the source pixels past any Int.
                let sourceWidth = Double(rect.width), sourceHeight = Double(rect.height)
                let x0 = Int(min(sourceWidth, Double(ox) / scale))
                let x1 = max(x0 + 1, Int(min(sourceWidth, Double(ox + 1) / scale)))
                let y0 = Int(min(sourceHeight, Double(oy) / scale))
                let y1 = max(y0 + 1, Int(min(sourceHeight, Double(oy + 1) / scale)))
                var red = 0.0, green = 0.0, blue = 0.0, alpha = 0.0, count = 0.0
                for sy in y0..<max(y0, min(y1, rect.height)) {
                    for sx in x0..<max(x0, min(x1, rect.width)) {
                        let pixel = sheet[rect.x + sx, rect.y + sy]
                        let a = Double(pixel.alpha) / 255
                        red += Double(pixel.red) * a
                        green += Double(pixel.green) * a
                        blue += Double(pixel.blue) * a
                        alpha += a
                        count += 1
                    }
                }
                guard count > 0 else { continue }
                let coverage = alpha / count
                let index = (y * width + x) * 3
                canvas[index] = red / count + canvas[index] * (1 - coverage)
                canvas[index + 1] = green / count + canvas[index + 1] * (1 - coverage)
                canvas[index + 2] = blue / count + canvas[index + 2] * (1 - coverage)
            }
        }
    }

    private static func backgroundColor(_ style: StyleDocument) -> Color {
        for layer in style.json["layers"]?.arrayValue ?? [] where layer["type"]?.stringValue == "background" {
            if let text = layer["paint"]?["background-color"]?.stringValue, let color = Color(css: text) {
                return color
            }
        }
        return Color(red: 255, green: 255, blue: 255)
    }
}
