import Testing

@testable import IconrCore
@testable import IconrStyle

/// What the MapLibre suite does not cover: Mapbox's additions, the engine's limits, and the
/// helpers the style path builds on.
struct ExpressionEngineTests {
    private func json(_ text: String) throws -> JSONValue { try JSONValue.parse(Array(text.utf8)) }

    private func evaluate(
        _ expression: String, type: String = "", properties: [String: StyleValue] = [:],
        context: EvaluationContext = EvaluationContext()
    ) throws -> StyleValue {
        let compiled = try CompiledExpression.compile(
            try json(expression), specification: PropertySpecification(type: type)
        ).get()
        var context = context
        context.feature = ExpressionFeature(properties: properties)
        return try compiled.evaluate(context)
    }

    @Test(
        arguments: [
            ("hsla(0, 0, 0, 0)", [0.0, 0, 0, 0]), ("hsl(120, 100, 25)", [0, 0.5, 0, 1]),
            ("hsl(120, 100%, 25%)", [0, 0.5, 0, 1]),
            ("#f00", [1, 0, 0, 1]), ("#ff000080", [1, 0, 0, 128.0 / 255]), ("rgb(255 0 0 / 50%)", [1, 0, 0, 0.5]),
            ("transparent", [0, 0, 0, 0]), ("RED", [1, 0, 0, 1]),
        ] as [(String, [Double])])
    func colorsParseAsTheSpecificationAndMapboxDo(_ text: String, _ expected: [Double]) throws {
        let color = try #require(StyleColor(css: text))
        #expect(zip([color.red, color.green, color.blue, color.alpha], expected).allSatisfy { abs($0 - $1) < 0.002 })
    }

    @Test(arguments: ["rgb(255, 0 0)", "hsl(0%, 50%, 50%)", "#ff00f", "rgb(1,2)", "notacolor", ""])
    func notColors(_ text: String) {
        #expect(StyleColor(css: text) == nil)
    }

