import Glibc
import Iconr
import IconrCore
import IconrSystem

/// Guards a command that does one librsvg job and exits (`render`, `inspect`): a crash
/// inside librsvg (SIGABRT from a Rust panic, SIGSEGV, ...) or a job past its time limit
/// prints the command's one `error:` line and exits 1, never a death by signal or a hang.
/// A crash in iconr's own code (`CrashSignals.isOwnFault`) says so rather than blame librsvg.
///
/// The process ends right after the job anyway, so nothing needs to outlive a crash, and a
/// signal handler that writes a prepared line and calls `_exit` does what a supervising
/// `fork` did, without its cost (about 2.8 ms of a 17-20 ms `iconr render`). librsvg's own
/// panic report goes to /dev/null; iconr's messages go to a copy of stderr. SIGINT, SIGTERM
/// and SIGHUP exit with 128 + the signal; `writingOutput` holds them back while an output
/// file is written, so an interrupted run leaves all of its output or none.
package enum CrashGuard {

    /// The line to print for each signal number, in C memory the handler reads as is.
    nonisolated(unsafe) private static var lines = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(
        capacity: 65)
    /// The line to print for a crash in iconr's own code, which is not librsvg's to take.
    nonisolated(unsafe) private static var ownFaultLine: UnsafeMutablePointer<CChar>?
    /// Where the lines go: the original stderr.
    nonisolated(unsafe) private static var output: Int32 = 2

    /// Runs `work` under the guard, with `console` writing to the original stderr.
    package static func run(file: String, timeout: Double, console: Console, work: (Console) -> Int32) -> Int32 {
        lines.initialize(repeating: nil, count: 65)
        for signal in CrashSignals.fatal {
            lines[Int(signal)] = strdup(
                "error: " + IconrError.render(.crashed(signal: signal), file: file).description.escapedForMessage + "\n"
            )
        }
        ownFaultLine = strdup(
            "error: " + IconrError.render(.crashedInIconr, file: file).description.escapedForMessage + "\n")
        CrashSignals.findOwnCode()
        lines[Int(SIGALRM)] = strdup(
            "error: " + IconrError.render(.timedOut(seconds: timeout), file: file).description.escapedForMessage + "\n")
        let guarded = console.sendingStderrToNull()
        output = guarded.messages.rawValue

        // A crash from a stack overflow needs a stack of its own to run the handler on.
        let stackSize = 1 << 16
        var stack = stack_t(ss_sp: malloc(stackSize), ss_flags: 0, ss_size: stackSize)
        sigaltstack(&stack, nil)
        var action = sigaction()
        action.__sigaction_handler.sa_sigaction = { signal, info, context in
            // Crashes and the time limit have a line and exit 1; interrupts exit 128 + signal.
            guard var line = CrashGuard.lines[Int(signal)] else { _exit(128 + signal) }
            if CrashSignals.isOwnFault(info, context), let own = CrashGuard.ownFaultLine { line = own }
            _ = write(CrashGuard.output, line, strlen(line))
            _exit(1)
        }
        action.sa_flags = SA_ONSTACK | SA_SIGINFO
        sigemptyset(&action.sa_mask)
        var handled = sigset_t()
        sigemptyset(&handled)
        for signal in CrashSignals.fatal + CrashSignals.interrupts + [SIGALRM] {
            sigaction(signal, &action, nil)
            sigaddset(&handled, signal)
        }
        // A process can start with signals blocked (spawned from a thread that blocks them,
        // as Dispatch's workers do): then an interrupt or the time limit would never arrive.
        pthread_sigmask(SIG_UNBLOCK, &handled, nil)
        let seconds = min(timeout, 1e8)
        var limit = itimerval(
            it_interval: timeval(),
            it_value: timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1e6)))
        if limit.it_value.tv_sec == 0, limit.it_value.tv_usec == 0 { limit.it_value.tv_usec = 1 }
        setitimer(__itimer_which_t(ITIMER_REAL.rawValue), &limit, nil)
        // Checked here, where messages still reach the original stderr.
        return guarded.checkingStdout(work(guarded))
    }

    /// Runs `body`, which writes the output once the librsvg work is done: the time limit no
    /// longer applies (it must not end the process between a temporary file and its
    /// rename), and SIGINT, SIGTERM and SIGHUP are held back; one that arrived meanwhile ends
    /// the process when `body` is done, with its output whole.
    static func writingOutput<T>(_ body: () throws -> T) rethrows -> T {
        var noLimit = itimerval()
        setitimer(__itimer_which_t(ITIMER_REAL.rawValue), &noLimit, nil)
        var set = sigset_t(), previous = sigset_t()
        sigemptyset(&set)
        for signal in CrashSignals.interrupts { sigaddset(&set, signal) }
        pthread_sigmask(SIG_BLOCK, &set, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        return try body()
    }
}
