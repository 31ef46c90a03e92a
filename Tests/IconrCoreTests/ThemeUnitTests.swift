import Foundation
import Testing

@testable import IconrCore

/// `Theme`: how a theme file reads, how a color maps, and what its document rewrite changes.
struct ThemeUnitTests {
    static func theme(_ json: String) throws -> Theme {
        try Theme(json: Array(json.utf8), fallbackName: "file")
    }

    @Test func aThemeFileReadsAndItsMistakesAreNamed() throws {
        let theme = try Self.theme(
            ##"{"name": "dark", "colors": {"#000000": "#ffffff", "red": "#808080"}, "tolerance": 8, "params": {"flag_color": "gold"}}"##
        )
        #expect(theme.name == "dark" && theme.tolerance == 8 && theme.colors.count == 2)
        #expect(theme.params["flag_color"] == Color(css: "gold"))
        #expect(try Self.theme("{}").name == "file")
        // Spelled twice, mapped alike: one mapping's meaning, accepted.
        #expect(try Self.theme(##"{"colors": {"#000": "#fff", "black": "white"}}"##).colors.count == 2)
        let mistakes: [(String, String)] = [
            ("[]", "expected a JSON object"),
            (##"{"colour": {}}"##, "unknown member \"colour\" (did you mean 'colors'?)"),
            (##"{"colors": {"#000": "nope"}}"##, "colors.#000: expected a color"),
            (##"{"tolerance": 1.5}"##, "tolerance: expected a whole number from 0 to 255"),
            (##"{"name": "2x"}"##, "name \"2x\": a letter, then"),
            (##"{"grayscale": "yes"}"##, "grayscale: expected true or false"),
            // Two spellings of one color mapped to two colors: which wins is no file's intent.
            (
                ##"{"colors": {"#000": "#fff", "black": "#111"}}"##,
                "colors \"#000\" and \"black\" are one color, #000000, mapped to two"
            ),
        ]
        for (json, message) in mistakes {
            let error = try #require(throws: ThemeError.self) { try Self.theme(json) }
            #expect(error.message.hasPrefix(message), "\(json): \(error.message)")
        }
    }

    @Test func colorsMapByTheFirstRuleWithinTolerancePaintWinsAndAlphaIsKept() throws {
        let theme = try Self.theme(##"{"colors": {"#000000": "#ffffff", "#000010": "#ff0000"}, "tolerance": 4}"##)
        #expect(theme.map(Color(red: 3, green: 0, blue: 2)) == Color(red: 255, green: 255, blue: 255))
        #expect(theme.map(Color(red: 0, green: 0, blue: 0x10)) == Color(red: 255, green: 0, blue: 0))
        #expect(theme.map(Color(red: 9, green: 0, blue: 0)) == Color(red: 9, green: 0, blue: 0))
        #expect(
            theme.map(Color(red: 0, green: 0, blue: 0, alpha: 0.5))
                == Color(red: 255, green: 255, blue: 255, alpha: 0.5))
        let paint = try Self.theme(##"{"paint": "#777777", "colors": {"#000000": "#ffffff"}}"##)
        #expect(paint.map(.black) == Color(red: 0x77, green: 0x77, blue: 0x77))
        let gray = try #require(Theme.builtIn("grayscale"))
        // Rec. 709 luminance of pure red, green and blue.
        #expect(gray.map(Color(red: 255, green: 0, blue: 0)) == Color(red: 54, green: 54, blue: 54))
        #expect(gray.map(Color(red: 0, green: 255, blue: 0)) == Color(red: 182, green: 182, blue: 182))
        #expect(gray.map(Color(red: 0, green: 0, blue: 255)) == Color(red: 18, green: 18, blue: 18))
    }

    /// Every declared paint, the initial black and a parameter's default (its `m:value`
    /// too, so that the parameter still finds its paints) are rewritten; the theme's own
    /// parameter value wins over its mapped default.
    @Test func theDocumentIsRewrittenWhereverAPaintIsDeclared() throws {
        let svg = ##"""
            <svg xmlns="http://www.w3.org/2000/svg" xmlns:m="https://www.mapbox.com" width="8" height="8"><m:metadata><m:parameters><m:parameter m:name="a" m:type="color" m:value="#00ff00"/><m:parameter m:name="b" m:type="color" m:value="#0000ff"/></m:parameters></m:metadata><style>.s { stroke: #000000 }</style><rect width="8" height="8"/><rect fill="rgba(0,0,0,0.5)" width="4" height="4" style="stroke:black"/><rect fill="#00ff00" width="2" height="2"/><rect fill="#0000ff" width="1" height="1"/></svg>
            """##
        let template = try SVGTemplate(bytes: Array(svg.utf8))
        let theme = try Self.theme(
            ##"{"colors": {"#000000": "#ffffff", "#00ff00": "#008000"}, "params": {"b": "#ff00ff"}}"##)
        let themed = String(decoding: theme.apply(to: template), as: UTF8.self)
        #expect(themed.contains(##"height="8" fill="#ffffff""##), "the root's initial black: \(themed)")
        #expect(themed.contains(".s { stroke: #ffffff }") && themed.contains("stroke:#ffffff"))
        #expect(themed.contains(##"fill="rgba(255,255,255,0.502)""##), "the paint's alpha kept: \(themed)")
        #expect(themed.contains(##"m:value="#008000""##) && themed.contains(##"fill="#008000""##))
        #expect(themed.contains(##"m:value="#ff00ff""##) && themed.contains(##"fill="#ff00ff""##))
        let reparsed = try SVGTemplate(bytes: Array(themed.utf8))
        #expect(reparsed.parameters.map(\.defaultColor) == [Color(css: "#008000"), Color(css: "#ff00ff")])
        #expect(Theme.paints(of: reparsed).isSuperset(of: [0xFFFFFF, 0x008000, 0xFF00FF]))
        #expect(!Theme.paints(of: reparsed).contains(0x000000))
    }

    /// Beyond color maps: each adjustment on colors whose answer is known, in VersaTiles'
    /// order and meanings; lightness inverted in OKLab keeps the hue.
    @Test(
        arguments: [
            (##"{"invert": true}"##, "#000000", "#ffffff"),
            (##"{"invert": true}"##, "#ffffff", "#000000"),
            (##"{"hue": 120}"##, "#ff0000", "#00ff00"),
            (##"{"hue": -120}"##, "#ff0000", "#0000ff"),
            (##"{"saturate": -1}"##, "#ff0000", "#808080"),
            (##"{"gamma": 2}"##, "#808080", "#404040"),
            (##"{"contrast": 2}"##, "#c0c0c0", "#ffffff"),
            (##"{"contrast": 0}"##, "#123456", "#808080"),
            (##"{"brightness": 0.5}"##, "#000000", "#808080"),
            (##"{"brightness": -0.5}"##, "#ffffff", "#808080"),
            (##"{"tint": {"color": "#0000ff", "amount": 1}}"##, "#ff0000", "#0000ff"),
            (##"{"tint": {"color": "#0000ff", "amount": 0.5}}"##, "#ff0000", "#800080"),
            (##"{"tint": {"color": "#0000ff"}}"##, "#808080", "#808080"),
            // After colors, before grayscale.
            (##"{"colors": {"#000000": "#ff0000"}, "hue": 120, "grayscale": true}"##, "#000000", "#b6b6b6"),
        ] as [(String, String, String)])
    func adjustmentsRecolorAsDocumented(theme: String, from: String, to: String) throws {
        let mapped = try Self.theme(theme).map(try #require(Color(css: from)))
        #expect(mapped.hexString == to, "\(theme): \(from)")
    }

    @Test func invertingLightnessKeepsTheHue() throws {
        let theme = try Self.theme(##"{"invert": true}"##)
        for text in ["#ff0000", "#1e90ff", "#2e8b57", "#800080"] {
            let color = try #require(Color(css: text))
            let inverted = theme.map(color)
            func hue(_ c: Color) -> Double {
                ColorAdjustments.hsl((Double(c.red), Double(c.green), Double(c.blue))).h
            }
            let turn = abs(hue(inverted) - hue(color))
            #expect(min(turn, 360 - turn) < 12, "\(text) -> \(inverted.hexString)")
            // Perceived lightness (CIE L*, from linear luminance): a light color turns dark.
            func lightness(_ c: Color) -> Double {
                func linear(_ v: UInt8) -> Double {
                    let x = Double(v) / 255
                    return x <= 0.04045 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4)
                }
                let y = 0.2126 * linear(c.red) + 0.7152 * linear(c.green) + 0.0722 * linear(c.blue)
                return y > 0.008856 ? 116 * pow(y, 1.0 / 3) - 16 : 903.3 * y
            }
            #expect((lightness(color) < 50) == (lightness(inverted) > lightness(color)), "\(text)")
        }
        let half = theme.map(Color(red: 0, green: 0, blue: 0, alpha: 0.5))
        #expect(half.red == 255 && abs(half.alpha - 0.5) < 0.01, "alpha kept")
    }

    /// Rules give icons matched by a glob a theme of their own; mistakes name the rule.
    @Test func rulesThemeIconsByGlob() throws {
        let theme = try Self.theme(
            ##"{"paint": "#777777", "rules": [{"icons": "shop/*", "paint": "#ff0000"}, {"icons": "flag", "invert": true}]}"##
        )
        #expect(theme.theme(forIcon: "shop/bakery").paint == Color(css: "#ff0000"))
        #expect(theme.theme(forIcon: "flag").adjustments.invert && theme.theme(forIcon: "flag").paint == nil)
        #expect(theme.theme(forIcon: "amenity/bar").paint == Color(css: "#777777"))
        #expect(try Self.theme(##"{"paint": "#777777"}"##).rulesKey != theme.rulesKey)
        for (json, message) in [
            (##"{"hue": "x"}"##, "hue: expected a number from -360 to 360"),
            (##"{"tint": {"color": "nope"}}"##, "tint: expected"),
            (##"{"tint": {"color": "red", "amount": 2}}"##, "tint.amount: expected a number from 0 to 1"),
            (##"{"rules": {}}"##, "rules: expected an array"),
            (##"{"rules": [{"paint": "red"}]}"##, "rules[0]: expected {\"icons\""),
            (##"{"rules": [{"icons": "a", "paint": 3}]}"##, "rules[0]: paint: expected a color"),
        ] {
            let error = try #require(throws: ThemeError.self) { try Self.theme(json) }
            #expect(error.message.hasPrefix(message), "\(json): \(error.message)")
        }
    }
}
