import Testing

@testable import IconrCore

private func template(_ body: String, metadata: String = "") throws -> SVGTemplate {
    let svg = """
        <svg xmlns="http://www.w3.org/2000/svg" xmlns:m="https://www.mapbox.com" width="10" height="10">
        <m:metadata>\(metadata)</m:metadata>
        \(body)
        </svg>
        """
    return try SVGTemplate(bytes: Array(svg.utf8), file: "t.svg")
}

private func parameter(_ name: String, _ value: String) -> String {
    "<m:parameters><m:parameter m:name=\"\(name)\" m:type=\"color\" m:value=\"\(value)\"/></m:parameters>"
}

struct SVGTemplateMetadataTests {
    @Test func readsParametersStretchAreasAndContent() throws {
        let parsed = try template(
            "<rect width='10' height='10'/>",
            metadata: """
                <m:parameters>
                  <m:parameter m:name="flag_color" m:type="color" m:value="#000000"/>
                  <m:parameter m:name="edge" m:type="color" m:value="rgb(255, 0, 0)"/>
                </m:parameters>
                <m:stretch-x-areas><m:stretch-x-area m:left="2" m:width="3"/><m:stretch-x-area m:left="6" m:width="1.5"/></m:stretch-x-areas>
                <m:stretch-y-areas><m:stretch-y-area m:top="1" m:height="4"/></m:stretch-y-areas>
                <m:content m:left="1" m:top="2" m:width="6" m:height="5"/>
                """)
        #expect(
            parsed.parameters == [
                TemplateParameter(name: "flag_color", defaultColor: .black),
                TemplateParameter(name: "edge", defaultColor: Color(red: 255, green: 0, blue: 0)),
            ])
        #expect(parsed.stretchX == [StretchArea(start: 2, end: 5), StretchArea(start: 6, end: 7.5)])
        #expect(parsed.stretchY == [StretchArea(start: 1, end: 5)])
        #expect(parsed.content == ContentBox(left: 1, top: 2, right: 7, bottom: 7))
        #expect(parsed.warnings.isEmpty)
    }

    @Test func notesTheFilesItReferences() throws {
        let parsed = try template(
            """
            <rect fill="url(/etc/hostname#x) red" filter='url( "b.svg" ) url(#local)' style="mask: url('c.svg')"/>
            <image href="d.png"/><image href="#e"/><rect fill="url(data:x)"/><rect clip-path="url(f.svg"/>
            <rect fill="url(b.svg)"/>
            """)
        #expect(parsed.externalReferences == ["/etc/hostname#x", "b.svg", "c.svg", "d.png"])
    }

    @Test func findsBytesAndSplitsByScalars() {
        let bytes = Array("abcabc".utf8)
        #expect(bytes.firstOffset(of: Array("bc".utf8)) == 1)
        #expect(bytes.firstOffset(of: Array("bc".utf8), from: 2) == 4)
        #expect(bytes.firstOffset(of: Array("bc".utf8), from: 5) == nil)
        #expect(bytes.firstOffset(of: Array("abcabcd".utf8)) == nil)
        #expect(bytes.firstOffset(of: []) == nil && bytes.firstOffset(of: Array("a".utf8), from: -1) == nil)
        #expect("a.params.b".containsUTF8(".params.") && !"a.params".containsUTF8(".params."))
        #expect("x--y--".splitUTF8(separator: "--") == ["x", "y", ""])
    }

    @Test func acceptsAnyPrefixForTheMapboxNamespace() throws {
        let svg = """
            <svg xmlns="http://www.w3.org/2000/svg" xmlns:mb="https://www.mapbox.com" width="4" height="4">
              <mb:metadata><mb:parameters><mb:parameter mb:name="a" mb:type="color" mb:value="red"/></mb:parameters></mb:metadata>
            </svg>
            """
        #expect(try SVGTemplate(bytes: Array(svg.utf8)).parameters.map(\.name) == ["a"])
    }

    /// Elements that come from an entity's text are drawn by librsvg but are not in the
    /// bytes iconr edits: a warning names the entity (the differential test against libxml2
    /// relies on it).
    @Test func entitiesHoldingElementsAreWarnedAbout() throws {
        let svg = """
            <!DOCTYPE svg [<!ENTITY dot "<circle r='2' fill='#000000'/>"><!ENTITY name "flag">]>
            <svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><title>&name;</title>&dot;&dot;</svg>
            """
        let parsed = try SVGTemplate(bytes: Array(svg.utf8), file: "t.svg")
        #expect(
            parsed.warnings.map(\.message) == [
                "the entity &dot; holds elements: they are drawn, but parameters do not reach their paints"
            ])
    }

    @Test func plainSVGHasNoParameters() throws {
        let parsed = try SVGTemplate(
            bytes: Array("<svg xmlns='http://www.w3.org/2000/svg' width='1' height='1'/>".utf8))
        #expect(parsed.isPlain)
        #expect(parsed.content == nil && parsed.stretchX.isEmpty)
    }

    @Test(arguments: [
        (
            "<m:parameters><m:parameter m:type=\"color\" m:value=\"#000\"/></m:parameters>",
            "t.svg:2:27: m:parameter has no m:name"
        ),
        (
            "<m:parameters><m:parameter m:name=\"\" m:type=\"color\" m:value=\"#000\"/></m:parameters>",
            "t.svg:2:27: m:parameter has no m:name"
        ),
        (
            "<m:parameters><m:parameter m:name=\"a\" m:type=\"color\" m:value=\"#000\"/>\n<m:parameter m:name=\"a\" m:type=\"color\" m:value=\"#fff\"/></m:parameters>",
            "t.svg:3:1: duplicate m:parameter \"a\" (first declared at 2:27)"
        ),
        (
            "<m:parameters><m:parameter m:name=\"a\" m:type=\"number\" m:value=\"1\"/></m:parameters>",
            "t.svg:2:51: m:parameter \"a\" has unsupported m:type \"number\" (only \"color\" exists)"
        ),
        (
            "<m:parameters><m:parameter m:name=\"flag_color\" m:type=\"color\" m:value=\"#12\"/></m:parameters>",
            "t.svg:2:75: m:parameter \"flag_color\" has an invalid m:value \"#12\""
        ),
        (
            "<m:parameters><m:parameter m:name=\"a\" m:value=\"#000\"/></m:parameters>",
            "t.svg:2:27: m:parameter \"a\" has no m:type (expected \"color\")"
        ),
        (
            "<m:parameters><m:parameter m:name=\"a\" m:type=\"color\"/></m:parameters>",
            "t.svg:2:27: m:parameter \"a\" has no m:value"
        ),
        (
            "<m:stretch-x-areas><m:stretch-x-area m:left=\"x\" m:width=\"2\"/></m:stretch-x-areas>",
            "t.svg:2:50: m:stretch-x-area has an invalid m:left \"x\" (expected a number >= 0)"
        ),
        ("<m:content m:left=\"1\" m:top=\"1\" m:width=\"2\"/>", "t.svg:2:13: m:content has no m:height"),
    ])
    func reportsMalformedMetadataWithFileLineAndValue(_ metadata: String, _ message: String) {
        #expect { try template("", metadata: metadata) } throws: { error in
            (error as? TemplateError)?.description == message
        }
    }

    @Test func warnsWhenTwoParametersShareADefault() throws {
        let parsed = try template(
            "",
            metadata: """
                <m:parameters><m:parameter m:name="a" m:type="color" m:value="#000"/><m:parameter m:name="b" m:type="color" m:value="black"/></m:parameters>
                """)
        #expect(parsed.parameters.count == 2)
        #expect(
            parsed.warnings.map(\.message) == [
                "parameters \"a\" and \"b\" share the default color #000000, so they cannot be set independently (the one declared last wins)"
            ])
    }

    @Test func rejectsNonSVGRoot() {
        #expect(throws: TemplateError.self) { try SVGTemplate(bytes: Array("<html><body/></html>".utf8)) }
        #expect(throws: TemplateError.self) { try SVGTemplate(bytes: Array("just text".utf8)) }
    }
}

