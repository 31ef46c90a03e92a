import Testing
@testable import IconrCore

struct StyleExpressionTests {
    private func json(_ text: String) -> JSONValue {
        try! JSONValue.parse(Array(text.utf8))
    }

    private func evaluate(_ expression: String, _ properties: String = "{}",
                          images: Set<String>? = nil) throws -> ExpressionValue {
        let parsed = try StyleExpression.parse(json(expression), path: "icon-image")
        let context = StyleExpression.Context(properties: json(properties).objectValue!,
                                              imageExists: { images?.contains($0) ?? true })
        return try parsed.evaluate(context)
    }

    @Test(arguments: [
        (##"["get", "name"]"##, ##"{"name": "flag"}"##, ExpressionValue.string("flag")),
        (##"["get", "missing"]"##, "{}", .null),
        (##"["has", "name"]"##, ##"{"name": null}"##, .bool(true)),
        (##"["has", "name"]"##, "{}", .bool(false)),
        (##"["literal", [1, "a"]]"##, "{}", .array([.number(1), .string("a")])),
        (##"["case", ["==", ["get", "id"], "a"], 2, 1]"##, ##"{"id": "a"}"##, .number(2)),
        (##"["case", ["==", ["get", "id"], "a"], 2, 1]"##, ##"{"id": "b"}"##, .number(1)),
        (##"["match", ["get", "kind"], ["bar", "pub"], "beer", "cafe", "cup", "dot"]"##, ##"{"kind": "pub"}"##, .string("beer")),
        (##"["match", ["get", "kind"], ["bar", "pub"], "beer", "cafe", "cup", "dot"]"##, ##"{"kind": "cafe"}"##, .string("cup")),
        (##"["match", ["get", "n"], 1, "one", "many"]"##, ##"{"n": 2}"##, .string("many")),
        (##"["coalesce", ["get", "a"], ["get", "b"], "c"]"##, ##"{"b": "B"}"##, .string("B")),
        (##"["!=", ["get", "a"], 1]"##, ##"{"a": 1}"##, .bool(false)),
        (##"["!", ["has", "a"]]"##, "{}", .bool(true)),
        (##"["all", true, ["has", "a"]]"##, ##"{"a": 1}"##, .bool(true)),
        (##"["all", true, ["has", "b"]]"##, ##"{"a": 1}"##, .bool(false)),
        (##"["any", false, ["has", "a"]]"##, ##"{"a": 1}"##, .bool(true)),
        (##"["concat", "flag-", ["get", "c"], "-", 2]"##, ##"{"c": "red"}"##, .string("flag-red-2")),
        (##"["to-string", ["get", "n"]]"##, ##"{"n": 1.5}"##, .string("1.5")),
        (##"["to-string", ["to-color", "#800080"]]"##, "{}", .string("rgba(128,0,128,1)")),
        (##"["to-string", ["to-color", "rgba(255, 0, 0, 0.5)"]]"##, "{}", .string("rgba(255,0,0,0.502)")),
        (##"["to-color", ["get", "c"], "black"]"##, ##"{"c": "nonsense"}"##, .color(.black)),
        (##"["to-number", ["get", "s"]]"##, ##"{"s": " 2.5 "}"##, .number(2.5)),
        (##"["to-number", true]"##, "{}", .number(1)),
        (##""flag-{color}""##, ##"{"color": "red"}"##, .string("flag-red")),
        (##""flag-{color}-{missing}""##, ##"{"color": 3}"##, .string("flag-3-")),
    ] as [(String, String, ExpressionValue)])
    func evaluatesEveryOperator(_ expression: String, _ properties: String, _ expected: ExpressionValue) throws {
        #expect(try evaluate(expression, properties) == expected)
    }

    @Test func imageParamsFollowMapboxRules() throws {
        let flag = ##"["image", "flag", {"params": {"flag_color": ["get", "flagColor"]}}]"##
        #expect(try evaluate(flag, ##"{"flagColor": "#800080"}"##)
                == .image(ImageReference(name: "flag", params: ["flag_color": Color(red: 128, green: 0, blue: 128)])))
        // A color from data that does not parse is skipped: the default shows.
        #expect(try evaluate(flag, ##"{"flagColor": "not a color"}"##) == .image(ImageReference(name: "flag")))
        #expect(try evaluate(flag, "{}") == .image(ImageReference(name: "flag")))
        // Parameters given as colors, and the fallback image when the first does not exist.
        let fallback = ##"["image", "missing", {"params": {"a": "red"}}, "flag", {"params": {"flag_color": ["to-color", "yellow"]}}]"##
        #expect(try evaluate(fallback, images: ["flag"]) == .image(ImageReference(name: "flag", params: ["flag_color": Color(red: 255, green: 255, blue: 0)])))
        #expect(try evaluate(##"["coalesce", ["image", "nope"], ["image", "flag"]]"##, images: ["flag"]) == .image(ImageReference(name: "flag")))
    }

    @Test(arguments: [
        (##"["image", "flag", {"params": {"flag_color": "notacolor"}}]"##,
         "icon-image[2].params.flag_color: Could not parse color from value 'notacolor'"),
        (##"["to-color", "blurple"]"##, "icon-image: Could not parse color from value 'blurple'"),
        (##"["case", ["frobnicate", 1], "a", "b"]"##, "icon-image[1]: unknown expression operator \"frobnicate\""),
        (##"["get"]"##, "icon-image: \"get\" expects 1 argument, found 0"),
        (##"["match", ["get", "a"], "x"]"##, "icon-image: \"match\" expects an input, label/output pairs and a fallback"),
        (##"[1, 2]"##, "icon-image: expected an operator name first; use [\"literal\", ...] for an array"),
    ])
    func parseErrorsNameTheProblemAndItsPath(_ expression: String, _ message: String) {
        #expect(performing: { try StyleExpression.parse(json(expression), path: "icon-image") },
                throws: { "\($0)" == message })
    }

    @Test func invalidColorsFromDataAreEvaluationErrors() {
        #expect(throws: StyleExpression.EvaluationError.self) { try evaluate(##"["to-color", ["get", "c"]]"##, ##"{"c": "x"}"##) }
    }

    @Test func reachableNumbersOfIconSizes() throws {
        #expect(try StyleExpression.parse(json("1.5"), path: "").reachableNumbers == [1.5])
        #expect(try StyleExpression.parse(json(##"["case", ["==", ["get", "id"], "a"], 2.0, 1.0]"##), path: "").reachableNumbers == [2, 1])
        #expect(try StyleExpression.parse(json(##"["match", ["get", "k"], "a", 3, ["case", true, 2, 1]]"##), path: "").reachableNumbers == [3, 2, 1])
        #expect(try StyleExpression.parse(json(##"["get", "size"]"##), path: "").reachableNumbers == nil)
    }
}
