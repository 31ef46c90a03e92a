/// An sRGB color with 8-bit channels and an alpha in 0...1, as the style specification
/// and SVG paints use it.
public struct Color: Hashable, Sendable, CustomStringConvertible {
    /// The red channel, 0...255.
    public var red: UInt8
    /// The green channel, 0...255.
    public var green: UInt8
    /// The blue channel, 0...255.
    public var blue: UInt8
    /// Opacity in 0 (transparent) ... 255 (opaque), quantized like the channels so that
    /// colors that render the same compare equal.
    public var alpha8: UInt8

    /// `alpha` is an opacity in 0...1.
    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: Double = 1) {
        self.red = red
        self.green = green
        self.blue = blue
        alpha8 = alpha.isNaN ? 0 : UInt8((min(max(alpha, 0), 1) * 255).rounded())
    }

    /// Opacity in 0...1.
    public var alpha: Double { Double(alpha8) / 255 }

    /// Opaque black.
    public static let black = Color(red: 0, green: 0, blue: 0)

    /// The 24-bit RGB part, the value parameters are matched on.
    public var rgb: UInt32 { UInt32(red) << 16 | UInt32(green) << 8 | UInt32(blue) }

    /// The canonical spelling: `#rrggbb` when opaque, else `#rrggbbaa`.
    public var hexString: String {
        let hex = "#" + [red, green, blue].map(Self.twoHexDigits).joined()
        return alpha8 == 255 ? hex : hex + Self.twoHexDigits(alpha8)
    }

    /// A spelling every CSS parser (librsvg's included) reads: `#rrggbb` or `rgba(r,g,b,a)`.
    public var cssString: String {
        if alpha8 == 255 { return hexString }
        let a = (Double(alpha8) / 255 * 1000).rounded() / 1000
        return "rgba(\(red),\(green),\(blue),\(a))"
    }

    /// The canonical spelling, `hexString`.
    public var description: String { hexString }

    private static func twoHexDigits(_ value: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(value >> 4)], digits[Int(value & 15)]])
    }
}

