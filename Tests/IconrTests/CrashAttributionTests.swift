import Glibc
import IconrRender
import IconrSystem
import IconrTestSupport
import Testing

/// A crash in iconr's own code is told from one in librsvg (or another library), so that
/// nobody is told that librsvg or the document is at fault for iconr's defect: an overflow in
/// iconr was once reported as "librsvg crashed on this document (SIGILL)". The crashes come
/// from `iconr-crash-probe` (Tests/CrashProbe), under each of iconr's crash handlers.
@Suite struct CrashAttributionTests {
    let probe = TestSupport.builtExecutable("iconr-crash-probe")

    /// A process set up by `CrashSignals.endProcessAtOnce` ends by the signal when a library
    /// crashes (librsvg's Rust panics abort), and with `ownFaultStatus` when iconr traps.
    @Test func aCrashedProcessSaysWhoseCodeCrashed() throws {
        func ending(_ mode: String) throws -> Termination {
            let pid = try ChildProcess.spawn(probe, [mode], fileActions: [.open("/dev/null", flags: O_WRONLY, as: 2)])
            return try ChildProcess.wait(for: pid)
        }
        #expect(try ending("own") == .exited(CrashSignals.ownFaultStatus))
        #expect(try ending("abort") == .signaled(SIGABRT))
        #expect(try ending("library") == .signaled(SIGSEGV))
    }

    /// A render worker that crashes in iconr's own code fails the render with `crashedInIconr`;
    /// one that dies by a library's crash with `crashed(signal:)`, as before.
    @Test func aWorkerCrashIsBlamedOnWhoseCodeCrashed() throws {
        let svg = Array("<svg xmlns='http://www.w3.org/2000/svg' width='4' height='4'/>".utf8)
        let expected: [(String, RenderError)] = [
            ("own", .crashedInIconr), ("abort", .crashed(signal: SIGABRT)), ("library", .crashed(signal: SIGSEGV)),
        ]
        for (mode, error) in expected {
            let worker = IsolatedRenderer(executable: probe, arguments: [mode])
            #expect(throws: error, "\(mode)") { try worker.render(svg, scale: 1) }
        }
        #expect(RenderError.crashedInIconr.description.contains("not librsvg's"))
    }

    /// `iconr render` and `inspect` (`CrashGuard`) and `iconr sprite` (`Supervisor`, whose
    /// next attempt gets the icon's reason) name whose code crashed in their `error:` line.
    @Test func theCommandsNameWhoseCodeCrashed() throws {
        let own = "error: probe.svg: " + RenderError.crashedInIconr.description + "\n"
        let expected: [(kind: String, line: String)] = [
            ("own", own),
            ("abort", "error: probe.svg: librsvg crashed on this document (SIGABRT)\n"),
            ("library", "error: probe.svg: librsvg crashed on this document (SIGSEGV)\n"),
        ]
        for (kind, line) in expected {
            let guarded = try TestSupport.run(probe, ["guarded-" + kind], timeout: 30)
            #expect(guarded.status == 1 && String(decoding: guarded.stderr, as: UTF8.self) == line, "guarded \(kind)")
            let supervised = try TestSupport.run(probe, ["supervised-" + kind], timeout: 30)
            #expect(
                supervised.status == 0 && String(decoding: supervised.stderr, as: UTF8.self).hasSuffix(line),
                "supervised \(kind): \(String(decoding: supervised.stderr, as: UTF8.self))")
        }
    }
}
