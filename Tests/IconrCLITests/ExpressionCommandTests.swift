import Foundation
import IconrTestSupport
import Testing

/// `iconr expression`: the suite's record on stdout, exit 1 when it does not compile, 64 for
/// arguments that are not JSON, every error one line. Run in process.
struct ExpressionCommandTests {
    /// In process: the command is pure computation.
    private func iconr(_ arguments: String...) throws -> (status: Int32, stdout: String, stderr: String) {
        InProcess.iconr(arguments)
    }

    @Test func printsTheCompiledResultAndEachOutput() throws {
        let ramp = try iconr(
            "expression", #"["interpolate", ["linear"], ["zoom"], 0, "red", 10, "blue"]"#, "--type", "color",
            "--input", #"[{"zoom": 5}, {}]"#, "--input", #"[{"zoom": 20}, {}]"#)
        #expect(ramp.status == 0 && ramp.stderr.isEmpty)
        #expect(
            ramp.stdout
                == #"{"compiled":{"isFeatureConstant":true,"isZoomConstant":false,"result":"success","type":"color"},"outputs":[[0.5,0,0.5,1],[0,0,1,1]]}"#
                + "\n")
        let data = try iconr(
            "expression", #"["get", "x"]"#, "--spec", #"{"type": "number"}"#,
            "--input", #"[{}, {"properties": {"x": "a"}}]"#)
        #expect(
            data.status == 0
                && data.stdout.contains(
                    #""error":"layers[0].paint.some-property: Expected value to be of type number, but found string instead.""#
                ))
        let state = try iconr(
            "expression", #"["global-state", "k"]"#, "--global-state", #"{"k": 3}"#, "--input", "[{}, {}]")
        #expect(state.status == 0 && state.stdout.hasSuffix(#""outputs":[3]}"# + "\n"))
        // Without --input, one empty pair: a constant expression prints its value.
        let constant = try iconr("expression", #"["+", 1, 2]"#)
        #expect(constant.status == 0 && constant.stdout.hasSuffix(#""outputs":[3]}"# + "\n"), "\(constant.stdout)")
    }

    @Test func anExpressionThatDoesNotCompileExits1() throws {
        let bad = try iconr(
            "expression", #"["image", "park", {"params": {"fill": "notacolor"}}]"#, "--type", "resolvedImage")
        #expect(bad.status == 1)
        #expect(
            bad.stdout
                == #"{"compiled":{"errors":[{"error":"Could not parse color from value 'notacolor'","key":"[2].params.fill"}],"result":"error"}}"#
                + "\n")
    }

    @Test func argumentsThatAreNotJSONAreUsageErrorsOfOneLine() throws {
        let notJSON = try iconr("expression", #"["get", "x""#)
        #expect(
            notJSON.status == 64
                && notJSON.stderr.hasPrefix("error: the expression is not JSON: invalid JSON at line 1"))
        let pair = try iconr("expression", "1", "--input", "[{}]")
        #expect(
            pair.status == 64 && pair.stderr.hasPrefix("error: --input must be a [globals, feature] pair, found [{}]\n")
        )
        // A newline in what is quoted stays on the error's line.
        let newline = try iconr("expression", "[\"get\",\n")
        let lines = newline.stderr.split(separator: "\n")
        #expect(newline.status == 64 && lines.first?.hasPrefix("error: ") == true && lines.count >= 3)
        #expect(
            lines.dropFirst().allSatisfy { $0.hasPrefix("Usage: ") || $0.hasPrefix(" ") },
            "only the usage follows the error line")
        #expect(try iconr("expression").status == 64)
    }

    /// `iconr style check`: each change for MapLibre a line on stdout, each part MapLibre would
    /// reject an `error:` line and exit 1; `--json` lists both.
    @Test func styleCheckReportsWithoutBuilding() throws {
        let temporary = try TemporaryFolder("iconr-style")
        defer { withExtendedLifetime(temporary) {} }
        let folder = temporary.url
        let file = folder.appendingPathComponent("style.json")
        try Data(
            #"""
            {"version": 8, "sources": {"s": {"type": "geojson", "data": {"type": "FeatureCollection", "features": []}}},
             "layers": [{"id": "poi", "type": "symbol", "source": "s", "filter": ["<", ["pitch"], 60],
               "layout": {"icon-image": "dot"},
               "paint": {"icon-color": ["to-color", ["to-hsla", ["get", "c"]]]}}]}
            """#.utf8
        ).write(to: file)
        let text = try iconr("style", "check", file.path, "--light", "night")
        #expect(text.status == 1)
        #expect(text.stdout.contains(#"layers[0] ("poi").filter: "pitch" is Mapbox-only: replaced by its value 0"#))
        #expect(
            text.stderr.contains(#"error: \#(file.path): layers[0] ("poi").paint.icon-color: "to-hsla" is Mapbox-only"#)
        )
        let json = try iconr("style", "check", file.path, "--json")
        let report = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: [String]]
        #expect(json.status == 1 && report?["problems"]?.count == 1, "\(json.stdout)")
        #expect(report?["changes"]?.contains { $0.contains("\"pitch\" is Mapbox-only") } == true)
        #expect(try iconr("style", "inspect", file.path).status == 64)
        let bare = try iconr("style", file.path)
        #expect(bare.status == 64)
        #expect(
            bare.stderr.hasPrefix(
                "error: expected 'check <style.json>' (did you mean 'iconr style check \(file.path)'?)\n"))
        #expect(
            try iconr("style", "chek", file.path).stderr.hasPrefix(
                "error: expected 'check <style.json>' (did you mean 'check'?)\n"))
        #expect(try iconr("style", "check", file.path, "--light", "noon").status == 64)
    }
}
