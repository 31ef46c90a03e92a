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

    /// Lets SIGABRT, SIGSEGV and the other crash signals end the process at once, without a
    /// core file. Otherwise the Swift runtime's backtracer first symbolicates the crash (up
    /// to 30 s; past the 20 s render limit in a sanitizer build, which turned a crash into a
    /// timeout) for a report that the parent drops anyway.
    package static func endProcessAtOnce() {
        for signal in fatal + [SIGQUIT] { Glibc.signal(signal, SIG_DFL) }
        var noCore = rlimit(rlim_cur: 0, rlim_max: 0)
        setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &noCore)
    }
}
