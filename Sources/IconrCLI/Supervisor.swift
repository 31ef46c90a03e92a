import Glibc
import Iconr

/// Runs a command's librsvg work in a forked child and watches it, so that a document that
/// crashes librsvg (SIGABRT from a Rust panic) or renders for minutes becomes an `error:`
/// line and exit 1, never a death by signal or a hang.
///
/// The CLI forks once, at the start of the command and before any thread exists (so the
/// child inherits no lock another thread holds), and the child does the whole job in
/// process: that costs about a millisecond, where starting an `iconr render-worker`
/// would load librsvg's libraries a second time (about 10 ms). The parent waits, passes
/// interrupts on, and relays the child's stderr, dropping librsvg's panic report when the
/// child crashed.
enum Supervisor {
    /// Runs `work` in a child process within `timeout` seconds and returns its exit code.
    /// SIGINT, SIGTERM and SIGHUP are passed on to the child, which removes its partial
    /// output and exits with 128 + the signal.
    static func run(file: String, timeout: Double, console: Console, work: () -> Int32) -> Int32 {
        var interrupts = sigset_t()
        sigemptyset(&interrupts)
        for signal in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&interrupts, signal) }
        var previous = sigset_t()
        sigprocmask(SIG_BLOCK, &interrupts, &previous)
        defer { sigprocmask(SIG_SETMASK, &previous, nil) }
        var stderrPipe: [Int32] = [0, 0]
        guard pipe(&stderrPipe) == 0 else {
            console.error("\(file): cannot create a pipe: \(String(cString: strerror(errno)))")
            return 1
        }

        let child = fork()
        if child == 0 {
            sigprocmask(SIG_SETMASK, &previous, nil)
            close(stderrPipe[0])
            dup2(stderrPipe[1], 2)
            close(stderrPipe[1])
            CLI.removeTemporaryFilesOnInterrupt()
            CrashSignals.endProcessAtOnce()
            _exit(work())
        }
        close(stderrPipe[1])
        defer { close(stderrPipe[0]) }
        _ = fcntl(stderrPipe[0], F_SETFD, FD_CLOEXEC)
        guard child > 0 else {
            console.error("\(file): cannot start a process to render in: \(String(cString: strerror(errno)))")
            return 1
        }

        var childStderr: [UInt8] = []
        let deadline = ContinuousClock.now + .milliseconds(Int64(min(timeout, 1e9) * 1000))
        var stderrOpen = true
        while stderrOpen {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else {
                kill(child, SIGKILL)
                _ = reap(child)
                console.error(IconrError.render(.timedOut(seconds: timeout), file: file).description)
                return 1
            }
            // Interrupts stay blocked here and are collected between short waits.
            var noWait = timespec(tv_sec: 0, tv_nsec: 0)
            while case let signal = sigtimedwait(&interrupts, nil, &noWait), signal > 0 { kill(child, signal) }
            let milliseconds = Int32(min(remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1, 50))
            var descriptor = pollfd(fd: stderrPipe[0], events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, milliseconds) > 0 {
                var buffer = [UInt8](repeating: 0, count: 4096)
                let count = buffer.withUnsafeMutableBytes { read(stderrPipe[0], $0.baseAddress, $0.count) }
                if count > 0 { childStderr += buffer[0..<count] } else if count == 0 || errno != EINTR { stderrOpen = false }
            }
        }
        // The child closed its stderr: it is exiting, or exited.
        let status = reap(child)
        let signal = status & 0x7F
        if signal == 0 {
            console.relay(childStderr)
            return (status >> 8) & 0xFF
        }
        // librsvg's panic report is not for the user; iconr's own warnings are.
        let warnings = String(decoding: childStderr, as: UTF8.self).split(separator: "\n")
            .filter { $0.hasPrefix("warning: ") }.map { "\($0)\n" }.joined()
        console.relay(Array(warnings.utf8))
        console.error(IconrError.render(.crashed(signal: signal), file: file).description)
        return 1
    }

    /// Waits for the child to end and returns its wait status.
    private static func reap(_ child: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0, errno == EINTR {}
        return status
    }
}