    /// Mapbox's hsla ranges: a literal out of range does not compile ("Invalid hsla value"),
    /// one from data drops the param (the default shows); an empty param name does not compile.
    @Test func hslaRangesAndParamNames() throws {
        let literal = CompiledExpression.compile(
            try json(#"["hsla", 400, 100, 50, 1]"#), specification: PropertySpecification(type: "color"))
        guard case .failure(let failure) = literal else {
            Issue.record("an hsla literal out of range compiled")
            return
        }
        #expect(failure.errors.first?.message == "Invalid hsla value [400, 100, 50, 1]")
        let image = #"["image", "sq", {"params": {"fill": ["hsla", ["get", "h"], 100, 50, 1]}}]"#
        guard case .image(let dropped) = try evaluate(image, type: "resolvedImage", properties: ["h": .number(400)]),
            case .image(let kept) = try evaluate(image, type: "resolvedImage", properties: ["h": .number(40)])
        else {
            Issue.record("expected images")
            return
        }
        #expect(dropped.params.isEmpty && kept.params["fill"] != nil)
        let empty = CompiledExpression.compile(
            try json(#"["image", "sq", {"params": {"": "red"}}]"#),
            specification: PropertySpecification(type: "resolvedImage"))
        #expect(throws: ExpressionCompileError.self) { try empty.get() }
    }

    /// Mapbox v3's camera and light operators read the context's `MapboxEnvironment`.
    @Test func mapboxCameraAndLightOperators() throws {
        var context = EvaluationContext()
        context.mapbox.pitch = 45
        context.mapbox.worldview = "IN"
        context.mapbox.lightBrightness = LightPreset.dusk.brightness
        #expect(try evaluate(#"["pitch"]"#, context: context) == .number(45))
        #expect(try evaluate(#"["worldview"]"#, context: context) == .string("IN"))
        #expect(try evaluate(#"["measure-light", "brightness"]"#, context: context) == .number(0.35))
        #expect(try evaluate(#"["distance-from-center"]"#) == .number(0))
        #expect(throws: ExpressionEvaluationError.self) { try evaluate(#"["measure-light", "color"]"#) }
    }

    @Test func splitMatchesItsSeparatorAsJavaScriptDoes() throws {
        func split(_ text: String, _ separator: String) throws -> [String] {
            let json = #"["split", "\#(text)", "\#(separator)"]"#
            guard case .array(let items) = try evaluate(json) else { return [] }
            return items.map(\.text)
        }
        #expect(try split("a, b,, c", ", ") == ["a", "b,", "c"])
        #expect(try split("--a--", "--") == ["", "a", ""])
        #expect(try split("abc", "x") == ["abc"])
        #expect(try split("", ",") == [""])
        #expect(try split("ab", "") == ["a", "b"])
        // Scalar by scalar, as JavaScript matches code units: `e` is found before a combining accent.
        #expect(try split("cafe\u{301} e", "e") == ["caf", "\u{301} ", ""])
    }

    @Test func mapboxOperatorsConfigAndImages() throws {
        var context = EvaluationContext()
        context.config = ["theme": .string("night")]
        #expect(try evaluate(#"["match", ["config", "theme"], "night", 1, 2]"#, context: context) == .number(1))
        #expect(
            try evaluate(#"["to-hsla", ["hsl", 120, 100, 25]]"#)
                == .array([.number(120), .number(100), .number(25), .number(1)]))
        // A data value that is no color is dropped: the parameter keeps its default.
        let image = #"["image", "flag", {"params": {"flag_color": ["get", "c"]}}]"#
        guard case .image(let bad) = try evaluate(image, type: "resolvedImage", properties: ["c": .string("nope")]),
            case .image(let good) = try evaluate(image, type: "resolvedImage", properties: ["c": .string("#0000ff")])
        else {
            Issue.record("image did not give an image")
            return
        }
        #expect(bad.params.isEmpty && good.params["flag_color"] == StyleColor(red: 0, green: 0, blue: 1))
        // A literal that is no color is an error at its place.
        let result = CompiledExpression.compile(
            try json(#"["image", "flag", {"params": {"flag_color": 3}}]"#),
            specification: PropertySpecification(type: "resolvedImage"))
        guard case .failure(let failure) = result else {
            Issue.record("a number param compiled")
            return
        }
        #expect(failure.errors.first?.key == "[2].params.flag_color")
        // The second image is a cross-fade partner: the image is there only when both are.
        var images = EvaluationContext()
        images.availableImages = ["a", "c"]
        #expect(
            try evaluate(
                #"["coalesce", ["image", "a", {}, "b", {}], ["image", "c"]]"#, type: "resolvedImage", context: images)
                == .image(ResolvedImage(name: "c", available: true)))
    }

    @Test func nestingIsBoundedAndNumbersPrintAsJavaScript() throws {
        let deep = String(repeating: #"["+", 1, "#, count: 990) + "1" + String(repeating: "]", count: 990)
        #expect(try evaluate(deep) == .number(991))
        // JSON text nests at most 1,000 deep; an expression built in code is bounded too.
        var built = JSONValue.array([.string("get"), .string("x")])
        for _ in 0..<1_200 { built = .array([.string("-"), built]) }
        guard
            case .failure(let failure) = CompiledExpression.compile(
                built, specification: PropertySpecification(type: "number"))
        else {
            Issue.record("1,200 levels compiled")
            return
        }
        #expect(failure.errors.first?.message == "Expressions may be nested at most 1000 deep.")
        #expect(
            [1.0, 0.5, 1e-7, 1e21, 123456789012345683968, -0.000001, 0.1 + 0.2].map(\.javaScriptText)
                == ["1", "0.5", "1e-7", "1e+21", "123456789012345680000", "-0.000001", "0.30000000000000004"])
    }

    @Test func outputsWithoutDataAreTheLiteralBranches() throws {
        let compiled = try CompiledExpression.compile(
            try json(
                #"["image", ["case", ["has", "x"], "a", "b"], {"params": {"fill": ["coalesce", ["get", "c"], "red", "blue"]}}]"#
            ),
            specification: PropertySpecification(type: "resolvedImage")
        ).get()
        let outputs = ExpressionOutputs.enumerate(compiled.root, context: EvaluationContext())
        let described = outputs.values.compactMap { value -> String? in
            guard case .image(let image) = value else { return nil }
            return image.name + (image.params["fill"].map { " " + $0.text } ?? "")
        }
        #expect(
            described == ["a rgba(255,0,0,1)", "a rgba(0,0,255,1)", "a", "b rgba(255,0,0,1)", "b rgba(0,0,255,1)", "b"])
        #expect(outputs.open == ["[2].params.fill"])
    }

    @Test func legacyFiltersMeanWhatTheyMeant() throws {
        let filter = LegacyFilter.convert(
            try json(
                #"["all", ["==", "$type", "Point"], ["in", "class", "a", "b"], ["<", "rank", 3], ["!has", "closed"]]"#))
        let compiled = try CompiledExpression.compile(filter, specification: PropertySpecification(type: "boolean"))
            .get()
        func shows(_ properties: [String: StyleValue]) throws -> StyleValue {
            try compiled.evaluate(
                EvaluationContext(feature: ExpressionFeature(properties: properties, geometryType: "Point")))
        }
        #expect(try shows(["class": .string("a"), "rank": .number(1)]) == .boolean(true))
        #expect(try shows(["class": .string("c"), "rank": .number(1)]) == .boolean(false))
        // Legacy comparisons of another type are false, not errors.
        #expect(try shows(["class": .string("b"), "rank": .string("1")]) == .boolean(false))
        #expect(try shows(["class": .string("b"), "rank": .number(1), "closed": .boolean(true)]) == .boolean(false))
        // Expression filters are kept as they are.
        let expression = try json(#"["==", ["get", "class"], "a"]"#)
        #expect(LegacyFilter.convert(expression) == expression)
    }
}

/// Values no JSON document should reach the engine with, and the engine survives: numbers
/// out of every range where it makes integers of them.
struct ExpressionLimitTests {
    @Test func hugeNumbersBecomeErrorsOrBoundsNotTraps() throws {
        let format = ExpressionReport.make(
            expression: try JSONValue.parse(
                Array(#"["number-format", 1.5, {"min-fraction-digits": ["get", "x"]}]"#.utf8)),
            specification: PropertySpecification(json: nil),
            inputs: [try JSONValue.parse(Array(#"[{}, {"properties": {"x": 1e300}}]"#.utf8))])
        #expect(format["outputs"]?.arrayValue?.first?.stringValue == "1.50000000000000000000")
        let within = ExpressionReport.make(
            expression: try JSONValue.parse(
                Array(#"["within", {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]]}]"#.utf8)),
            specification: PropertySpecification(json: nil),
            inputs: [
                try JSONValue.parse(
                    Array(
                        #"[{"canonicalID": {"z": 1e300, "x": -1, "y": 0.5}}, {"geometry": {"type": "Point", "coordinates": [0.5, 0.2]}}]"#
                            .utf8))
            ])
        #expect(within["outputs"] == .array([.bool(false)]))
        #expect(
            StyleColor(red: .nan, green: 2, blue: -1, alpha: .nan).color == Color(red: 0, green: 255, blue: 0, alpha: 0)
        )
    }

    @Test func enumeratingWithoutDataIsBounded() throws {
        // 300 names x 300 colors would be 90,000 variants: the enumeration stops at its bound.
        func hex(_ value: Int) -> String {
            let digits = String(value, radix: 16)
            return "#" + String(repeating: "0", count: 6 - digits.count) + digits
        }
        let names = (0..<300).map { "\($0), \"n\($0)\"" }.joined(separator: ", ")
        let colors = (0..<300).map { "\($0), \"\(hex($0))\"" }.joined(separator: ", ")
        let text =
            "[\"image\", [\"match\", [\"get\", \"k\"], \(names), \"other\"], "
            + "{\"params\": {\"fill\": [\"match\", [\"get\", \"c\"], \(colors), \"#ffffff\"]}}]"
        let compiled = try CompiledExpression.compile(
            try JSONValue.parse(Array(text.utf8)),
            specification: PropertySpecification(type: "resolvedImage")
        ).get()
        let outputs = ExpressionOutputs.enumerate(compiled.root, context: EvaluationContext())
        #expect(outputs.values.count == ExpressionOutputs.maximumValues)
        #expect(outputs.open.contains { $0.contains("more than 20000 values") })
    }
}
