import IconrCore
import Testing

/// The one JSON writer: styles, HTTP bodies, sprite indexes and `--json` reports all go through
/// `JSONValue.text(_:)`, so its three layouts are pinned here byte for byte.
@Suite struct JSONTextTests {
    let value = JSONValue.object([
        "b": .array([.number(1), .number(1.5), .number(1e-7), .number(.infinity)]),
        "a": .object(["y": .string("quote \" slash / tab \t nul \u{0}"), "x": .null, "z": .bool(true)]),
        "empty": .array([]), "none": .object([:]),
    ])

    @Test func minifiedHasNoSpacesAndSortedKeys() {
        #expect(
            value.text(.minified)
                == #"{"a":{"x":null,"y":"quote \" slash / tab \t nul \u0000","z":true},"b":[1,1.5,1e-7,null],"#
                + #""empty":[],"none":{}}"#)
        #expect(value.serialized == value.text(.minified))
    }

    @Test func memberPerLinePutsEachOuterMemberOnALine() {
        #expect(
            value.text(.memberPerLine) == """
                {
                  "a": {"x": null, "y": "quote \\" slash / tab \\t nul \\u0000", "z": true},
                  "b": [1, 1.5, 1e-7, null],
                  "empty": [],
                  "none": {}
                }
                """)
    }

    @Test func indentedNestsTwoSpacesALevel() {
        #expect(
            JSONValue.object(["list": .array([.number(2), .object(["k": .string("v")])]), "n": .number(-3)])
                .text(.indented) == """
                    {
                      "list": [
                        2,
                        {
                          "k": "v"
                        }
                      ],
                      "n": -3
                    }
                    """)
    }

    @Test func whatItWritesParsesBackToTheSameValue() throws {
        for layout in [JSONValue.Layout.minified, .memberPerLine, .indented] {
            let parsed = try JSONValue.parse(Array(value.text(layout).utf8))
            var expected = value
            if case .object(var object) = expected, case .array(var numbers)? = object["b"] {
                numbers[3] = .null
                object["b"] = .array(numbers)
                expected = .object(object)
            }
            #expect(parsed == expected)
        }
    }
}