struct SVGTemplateSubstitutionTests {
    private func applied(_ body: String, _ values: [String: String], default value: String = "#000000") throws -> String
    {
        let parsed = try template(body, metadata: parameter("p", value))
        return String(decoding: parsed.apply(try parsed.resolve(IconParameters(parsing: values))), as: UTF8.self)
    }

    @Test func rewritesPresentationAttributesSpelledAnyWay() throws {
        let out = try applied(
            "<path fill='black'/><path stroke=\"#000\"/><path fill='rgb(0,0,0)'/><path fill='#111'/>",
            ["p": "#800080"])
        #expect(
            out.contains("<path fill='#800080'/><path stroke=\"#800080\"/><path fill='#800080'/><path fill='#111'/>"))
    }

    @Test func rewritesStyleAttributesAndSheetsKeepingImportant() throws {
        let out = try applied(
            """
            <style>.a { fill: #000 !important; stroke:red } @media screen { .b{stop-color:black} }</style>
            <path style="fill:#000000;stroke-width:2" class="a"/>
            """, ["p": "red"])
        #expect(out.contains(".a { fill: #ff0000 !important; stroke:red } @media screen { .b{stop-color:#ff0000} }"))
        #expect(out.contains("style=\"fill:#ff0000;stroke-width:2\""))
    }

    @Test func rewritesFallbackColorsOfPaintServers() throws {
        let out = try applied("<path fill='url(#missing) #000'/>", ["p": "blue"])
        #expect(out.contains("fill='url(#missing) #0000ff'"))
    }

    @Test func insertsInitialValuesOnRootAndStops() throws {
        let out = try applied(
            "<linearGradient><stop offset='0'/><stop offset='1' stop-color='red'/></linearGradient>",
            ["p": "#00ff00"])
        #expect(out.contains("width=\"10\" height=\"10\" fill=\"#00ff00\" color=\"#00ff00\">"))
        #expect(out.contains("<stop offset='0' stop-color=\"#00ff00\"/><stop offset='1' stop-color='red'/>"))
    }

    @Test func leavesTheRootAloneWhenItSetsItsOwnFill() throws {
        let svg =
            "<svg xmlns='http://www.w3.org/2000/svg' xmlns:m='https://www.mapbox.com' fill='red' width='1' height='1'>"
            + "<m:metadata>\(parameter("p", "#000"))</m:metadata></svg>"
        let parsed = try SVGTemplate(bytes: Array(svg.utf8))
        let out = String(
            decoding: parsed.apply(try parsed.resolve(IconParameters(parsing: ["p": "blue"]))), as: UTF8.self)
        #expect(out.contains("fill='red' width='1' height='1' color=\"#0000ff\">"))
    }

    @Test func rewritesValuesWrittenWithCharacterReferences() throws {
        let out = try applied("<path style='fill:&#x23;000;stroke:&quot;x&quot;'/>", ["p": "#abcdef"])
        #expect(out.contains("style='fill:#abcdef;stroke:\"x\"'"))
    }

    @Test func changesNothingWithoutValuesOrWithTheDefault() throws {
        let body = "<path fill='#000'/>"
        let parsed = try template(body, metadata: parameter("p", "#000"))
        #expect(parsed.apply(parsed.resolve(IconParameters())) == parsed.bytes)
        #expect(parsed.apply(try parsed.resolve(IconParameters(parsing: ["p": "black"]))) == parsed.bytes)
    }

    @Test func ignoresUnknownNamesAndRejectsInvalidValues() throws {
        let parsed = try template("", metadata: parameter("p", "#000"))
        let resolved = try parsed.resolve(IconParameters(parsing: ["nope": "red", "p": "blue"]))
        #expect(resolved.unknownNames == ["nope"])
        #expect(resolved.effectiveValues == ["p": Color(red: 0, green: 0, blue: 255)])
        #expect(throws: ParameterError(name: "p", value: "#12")) {
            try parsed.resolve(IconParameters(parsing: ["p": "#12"]))
        }
    }

    @Test func theParameterDeclaredLastWinsACollision() throws {
        let parsed = try template(
            "<path fill='#000'/>",
            metadata: """
                <m:parameters><m:parameter m:name="a" m:type="color" m:value="#000"/><m:parameter m:name="b" m:type="color" m:value="#000"/></m:parameters>
                """)
        let out = String(
            decoding: parsed.apply(try parsed.resolve(IconParameters(parsing: ["a": "red", "b": "blue"]))),
            as: UTF8.self)
        #expect(out.contains("<path fill='#0000ff'/>"))
    }

    @Test func keepsTranslucentValuesAsRGBA() throws {
        let out = try applied("<path fill='#000'/>", ["p": "rgba(255,0,0,0.5)"])
        #expect(out.contains("<path fill='rgba(255,0,0,0.502)'/>"))
    }
}
