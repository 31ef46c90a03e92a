import Foundation
import IconrCore
import IconrRender
import IconrTestSupport
import Testing

/// `iconr sprite`'s options taken together: a table of them (ratios, one or several sheets,
/// themes, params, a style with literal names or names from data, `--sprite-url`,
/// `--hash-names`, `--unique`, `--sdf`, `--catalog`, PNG sources, `--halo`, `--bake-halos`) in
/// rows that hold every
/// pair of values at least once, each build checked by one oracle:
/// - every file the build lists exists, and the output folder holds nothing else;
/// - a theme's sheets have the plain sheets' ids;
/// - sampled images of every flavor equal `iconr render` of the same icon, theme, params and halo;
/// - MapLibre GL JS in Chromium draws every emitted style (plain and themed) asking for no
///   image it cannot find (no `styleimagemissing`), every icon shown by a feature.
struct SpriteCombinationTests {
    /// One option and its values, each value the arguments it adds.
    struct Factor: Sendable {
        let name: String
        let values: [String]
    }

    static let factors = [
        Factor(name: "ratio", values: ["1", "1,2", "retina"]),
        Factor(name: "sheets", values: ["one", "several"]),
        Factor(name: "theme", values: ["none", "grayscale", "dark+mono", "dark-2+dark"]),
        Factor(name: "params", values: ["none", "variants"]),
        Factor(name: "style", values: ["none", "literal", "data"]),
        Factor(name: "sprite-url", values: ["no", "yes"]),
        Factor(name: "hash-names", values: ["no", "yes"]),
        Factor(name: "unique", values: ["no", "yes"]),
        Factor(name: "sdf", values: ["no", "marker"]),
        Factor(name: "catalog", values: ["no", "yes"]),
        Factor(name: "png", values: ["no", "yes"]),
        Factor(name: "halo", values: ["no", "2,#000000"]),
        Factor(name: "bake-halos", values: ["no", "yes"]),
    ]

    /// Values that make a build fail on purpose (a usage error): a row holds at most one, and
    /// only the pairs it forms count as covered there, since the rest of the row is not built.
    static let failing: [String: String] = ["theme": "dark-2+dark"]

    /// Rows (a value index per factor) that together hold every pair of values of two
    /// factors: each row starts from the first pair not yet covered and takes, factor by
    /// factor, the value that covers the most pairs not yet covered with the values chosen
    /// before it (no second failing value). Deterministic.
    static func pairwiseRows(_ factors: [Factor]) -> [[Int]] {
        struct Pair: Hashable {
            let a: Int, x: Int, b: Int, y: Int
        }
        func isFailing(_ factor: Int, _ value: Int) -> Bool {
            failing[factors[factor].name] == factors[factor].values[value]
        }
        var uncovered = Set<Pair>()
        for a in factors.indices {
            for b in factors.indices where b > a {
                for x in factors[a].values.indices {
                    for y in factors[b].values.indices { uncovered.insert(Pair(a: a, x: x, b: b, y: y)) }
                }
            }
        }
        /// The pairs `row` (its chosen values) covers: with a failing value, only its own.
        func covered(_ row: [Int]) -> [Pair] {
            let chosen = row.indices.filter { row[$0] >= 0 }
            let failed = chosen.first { isFailing($0, row[$0]) }
            var pairs: [Pair] = []
            for a in chosen {
                for b in chosen where b > a && (failed == nil || a == failed || b == failed) {
                    pairs.append(Pair(a: a, x: row[a], b: b, y: row[b]))
                }
            }
            return pairs
        }
        var rows: [[Int]] = []
        while let seed = uncovered.min(by: { ($0.a, $0.x, $0.b, $0.y) < ($1.a, $1.x, $1.b, $1.y) }) {
            var row = Array(repeating: -1, count: factors.count)
            row[seed.a] = seed.x
            row[seed.b] = seed.y
            let failed = isFailing(seed.a, seed.x) || isFailing(seed.b, seed.y)
            for factor in factors.indices where row[factor] < 0 {
                let candidates = factors[factor].values.indices.filter { !failed || !isFailing(factor, $0) }
                    .filter { failed || !isFailing(factor, $0) }
                func gain(_ value: Int) -> Int {
                    var trial = row
                    trial[factor] = value
                    return covered(trial).filter { uncovered.contains($0) }.count
                }
                // The most pairs; ties go to the first value.
                row[factor] = candidates.max { gain($0) < gain($1) || (gain($0) == gain($1) && $0 > $1) } ?? 0
            }
            for pair in covered(row) { uncovered.remove(pair) }
            rows.append(row)
        }
        return rows
    }

