import Foundation
import IconrCore
import IconrRender
import IconrTestSupport
import Testing

/// `iconr render` end to end, through the built binary.
struct RenderCommandTests {
    let directory: URL
    /// Removed with the test.
    private let scratch: TemporaryFolder
    let flag = TestSupport.icons.appendingPathComponent("flag.svg").path

    init() throws {
        scratch = try TemporaryFolder("iconr-cli")
        directory = scratch.url
    }

    private func iconr(_ arguments: String...) throws -> IconrRun {
        try TestSupport.iconr(arguments, in: directory)
    }

    private func files() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    private func image(_ name: String) throws -> RasterImage {
        try PNGDecoder.decode([UInt8](Data(contentsOf: directory.appendingPathComponent(name))))
    }

    @Test func rendersWithDefaultNamesPerScale() throws {
        let one = try iconr("render", flag, "--param", "flag_color=#800080")
        #expect(one.status == 0 && one.stdout == "flag.png\n" && one.stderr.isEmpty)
        let two = try iconr("render", flag, "--param=flag_color=red", "--scale", "2")
        #expect(two.status == 0 && two.stdout == "flag@2x.png\n")
        let fractional = try iconr("render", flag, "-s", "1.5x")
        #expect(fractional.stdout == "flag@1.5x.png\n")
        #expect(try files() == ["flag.png", "flag@1.5x.png", "flag@2x.png"])
        #expect(try image("flag.png").size.width == 24)
        #expect(try image("flag@2x.png").hex(x: 26, y: 16) == "#ff0000ff")
        #expect(try image("flag@1.5x.png").size.width == 36)
        #expect(try image("flag.png").hex(x: 13, y: 8) == "#800080ff")
    }

    /// Hex without `#`, as sprite ids write colors (`flag?flag_color=800080`), is a color too.
    @Test func hexWithoutHashIsAColor() throws {
        let bare = try iconr("render", flag, "-p", "flag_color=800080", "-o", "bare.png")
        #expect(bare.status == 0, "\(bare.stderr)")
        #expect(try image("bare.png").hex(x: 13, y: 8) == "#800080ff")
    }

    @Test func writesToAPathOrToStdout() throws {
        let named = try iconr("render", flag, "-o", "purple.png", "-p", "flag_color=purple")
        #expect(named.status == 0 && named.stdout == "purple.png\n")
        let piped = try iconr("render", flag, "-o", "-", "-p", "flag_color=purple")
        #expect(piped.status == 0)
        #expect(try PNGDecoder.decode([UInt8](piped.output)) == image("purple.png"))
        #expect(try files() == ["purple.png"])
    }

