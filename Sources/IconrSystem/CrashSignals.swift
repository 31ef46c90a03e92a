import CSystem
import Glibc

/// Crash handling where a document can make librsvg abort: a process whose crash a parent
/// process reports (the sprite build's child, `iconr render-worker`), and the CLI's in-process
/// guard for one render.
package enum CrashSignals {
    /// The signals a crash inside librsvg (or any native code) ends a process with.
    package static let fatal = [SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP]

    /// The signals that ask a command to stop (Ctrl-C, `kill`, a closed terminal): every
    /// command treats them alike, removing what it was writing and exiting 128 + signal.
    package static let interrupts = [SIGINT, SIGTERM, SIGHUP]

    /// The status a process set up by `endProcessAtOnce` exits with when it crashed in
    /// iconr's own code rather than in a library (sysexits.h's EX_SOFTWARE, "internal
    /// software error"), so that its parent does not blame librsvg or the document.
    package static let ownFaultStatus: Int32 = 70

    /// Ends the process at once on a crash signal, without a core file: by the signal when
    /// the crash is in a library (librsvg, cairo, GLib, the C library: a Rust panic aborts
    /// through it), with `ownFaultStatus` when it is in iconr's own code. Otherwise the Swift
    /// runtime's backtracer first symbolicates the crash (up to 30 s; past the 20 s render
    /// limit in a sanitizer build, which turned a crash into a timeout) for a report that
    /// the parent drops anyway.
    package static func endProcessAtOnce() {
        findOwnCode()
        var action = sigaction()
        action.__sigaction_handler.sa_sigaction = { signal, info, context in
            if CrashSignals.isOwnFault(info, context) { _exit(CrashSignals.ownFaultStatus) }
            // SA_RESETHAND made the action the default again, and SA_NODEFER lets it through now.
            raise(signal)
        }
        action.sa_flags = SA_SIGINFO | Int32(bitPattern: UInt32(SA_RESETHAND)) | Int32(SA_NODEFER)
        sigemptyset(&action.sa_mask)
        for signal in fatal { sigaction(signal, &action, nil) }
        Glibc.signal(SIGQUIT, SIG_DFL)
        var noCore = rlimit(rlim_cur: 0, rlim_max: 0)
        setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &noCore)
    }

    /// Where iconr's own code lies, as [start, end) address pairs: the program's executable
    /// segments, and the Swift runtime's where it is a library of its own. Filled by
    /// `findOwnCode` before a signal handler reads it.
    nonisolated(unsafe) private static let ownCode = UnsafeMutablePointer<UInt>.allocate(capacity: 2 * maxRanges)
    nonisolated(unsafe) private static var ownCodeCount = 0
    private static let maxRanges = 64

    /// Finds iconr's own code among the objects loaded now (the dynamic linker's list: no
    /// measurable cost on a 5 ms cache-hit render). Call it, not from a signal handler,
    /// before a handler asks `isOwnFault`.
    package static func findOwnCode() {
        ownCodeCount = Int(CSystem_find_own_code(ownCode, Int32(maxRanges)))
    }

    /// Whether a crash signal, as its `SA_SIGINFO` handler sees it, came from an instruction
    /// in iconr's own code: a trap (an overflow, a failed precondition) or a bad access of
    /// iconr's, not of a library it called. A signal sent by a process (`kill`, or `abort`,
    /// which a Rust panic in librsvg ends with) is not, nor any other signal (a timer's).
    /// Safe in a signal handler.
    package static func isOwnFault(
        _ info: UnsafeMutablePointer<siginfo_t>?, _ context: UnsafeMutableRawPointer?
    )
        -> Bool
    {
        guard let info, let context, info.pointee.si_code > 0 else { return false }
        // Only faults of an instruction: a timer's SIGALRM also comes from the kernel.
        switch info.pointee.si_signo {
        case SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP: return isOwnCode(CSystem_instruction_address(context))
        default: return false
        }
    }

    /// Whether `address` lies in iconr's own code, as `findOwnCode` last found it. Safe in a
    /// signal handler.
    package static func isOwnCode(_ address: UInt) -> Bool {
        for range in 0..<ownCodeCount where address >= ownCode[2 * range] && address < ownCode[2 * range + 1] {
            return true
        }
        return false
    }
}
