import Glibc

/// Where the CLI writes: stdout for results, stderr for messages. Unbuffered, so that
/// nothing is lost when the process ends with `_exit`.
struct Console {
    /// Where messages go: stderr, or a copy of it in a process that sends librsvg's own
    /// stderr elsewhere.
    var messages: Int32 = 2

    func out(_ line: String) {
        write(Array((line + "\n").utf8), to: 1)
    }

    func outBytes(_ bytes: [UInt8]) {
        write(bytes, to: 1)
    }

    func error(_ message: String) {
        write(Array("error: \(message)\n".utf8), to: messages)
    }

    func warning(_ message: String) {
        write(Array("warning: \(message)\n".utf8), to: messages)
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
        var console = self
        console.messages = dup(messages)
        let null = open("/dev/null", O_WRONLY)
        dup2(null, 2)
        close(null)
        return console
    }

    func note(_ message: String) {
        write(Array((message + "\n").utf8), to: messages)
    }

    private func write(_ bytes: [UInt8], to descriptor: Int32) {
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + written, bytes.count - written) }
            if result < 0, errno == EINTR { continue }
            guard result > 0 else { return }
            written += result
        }
    }
}