    @Test func outputIsAPNGOtherToolsRead() throws {
        _ = try iconr("render", flag, "-s", "3")
        let pngcheck = try #require(
            TestSupport.which("pngcheck"), "pngcheck is not installed (apt-get install pngcheck)")
        let check = try TestSupport.run(pngcheck, [directory.appendingPathComponent("flag@3x.png").path])
        #expect(check.status == 0)
        #expect(String(decoding: check.stdout, as: UTF8.self).contains("72x72, 32-bit RGB+alpha"))
    }

    /// A name the template does not declare is an error, as the server's 400 and the
    /// library's `IconrError.unknownParameter`, naming what it declares: nothing is written.
    @Test func anUnknownParameterIsAnErrorWithDidYouMean() throws {
        let result = try iconr("render", flag, "-p", "flag_colour=red", "-o", "out.png")
        #expect(result.status == 1)
        #expect(
            result.stderr
                == "error: \(flag): unknown parameter 'flag_colour': icon \"flag\" declares flag_color (did you mean 'flag_color'?)\n"
        )
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("out.png").path))
    }

    @Test(arguments: [
        (["render"], "error: missing <template.svg>"),
        (
            ["render", "a.svg", "-s", "1,2", "-o", "-"],
            "error: -o - writes one PNG: give one template at one scale, or -o DIR"
        ),
        (
            ["render", "a.svg", "--scale", "0"],
            "error: invalid value '0' for --scale: expected a number > 0 and at most 1000000, such as 2 or 2x"
        ),
        (
            ["render", "a.svg", "--scale", "inf"],
            "error: invalid value 'inf' for --scale: expected a number > 0 and at most 1000000, such as 2 or 2x"
        ),
        (
            ["render", "a.svg", "--scale", "1e9"],
            "error: invalid value '1e9' for --scale: expected a number > 0 and at most 1000000, such as 2 or 2x"
        ),
        (["render", "a.svg", "--scale"], "error: missing value for --scale"),
        (
            ["render", "a.svg", "--param", "flag_color"],
            "error: invalid value 'flag_color' for --param: expected NAME=COLOR"
        ),
        (
            ["render", "a.svg", "-p", "flag_color=#12"],
            "error: invalid color '#12' for --param flag_color: expected #rrggbb or rrggbb, #rgb, #rrggbbaa, rgb(), rgba(), hsl(), hsla() or a CSS name"
        ),
        (["render", "a.svg", "--bogus"], "error: unknown option '--bogus'"),
        (
            ["render", "a.svg", "--max-size", "0"],
            "error: invalid value '0' for --max-size: expected PX or WxH, whole numbers from 1 to 32767"
        ),
        (["render", "a.svg", "-o", "x.png", "-o", "y.png"], "error: -o given more than once"),
    ])
    func usageMistakesExit64WithTheUsageLine(_ arguments: [String], _ message: String) throws {
        // In process: the command stops before any file is read.
        let result = InProcess.iconr(arguments)
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix(message + "\n"), "\(result.stderr)")
        #expect(result.stderr.contains("Usage: iconr render <template.svg>..."))
        #expect(result.stderr.contains("See 'iconr render --help'."))
        #expect(result.stdout.isEmpty)
    }

    @Test func failuresExit1WithOneErrorLineAndNoOutputFile() throws {
        let cases: [([String], String)] = [
            (["render", "missing.svg"], "error: missing.svg: no such file\n"),
            (["render", flag, "-s", "500"], "error: \(flag): a 12000x12000 raster exceeds the limit of 4096x4096\n"),
            (
                ["render", flag, "-s", "5", "--max-size", "100"],
                "error: \(flag): a 120x120 raster exceeds the limit of 100x100\n"
            ),
            (
                ["render", flag, "-o", "no/such/dir/x.png"],
                "error: no/such/dir/x.png: cannot write it: no such directory no/such/dir\n"
            ),
        ]
        for (arguments, expected) in cases {
            let result = try TestSupport.run(TestSupport.iconrExecutable, arguments, directory: directory)
            #expect(result.status == 1, "\(arguments)")
            #expect(String(decoding: result.stderr, as: UTF8.self) == expected)
        }
        #expect(try files().isEmpty)
    }

    @Test func malformedTemplatesNameFileLineAndValue() throws {
        let bad = directory.appendingPathComponent("bad.svg")
        try Data(
            """
            <svg xmlns="http://www.w3.org/2000/svg" xmlns:m="https://www.mapbox.com" width="4" height="4">
              <m:metadata><m:parameters>
                <m:parameter m:name="flag_color" m:type="color" m:value="#12"/>
              </m:parameters></m:metadata>
            </svg>
            """.utf8
        ).write(to: bad)
        let result = try iconr("render", "bad.svg")
        #expect(result.status == 1)
        #expect(result.stderr == "error: bad.svg:3:53: m:parameter \"flag_color\" has an invalid m:value \"#12\"\n")
    }

    @Test(
        .enabled(if: TestSupport.corporaAvailable, Comment(rawValue: TestSupport.corporaMissing)),
        arguments: TestSupport.svgFiles(in: TestSupport.corpus("librsvg-2.54-crashers")))
    func crashersExit1WithoutASignal(_ file: URL) throws {
        let result = try iconr("render", file.path, "--timeout", "3")
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("error: \(file.path): "))
        #expect(result.stderr.filter { $0 == "\n" }.count == 1)
        #expect(try files().isEmpty)
    }

    @Test func anInterruptLeavesNoOutputBehind() throws {
        // A document that renders for minutes, interrupted while the CLI waits for it.
        try Data(
            """
            <svg xmlns='http://www.w3.org/2000/svg' width='100' height='100'>
              <filter id='a'><feTurbulence numOctaves='33333333333'/></filter>
              <path d='m10 10 H1 V1' filter='url(#a)'/>
            </svg>
            """.utf8
        ).write(to: directory.appendingPathComponent("slow.svg"))
        let process = try RunningProgram(
            TestSupport.iconrExecutable, ["render", "slow.svg", "-o", "slow.png"], directory: directory)
        Thread.sleep(forTimeInterval: 1)
        process.signal(SIGINT)
        let status = process.wait(timeout: 30)
        #expect(status != nil, "still running 30 s after the interrupt")
        #expect(status == 130)
        #expect(try files() == ["slow.svg"])
    }
}
