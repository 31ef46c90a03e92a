import Glibc

/// Crash handling for a process whose crash a parent process reports: the CLI's supervised
/// child and `iconr render-worker`, where a document can make librsvg abort.
public enum CrashSignals {
    /// Lets SIGABRT, SIGSEGV and the other crash signals end the process at once, without a
    /// core file. Otherwise the Swift runtime's backtracer first symbolicates the crash (up
    /// to 30 s; past the 20 s render limit in a sanitizer build, which turned a crash into a
    /// timeout) for a report that the parent drops anyway.
    public static func endProcessAtOnce() {
        for signal in [SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGQUIT] { Glibc.signal(signal, SIG_DFL) }
        var noCore = rlimit(rlim_cur: 0, rlim_max: 0)
        setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &noCore)
    }
}
