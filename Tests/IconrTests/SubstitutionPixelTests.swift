import Iconr
import IconrTestSupport
import Testing

/// Every substitution rule, checked on rendered pixels. Each document is 10 x 10 and covers
/// its center pixel; `p` has default black unless a case says otherwise. Tolerance: exact
/// channels for opaque fills, +-1 on alpha and color where opacity is involved.
struct SubstitutionPixelTests {
    private static func document(_ body: String, defaultColor: String = "#000000", root: String = "") -> String {
        """
        <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"
             xmlns:m="https://www.mapbox.com" width="10" height="10" \(root)>
          <m:metadata><m:parameters>
            <m:parameter m:name="p" m:type="color" m:value="\(defaultColor)"/>
          </m:parameters></m:metadata>
          \(body)
        </svg>
        """
    }

    private static func center(
        _ body: String, _ params: [String: String], defaultColor: String = "#000000",
        root: String = ""
    ) throws -> String {
        let template = try TestSupport.template(document(body, defaultColor: defaultColor, root: root))
        return try template.render(params: params, scale: 1).image.centerHex
    }

    @Test(arguments: [
        ("presentation attribute", "<rect width='10' height='10' fill='#000000'/>"),
        ("named color", "<rect width='10' height='10' fill='black'/>"),
        ("short hex", "<rect width='10' height='10' fill='#000'/>"),
        ("rgb()", "<rect width='10' height='10' fill='rgb(0, 0, 0)'/>"),
        ("style attribute", "<rect width='10' height='10' style='fill: #000'/>"),
        ("style sheet", "<style>.shape { fill: black }</style><rect class='shape' width='10' height='10'/>"),
        ("CDATA style sheet", "<style><![CDATA[ rect { fill: #000 } ]]></style><rect width='10' height='10'/>"),
        ("inherited from a group", "<g fill='#000'><g><rect width='10' height='10'/></g></g>"),
        ("currentColor", "<g color='#000'><rect width='10' height='10' fill='currentColor'/></g>"),
        ("currentColor of the initial color", "<rect width='10' height='10' fill='currentColor'/>"),
        ("initial fill", "<rect width='10' height='10'/>"),
        ("stroke", "<rect x='-5' y='-5' width='10' height='10' fill='none' stroke='#000' stroke-width='12'/>"),
        (
            "gradient stop-color",
            "<linearGradient id='g'><stop offset='0' stop-color='#000'/><stop offset='1' stop-color='black'/></linearGradient><rect width='10' height='10' fill='url(#g)'/>"
        ),
        (
            "gradient stop with no stop-color",
            "<linearGradient id='g'><stop offset='0'/><stop offset='1'/></linearGradient><rect width='10' height='10' fill='url(#g)'/>"
        ),
        (
            "stop-color in a style sheet",
            "<style>stop { stop-color: #000 }</style><linearGradient id='g'><stop offset='0'/><stop offset='1'/></linearGradient><rect width='10' height='10' fill='url(#g)'/>"
        ),
        (
            "use of a symbol",
            "<defs><symbol id='s'><rect width='10' height='10'/></symbol></defs><use xlink:href='#s'/>"
        ),
    ])
    func replacesTheDefaultWherever(_ rule: String, _ body: String) throws {
        #expect(try Self.center(body, ["p": "#ff0000"]) == "#ff0000ff", "\(rule)")
        #expect(try Self.center(body, [:]) == "#000000ff", "\(rule) keeps the default without a value")
    }

    @Test func leavesOtherColorsAlone() throws {
        #expect(try Self.center("<rect width='10' height='10' fill='#010101'/>", ["p": "red"]) == "#010101ff")
        #expect(try Self.center("<rect width='10' height='10' fill='#fff'/>", ["p": "red"]) == "#ffffffff")
    }

    @Test func theCascadeStillPicksTheWinner() throws {
        // A style sheet beats a presentation attribute: the green rule wins, so p has nothing to change.
        #expect(
            try Self.center(
                "<style>rect { fill: #00ff00 }</style><rect width='10' height='10' fill='#000'/>",
                ["p": "red"]) == "#00ff00ff")
        // A use element passes its own fill to the symbol's content, which is not the default.
        #expect(
            try Self.center(
                "<defs><symbol id='s'><rect width='10' height='10'/></symbol></defs><use xlink:href='#s' fill='#0000ff'/>",
                ["p": "red"]) == "#0000ffff")
        // The root's own fill is kept when it is not the default.
        #expect(try Self.center("<rect width='10' height='10'/>", ["p": "red"], root: "fill='#00ff00'") == "#00ff00ff")
    }

    @Test func opacitiesMultiplyTheNewColorsAlpha() throws {
        let half = try TestSupport.template(
            Self.document("<rect width='10' height='10' fill='#000' fill-opacity='0.5'/>"))
        let solid = try half.render(params: ["p": "#ff0000"]).image[5, 5]
        #expect(solid.red == 255 && solid.green == 0 && abs(Int(solid.alpha) - 128) <= 1)
        let translucent = try half.render(params: ["p": "rgba(255, 0, 0, 0.5)"]).image[5, 5]
        #expect(translucent.red == 255 && abs(Int(translucent.alpha) - 64) <= 1)
        let group = try TestSupport.template(Self.document("<g opacity='0.5'><rect width='10' height='10'/></g>"))
        let grouped = try group.render(params: ["p": "#0000ff"]).image[5, 5]
        #expect(grouped.blue == 255 && abs(Int(grouped.alpha) - 128) <= 1)
    }

    @Test func reachesPaintsInsideMasks() throws {
        // The mask is white (the default) and shows the shape; turning it black hides the shape.
        let body =
            "<mask id='m'><rect width='10' height='10' fill='#fff'/></mask><rect width='10' height='10' fill='#00f' mask='url(#m)'/>"
        #expect(try Self.center(body, [:], defaultColor: "#ffffff") == "#0000ffff")
        #expect(try Self.center(body, ["p": "#000"], defaultColor: "#ffffff").hasSuffix("00"))
    }

    @Test func twoParametersOnFillAndStroke() throws {
        let marker = try IconSource(path: TestSupport.icons.appendingPathComponent("marker.svg").path)
        let icon = try marker.render(params: ["fill_color": "#00ff00", "stroke_color": "#0000ff"], scale: 4)
        // Inside the body (left of the white dot) and on the outline at the top.
        #expect(icon.image.hex(x: 20, y: 40) == "#00ff00ff")
        #expect(icon.image.hex(x: 40, y: 7) == "#0000ffff")
        #expect(icon.image.hex(x: 40, y: 40) == "#ffffffff")
    }

    @Test func theBundledFlagTakesAnyColor() throws {
        let flag = try IconSource(path: TestSupport.icons.appendingPathComponent("flag.svg").path)
        for (value, expected) in [
            ("red", "#ff0000ff"), ("yellow", "#ffff00ff"), ("#800080", "#800080ff"),
            ("hsl(120, 100%, 25%)", "#008000ff"),
        ] {
            #expect(
                try flag.render(params: ["flag_color": value], scale: 2).image.hex(x: 26, y: 16) == expected, "\(value)"
            )
        }
        #expect(try flag.render(scale: 2).image.hex(x: 26, y: 16) == "#000000ff")
    }

    @Test func rejectsAnInvalidValueNamingParameterAndValue() throws {
        let flag = try IconSource(path: TestSupport.icons.appendingPathComponent("flag.svg").path)
        #expect { try flag.render(params: ["flag_color": "#12"]) } throws: { error in
            "\(error)".contains("flag.svg: invalid color \"#12\" for parameter \"flag_color\" (expected")
        }
    }
}
