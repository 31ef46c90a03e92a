import Glibc

/// How a child process ended, from its `waitpid` status.
package enum Termination: Hashable, Sendable {
    case exited(Int32)
    case signaled(Int32)

    package init(waitStatus status: Int32) {
        let signal = status & 0x7F
        self = signal == 0 ? .exited((status >> 8) & 0xFF) : .signaled(signal)
    }

    /// The signal that ended it, or nil for a normal exit.
    package var signal: Int32? {
        if case .signaled(let signal) = self { return signal }
        return nil
    }
}

/// Starting programs with `posix_spawn` and waiting for them with `waitpid`.
package enum ChildProcess {
    /// What the child's descriptors are before it runs.
    package enum FileAction {
        /// Descriptor `target` is a duplicate of `source`.
        case duplicate(FileDescriptor, as: Int32)
        /// Descriptor `target` is `path` opened with `flags`.
        case open(String, flags: Int32, as: Int32)
    }

    /// Starts `executable` (a path, not looked up in PATH) with `arguments`, and `environment`
    /// (`NAME=value` entries) instead of this process's when given. The child starts with no
    /// signal blocked and every signal's default action, whatever the calling thread blocks or
    /// ignores (a server blocks SIGINT and SIGTERM in every thread to wait for them in one).
    package static func spawn(
        _ executable: String, _ arguments: [String], fileActions: [FileAction] = [], environment: [String]? = nil
    ) throws(SystemError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for action in fileActions {
            switch action {
            case .duplicate(let source, let target):
                posix_spawn_file_actions_adddup2(&actions, source.rawValue, target)
            case .open(let path, let flags, let target):
                posix_spawn_file_actions_addopen(&actions, target, path, flags, 0o644)
            }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t(), allSignals = sigset_t()
        sigemptyset(&noSignals)
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { $0.map { strdup($0) } + [nil] }
        defer { (argv + (envp ?? [])).forEach { free($0) } }
        let status: Int32
        if var envp {
            status = posix_spawn(&pid, executable, &actions, &attributes, argv, &envp)
        } else {
            status = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        }
        guard status == 0 else { throw SystemError("posix_spawn", errno: status) }
        return pid
    }

    /// Waits for the child `pid` to end (retrying on `EINTR`) and reaps it.
    package static func wait(for pid: pid_t) throws(SystemError) -> Termination {
        var status: Int32 = 0
        guard retryingInterrupted({ waitpid(pid, &status, 0) }) == pid else { throw SystemError("waitpid") }
        return Termination(waitStatus: status)
    }

    /// How the child `pid` ended, reaping it, or nil while it runs.
    package static func poll(_ pid: pid_t) throws(SystemError) -> Termination? {
        var status: Int32 = 0
        let result = retryingInterrupted { waitpid(pid, &status, WNOHANG) }
        guard result >= 0 else { throw SystemError("waitpid") }
        return result == pid ? Termination(waitStatus: status) : nil
    }
}
