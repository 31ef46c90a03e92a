import Glibc

/// A theme's recoloring beyond color maps, applied to every paint in this order (VersaTiles'
/// recolor options, where they overlap): lightness inverted (`invert`), hue rotated, saturation,
/// gamma, contrast, brightness, and a tint. Each is identity at its default.
public struct ColorAdjustments: Hashable, Sendable {
    /// Lightness inverted in OKLab, a perceptual space, its hue and chroma kept (chroma reduced
    /// only as far as the color needs to stay in sRGB): black and white swap, pure red becomes a
    /// dark red, mid grays stay about where they are.
    public var invert = false
    /// Degrees the hue turns (HSL), 0 for none.
    public var hue = 0.0
    /// Saturation change (HSL): -1 is gray, 0 none, 1 double.
    public var saturate = 0.0
    /// Each channel becomes 255 x (c / 255)^gamma: 1 is none, below 1 lighter mid tones.
    public var gamma = 1.0
    /// Each channel is scaled around the middle, (c - 127.5) x contrast + 127.5: 1 is none.
    public var contrast = 1.0
    /// Each channel moves toward white (positive, up to 1) or black (negative, down to -1).
    public var brightness = 0.0
    /// A color whose hue the paints take by `tintAmount` (0 none, 1 its hue in full).
    public var tint: Color?
    /// How much of `tint`'s hue, 0 to 1.
    public var tintAmount = 0.0

    /// No change.
    public init() {}

    /// Whether any adjustment changes a color.
    public var isIdentity: Bool { self == ColorAdjustments() }

    /// The members of a theme file that set these: `invert`, `hue`, `saturate`, `gamma`,
    /// `contrast`, `brightness`, `tint` (`{"color": "#c00", "amount": 0.5}`).
    public static let members = ["invert", "hue", "saturate", "gamma", "contrast", "brightness", "tint"]

    /// `color` adjusted, its alpha kept.
    public func apply(_ color: Color) -> Color {
        guard !isIdentity else { return color }
        var rgb = (Double(color.red), Double(color.green), Double(color.blue))
        if invert { rgb = Self.invertingLightness(rgb) }
        if hue != 0 || saturate != 0 {
            var hsl = Self.hsl(rgb)
            hsl.h = (hsl.h + hue).truncatingRemainder(dividingBy: 360)
            if hsl.h < 0 { hsl.h += 360 }
            hsl.s = min(1, max(0, hsl.s * (1 + saturate)))
            rgb = Self.rgb(hsl)
        }
        func each(_ transform: (Double) -> Double) {
            rgb = (transform(rgb.0), transform(rgb.1), transform(rgb.2))
        }
        if gamma != 1 { each { 255 * pow(max(0, $0) / 255, gamma) } }
        if contrast != 1 { each { ($0 - 127.5) * contrast + 127.5 } }
        if brightness != 0 {
            let keep = 1 - abs(brightness), add = brightness > 0 ? 255 * brightness : 0
            each { $0 * keep + add }
        }
        if let tint, tintAmount > 0 {
            // This color with the tint's hue (HSV), mixed in by the amount.
            let target = Self.withHue(of: (Double(tint.red), Double(tint.green), Double(tint.blue)), rgb)
            rgb = (
                rgb.0 + (target.0 - rgb.0) * tintAmount, rgb.1 + (target.1 - rgb.1) * tintAmount,
                rgb.2 + (target.2 - rgb.2) * tintAmount
            )
        }
        func channel(_ value: Double) -> UInt8 { UInt8(min(255, max(0, value.rounded()))) }
        return Color(red: channel(rgb.0), green: channel(rgb.1), blue: channel(rgb.2), alpha: color.alpha)
    }

