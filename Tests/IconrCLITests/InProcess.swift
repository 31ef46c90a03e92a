import Foundation
import IconrTestSupport

@testable import IconrCLI

/// The command line run in this process with a console that records: parsing, help, usage
/// mistakes, `expression`, and sprite builds (run here, unsupervised), their options and
/// outputs. What needs a process of its own (renders under the crash guard, a build librsvg
/// may crash or an interrupt stops, a server) runs the built binary instead.
enum InProcess {
    static func iconr(_ arguments: [String]) -> (status: Int32, stdout: String, stderr: String) {
        let recording = ConsoleRecording()
        let status = CLI.run(arguments, console: Console(recording: recording))
        return (status, recording.stdout, recording.stderr)
    }

    /// `iconr(_:)` as if run in `folder`: an argument that starts with `./` is a path in
    /// `folder`, made absolute (the working directory is the process's, every test's), and
    /// `folder`'s path is taken out of what the command prints again, so that expectations
    /// read as the command line does. A sprite build runs in this process, unsupervised.
    static func iconr(_ arguments: [String], in folder: URL) -> IconrRun {
        let base = folder.path + "/"
        let run = iconr(arguments.map { $0.hasPrefix("./") ? base + $0.dropFirst(2) : $0 })
        func relative(_ text: String) -> String { text.replacingOccurrences(of: base, with: "") }
        return IconrRun(status: run.status, output: Data(relative(run.stdout).utf8), stderr: relative(run.stderr))
    }
}
