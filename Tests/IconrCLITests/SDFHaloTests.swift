import Foundation
import IconrCore
import IconrRender
import IconrTestSupport
import Testing

/// SDF icons hold their halos: MapLibre GL JS in Chromium draws a square icon that touches
/// its own box (the worst case: no room of its own) as an SDF with `icon-halo-width` 1 to 6,
/// at `icon-size` 1 and 2, at device pixel ratios 1 and 2, and each halo reaches as far as
/// it should (8 x size + width CSS px from the centre, within 1.5 device px), not cut flat
/// at the image's border; up to 5 px the corners beyond the halo stay clear (a 6 px halo
/// reaches the field's end, where GL JS draws half of it over the rest of the image).
struct SDFHaloTests {
    static let widths = [1, 2, 3, 4, 5, 6]
    /// Screen x of each feature at zoom 2 around [0, 0] in a 600 px wide map: 90 px apart.
    static let spacing = 90.0

    /// `icons/square.svg` in `folder`: a 16 px square that fills its box.
    static func writeSquare(in folder: URL) throws {
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("icons"), withIntermediateDirectories: true)
        try Data(
            #"<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16"><rect width="16" height="16"/></svg>"#
                .utf8
        ).write(to: folder.appendingPathComponent("icons/square.svg"))
    }

    @Test(arguments: [(1.0, 1.0), (2.0, 1.0), (1.0, 2.0), (2.0, 2.0)])
    func haloWidthsUpToSixFit(size: Double, ratio: Double) throws {
        let scratch = try TemporaryFolder("iconr-sdf-halo")
        let directory = scratch.url
        try Self.writeSquare(in: directory)
        // One degree of longitude at zoom 2 is 512 * 4 / 360 px.
        let degrees = Self.spacing / (512 * 4 / 360)
        let features = Self.widths.enumerated().map { index, width in
            #"{"type": "Feature", "geometry": {"type": "Point", "coordinates": [\#((Double(index) - 2.5) * degrees), 0]}, "properties": {"w": \#(width)}}"#
        }
        let style = #"""
            {"version": 8, "sources": {"p": {"type": "geojson", "data": {"type": "FeatureCollection", "features": [\#(features.joined(separator: ","))]}}},
             "layers": [{"id": "white", "type": "background", "paint": {"background-color": "#ffffff"}},
              {"id": "squares", "type": "symbol", "source": "p",
               "layout": {"icon-image": "square", "icon-size": \#(size), "icon-allow-overlap": true},
               "paint": {"icon-color": "#0000ff", "icon-halo-color": "#ff0000", "icon-halo-width": ["get", "w"]}}]}
            """#
        try Data(style.utf8).write(to: directory.appendingPathComponent("style.json"))
        let build = InProcess.iconr(
            [
                "sprite", "./icons", "-o", "./out/", "--sdf", "square", "--style", "./style.json", "--emit-style",
                "./out/style.json", "--ratio", ratio.shortText, "--no-cache",
            ], in: directory)
        try #require(build.status == 0, "\(build.stderr)")
        let request: [String: Any] = [
            "style_file": directory.appendingPathComponent("out/style.json").path, "root": directory.path,
            "ratio": ratio, "width": 600, "height": 120, "zoom": 2, "longitude": 0, "latitude": 0,
        ]
        let map = try MapScript.run("render_gljs.py", request, in: directory, client: .glJS)
        func isHalo(_ x: Int, _ y: Int) -> Bool {
            let pixel = map[x, y]
            return pixel.red > 128 && pixel.green < 128 && pixel.blue < 128
        }
        for (index, width) in Self.widths.enumerated() {
            let centre = (x: (300 + (Double(index) - 2.5) * Self.spacing) * ratio, y: 60 * ratio)
            // The halo's outer edge along the row through the centre, to the right.
            var edge = 0
            for offset in 0..<Int(40 * ratio) where isHalo(Int(centre.x) + offset, Int(centre.y)) { edge = offset }
            let expected = (8 * size + Double(width)) * ratio
            #expect(
                abs(Double(edge) - expected) <= 1.5,
                "size \(size) at \(ratio)x: a \(width) px halo ends \(edge) device px from the centre, not \(expected)")
            guard width < 6 else { continue }
            // Beyond the halo's rounded corner, on the diagonal: clear.
            let corner = (8 * size + Double(width) * 0.9) * ratio
            #expect(
                !isHalo(Int(centre.x + corner), Int(centre.y + corner)),
                "size \(size) at \(ratio)x: a \(width) px halo fills the corner of its image")
        }
    }

    /// The border follows the radius (0.75 of it) unless `--sdf-buffer` sets it; the field
    /// reaches 0 at radius x 0.75 outside the edge; bad values are usage errors.
    @Test func theBorderFollowsTheRadiusOrTheBuffer() throws {
        let scratch = try TemporaryFolder("iconr-sdf-border")
        let directory = scratch.url
        try Self.writeSquare(in: directory)
        for (options, side) in [([String](), 28), (["--sdf-buffer", "2"], 20), (["--sdf-radius", "16"], 40)] {
            let run = InProcess.iconr(
                ["sprite", "./icons", "-o", "./out/", "--sdf", "square", "--ratio", "1", "--no-cache"] + options,
                in: directory)
            try #require(run.status == 0, "\(run.stderr)")
            let index = try #require(
                SpriteIndex.entries(
                    fromJSON: [UInt8](try Data(contentsOf: directory.appendingPathComponent("out/sprite.json")))))
            let entry = try #require(index["square"])
            #expect(entry.rect.width == side && entry.sdf, "\(options)")
            let sheet = try PNGDecoder.decode(
                [UInt8](try Data(contentsOf: directory.appendingPathComponent("out/sprite.png"))))
            let border = (side - 16) / 2
            // The edge, between the pixels half a pixel either side of it, is 191; the
            // outermost pixel near 0 when the border is the field's reach.
            let row = entry.rect.y + side / 2
            let edge =
                (Int(sheet[entry.rect.x + border - 1, row].alpha) + Int(sheet[entry.rect.x + border, row].alpha)) / 2
            #expect(abs(edge - 191) <= 10, "\(options): the edge's alpha \(edge)")
            let outer = Int(sheet[entry.rect.x, entry.rect.y + side / 2].alpha)
            #expect(
                options.first == "--sdf-buffer" ? outer > 100 : outer < 20, "\(options): the border's alpha \(outer)")
        }
        for (option, value) in [("--sdf-radius", "0"), ("--sdf-radius", "x"), ("--sdf-buffer", "-1")] {
            let run = InProcess.iconr(["sprite", "./icons", "-o", "./bad/", option, value], in: directory)
            #expect(run.status == 64 && run.stderr.contains("invalid value '\(value)' for \(option)"), "\(run.stderr)")
        }
    }
}
