/// An sRGB color with channels and alpha in 0...1, not premultiplied (the specification's
/// `Color` keeps them premultiplied; `premultiplied` gives that form).
public struct StyleColor: Sendable, Hashable {
    /// Red in 0...1.
    public var red: Double
    /// Green in 0...1.
    public var green: Double
    /// Blue in 0...1.
    public var blue: Double
    /// Opacity in 0...1.
    public var alpha: Double

    /// A color from its channels in 0...1, not premultiplied.
    public init(red: Double, green: Double, blue: Double, alpha: Double = 1) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// `[r, g, b, a]` premultiplied by alpha, as renderers and the test suite use colors.
    public var premultiplied: [Double] { [red * alpha, green * alpha, blue * alpha, alpha] }

    /// The nearest 8-bit color, for paints.
    public var color: Color {
        func unit(_ value: Double) -> Double { value.isNaN ? 0 : min(max(value, 0), 1) }
        func byte(_ value: Double) -> UInt8 { UInt8((unit(value) * 255).rounded()) }
        return Color(red: byte(red), green: byte(green), blue: byte(blue), alpha: unit(alpha))
    }
}

extension StyleColor {
    /// Parses a color as the style specification does (CSS Color 4): names, `transparent`,
    /// `#rgb[a]`, `#rrggbb[aa]`, `rgb[a]()` with numbers or percentages, comma or space
    /// separated with `/ alpha`, and `hsl[a]()`. Like Mapbox, saturation and lightness may be
    /// written without `%` (`hsla(0, 0, 0, 0)`, as Mapbox Standard does).
    public init?(css input: String) {
        let text = input.lowercased().trimmingJavaScriptWhitespace
        if let named = namedColors[text] {
            self.init(
                red: Double(named.red) / 255, green: Double(named.green) / 255, blue: Double(named.blue) / 255,
                alpha: named.alpha8 == 255 ? 1 : 0)
            return
        }
        if text.hasPrefix("#") {
            let digits = Array(text.utf8.dropFirst())
            guard [3, 4, 6, 8].contains(digits.count), digits.allSatisfy({ Self.hexValue($0) != nil }) else {
                return nil
            }
            let step = digits.count < 6 ? 1 : 2
            func channel(_ index: Int) -> Double {
                let start = index * step
                guard start < digits.count else { return 1 }
                let high = Self.hexValue(digits[start]) ?? 0
                let low = step == 2 ? Self.hexValue(digits[start + 1]) ?? 0 : high
                return Double(high * 16 + low) / 255
            }
            self.init(red: channel(0), green: channel(1), blue: channel(2), alpha: channel(3))
            return
        }
        guard let function = CSSFunction(text) else { return nil }
        func clamp(_ value: Double) -> Double { min(max(value, 0), 1) }
        let alpha = function.alpha.map { clamp($0.percent ? $0.value / 100 : $0.value) } ?? 1
        if function.name == "rgb" || function.name == "rgba" {
            let percents = function.values.map(\.percent)
            let maximum: Double
            if percents.allSatisfy({ $0 }) {
                maximum = 100
            } else if percents.allSatisfy({ !$0 }) {
                maximum = 255
            } else {
                return nil
            }
            let channels = function.values.map { clamp($0.value / maximum) }
            guard !(channels + [alpha]).contains(where: \.isNaN) else { return nil }
            self.init(red: channels[0], green: channels[1], blue: channels[2], alpha: alpha)
        } else {
            guard !function.values[0].percent else { return nil }
            let hue = function.values[0].value
            let saturation = min(max(function.values[1].value, 0), 100) / 100
            let lightness = min(max(function.values[2].value, 0), 100) / 100
            guard !([hue, saturation, lightness, alpha]).contains(where: \.isNaN) else { return nil }
            var h = hue.truncatingRemainder(dividingBy: 360)
            if h < 0 { h += 360 }
            func f(_ n: Double) -> Double {
                let k = (n + h / 30).truncatingRemainder(dividingBy: 12)
                let a = saturation * min(lightness, 1 - lightness)
                return lightness - a * max(-1, min(k - 3, 9 - k, 1))
            }
            self.init(red: f(0), green: f(8), blue: f(4), alpha: alpha)
        }
    }

    private static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a")) + 10
        default: nil
        }
    }
}

/// `rgb(...)`/`hsl(...)` split into three values and an optional alpha, with the separator
/// rules of CSS Color 4: all commas (`,` alpha) or all spaces (`/` alpha).
private struct CSSFunction {
    struct Number {
        var value: Double
        var percent: Bool
    }

    var name: String
    var values: [Number] = []
    var alpha: Number?

    init?(_ text: String) {
        guard let open = text.firstIndex(of: "("), text.hasSuffix(")") else { return nil }
        name = String(text[..<open])
        guard ["rgb", "rgba", "hsl", "hsla"].contains(name) else { return nil }
        let isHSL = name.hasPrefix("hsl")
        var scanner = Array(text[text.index(after: open)..<text.index(before: text.endIndex)].unicodeScalars)[...]
        func skipSpaces() -> Bool {
            var skipped = false
            while let first = scanner.first,
                first == " " || first == "\t" || first == "\n" || first == "\r" || first == "\u{0C}"
            {
                scanner.removeFirst()
                skipped = true
            }
            return skipped
        }
        func number() -> Number? {
            var token = ""
            while let first = scanner.first, "0123456789e.+-".unicodeScalars.contains(first) {
                token.unicodeScalars.append(first)
                scanner.removeFirst()
            }
            guard !token.isEmpty else { return nil }
            var percent = false
            if scanner.first == "%" {
                scanner.removeFirst()
                percent = true
            }
            return Number(value: Double(token) ?? .nan, percent: percent)
        }
        _ = skipSpaces()
        var separators: [String] = []
        for index in 0..<3 {
            guard var value = number() else { return nil }
            if isHSL && index == 0, scanner.starts(with: "deg".unicodeScalars) { scanner.removeFirst(3) }
            if isHSL && index > 0 { value.percent = false }
            values.append(value)
            if index < 2 {
                let spaced = skipSpaces()
                if scanner.first == "," {
                    scanner.removeFirst()
                    _ = skipSpaces()
                    separators.append(",")
                } else if spaced {
                    separators.append(" ")
                } else {
                    return nil
                }
            }
        }
        _ = skipSpaces()
        if let first = scanner.first, first == "," || first == "/" {
            scanner.removeFirst()
            _ = skipSpaces()
            guard let alpha = number() else { return nil }
            self.alpha = alpha
            separators.append(String(first))
            _ = skipSpaces()
        }
        guard scanner.isEmpty else { return nil }
        let format = separators.joined()
        guard ["  ", "  /", ",,", ",,,"].contains(format) else { return nil }
    }
}
