/// Colors by parameter name: what a template's parameters are set to. Parsed once where text
/// comes in (a command line, a URL, a variants file) and colors from then on, never turned
/// back into text on the way to the drawing.
///
/// ```swift
/// let params = try IconParameters(parsing: ["flag_color": "#800080"])
/// ```
public struct IconParameters: Hashable, Sendable {
    /// The color each parameter is set to, by parameter name.
    public var colors: [String: Color]

    /// Parameters from colors already parsed (none: every parameter keeps its default).
    public init(_ colors: [String: Color] = [:]) {
        self.colors = colors
    }

    /// Parses color text in the style specification's syntax (`red`, `#800080`,
    /// `rgb(128, 0, 128)`, `hsla(...)`), and hex without `#` (`800080`), as sprite ids
    /// write it and as URLs carry it (where `#` would start the fragment).
    /// - Throws: `ParameterError` naming the parameter and the value that is not a color.
    public init(parsing text: [String: String]) throws(ParameterError) {
        var colors: [String: Color] = [:]
        // In name order, so that the error names the same parameter every time.
        for (name, value) in text.sorted(by: { $0.key < $1.key }) {
            guard let color = Self.color(value) else { throw ParameterError(name: name, value: value) }
            colors[name] = color
        }
        self.colors = colors
    }

    /// `text` as a color: CSS syntax, or 3, 4, 6 or 8 hex digits without `#`.
    public static func color(_ text: String) -> Color? {
        if let color = Color(css: text) { return color }
        let digits = text.trimmingASCIIWhitespace
        guard [3, 4, 6, 8].contains(digits.count), digits.allSatisfy(\.isHexDigit) else { return nil }
        return Color(css: "#" + digits)
    }

    /// Whether no parameter is set.
    public var isEmpty: Bool { colors.isEmpty }
}
