import Foundation
import IconrCore
import IconrTestSupport
import Testing

/// `iconr check`: a fixture of its own for each rule, a clean icon, the exit codes and
/// `--json`; then the real sets (Maki clean; resvg's feature tests flagged where they use
/// what Mapbox does not draw).
struct CheckCommandTests {
    static let header =
        #"<svg xmlns="http://www.w3.org/2000/svg" xmlns:m="https://www.mapbox.com" width="16" height="16">"#

    /// Each rule's fixture: its file name, the SVG, the `--sdf` it needs, the finding's rule.
    static let fixtures: [(name: String, svg: String, rule: String)] = [
        (
            "big",
            #"<svg xmlns="http://www.w3.org/2000/svg" width="600" height="20"><rect width="600" height="20"/></svg>"#,
            "studio-size"
        ),
        (
            "heavy",
            header + "<!--" + String(repeating: "x", count: 420 * 1024) + #"--><rect width="16" height="16"/></svg>"#,
            "studio-file-size"
        ),
        ("styled", header + #"<style>rect { fill: red }</style><rect width="16" height="16"/></svg>"#, "style-element"),
        ("label", header + #"<text x="1" y="12">A</text></svg>"#, "text"),
        (
            "hatched",
            header
                + #"<pattern id="p" width="2" height="2" patternUnits="userSpaceOnUse"><rect width="1" height="1"/></pattern><rect width="16" height="16" fill="url(#p)"/></svg>"#,
            "pattern"
        ),
        ("blended", header + #"<rect width="16" height="16" style="mix-blend-mode: multiply"/></svg>"#, "blend-mode"),
        (
            "reflected",
            header
                + #"<linearGradient id="g" x2="0.2" spreadMethod="reflect"><stop offset="0"/><stop offset="1" stop-color="red"/></linearGradient><rect width="16" height="16" fill="url(#g)"/></svg>"#,
            "spread-method"
        ),
        (
            "photo", header + #"<image width="16" height="16" href="data:image/png;base64,iVBORw0KGgo="/></svg>"#,
            "image"
        ),
        (
            "outlined",
            header
                + ##"<m:metadata><m:parameters><m:parameter m:name="body" m:type="color" m:value="#000000"/></m:parameters></m:metadata><rect width="16" height="16" stroke="#000000"/></svg>"##,
            "shared-default"
        ),
        (
            "shield",
            header
                + #"<m:metadata><m:stretch-x-areas><m:stretch-x-area m:left="4" m:width="8"/></m:stretch-x-areas></m:metadata><rect width="16" height="16"/></svg>"#,
            "sdf-stretch"
        ),
        (
            "odd",
            #"<svg xmlns="http://www.w3.org/2000/svg" width="14.25" height="16"><rect width="14" height="16"/></svg>"#,
            "fractional-size"
        ),
        ("broken", "<svg", "invalid"),
    ]

    @Test func eachRuleHasAFixtureThatItFlagsAndACleanIconPasses() throws {
        let folder = try TemporaryFolder("iconr-check")
        let clean = folder.url.appendingPathComponent("clean.svg")
        try Data((Self.header + ##"<rect width="16" height="16" fill="#336699"/></svg>"##).utf8).write(to: clean)
        let passed = InProcess.iconr(["check", clean.path])
        #expect(passed.status == 0 && passed.stdout.isEmpty, "\(passed.stdout)\(passed.stderr)")
        #expect(passed.stderr.contains("check: 1 icon, nothing lost for mapbox or maplibre"))
        // The repository's own icons pass: every paint of the default's color is declared
        // (the flag's cloth, the marker's strokes in an attribute and in a style).
        let own = InProcess.iconr(["check", TestSupport.icons.path])
        #expect(own.status == 0 && own.stdout.isEmpty, "\(own.stdout)\(own.stderr)")
        // Declared paints of the default's color pass, in a group too; a shape, a stop or
        // currentColor that takes the initial black does not.
        let parameter =
            ##"<m:metadata><m:parameters><m:parameter m:name="body" m:type="color" m:value="#000000"/></m:parameters></m:metadata>"##
        for (svg, flagged) in [
            (
                ##"<rect width="8" height="8" fill="#000"/><rect x="8" width="8" height="8" stroke="#000" fill="red"/>"##,
                false
            ),
            (##"<g fill="#000000"><rect width="8" height="8"/></g>"##, false),
            (
                ##"<g style="fill: blue"><rect width="8" height="8"/></g><clipPath id="c"><rect width="4" height="4"/></clipPath>"##,
                false
            ),
            (##"<g><rect width="8" height="8"/></g>"##, true),
            (
                ##"<linearGradient id="g"><stop offset="0"/></linearGradient><rect width="8" height="8" fill="url(#g)"/>"##,
                true
            ),
            (##"<rect width="8" height="8" fill="currentColor"/>"##, true),
        ] {
            let file = folder.url.appendingPathComponent("shared.svg")
            try Data((Self.header + parameter + svg + "</svg>").utf8).write(to: file)
            let run = InProcess.iconr(["check", file.path, "--for", "mapbox"])
            #expect((run.status == 1) == flagged, "\(svg): \(run.stdout)")
            #expect(run.stdout.contains("is also the initial") == flagged, "\(svg): \(run.stdout)")
        }
        #expect(Set(Self.fixtures.map(\.rule)).count == Self.fixtures.count)
        for fixture in Self.fixtures {
            let file = folder.url.appendingPathComponent(fixture.name + ".svg")
            try Data(fixture.svg.utf8).write(to: file)
            let run = InProcess.iconr(["check", file.path, "--sdf", "shield", "--json"])
            #expect(run.status == 1, "\(fixture.name): \(run.stderr)")
            let json = try JSONValue.parse(Array(run.stdout.utf8))
            let rules = (json["icons"]?.arrayValue?.first?["findings"]?.arrayValue ?? []).compactMap {
                $0["rule"]?.stringValue
            }
            #expect(rules.contains(fixture.rule), "\(fixture.name): \(rules)")
            // Nothing else is flagged in a fixture of one rule (invalid counts once per target).
            #expect(Set(rules) == [fixture.rule], "\(fixture.name): \(rules)")
        }
        // The target filter: the SDF shield is MapLibre's finding, the <style> Mapbox's.
        let shield = folder.url.appendingPathComponent("shield.svg").path
        #expect(InProcess.iconr(["check", shield, "--sdf", "shield", "--for", "mapbox"]).status == 0)
        let maplibre = InProcess.iconr(["check", shield, "--sdf", "shield", "--for", "maplibre"])
        #expect(
            maplibre.status == 1 && maplibre.stdout.contains("shield.svg: maplibre: an SDF icon with stretch areas"))
        #expect(InProcess.iconr(["check", shield]).status == 0, "not SDF without --sdf: nothing to deform")
        let wrong = InProcess.iconr(["check", shield, "--for", "mapbx"])
        #expect(wrong.status == 64 && wrong.stderr.contains("did you mean 'mapbox'?"))
    }

    /// With `--style`, the style is checked against the folders: each icon it shows that none
    /// holds (with the id it likely meant, a size suffix ignored), and for MapLibre each layer
    /// that shows SDF and non-SDF icons; a layer whose names come from data is not judged.
    @Test func aStyleIsCheckedAgainstTheFolders() throws {
        let folder = try TemporaryFolder("iconr-check-style")
        let icons = folder.url.appendingPathComponent("icons")
        try FileManager.default.createDirectory(at: icons, withIntermediateDirectories: true)
        for name in ["cafe", "airport", "marker", "pin"] {
            try Data((Self.header + #"<rect width="16" height="16"/></svg>"#).utf8)
                .write(to: icons.appendingPathComponent(name + ".svg"))
        }
        let style = folder.url.appendingPathComponent("style.json")
        let layers = [
            #"{"id": "pois", "type": "symbol", "source": "t", "source-layer": "p", "layout": {"icon-image": ["match", ["get", "k"], "a", "cafe", "b", "airport", "marker"]}}"#,
            #"{"id": "pins", "type": "symbol", "source": "t", "source-layer": "p", "layout": {"icon-image": ["case", ["has", "x"], "pin", "marker"]}}"#,
            #"{"id": "lost", "type": "symbol", "source": "t", "source-layer": "p", "layout": {"icon-image": "aeroport"}}"#,
            #"{"id": "sized", "type": "symbol", "source": "t", "source-layer": "p", "layout": {"icon-image": "cafe-15"}}"#,
            #"{"id": "any", "type": "symbol", "source": "t", "source-layer": "p", "layout": {"icon-image": ["get", "icon"]}}"#,
        ]
        try Data(
            (#"{"version": 8, "sources": {"t": {"type": "vector", "tiles": ["https://example.com/{z}/{x}/{y}.pbf"]}}, "layers": ["#
                + layers.joined(separator: ",") + "]}").utf8
        ).write(to: style)
        let run = InProcess.iconr([
            "check", icons.path, "--style", style.path, "--sdf", "marker", "--sdf", "pin", "--json",
        ])
        #expect(run.status == 1, "\(run.stderr)")
        let json = try JSONValue.parse(Array(run.stdout.utf8))
        let findings = (json["icons"]?.arrayValue ?? []).filter { $0["file"] == .string(style.path) }
            .flatMap { $0["findings"]?.arrayValue ?? [] }
        let lines = findings.compactMap { finding -> String? in
            guard let target = finding["target"]?.stringValue, let rule = finding["rule"]?.stringValue,
                let message = finding["message"]?.stringValue
            else { return nil }
            return "\(target) \(rule): \(message)"
        }
        #expect(
            lines == [
                #"mapbox missing-icon: the style shows icon "aeroport", which no folder holds (did you mean 'airport'?)"#,
                #"mapbox missing-icon: the style shows icon "cafe-15", which no folder holds (did you mean 'cafe'?)"#,
                #"maplibre missing-icon: the style shows icon "aeroport", which no folder holds (did you mean 'airport'?)"#,
                #"maplibre missing-icon: the style shows icon "cafe-15", which no folder holds (did you mean 'cafe'?)"#,
                #"maplibre sdf-mix: layer "pois" shows SDF icons (marker) and others (airport, cafe): "#
                    + "MapLibre refuses to mix them in one layer; give it icons of one kind",
            ], "\(lines)")
        // Mapbox mixes them; every icon in SDF (or none) mixes nothing; with every icon
        // present, nothing is lost.
        let mapbox = InProcess.iconr(["check", icons.path, "--style", style.path, "--sdf", "marker", "--for", "mapbox"])
        #expect(mapbox.status == 1 && !mapbox.stdout.contains("sdf-mix") && !mapbox.stdout.contains("refuses"))
        let allSDF = InProcess.iconr(["check", icons.path, "--style", style.path, "--sdf-all", "--for", "maplibre"])
        #expect(!allSDF.stdout.contains("refuses"), "\(allSDF.stdout)")
        // `style check --icons` names the same icons: a warning each, errors with --strict.
        let styleCheck = InProcess.iconr(["style", "check", style.path, "--icons", icons.path])
        #expect(styleCheck.status == 0, "\(styleCheck.stderr)")
        #expect(
            styleCheck.stderr.contains(
                #"warning: \#(style.path): the style shows icon "aeroport", which the folders lack (did you mean 'airport'?)"#
            ),
            "\(styleCheck.stderr)")
        #expect(styleCheck.stderr.contains("2 icons the folders lack"), "\(styleCheck.stderr)")
        let strict = InProcess.iconr(["style", "check", style.path, "--icons", icons.path, "--strict", "--json"])
        #expect(strict.status == 1, "\(strict.stderr)")
        let strictJSON = try JSONValue.parse(Array(strict.stdout.utf8))
        #expect(strictJSON["missingIcons"]?.arrayValue?.count == 2, "\(strict.stdout)")
        let noIcons = InProcess.iconr(["style", "check", style.path, "--strict"])
        #expect(noIcons.status == 64 && noIcons.stderr.contains("--strict needs --icons"), "\(noIcons.stderr)")
        for name in ["aeroport", "cafe-15"] {
            try Data((Self.header + "</svg>").utf8).write(to: icons.appendingPathComponent(name + ".svg"))
        }
        let clean = InProcess.iconr(["check", icons.path, "--style", style.path, "--sdf", "marker", "--sdf", "pin"])
        #expect(clean.status == 1 && clean.stdout.split(separator: "\n").count == 1, "\(clean.stdout)")
        let whole = InProcess.iconr(["check", icons.path, "--style", style.path])
        #expect(whole.status == 0 && whole.stdout.isEmpty, "\(whole.stdout)")
        let strictClean = InProcess.iconr(["style", "check", style.path, "--icons", icons.path, "--strict"])
        #expect(strictClean.status == 0 && strictClean.stderr.contains("0 icons the folders lack"))
        // A style is checked against folders, not files.
        let file = InProcess.iconr(["check", icons.appendingPathComponent("cafe.svg").path, "--style", style.path])
        #expect(file.status == 64 && file.stderr.contains("is no folder"), "\(file.stderr)")
    }

    /// A set of more than 1,000 images is more than Studio takes in one style.
    @Test func moreThanAThousandImagesIsASetFinding() throws {
        let folder = try TemporaryFolder("iconr-check-many")
        for number in 0..<1_001 {
            try Data((Self.header + "</svg>").utf8).write(to: folder.url.appendingPathComponent("i\(number).svg"))
        }
        let run = InProcess.iconr(["check", folder.path])
        #expect(run.status == 1)
        #expect(run.stdout == "\(folder.path): mapbox: 1001 images: Studio takes at most 1,000 images a style\n")
    }

    /// Maki draws the same in Mapbox; every resvg feature test that uses a pattern, text,
    /// a blend mode or a `<style>` element (by its text) is flagged for it.
    @Test(.enabled(if: TestSupport.corporaAvailable, Comment(rawValue: TestSupport.corporaMissing)))
    func realSetsAreCheckedFileByFile() throws {
        let maki = InProcess.iconr(["check", TestSupport.corpora.appendingPathComponent("maki").path])
        #expect(maki.status == 0 && maki.stdout.isEmpty && maki.stderr.contains("check: 214 icons, nothing lost"))
        let resvg = TestSupport.corpora.appendingPathComponent("resvg-svg")
        let run = InProcess.iconr(["check", resvg.path, "--json"])
        #expect(run.status == 1)
        let json = try JSONValue.parse(Array(run.stdout.utf8))
        #expect(json["checked"] == .number(878))
        var flagged: [String: Set<String>] = [:]
        for icon in json["icons"]?.arrayValue ?? [] {
            guard let file = icon["file"]?.stringValue else { continue }
            flagged[file] = Set((icon["findings"]?.arrayValue ?? []).compactMap { $0["rule"]?.stringValue })
        }
        let files = try TestSupport.requiredSVGFiles(in: TestSupport.corpus("resvg-svg"), atLeast: 878)
        var expected = 0
        for file in files {
            let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
            for (marker, rule) in [("<pattern", "pattern"), ("<text", "text"), ("<style", "style-element")]
            where text.contains(marker) {
                expected += 1
                #expect(flagged[file.path]?.contains(rule) == true, "\(file.lastPathComponent): \(rule)")
            }
        }
        #expect(expected > 90, "the resvg tests use patterns, text and style sheets: \(expected)")
    }
}