extension Color {
    /// Parses the style specification's color syntax: `#rgb`, `#rgba`, `#rrggbb`, `#rrggbbaa`,
    /// `rgb()`/`rgba()` with numbers or percentages, `hsl()`/`hsla()`, CSS named colors
    /// (case-insensitive) and `transparent`. Returns nil for anything else.
    public init?(css text: String) {
        let trimmed = text.trimmingASCIIWhitespace.lowercased()
        if trimmed.hasPrefix("#") {
            guard let color = Self.parseHex(trimmed.dropFirst()) else { return nil }
            self = color
        } else if let open = trimmed.firstIndex(of: "("), trimmed.hasSuffix(")") {
            let function = String(trimmed[..<open].trimmingASCIIWhitespace)
            let body = trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)]
            guard let color = Self.parseFunction(function, arguments: String(body)) else { return nil }
            self = color
        } else if let named = namedColors[trimmed] {
            self = named
        } else {
            return nil
        }
    }

    private static func parseHex(_ digits: Substring) -> Color? {
        guard [3, 4, 6, 8].contains(digits.count),
            digits.allSatisfy(\.isHexDigit),
            let value = UInt32(digits, radix: 16)
        else { return nil }
        func nibble(_ shift: UInt32) -> UInt8 { UInt8((value >> shift) & 0xF) * 17 }
        func byte(_ shift: UInt32) -> UInt8 { UInt8((value >> shift) & 0xFF) }
        switch digits.count {
        case 3: return Color(red: nibble(8), green: nibble(4), blue: nibble(0))
        case 4: return Color(red: nibble(12), green: nibble(8), blue: nibble(4), alpha: Double(nibble(0)) / 255)
        case 6: return Color(red: byte(16), green: byte(8), blue: byte(0))
        default: return Color(red: byte(24), green: byte(16), blue: byte(8), alpha: Double(byte(0)) / 255)
        }
    }

    /// `rgb(255, 0, 0)`, `rgba(100%, 0%, 0%, 0.5)`, `rgb(255 0 0 / 50%)`, `hsl(120, 100%, 50%)`, ...
    private static func parseFunction(_ name: String, arguments: String) -> Color? {
        guard ["rgb", "rgba", "hsl", "hsla"].contains(name) else { return nil }
        let parts = splitArguments(arguments)
        guard parts.count == 3 || parts.count == 4 else { return nil }
        let alpha: Double
        if parts.count == 4 {
            guard let value = number(parts[3], percentScale: 1) else { return nil }
            alpha = value
        } else {
            alpha = 1
        }
        if name.hasPrefix("rgb") {
            // CSS forbids mixing numbers and percentages among r, g, b.
            let percents = parts[0..<3].filter { $0.hasSuffix("%") }.count
            guard percents == 0 || percents == 3 else { return nil }
            var channels: [UInt8] = []
            for part in parts[0..<3] {
                guard let value = number(part, percentScale: 255) else { return nil }
                channels.append(UInt8(min(max(value, 0), 255).rounded()))
            }
            return Color(red: channels[0], green: channels[1], blue: channels[2], alpha: alpha)
        }
        guard
            let hueDegrees = number(
                parts[0].hasSuffix("deg") ? String(parts[0].dropLast(3)) : parts[0], percentScale: nil),
            parts[1].hasSuffix("%"), parts[2].hasSuffix("%"),
            let saturation = number(parts[1], percentScale: 1),
            let lightness = number(parts[2], percentScale: 1)
        else { return nil }
        return fromHSL(hue: hueDegrees, saturation: saturation, lightness: lightness, alpha: alpha)
    }

    /// Splits on commas, or on spaces with an optional `/ alpha` (CSS Color 4).
    private static func splitArguments(_ arguments: String) -> [String] {
        if arguments.contains(Character(",")) {
            return arguments.split(separator: ",", omittingEmptySubsequences: false)
                .map { String($0.trimmingASCIIWhitespace) }
        }
        let halves = arguments.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count <= 2 else { return [] }
        var parts = halves[0].split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        if halves.count == 2 { parts.append(String(halves[1].trimmingASCIIWhitespace)) }
        return parts
    }

    /// A CSS number, or a percentage scaled to `percentScale` (nil: percentages not allowed).
    private static func number(_ text: String, percentScale: Double?) -> Double? {
        if text.hasSuffix("%") {
            guard let scale = percentScale, let value = Double(text.dropLast()), value.isFinite else { return nil }
            return min(max(value, 0), 100) / 100 * scale
        }
        guard let value = Double(text), value.isFinite, !text.contains(where: { $0.isLetter && $0 != "e" }) else {
            return nil
        }
        return percentScale == 1 ? min(max(value, 0), 1) : value
    }

    private static func fromHSL(hue: Double, saturation: Double, lightness: Double, alpha: Double) -> Color {
        let h = (hue.truncatingRemainder(dividingBy: 360) + 360).truncatingRemainder(dividingBy: 360) / 360
        let s = min(max(saturation, 0), 1), l = min(max(lightness, 0), 1)
        let m2 = l <= 0.5 ? l * (s + 1) : l + s - l * s
        let m1 = l * 2 - m2
        func channel(_ h0: Double) -> UInt8 {
            var h = h0
            if h < 0 { h += 1 } else if h > 1 { h -= 1 }
            let v: Double
            if h * 6 < 1 {
                v = m1 + (m2 - m1) * h * 6
            } else if h * 2 < 1 {
                v = m2
            } else if h * 3 < 2 {
                v = m1 + (m2 - m1) * (2.0 / 3 - h) * 6
            } else {
                v = m1
            }
            return UInt8((v * 255).rounded())
        }
        return Color(red: channel(h + 1.0 / 3), green: channel(h), blue: channel(h - 1.0 / 3), alpha: alpha)
    }
}
