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
        "#" + hexText(alpha8 == 255 ? [red, green, blue] : [red, green, blue, alpha8])
    }

    /// A spelling every CSS parser (librsvg's included) reads: `#rrggbb` or `rgba(r,g,b,a)`.
    public var cssString: String {
        if alpha8 == 255 { return hexString }
        let a = (Double(alpha8) / 255 * 1000).rounded() / 1000
        return "rgba(\(red),\(green),\(blue),\(a))"
    }

    /// The canonical spelling, `hexString`.
    public var description: String { hexString }
}

extension Color {
    /// Parses a CSS color as the style specification does (`StyleColor(css:)`, the one
    /// parser): `#rgb`, `#rgba`, `#rrggbb`, `#rrggbbaa`, `rgb()`/`rgba()` with numbers or
    /// percentages, `hsl()`/`hsla()`, CSS named colors (case-insensitive) and `transparent`;
    /// channels rounded to 8 bits. Returns nil for anything else.
    public init?(css text: String) {
        guard let color = StyleColor(css: text)?.color else { return nil }
        self = color
    }
}
