import Testing

@testable import IconrCore

struct ColorTests {
    @Test(arguments: [
        ("#800080", "#800080"), ("#f00", "#ff0000"), ("#F00", "#ff0000"), ("#f008", "#ff000088"),
        ("#ff000080", "#ff000080"), ("red", "#ff0000"), ("RED", "#ff0000"), ("rebeccapurple", "#663399"),
        ("transparent", "#00000000"), ("rgb(255,0,0)", "#ff0000"), ("rgb( 0 , 128 , 255 )", "#0080ff"),
        ("rgba(255, 0, 0, 0.5)", "#ff000080"), ("rgb(100%, 0%, 50%)", "#ff0080"), ("rgba(0%,0%,0%,0)", "#00000000"),
        ("rgb(300, -5, 0)", "#ff0000"), ("rgb(255 0 0 / 50%)", "#ff000080"), ("hsl(120, 100%, 50%)", "#00ff00"),
        ("hsl(0, 100%, 50%)", "#ff0000"), ("hsla(240, 100%, 50%, 0.25)", "#0000ff40"),
        ("hsl(300deg, 100%, 50%)", "#ff00ff"), ("hsl(210, 50%, 40%)", "#336699"),
        ("  black  ", "#000000"), ("yellow", "#ffff00"), ("hsl(-120, 100%, 50%)", "#0000ff"),
        // As the style specification's parser (and Mapbox's): unitless hsl percentages,
        // halves rounded up.
        ("hsl(120, 100, 50)", "#00ff00"), ("hsla(0,0,0,0)", "#00000000"), ("hsl(210, 100%, 50%)", "#0080ff"),
    ])
    func parsesValidColors(_ text: String, _ expected: String) {
        #expect(Color(css: text)?.hexString == expected)
    }

    @Test(arguments: [
        "", "#12", "#12345", "#1234567", "#ggg", "redd", "rgb(1,2)", "rgb(1,2,3,4,5)", "rgb(10%, 0, 0)",
        "rgb(a,b,c)", "rgb (255,0,0)", "cmyk(0,0,0,0)", "url(#a)", "currentColor", "none", "rgb(1,2,3",
        "#", "rgb(nan, 0, 0)", "rgb(inf, 0, 0)",
    ])
    func rejectsInvalidColors(_ text: String) {
        #expect(Color(css: text) == nil)
    }

    @Test func knowsAllCSSNamedColors() {
        // CSS Color 4 names 148 colors; `transparent` is the 149th keyword.
        #expect(namedColors.count == 149)
    }

    @Test func cssStringRoundTrips() {
        for text in ["#123456", "rgba(1,2,3,0.5)", "transparent", "#ffffff"] {
            let color = Color(css: text)!
            #expect(Color(css: color.cssString) == color, "\(text)")
        }
    }
}