    /// A row's values by factor name.
    static let rows: [[String: String]] = pairwiseRows(factors).map { row in
        Dictionary(uniqueKeysWithValues: factors.indices.map { (factors[$0].name, factors[$0].values[row[$0]]) })
    }

    /// The table holds every pair of values, and is small enough to run.
    @Test func theRowsHoldEveryPair() {
        #expect(Self.rows.count >= 12 && Self.rows.count <= 24, "\(Self.rows.count) rows")
        for (a, first) in Self.factors.enumerated() {
            for second in Self.factors[(a + 1)...] {
                for x in first.values {
                    for y in second.values {
                        // In a row that builds, or that fails on one of these two values.
                        let failingHere =
                            Self.failing[first.name] == x || Self.failing[second.name] == y
                        #expect(
                            Self.rows.contains { row in
                                row[first.name] == x && row[second.name] == y
                                    && (failingHere || !Self.failing.contains { row[$0.key] == $0.value })
                            },
                            "\(first.name)=\(x) with \(second.name)=\(y)")
                    }
                }
            }
        }
    }

    /// The icons a feature shows in the data style: every plain icon (and the PNG one).
    static func dataStyle(icons: [String]) -> String {
        let features = icons.enumerated().map { index, icon in
            #"{"type": "Feature", "geometry": {"type": "Point", "coordinates": [\#(index * 4 - 8), 0]}, "properties": {"icon": "\#(icon)"}}"#
        }
        return #"""
            {"version": 8, "sources": {"points": {"type": "geojson", "data": {"type": "FeatureCollection", "features": [\#(features.joined(separator: ","))]}}},
             "layers": [{"id": "data", "type": "symbol", "source": "points",
               "layout": {"icon-image": ["get", "icon"], "icon-allow-overlap": true, "icon-ignore-placement": true},
               "paint": {"icon-halo-color": "#ffffff", "icon-halo-width": 1}}]}
            """#
    }

    /// Flags in two colors from data, the marker and the label, by literal names.
    static let literalStyle = #"""
        {"version": 8, "sources": {"points": {"type": "geojson", "data": {"type": "FeatureCollection", "features": [
          {"type": "Feature", "geometry": {"type": "Point", "coordinates": [-4, 0]}, "properties": {"c": "red"}},
          {"type": "Feature", "geometry": {"type": "Point", "coordinates": [4, 0]}, "properties": {"c": "#0000ff"}}]}}},
         "layers": [{"id": "flags", "type": "symbol", "source": "points",
           "layout": {"icon-image": ["image", "flag", {"params": {"flag_color": ["get", "c"]}}], "icon-allow-overlap": true},
           "paint": {"icon-halo-color": ["match", ["get", "c"], "red", "#ffffff", "#ffff00"], "icon-halo-width": 1}},
          {"id": "markers", "type": "symbol", "source": "points",
           "layout": {"icon-image": "marker", "icon-allow-overlap": true, "icon-offset": [0, 30]},
           "paint": {"icon-halo-color": "#ffffff", "icon-halo-width": 2}},
          {"id": "labels", "type": "symbol", "source": "points",
           "layout": {"icon-image": "label", "icon-allow-overlap": true, "icon-offset": [0, -30]}}]}
        """#

    @Test(arguments: rows)
    func optionsTogetherBuildWhatEachPromises(row: [String: String]) throws {
        let scratch = try TestSupport.folderWithBundledIcons("iconr-combination")
        let directory = scratch.url
        func write(_ text: String, _ name: String) throws {
            try Data(text.utf8).write(to: directory.appendingPathComponent(name))
        }
        var icons = ["badge", "flag", "label", "marker"]
        var arguments = ["sprite", "./icons", "-o", "./out/", "--no-cache"]
        let ratios: [Double]
        switch row["ratio"] {
        case "1": (arguments, ratios) = (arguments + ["--ratio", "1"], [1])
        case "retina": (arguments, ratios) = (arguments + ["--retina"], [2])
        default: (arguments, ratios) = (arguments + ["--ratio", "1,2"], [1, 2])
        }
        // Several sheets: the largest icon just fits one sheet at the largest ratio.
        if row["sheets"] == "several" { arguments += ["--max-size", ratios.max() == 2 ? "96" : "48"] }
        try write(##"{"name": "dark", "colors": {"#000000": "#f2f2f2", "#5a5a5a": "#b0b0b0"}}"##, "dark.json")
        try write(##"{"name": "mono", "paint": "#777777"}"##, "mono.json")
        try write(##"{"name": "dark-2", "colors": {"#000000": "#dddddd"}}"##, "dark-2.json")
        switch row["theme"] {
        case "grayscale": arguments += ["--theme", "grayscale"]
        case "dark+mono": arguments += ["--theme", "./dark.json", "--theme", "./mono.json"]
        case "dark-2+dark": arguments += ["--theme", "./dark-2.json", "--theme", "./dark.json"]
        default: break
        }
        if row["params"] == "variants" {
            try write(
                ##"{"flag": [{"params": {"flag_color": "#00a000"}}, {"params": {"flag_color": "#123456"}}]}"##,
                "variants.json")
            arguments += ["--variants", "./variants.json"]
        }
        if row["png"] == "yes" {
            var pixels: [UInt8] = []
            for index in 0..<(12 * 12) { pixels += [200, UInt8(index % 12 * 20), 40, 255] }
            try Data(try PNGEncoder.encode(RasterImage(size: PixelSize(width: 12, height: 12), pixels: pixels)))
                .write(to: directory.appendingPathComponent("icons/wetland.png"))
            icons.append("wetland")
        }
        switch row["style"] {
        case "literal": try write(Self.literalStyle, "style.json")
        case "data": try write(Self.dataStyle(icons: icons), "style.json")
        default: break
        }
        let styled = row["style"] != "none"
        if styled { arguments += ["--style", "./style.json", "--emit-style", "./out/style.json"] }
        // Halos are baked from a style: without one the option is not given (a usage error).
        let baked = styled && row["bake-halos"] == "yes"
        if baked { arguments.append("--bake-halos") }
        if row["sprite-url"] == "yes" { arguments += ["--sprite-url", "https://tiles.example.com/s/sprite?v=3"] }
        if row["hash-names"] == "yes" { arguments.append("--hash-names") }
        if row["unique"] == "yes" { arguments.append("--unique") }
        if row["sdf"] == "marker" { arguments += ["--sdf", "marker"] }
        if row["catalog"] == "yes" { arguments += ["--catalog", "./out/catalog.html"] }
        if let halo = row["halo"], halo != "no" { arguments += ["--halo", halo] }

        let run = InProcess.iconr(arguments, in: directory)
        if row["theme"] == "dark-2+dark" {
            // Sheets of "dark-2" would be sheet 2 of "dark": refused before anything is written.
            #expect(run.status == 64, "\(run.stderr)")
            #expect(run.stderr.contains(#"theme "dark-2": a name ending in -2"#), "\(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("out").path))
            return
        }
        try #require(run.status == 0, "\(row): \(run.stderr)")
        let themes: [String] =
            switch row["theme"] {
            case "grayscale": ["grayscale"]
            case "dark+mono": ["dark", "mono"]
            default: []
            }

        // Every file listed exists, and the folder holds nothing else.
        let listed = Set(
            run.stdout.split(separator: "\n").map(String.init).filter { $0.contains(".") && !$0.hasSuffix("/") }
        )
        .filter { FileManager.default.fileExists(atPath: directory.appendingPathComponent($0).path) }
        let found = Set(
            try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("out").path).map {
                "out/" + $0
            })
        #expect(!found.isEmpty && found == listed, "\(row): listed \(listed.sorted()), found \(found.sorted())")

        // The indexes of each flavor at the largest ratio, by flavor ("" plain, else the theme).
        let suffix = ratios.max() == 1 ? ".json" : "@2x.json"
        var indexes: [String: [(path: String, entries: [String: SpriteIndexEntry])]] = [:]
        for path in found.sorted() where path.hasSuffix(suffix) && path.hasPrefix("out/sprite") {
            let name = String(path.dropFirst("out/".count))
            let flavor = themes.first { name.hasPrefix("sprite-\($0)") } ?? ""
            let bytes = [UInt8](try Data(contentsOf: directory.appendingPathComponent(path)))
            indexes[flavor, default: []].append((path, try #require(SpriteIndex.entries(fromJSON: bytes))))
        }
        let plainIDs = Set((indexes[""] ?? []).flatMap(\.entries.keys))
        #expect(plainIDs.isSuperset(of: ["badge", "flag", "label", "marker"]), "\(row): \(plainIDs.sorted())")
        #expect(indexes.count == 1 + themes.count, "\(row): \(indexes.keys.sorted())")
        if row["sheets"] == "several" { #expect((indexes[""] ?? []).count > 1, "\(row): one sheet") }
        for theme in themes {
            #expect(Set((indexes[theme] ?? []).flatMap(\.entries.keys)) == plainIDs, "\(row): theme \(theme)'s ids")
        }

        // Sampled images equal `iconr render` of the same icon, theme, params and halo.
        var compared: [String: Int] = [:]
        var bakedCompared = 0
        for (flavor, sheets) in indexes {
            for sheet in sheets {
                let image = try PNGDecoder.decode(
                    [UInt8](Data(contentsOf: directory.appendingPathComponent(String(sheet.path.dropLast(5)) + ".png")))
                )
                for (fullID, entry) in sheet.entries where fullID.hasPrefix("flag") || (fullID == "badge" && !entry.sdf)
                {
                    // A halo the style asked for (`+halo=W,rrggbb`) in place of the row's.
                    let haloParts = fullID.components(separatedBy: "+halo=")
                    let id = haloParts[0]
                    let haloSpec =
                        haloParts.count > 1
                        ? haloParts[1].replacingOccurrences(
                            of: ",", with: ",#", options: [], range: haloParts[1].range(of: ",")) : nil
                    if haloSpec != nil { bakedCompared += 1 }
                    var render = [
                        "render", "./icons/\(id.split(separator: "?")[0]).svg", "--scale", entry.pixelRatio.shortText,
                    ]
                    if id.contains("?") {
                        for pair in id.split(separator: "?")[1].split(separator: "&") {
                            let parts = pair.split(separator: "=")
                            render += ["--param", "\(parts[0])=#\(parts[1])"]
                        }
                    }
                    switch flavor {
                    case "": break
                    case "grayscale": render += ["--theme", "grayscale"]
                    default: render += ["--theme", "./\(flavor).json"]
                    }
                    if let halo = haloSpec ?? row["halo"], halo != "no" { render += ["--halo", halo] }
                    render += ["-o", "./expected.png", "--no-cache"]
                    let drawn = try TestSupport.iconr(
                        render.map { $0.hasPrefix("./") ? directory.path + $0.dropFirst(1) : $0 })
                    try #require(drawn.status == 0, "\(render): \(drawn.stderr)")
                    let expected = try PNGDecoder.decode(
                        [UInt8](Data(contentsOf: directory.appendingPathComponent("expected.png"))))
                    let cut = try #require(image.cropped(to: entry.rect))
                    #expect(
                        TestSupport.maxChannelDifference(cut, expected) <= 1,
                        "\(row): \(sheet.path) \(id) is not iconr render's \(render)")
                    compared[flavor, default: 0] += 1
                }
            }
        }
        // Every flavor had images to compare (the flag, at least); with baked halos, some haloed.
        #expect(compared.keys.sorted() == indexes.keys.sorted() && compared.values.allSatisfy { $0 > 0 }, "\(row)")
        // The data style's one layer shows every icon: with the marker in SDF, its halos stay
        // the renderer's.
        let sdfInLayer = row["style"] == "data" && row["sdf"] == "marker"
        #expect((bakedCompared > 0) == (baked && !sdfInLayer), "\(row): \(bakedCompared) images with baked halos")
        if baked && sdfInLayer { #expect(run.stderr.contains("shows SDF icons, whose halos the renderer draws")) }

        // Every emitted style, drawn in MapLibre GL JS, finds every image it asks for.
        guard styled else { return }
        for flavor in [""] + themes {
            let file = directory.appendingPathComponent(flavor.isEmpty ? "out/style.json" : "out/style-\(flavor).json")
            var text = try String(contentsOf: file, encoding: .utf8)
            if row["sprite-url"] == "yes" {
                // The flavor's URL, its hash before the query when the names are hashed.
                let expected =
                    "\"https://tiles.example.com/s/sprite" + (flavor.isEmpty ? "" : "-" + flavor)
                    + (row["hash-names"] == "yes" ? "." : "?v=3\"")
                #expect(text.contains(expected), "\(row): \(flavor) names \(expected)")
                // GL JS fetches the files the URL stands for from here.
                text = text.replacingOccurrences(
                    of: "https://tiles.example.com/s/", with: "file://" + directory.path + "/out/"
                ).replacingOccurrences(of: "?v=3", with: "")
            }
            let local = directory.appendingPathComponent("gljs-\(flavor).json")
            try Data(text.utf8).write(to: local)
            let request: [String: Any] = [
                "style_file": local.path, "root": directory.path, "ratio": ratios.max() ?? 1, "width": 300,
                "height": 200, "zoom": 2, "longitude": 0, "latitude": 0,
            ]
            let (_, sidecar) = try MapScript.drawing("render_gljs.py", request, in: directory, client: .glJS)
            let missing = (sidecar as? [String: Any])?["missing"] as? [String]
            #expect(missing == [], "\(row): \(flavor.isEmpty ? "the plain" : flavor) style misses \(missing ?? ["?"])")
        }
    }
}
