import Foundation
import IconrCore
import IconrStyle
import Testing

/// The MapLibre style specification's expression suite (`../shared/corpora/maplibre-expression-tests`,
/// 577 cases), run through the engine as the suite's own harness does.
@Suite struct ExpressionConformanceTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
            "shared/corpora/maplibre-expression-tests")
    static let available =
        FileManager.default.fileExists(atPath: corpus.path) || ProcessInfo.processInfo.environment["CI"] == "true"

    /// Cases that pass today: the count may only go up (a regression fails this test).
    static let passingFloor = 574

    @Test(.enabled(if: available, "needs ../shared/corpora beside the checkout"))
    func suite() throws {
        let files = try FileManager.default.subpathsOfDirectory(atPath: Self.corpus.path)
            .filter { $0.hasSuffix("/test.json") }.sorted()
        #expect(files.count == 577)
        var failures: [String: [String]] = [:]
        for file in files {
            let bytes = try Array(Data(contentsOf: Self.corpus.appendingPathComponent(file)))
            let fixture = try JSONValue.parse(bytes)
            let result = ExpressionReport.make(
                expression: fixture["expression"] ?? .null,
                specification: PropertySpecification(json: fixture["propertySpec"]),
                inputs: fixture["inputs"]?.arrayValue ?? [],
                globalState: (fixture["globalState"]?.objectValue ?? [:]).mapValues(StyleValue.init))
            let expected = fixture["expected"] ?? .null
            var pass = Self.equal(result["compiled"], expected["compiled"])
            if pass, expected["compiled"]?["result"] == .string("success") {
                pass = Self.equal(result["outputs"] ?? .array([]), expected["outputs"] ?? .array([]))
            }
            if !pass {
                let name = String(file.dropLast("/test.json".count))
                failures[String(name.split(separator: "/")[0]), default: []].append(name)
                if ProcessInfo.processInfo.environment["EXPRESSION_VERBOSE"] != nil {
                    print("FAIL \(name)\n  expected \(expected.serialized)\n  result   \(result.serialized)")
                }
            }
        }
        let failed = failures.values.map(\.count).reduce(0, +)
        let passed = files.count - failed
        print("MapLibre expression suite: \(passed) of \(files.count) pass")
        for (category, names) in failures.sorted(by: { $0.key < $1.key }) {
            print(
                "  \(category): \(names.count) failing (\(names.prefix(4).joined(separator: ", "))\(names.count > 4 ? ", ..." : ""))"
            )
        }
        #expect(
            passed >= Self.passingFloor,
            "the suite passed \(passed), fewer than the \(Self.passingFloor) it passed before")
    }

    /// Deep equality with numbers compared to 6 significant digits, as the suite does.
    static func equal(_ a: JSONValue?, _ b: JSONValue?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (.number(let x)?, .number(let y)?):
            // The suite records outputs cut to 6 significant digits.
            return x == y || abs(x - y) <= 1e-5 * max(abs(x), abs(y)) || abs(x - y) < 1e-6
        case (.array(let x)?, .array(let y)?): return x.count == y.count && zip(x, y).allSatisfy { equal($0, $1) }
        case (.object(let x)?, .object(let y)?):
            return Set(x.keys) == Set(y.keys) && x.keys.allSatisfy { equal(x[$0], y[$0]) }
        case (let x?, let y?): return x == y
        default: return false
        }
    }
}
