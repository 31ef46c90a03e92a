import Iconr
import IconrCore
import IconrTestSupport
import Testing

/// A parameter given to a themed icon recolors only the paints it binds in the file, as
/// without a theme: a themed variant is the theme applied to the variant's other paints.
/// After a theme, paints that were apart may share a color (one `paint` for all, grayscale),
/// so matching the parameter against the themed document would recolor them too.
struct ThemedParameterTests {
    /// A flag whose pole (#5a5a5a) and cloth (the parameter's default, black) differ, its
    /// stroke white, drawn large enough for clean samples.
    static let flag = """
        <svg xmlns="http://www.w3.org/2000/svg" xmlns:m="https://www.mapbox.com" width="24" height="24">
          <m:metadata><m:parameters>
            <m:parameter m:name="flag_color" m:type="color" m:value="#000000"/>
            <m:parameter m:name="ring" m:type="color" m:value="#00ff00"/>
          </m:parameters></m:metadata>
          <rect x="2" y="2" width="4" height="20" fill="#5a5a5a"/>
          <rect x="8" y="2" width="14" height="10" fill="#000000"/>
          <rect x="8" y="14" width="14" height="8" fill="#00ff00"/>
        </svg>
        """

    /// The same flag as a person would theme it by hand for `theme`'s rules, with the given
    /// values on the paints they bind: the oracle.
    static func handThemed(pole: String, cloth: String, ring: String) -> String {
        flag.replacingOccurrences(of: "fill=\"#5a5a5a\"", with: "fill=\"\(pole)\"")
            .replacingOccurrences(of: "height=\"10\" fill=\"#000000\"", with: "height=\"10\" fill=\"\(cloth)\"")
            .replacingOccurrences(of: "height=\"8\" fill=\"#00ff00\"", with: "height=\"8\" fill=\"\(ring)\"")
    }

    static func theme(_ json: String) throws -> Theme {
        try Theme(json: Array(json.utf8), fallbackName: "t")
    }

    /// Each row: a theme, the params given, and the colors of pole, cloth and ring a person
    /// would paint. Pixels equal exactly (every shape is opaque and pixel-aligned).
    @Test(
        arguments: [
            // One paint for all: pole and both defaults become one color; red binds only the cloth.
            (##"{"paint": "#777777"}"##, ["flag_color": "red"], ("#777777", "#ff0000", "#777777")),
            (##"{"paint": "#777777"}"##, ["ring": "blue"], ("#777777", "#777777", "#0000ff")),
            // Grayscale: the pole stays grey, the cloth takes the given color as it is.
            (##"{"grayscale": true}"##, ["flag_color": "#5a5a5a"], ("#5a5a5a", "#5a5a5a", "#b6b6b6")),
            (##"{"grayscale": true}"##, ["flag_color": "red", "ring": "red"], ("#5a5a5a", "#ff0000", "#ff0000")),
            // A mapping that sends the pole onto the cloth's default.
            (##"{"colors": {"#5a5a5a": "#000000"}}"##, ["flag_color": "#ffcc00"], ("#000000", "#ffcc00", "#00ff00")),
            // The parameter given its file default: drawn in it, though the theme changed the default.
            (##"{"paint": "#777777"}"##, ["flag_color": "#000000"], ("#777777", "#000000", "#777777")),
            // A theme's own parameter value, overridden by the one given.
            (##"{"params": {"flag_color": "#123456"}}"##, ["flag_color": "#654321"], ("#5a5a5a", "#654321", "#00ff00")),
            (##"{"params": {"flag_color": "#123456"}}"##, [:], ("#5a5a5a", "#123456", "#00ff00")),
        ] as [(String, [String: String], (String, String, String))])
    func aThemedVariantIsTheThemeAppliedToTheOtherPaints(
        row: (theme: String, params: [String: String], colors: (pole: String, cloth: String, ring: String))
    ) throws {
        let theme = try Self.theme(row.theme)
        let themed = try TestSupport.template(Self.flag, name: "flag").themed(theme)
        let drawn = try themed.render(params: row.params, scale: 2).image
        let expected = try TestSupport.template(
            Self.handThemed(pole: row.colors.pole, cloth: row.colors.cloth, ring: row.colors.ring), name: "hand"
        ).render(scale: 2).image
        #expect(TestSupport.maxChannelDifference(drawn, expected) == 0, "\(row.theme) \(row.params)")
        // The same variant through the cache's one path, and the plain icon's is another key.
        let renderer = IconRenderer(cache: IconCache(memoryLimit: 1 << 20))
        let cached = try renderer.variant(of: themed, params: try IconParameters(parsing: row.params), scale: 2)
        #expect(TestSupport.maxChannelDifference(cached.image, expected) == 0)
        let plain = try TestSupport.template(Self.flag, name: "flag")
        #expect(
            plain.key(plain.resolve(try IconParameters(parsing: row.params)), scale: 2)
                != themed.key(themed.resolve(try IconParameters(parsing: row.params)), scale: 2))
    }

    /// Two files the same theme makes byte-identical (every paint one color) still draw
    /// their own variants: the themed key names the file's digest, not the themed bytes'.
    @Test func twoFilesOneThemedDocumentAreKeyedApart() throws {
        let theme = try Self.theme(##"{"paint": "#777777"}"##)
        let a = try TestSupport.template(Self.flag, name: "flag").themed(theme)
        let bound = Self.flag.replacingOccurrences(of: "fill=\"#5a5a5a\"", with: "fill=\"#000000\"")
        let b = try TestSupport.template(bound, name: "flag").themed(theme)
        #expect(a.template.bytes == b.template.bytes)
        let red = try IconParameters(parsing: ["flag_color": "red"])
        #expect(a.key(a.resolve(red), scale: 1) != b.key(b.resolve(red), scale: 1))
        let renderer = IconRenderer(cache: IconCache(memoryLimit: 1 << 20))
        let poleA = try renderer.variant(of: a, params: red, scale: 2).image[6, 30]
        let poleB = try renderer.variant(of: b, params: red, scale: 2).image[6, 30]
        #expect(poleA.red == 0x77 && poleB.red == 0xff)
    }
}
