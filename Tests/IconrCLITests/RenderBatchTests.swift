import Foundation
import IconrCore
import IconrRender
import IconrTestSupport
import Testing

/// `iconr render` of many icons in one process (several templates, several scales, a
/// `--list`), end to end through the built binary.
struct RenderBatchTests {
    let directory: URL
    /// Removed with the test.
    private let scratch: TemporaryFolder
    let flag = TestSupport.icons.appendingPathComponent("flag.svg").path
    let marker = TestSupport.icons.appendingPathComponent("marker.svg").path

    init() throws {
        scratch = try TemporaryFolder("iconr-batch")
        directory = scratch.url
    }

    private func iconr(_ arguments: [String], stdin: Data? = nil) throws -> IconrRun {
        try TestSupport.iconr(arguments, in: directory, stdin: stdin)
    }

    private func image(_ path: String) throws -> RasterImage {
        try PNGDecoder.decode([UInt8](Data(contentsOf: directory.appendingPathComponent(path))))
    }

    private func write(_ text: String, to name: String) throws {
        try Data(text.utf8).write(to: directory.appendingPathComponent(name))
    }

    @Test func everyTemplateAtEveryScaleGoesIntoTheFolder() throws {
        let run = try iconr(["render", flag, marker, "-s", "1,2", "-p", "flag_color=#800080", "-o", "out"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "out/flag.png\nout/flag@2x.png\nout/marker.png\nout/marker@2x.png\n")
        #expect(run.stderr.hasPrefix("render: 4 of 4 PNGs written in "))
        #expect(try image("out/flag.png").size == PixelSize(width: 24, height: 24))
        #expect(try image("out/flag@2x.png").size == PixelSize(width: 48, height: 48))
        #expect(try image("out/flag.png").hex(x: 13, y: 8) == "#800080ff")
        #expect(try image("out/marker@2x.png").size == PixelSize(width: 40, height: 56))
        // The one-job renders of the same variants give the same bytes.
        let single = try iconr(["render", flag, "-p", "flag_color=#800080", "-s", "2", "-o", "one.png"])
        #expect(single.status == 0)
        #expect(
            try Data(contentsOf: directory.appendingPathComponent("one.png"))
                == Data(contentsOf: directory.appendingPathComponent("out/flag@2x.png")))
    }

    @Test func aListLineIsARenderWithItsOwnParametersScaleAndName() throws {
        try write(
            """
            # flags for the legend
            \(flag) -p flag_color=red -o red.png
              \(flag) --param="flag_color=rgb(0, 0, 255)" -o 'blue flag.png'

            \(flag)
            \(marker) -s 2
            """, to: "jobs.txt")
        let run = try iconr(["render", "--list", "jobs.txt", "-p", "flag_color=#008000", "-o", "legend"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "legend/red.png\nlegend/blue flag.png\nlegend/flag.png\nlegend/marker@2x.png\n")
        #expect(try image("legend/red.png").hex(x: 13, y: 8) == "#ff0000ff")
        #expect(try image("legend/blue flag.png").hex(x: 13, y: 8) == "#0000ffff")
        // No -p on the line: the command's.
        #expect(try image("legend/flag.png").hex(x: 13, y: 8) == "#008000ff")
        #expect(try image("legend/marker@2x.png").size == PixelSize(width: 40, height: 56))
    }

    @Test func aListCanComeFromStdin() throws {
        let run = try iconr(
            ["render", "--list", "-"], stdin: Data("\(flag) -p flag_color=teal\n\(flag) -s 3\n".utf8))
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "flag.png\nflag@3x.png\n")
        #expect(try image("flag.png").hex(x: 13, y: 8) == "#008080ff")
        #expect(try image("flag@3x.png").size.width == 72)
    }

