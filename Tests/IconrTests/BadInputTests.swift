import Foundation
import Iconr
import IconrRender
import IconrTestSupport
import Testing

/// Bad input gets a one-line error naming the file; crashes and runaways in librsvg become
/// errors when rendering is isolated.
struct BadInputTests {
    @Test(arguments: [
        (
            "malformed XML", "<svg xmlns='http://www.w3.org/2000/svg' width='1' height='1'><g></svg>",
            "bad.svg: not a valid SVG document:"
        ),
        (
            "unclosed root", "<svg xmlns='http://www.w3.org/2000/svg' width='1' height='1'>",
            "bad.svg: not a valid SVG document:"
        ),
        ("not XML", "just some words", "bad.svg: no root element: not an SVG document"),
        ("PNG bytes", "\u{89}PNG\r\n\u{1A}\n", "bad.svg: no root element: not an SVG document"),
        (
            "no size, draws nothing", "<svg xmlns='http://www.w3.org/2000/svg'><g/></svg>",
            "bad.svg: the document has no size"
        ),
        (
            "zero size", "<svg xmlns='http://www.w3.org/2000/svg' width='0' height='0'/>",
            "bad.svg: the document has no size"
        ),
        ("HTML", "<html xmlns='http://www.w3.org/1999/xhtml'><body/></html>", "bad.svg"),
    ])
    func rejectsDocumentsWithOneLineNamingTheFile(_ what: String, _ text: String, _ prefix: String) {
        // iconr's scan finds some at once; librsvg, which loads on the first render, the rest.
        #expect(
            performing: { try IconSource(name: "bad", bytes: Array(text.utf8), path: "bad.svg").render() },
            throws: { error in
                let message = "\(error)"
                return message.hasPrefix(prefix) && !message.contains("\n")
            })
    }

    /// Errors are cases with data, and one line each: a caller can tell a missing file from
    /// a FIFO from a PNG, and a person reads the same words as before.
    @Test func fileErrorsAreCasesWithTheirData() throws {
        let temporary = try TemporaryFolder("iconr-errors")
        defer { withExtendedLifetime(temporary) {} }
        let folder = temporary.url
        let missing = folder.appendingPathComponent("missing.svg").path
        #expect(throws: IconrError.self) { try IconSource(path: missing) }
        do {
            _ = try IconSource(path: missing)
        } catch {
            guard case .read(let failure) = error else {
                Issue.record("not a read error: \(error)")
                return
            }
            #expect(failure.problem == .system(SystemError("open", errno: ENOENT)))
            #expect(error.description == "\(missing): no such file")
        }
        let fifo = folder.appendingPathComponent("pipe.svg").path
        #expect(mkfifo(fifo, 0o600) == 0)
        do {
            _ = try IconSource(path: fifo)
            Issue.record("a FIFO was read")
        } catch {
            guard case .read(let failure) = error else {
                Issue.record("not a read error: \(error)")
                return
            }
            #expect(failure.problem == .notRegularFile(kind: "a FIFO"))
            #expect(error.description == "\(fifo): is a FIFO, not a regular file")
        }
        let png = folder.appendingPathComponent("picture.svg").path
        try Data(try PNGEncoder.encode(RasterImage(size: PixelSize(width: 1, height: 1), pixels: [0, 0, 0, 255])))
            .write(to: URL(fileURLWithPath: png))
        do {
            _ = try IconSource(path: png)
            Issue.record("a PNG was taken for a template")
        } catch {
            guard case .notATemplate(let path) = error else {
                Issue.record("not notATemplate: \(error)")
                return
            }
            #expect(path == png)
            #expect(error.description.hasPrefix("\(png): is a PNG image, not an SVG template"))
        }
        let blocked = folder.appendingPathComponent("file").path
        try Data().write(to: URL(fileURLWithPath: blocked))
        do {
            _ = try DiskCache(directory: blocked + "/cache")
            Issue.record("a cache folder was made under a file")
        } catch {
            guard case .folder(_, .cannotCreate(let purpose, let failure)) = error else {
                Issue.record("not a folder error: \(error)")
                return
            }
            #expect(purpose == "the cache directory" && failure.errno == ENOTDIR)
            #expect(error.description == "\(blocked)/cache: cannot create the cache directory: Not a directory")
        }
    }

    @Test func positionsOfXMLErrorsAreReported() {
        let text = "<svg xmlns='http://www.w3.org/2000/svg' width='1' height='1'>\n<g>\n</svg>"
        #expect(
            performing: { try IconSource(name: "bad", bytes: Array(text.utf8), path: "bad.svg").render() },
            throws: { "\($0)".contains("line 3") })
    }

    @Test func emptyAndMissingFiles() throws {
        let temporary = try TemporaryFolder("iconr-bad")
        defer { withExtendedLifetime(temporary) {} }
        let directory = temporary.url
        let empty = directory.appendingPathComponent("empty.svg")
        try Data().write(to: empty)
        #expect(
            performing: { try IconSource(path: empty.path) },
            throws: { "\($0)".hasSuffix("empty.svg: the file is empty") })
        #expect(
            performing: { try IconSource(path: directory.appendingPathComponent("nope.svg").path) },
            throws: { "\($0)".hasSuffix("nope.svg: no such file") })
        #expect(
            performing: { try IconSource(path: directory.path) },
            throws: { "\($0)".hasSuffix(": is a directory, not a regular file") })
    }

    @Test func externalFilesAreReadOnlyBesideATemplateFile() throws {
        // A sibling file that would paint the icon red if it were included.
        let temporary = try TemporaryFolder("iconr-ext")
        defer { withExtendedLifetime(temporary) {} }
        let directory = temporary.url
        let red =
            "<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'><rect width='10' height='10' fill='red'/></svg>"
        try Data(red.utf8).write(to: directory.appendingPathComponent("red.svg"))
        let main = directory.appendingPathComponent("main.svg")
        try Data(
            """
            <svg xmlns='http://www.w3.org/2000/svg' xmlns:xlink='http://www.w3.org/1999/xlink' width='10' height='10'>
              <image href='red.svg' width='10' height='10'/><use xlink:href='red.svg#x'/>
            </svg>
            """.utf8
        ).write(to: main)
        // From bytes there is no base: nothing else is read.
        let fromBytes = try IconSource(name: "main", bytes: [UInt8](try Data(contentsOf: main))).render()
        #expect(fromBytes.image.centerHex == "#00000000")
        // From its file, the files beside it are drawn (as iconr render and sprite do).
        #expect(try IconSource(path: main.path).render().image.centerHex == "#ff0000ff")
    }

    /// The crasher tests' argument lists are not empty (an empty list runs no case, and passes).
    @Test(.enabled(if: TestSupport.corporaAvailable, Comment(rawValue: TestSupport.corporaMissing)))
    func theCrasherCorpusIsThere() throws {
        _ = try TestSupport.requiredSVGFiles(in: TestSupport.corpus("librsvg-2.54-crashers"), atLeast: 5)
    }

    /// Every file of the crasher corpus fails with an error (crash, timeout or a document
    /// error), in the isolated renderer, without taking the test process down.
    @Test(
        .enabled(if: TestSupport.corporaAvailable, Comment(rawValue: TestSupport.corporaMissing)),
        arguments: TestSupport.svgFiles(in: TestSupport.corpus("librsvg-2.54-crashers")))
    func crashersBecomeErrors(_ file: URL) throws {
        let limits = RenderLimits(timeout: 3)
        let started = ContinuousClock.now
        #expect(throws: IconrError.self) {
            let template = try IconSource(path: file.path)
            _ = try template.render(scale: 1, placement: .isolated(TestSupport.isolated), limits: limits)
        }
        #expect(ContinuousClock.now - started < .seconds(10))
    }

    @Test(.enabled(if: TestSupport.corporaAvailable, Comment(rawValue: TestSupport.corporaMissing)))
    func knownAbortsAreReportedAsCrashes() throws {
        let file = TestSupport.corpora.appendingPathComponent("librsvg-2.54-crashers/empty-region.svg")
        #expect(
            performing: {
                let template = try IconSource(path: file.path)
                _ = try template.render(placement: .isolated(TestSupport.isolated))
            }, throws: { "\($0)".hasSuffix("empty-region.svg: librsvg crashed on this document (SIGABRT)") })
    }

    @Test func runawayRendersHitTheTimeout() throws {
        // The numOctaves crasher, given a size so that it reaches rendering (it runs for minutes).
        let text = """
            <svg xmlns='http://www.w3.org/2000/svg' width='100' height='100'>
              <filter id='a'><feTurbulence numOctaves='33333333333'/></filter>
              <path d='m10 10 H1 V1' filter='url(#a)'/>
            </svg>
            """
        let template = try IconSource(name: "slow", bytes: Array(text.utf8), path: "slow.svg")
        let started = ContinuousClock.now
        #expect(
            performing: {
                try template.render(placement: .isolated(TestSupport.isolated), limits: RenderLimits(timeout: 1.5))
            },
            throws: { "\($0)" == "slow.svg: rendering took longer than the 1.5 s limit" })
        #expect(ContinuousClock.now - started < .seconds(5))
        // The renderer recovers: the next render gets a fresh worker.
        let flag = try IconSource(path: TestSupport.icons.appendingPathComponent("flag.svg").path)
        #expect(try flag.render(placement: .isolated(TestSupport.isolated)).size == PixelSize(width: 24, height: 24))
    }

    @Test func aMissingWorkerExecutableIsAnError() throws {
        let renderer = IsolatedRenderer(executable: "/nonexistent/iconr")
        let flag = try IconSource(path: TestSupport.icons.appendingPathComponent("flag.svg").path)
        #expect(
            performing: { try flag.render(placement: .isolated(renderer)) },
            throws: { "\($0)".contains("render worker failed: cannot start /nonexistent/iconr") })
    }
}