    /// Reads the adjustment members of a theme file's `members` (each optional).
    init(members: [String: JSONValue]) throws(ThemeError) {
        func number(_ name: String, in range: ClosedRange<Double>) throws(ThemeError) -> Double? {
            guard let value = members[name] else { return nil }
            guard case .number(let number) = value, range.contains(number) else {
                throw ThemeError(
                    message:
                        "\(name): expected a number from \(range.lowerBound.shortText) to \(range.upperBound.shortText), found \(value.serialized)"
                )
            }
            return number
        }
        if let invert = members["invert"] {
            guard case .bool(let value) = invert else { throw ThemeError(message: "invert: expected true or false") }
            self.invert = value
        }
        hue = try number("hue", in: -360...360) ?? 0
        saturate = try number("saturate", in: -1...10) ?? 0
        gamma = try number("gamma", in: 0.01...100) ?? 1
        contrast = try number("contrast", in: 0...100) ?? 1
        brightness = try number("brightness", in: -1...1) ?? 0
        if let tint = members["tint"] {
            guard case .object(let fields) = tint, let text = fields["color"]?.stringValue,
                let color = Color(css: text), fields.keys.allSatisfy({ $0 == "color" || $0 == "amount" })
            else {
                throw ThemeError(message: #"tint: expected {"color": a color, "amount": 0 to 1}"#)
            }
            guard case .number(let amount)? = fields["amount"] ?? .number(1), (0...1).contains(amount) else {
                throw ThemeError(message: "tint.amount: expected a number from 0 to 1")
            }
            self.tint = color
            tintAmount = amount
        }
    }

    /// The adjustments as text for cache keys (empty when none).
    var keyText: String {
        guard !isIdentity else { return "" }
        return "invert=\(invert);hue=\(hue.shortText);saturate=\(saturate.shortText);gamma=\(gamma.shortText);"
            + "contrast=\(contrast.shortText);brightness=\(brightness.shortText);"
            + "tint=\(tint?.hexString ?? "-")@\(tintAmount.shortText);"
    }

    // MARK: Color spaces

    /// sRGB (0-255) to OKLab, lightness inverted, and back, chroma reduced until in gamut.
    static func invertingLightness(_ rgb: (Double, Double, Double)) -> (Double, Double, Double) {
        func linear(_ c: Double) -> Double {
            let v = c / 255
            return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
        }
        func encoded(_ v: Double) -> Double {
            255 * (v <= 0.0031308 ? 12.92 * v : 1.055 * pow(v, 1 / 2.4) - 0.055)
        }
        let (r, g, b) = (linear(rgb.0), linear(rgb.1), linear(rgb.2))
        let l = cbrt(0.4122214708 * r + 0.5363325363 * g + 0.0514459929 * b)
        let m = cbrt(0.2119034982 * r + 0.6806995451 * g + 0.1073969566 * b)
        let s = cbrt(0.0883024619 * r + 0.2817188376 * g + 0.6299787005 * b)
        let lightness = 1 - (0.2104542553 * l + 0.7936177850 * m - 0.0040720468 * s)
        let a = 1.9779984951 * l - 2.4285922050 * m + 0.4505937099 * s
        let bb = 0.0259040371 * l + 0.7827717662 * m - 0.8086757660 * s
        func back(_ chroma: Double) -> (Double, Double, Double) {
            let l3 = pow(lightness + (0.3963377774 * a + 0.2158037573 * bb) * chroma, 3)
            let m3 = pow(lightness - (0.1055613458 * a + 0.0638541728 * bb) * chroma, 3)
            let s3 = pow(lightness - (0.0894841775 * a + 1.2914855480 * bb) * chroma, 3)
            return (
                4.0767416621 * l3 - 3.3077115913 * m3 + 0.2309699292 * s3,
                -1.2684380046 * l3 + 2.6097574011 * m3 - 0.3413193965 * s3,
                -0.0041960863 * l3 - 0.7034186147 * m3 + 1.7076147010 * s3
            )
        }
        func inGamut(_ c: (Double, Double, Double)) -> Bool {
            [c.0, c.1, c.2].allSatisfy { $0 >= -0.0005 && $0 <= 1.0005 }
        }
        var chroma = 1.0
        if !inGamut(back(1)) {
            var low = 0.0, high = 1.0
            for _ in 0..<24 {
                let middle = (low + high) / 2
                if inGamut(back(middle)) { low = middle } else { high = middle }
            }
            chroma = low
        }
        let result = back(chroma)
        return (
            encoded(min(1, max(0, result.0))), encoded(min(1, max(0, result.1))), encoded(min(1, max(0, result.2)))
        )
    }

    /// Hue in degrees, saturation and lightness in 0...1.
    static func hsl(_ rgb: (Double, Double, Double)) -> (h: Double, s: Double, l: Double) {
        let r = rgb.0 / 255, g = rgb.1 / 255, b = rgb.2 / 255
        let high = max(r, g, b), low = min(r, g, b), delta = high - low
        let l = (high + low) / 2
        guard delta > 0 else { return (0, 0, l) }
        let s = l <= 0.5 ? delta / (high + low) : delta / (2 - high - low)
        var h: Double
        if high == r {
            h = (g - b) / delta
        } else if high == g {
            h = 2 + (b - r) / delta
        } else {
            h = 4 + (r - g) / delta
        }
        h *= 60
        if h < 0 { h += 360 }
        return (h, s, l)
    }

    /// `hsl` back to sRGB (0-255).
    static func rgb(_ hsl: (h: Double, s: Double, l: Double)) -> (Double, Double, Double) {
        let c = (1 - abs(2 * hsl.l - 1)) * hsl.s
        let x = c * (1 - abs((hsl.h / 60).truncatingRemainder(dividingBy: 2) - 1))
        let m = hsl.l - c / 2
        let (r, g, b) = sector(hsl.h, c, x)
        return ((r + m) * 255, (g + m) * 255, (b + m) * 255)
    }

    /// `rgb` with the HSV hue of `source` (its HSV saturation and value kept).
    static func withHue(
        of source: (Double, Double, Double), _ rgb: (Double, Double, Double)
    ) -> (Double, Double, Double) {
        func hsv(_ c: (Double, Double, Double)) -> (h: Double, s: Double, v: Double) {
            let high = max(c.0, c.1, c.2), low = min(c.0, c.1, c.2), delta = high - low
            let hue = hsl(c).h
            return (hue, high > 0 ? delta / high : 0, high)
        }
        let target = hsv(source), own = hsv(rgb)
        // HSV to RGB with the target's hue.
        let c = own.v * own.s, x = c * (1 - abs((target.h / 60).truncatingRemainder(dividingBy: 2) - 1)), m = own.v - c
        let (r, g, b) = sector(target.h, c, x)
        return (r + m, g + m, b + m)
    }

    /// The red, green and blue of a hue's sextant, from its chroma `c` and second part `x`.
    private static func sector(_ hue: Double, _ c: Double, _ x: Double) -> (Double, Double, Double) {
        switch hue {
        case ..<60: (c, x, 0)
        case ..<120: (x, c, 0)
        case ..<180: (0, c, x)
        case ..<240: (0, x, c)
        case ..<300: (x, 0, c)
        default: (c, 0, x)
        }
    }
}