    @Test func aBadIconFailsAloneAndTheOthersAreWritten() throws {
        try write("<svg xmlns='http://www.w3.org/2000/svg' width='4' height='4'><rect", to: "broken.svg")
        let run = try iconr(
            ["render", "broken.svg", flag, "missing.svg", "maki/*.svg", "-s", "1,2", "--max-size", "30", "-o", "out"])
        #expect(run.status == 1)
        #expect(run.stdout == "out/flag.png\n")
        let errors = run.stderr.split(separator: "\n").filter { $0.hasPrefix("error: ") }
        // One line per file that cannot be read, however many scales it had; one per render.
        #expect(errors.count == 4, "\(run.stderr)")
        #expect(errors.filter { $0.hasPrefix("error: broken.svg:1:") }.count == 1)
        #expect(errors.contains("error: missing.svg: no such file"))
        // A pattern the shell matched to no file is named as one.
        #expect(errors.contains("error: maki/*.svg: no such file (the shell matched no file to this pattern)"))
        #expect(errors.contains("error: \(flag): a 48x48 raster exceeds the limit of 30x30"))
        // The files not read count as files, not as the PNGs they would have made.
        #expect(
            run.stderr.contains("render: 1 of 2 PNGs written in ")
                && run.stderr.contains(", 1 failed, 3 files not read"),
            "\(run.stderr)")
        let written = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("out").path)
        #expect(written == ["flag.png"])
        // Nothing matched: one file not read, no PNG planned.
        let none = try iconr(["render", "maki/*.svg", "-s", "1,2", "-o", "out"])
        #expect(none.status == 1)
        #expect(
            none.stderr.hasPrefix("error: maki/*.svg: no such file (the shell matched no file to this pattern)\n")
                && none.stderr.contains("render: no PNG written in ") && none.stderr.contains(", 1 file not read"),
            "\(none.stderr)")
    }

    @Test func mistakesInAListNameTheLineAndNothingIsRendered() throws {
        let cases: [(String, String)] = [
            ("\(flag) -p flag_color=#12\n", "error: jobs.txt:1: invalid color '#12' for --param flag_color: "),
            ("\n\(flag) --zoom 2\n", "error: jobs.txt:2: unknown option '--zoom'"),
            ("\(flag) -o 'a.png\n", "error: jobs.txt:1: unclosed quote"),
            ("\(flag) \(marker)\n", "error: jobs.txt:1: unexpected argument '\(marker)'"),
            ("\(flag) -s 1,2 -o a.png\n", "error: jobs.txt:1: -o names one file: give one scale with it"),
            (
                "\(flag) -o a.png\n\(marker) -o a.png\n",
                "error: jobs.txt:2: a.png is written by jobs.txt:1 already: give this line its own -o"
            ),
        ]
        for (list, expected) in cases {
            try write(list, to: "jobs.txt")
            let run = try iconr(["render", "--list", "jobs.txt"])
            #expect(run.status == 1, "\(list)")
            #expect(run.stderr.hasPrefix(expected), "\(run.stderr)")
            #expect(run.stdout.isEmpty)
        }
        let missing = try iconr(["render", "--list", "nope.txt"])
        #expect(missing.status == 1 && missing.stderr == "error: nope.txt: no such file\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["jobs.txt"])
    }

    @Test func aParameterNoTemplateDeclaresIsAnErrorAndNothingIsWritten() throws {
        // flag_color is flag's: not a mistake for the marker.
        let declared = try iconr(["render", flag, marker, "-p", "flag_color=red", "-o", "out"])
        #expect(
            declared.status == 0 && !declared.stderr.contains("error") && !declared.stderr.contains("warning"),
            "\(declared.stderr)")
        let run = try iconr(["render", flag, marker, "-p", "flag_color=red", "-p", "flag_colour=red", "-o", "bad"])
        #expect(run.status == 1)
        #expect(
            run.stderr
                == "error: unknown parameter 'flag_colour': no template declares it (did you mean 'flag_color'?)\n")
        #expect(run.stdout.isEmpty)
        #expect(
            ((try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("bad").path)) ?? [])
                .isEmpty)
        // One template at two scales: the template's own error.
        let one = try iconr(["render", flag, "-s", "1,2", "-p", "flag_colour=red", "-o", "one"])
        #expect(one.status == 1)
        #expect(
            one.stderr
                == "error: \(flag): unknown parameter 'flag_colour': icon \"flag\" declares flag_color (did you mean 'flag_color'?)\n"
        )
    }

    @Test(.enabled(if: TestSupport.corporaAvailable, Comment(rawValue: TestSupport.corporaMissing)))
    func aDocumentThatCrashesLibrsvgFailsByName() throws {
        let crasher = TestSupport.corpora.appendingPathComponent("librsvg-2.54-crashers/empty-region.svg").path
        let run = try iconr(["render", crasher, flag, marker, "-o", "out"])
        #expect(run.status == 1)
        #expect(run.stdout == "out/flag.png\nout/marker.png\n")
        #expect(run.stderr.contains("error: \(crasher): librsvg crashed on this document (SIGABRT"), "\(run.stderr)")
        #expect(try image("out/flag.png").size.width == 24)
    }
}
