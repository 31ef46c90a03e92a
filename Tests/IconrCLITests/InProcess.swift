@testable import IconrCLI

/// The command line run in this process with a console that records: for what a command
/// decides before it does real work (parsing, help, usage mistakes, `expression`). What
/// needs a process of its own (renders under the crash guard, supervised sprite builds, a
/// server) runs the built binary instead.
enum InProcess {
    static func iconr(_ arguments: [String]) -> (status: Int32, stdout: String, stderr: String) {
        let recording = ConsoleRecording()
        let status = CLI.run(arguments, console: Console(recording: recording))
        return (status, recording.stdout, recording.stderr)
    }
}
