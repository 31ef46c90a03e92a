import Glibc
import Iconr
import IconrCore
import IconrSystem

/// Where the CLI writes: stdout for results, stderr for messages. Unbuffered, so that
/// nothing is lost when the process ends with `_exit`.
package struct Console {
    /// Where messages go: stderr, or a copy of it in a process that sends librsvg's own
    /// stderr elsewhere.
    var messages = FileDescriptor.standardError
    /// Where everything goes instead of descriptors 1 and 2, when set: the command line run
    /// in process, by its tests.
    var recording: ConsoleRecording?
    /// Whether the command line runs in process, its output recorded (by its tests).
    var isRecording: Bool { recording != nil }
    /// `--quiet`: no notes, no progress bar, no list of the files written (`written`); results
    /// asked for on stdout (`-o -`, `--json`) and every warning and error still come.
    var quiet = false

    package init(recording: ConsoleRecording? = nil) {
        self.recording = recording
    }

    /// Whether stdout was closed when the process started (its descriptor now holds
    /// /dev/null, so that no file the process opens takes its place).
    nonisolated(unsafe) private static var stdoutWasClosed = false
    /// The first failed write to stdout (`errno`), for `stdoutFailure`.
    private static let stdoutError = Locked<Int32?>(nil)

    /// Opens /dev/null on any of descriptors 0, 1 and 2 that is closed, before anything else
    /// opens a file: otherwise a `dup` or a new file would become stdout, and output meant
    /// for it (a PNG with `-o -`) would go there. Call once, first thing.
    static func prepareStandardStreams() {
        for descriptor: Int32 in [0, 1, 2] where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            let null = open("/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY)
            if null >= 0, null != descriptor {
                dup2(null, descriptor)
                close(null)
            }
            if descriptor == 1 { stdoutWasClosed = true }
        }
    }

    /// Why writing to stdout failed, if it did: a command that wrote its results there must
    /// then fail ("No space left on device" for `> /dev/full`).
    static var stdoutFailure: String? {
        stdoutError.withLock { $0 }.map { $0 == EBADF ? "it is closed" : SystemError("write", errno: $0).reason }
    }

    /// `status`, or 1 after an `error:` line when the command succeeded but its results did
    /// not all reach stdout.
    func checkingStdout(_ status: Int32) -> Int32 {
        guard status == 0, recording == nil, let failure = Self.stdoutFailure else { return status }
        error("cannot write to standard output: \(failure)")
        return 1
    }

    func out(_ line: String) {
        writeStdout(Array((line + "\n").utf8))
    }

    func outBytes(_ bytes: [UInt8]) {
        writeStdout(bytes)
    }

    private func writeStdout(_ bytes: [UInt8]) {
        if let recording { return recording.output.withLock { $0 += bytes } }
        guard !Self.stdoutWasClosed else {
            Self.stdoutError.withLock { $0 = $0 ?? EBADF }
            return
        }
        if let failure = write(bytes, to: .standardOutput) { Self.stdoutError.withLock { $0 = $0 ?? failure } }
    }

    /// One `error:` line; input text inside `message` cannot break it or reach the terminal raw.
    package func error(_ message: String) {
        write(Array("error: \(message.escapedForMessage)\n".utf8), to: messages)
    }

    /// One `warning:` line, escaped like `error(_:)`.
    func warning(_ message: String) {
        write(Array("warning: \(message.escapedForMessage)\n".utf8), to: messages)
    }

    /// Runs `work`; a thrown error becomes an `error:` line and exit code 1.
    func reportingErrors(_ work: () throws -> Void) -> Int32 {
        do {
            try work()
            return 0
        } catch {
            self.error("\(error)")
            return 1
        }
    }

    /// A console that writes its messages to a copy of stderr, after pointing stderr itself
    /// (where librsvg's panic reports and GLib's warnings go) to /dev/null.
    func sendingStderrToNull() -> Console {
        let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
        defer { close(null) }
        return sendingStderr(to: FileDescriptor(rawValue: null))
    }

    /// A console that writes its messages to a copy of stderr, after pointing stderr itself
    /// at `descriptor` (which stays open).
    func sendingStderr(to descriptor: FileDescriptor) -> Console {
        var console = self
        console.messages = FileDescriptor(rawValue: dup(messages.rawValue))
        dup2(descriptor.rawValue, 2)
        return console
    }

    func note(_ message: String) {
        guard !quiet else { return }
        write(Array((message + "\n").utf8), to: messages)
    }

    /// A file the command wrote, on stdout, one a line (none with `quiet`).
    func written(_ path: String) {
        guard !quiet else { return }
        out(path)
    }

    /// Writes all of `bytes`; the `errno` of a failure, or nil.
    @discardableResult
    private func write(_ bytes: [UInt8], to descriptor: FileDescriptor) -> Int32? {
        if let recording {
            recording.messages.withLock { $0 += bytes }
            return nil
        }
        do {
            try descriptor.writeAll(bytes)
            return nil
        } catch {
            return error.errno
        }
    }
}

/// What a console wrote, kept instead of written: stdout's bytes and stderr's lines, for
/// running the command line in process (its tests).
package final class ConsoleRecording: Sendable {
    let output = Locked<[UInt8]>([])
    let messages = Locked<[UInt8]>([])

    var stdout: String { String(decoding: output.withLock { $0 }, as: UTF8.self) }
    var stderr: String { String(decoding: messages.withLock { $0 }, as: UTF8.self) }
}
