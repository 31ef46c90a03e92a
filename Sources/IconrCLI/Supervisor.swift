import CSystem
import Glibc
import Iconr
import IconrCore
import IconrRender
import IconrSystem

/// Runs a sprite build's librsvg work in a forked child and watches it, so that documents
/// that crash librsvg (SIGABRT from a Rust panic) or render for minutes fail by name while
/// the build goes on, never a death by signal or a hang.
///
/// The CLI forks at the start of the build, before any thread exists (so the child inherits
/// no lock another thread holds), and the child renders in process: no worker round trips.
/// The child loads librsvg only when it renders (a rebuild of unchanged files does not). The
/// parent waits and passes interrupts on; SIGINT, SIGTERM and SIGHUP make the child remove
/// its partial output and exit with 128 + the signal. A child that finished notes its status
/// before it exits, and the parent returns it without waiting for the child's memory to be
/// taken down. librsvg's panic report never reaches the user. (Commands that do one job,
/// `render` and `inspect`, use `CrashGuard` instead.)
package enum Supervisor {
    /// Runs an in-process sprite build in a child process, and runs it again when librsvg
    /// crashes or one render takes longer than `timeout` seconds: the icon to blame is marked
    /// failed in the next attempt's `SpriteBuildRecovery` (when several were rendering, they
    /// first render one at a time). An attempt after a crash renders again what the crashed
    /// one rendered (the cache pack is written at the end of a build). A child that crashed
    /// in iconr's own code exits with `CrashSignals.ownFaultStatus`: the icon is marked
    /// failed with that reason instead, and outside a render the build ends with that status.
    /// The child writes its messages to the real stderr and sends librsvg's own output to
    /// /dev/null.
    package static func runBuild(
        timeout: Double, console: Console, work: (SpriteBuildRecovery, Console) -> Int32
    ) -> Int32 {
        let interrupts = Interrupts()
        defer { interrupts.restore() }
        var recovery = SpriteBuildRecovery()
        // Where the child's threads note what they render: shared memory, read by this
        // process when it checks the time limit and after a crash.
        let board: RenderBoard
        do {
            board = try RenderBoard()
        } catch {
            console.error("cannot share memory with the build process: \(error)")
            return 1
        }
        // The child's own stderr (librsvg's panic reports, GLib's warnings, a Swift runtime
        // error) goes to an unnamed file: shown only when the child dies of something other
        // than a render.
        let childErrors = anonymousFile()
        // Read back only to report: closing it loses nothing.
        defer { try? childErrors?.close() }
        while true {
            if let childErrors {
                ftruncate(childErrors.rawValue, 0)
                lseek(childErrors.rawValue, 0, SEEK_SET)
            }
            board.clear()
            guard
                let (child, ended) = fork(
                    console, interrupts: interrupts,
                    child: {
                        let childConsole =
                            childErrors.map { console.sendingStderr(to: $0) } ?? console.sendingStderrToNull()
                        recovery.willRender = { path in board.willRender(path) }
                        recovery.didRender = { _ in board.didRender() }
                        return inChild { work(recovery, childConsole) }
                    }, ended: board.noteEnded)
            else { return 1 }
            // Only read: closing it loses nothing.
            defer { try? ended.close() }

            var overdue: String?
            while overdue == nil, !waitForEnd(of: ended, forwarding: interrupts, to: child) {
                let limit = UInt64(min(timeout, 1e9) * 1e9)
                // The clock is read after the board: no start on it is later than `now`.
                let rendering = board.rendering()
                let now = RenderBoard.now()
                overdue = rendering.first { now - min(now, $0.value) >= limit }?.key
            }
            if let overdue {
                kill(child, SIGKILL)
                _ = try? ChildProcess.wait(for: child)
                recovery.failed[overdue] = RenderError.timedOut(seconds: timeout).description
                recovery.suspects.remove(overdue)
                continue
            }
            // A child that said how it ended is not waited for: it may still be taking its
            // memory down. It is reaped if gone already, else when this process ends.
            if let status = board.endedStatus() {
                var ignored: Int32 = 0
                _ = waitpid(child, &ignored, WNOHANG)
                return status
            }
            // How the child ended: by a signal, or nil when it crashed in iconr's own code.
            let signal: Int32?
            switch Result(catching: { () throws(SystemError) in try ChildProcess.wait(for: child) }) {
            case .success(.exited(CrashSignals.ownFaultStatus)): signal = nil
            case .success(.exited(let status)): return status
            case .success(.signaled(let number)): signal = number
            case .failure(let error):
                console.error("cannot wait for the build process: \(error)")
                return 1
            }
            let rendering = board.rendering()
            guard !rendering.isEmpty, !(CrashSignals.interrupts + [SIGKILL]).contains(signal ?? 0) else {
                // Not a render that crashed: stopped from outside, or a fault of iconr's own.
                let said = lastLines(of: childErrors)
                console.error(
                    (signal.map { "the build process ended by signal \($0) (\(String(cString: strsignal($0))))" }
                        ?? "the build process crashed in iconr's own code (a defect in iconr: please report it)")
                        + (said.isEmpty ? "" : "; it said: " + said))
                return signal.map { 128 + $0 } ?? CrashSignals.ownFaultStatus
            }
            if rendering.count == 1, let path = rendering.keys.first {
                recovery.failed[path] = (signal.map { RenderError.crashed(signal: $0) } ?? .crashedInIconr).description
                recovery.suspects.remove(path)
            } else {
                // Suspects only accumulate: a crash while they render alone names one, and one
                // among the others adds at least one, so the attempts end.
                recovery.suspects.formUnion(rendering.keys)
            }
        }
    }

    /// In a supervised child, the supervising process's pid.
    nonisolated(unsafe) private static var supervisor: pid_t?

    /// False in a supervised child whose parent has ended (its work is unwanted: nothing may
    /// be written); true everywhere else.
    static var parentIsAlive: Bool {
        supervisor.map { getppid() == $0 } ?? true
    }

    /// Forks a child that runs `child` and exits with its result; returns the child's pid and
    /// the read end of a pipe whose write end only the child holds (it reads as ended when
    /// the child has), or nil after saying why not.
    private static func fork(
        _ console: Console, interrupts: Interrupts,
        child: () -> Int32, ended: (Int32) -> Void
    ) -> (pid: pid_t, ended: FileDescriptor)? {
        let ends: (read: FileDescriptor, write: FileDescriptor)
        do {
            ends = try FileDescriptor.pipe()
        } catch {
            console.error("cannot create a pipe: \(error)")
            return nil
        }
        let parent = getpid()
        let pid = Glibc.fork()
        if pid == 0 {
            // The child dies with its parent, even one killed with SIGKILL; a parent that died
            // before this line is seen by the check below.
            _ = CSystem_set_parent_death_signal(SIGKILL)
            supervisor = parent
            if getppid() != parent { _exit(1) }
            interrupts.restore()
            try? ends.read.close()
            let status = child()
            // Done, and all written. The supervisor stops waiting now rather than when the
            // kernel has taken this process's memory down (3 ms with librsvg's libraries
            // mapped): stdout and stderr close first, so that a reader of them sees their end
            // at once too, then the status goes on the board, then the pipe closes.
            let null = open("/dev/null", O_RDWR | O_CLOEXEC)
            if null >= 0 {
                for stream in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] { dup2(null, stream) }
            }
            ended(status)
            try? ends.write.close()
            _exit(status)
        }
        let failure = pid > 0 ? nil : SystemError("fork")
        // The child has its own copy of the write end; the parent only reads.
        try? ends.write.close()
        if let failure {
            try? ends.read.close()
            console.error("cannot start a process to build in: \(failure)")
            return nil
        }
        return (pid, ends.read)
    }

    /// Runs `work` in a forked child, where interrupts remove partial output and a crash ends
    /// the process at once, on a new thread. After `fork` the main thread keeps the parent's
    /// thread id in the Swift runtime's per-thread cache, and the runtime's locks record their
    /// owner by that id: when another thread waited for a lock the main thread held, both spun
    /// forever (seen in a parallel sprite build). A new thread caches its own id.
    private static func inChild(_ work: () -> Int32) -> Int32 {
        withoutActuallyEscaping(work) { work in
            final class Job {
                let work: () -> Int32
                var status: Int32 = 1
                init(_ work: @escaping () -> Int32) { self.work = work }
            }
            let job = Unmanaged.passRetained(
                Job {
                    CLI.removeTemporaryFilesOnInterrupt()
                    CrashSignals.endProcessAtOnce()
                    return work()
                })
            defer { job.release() }
            var thread = pthread_t()
            let started = pthread_create(
                &thread, nil,
                { job in
                    let job = Unmanaged<Job>.fromOpaque(job!).takeUnretainedValue()
                    job.status = job.work()
                    return nil
                }, job.toOpaque())
            guard started == 0 else { return job.takeUnretainedValue().work() }
            pthread_join(thread, nil)
            return job.takeUnretainedValue().status
        }
    }

    /// A read-write file with no name (removed as soon as it is made), or nil.
    private static func anonymousFile() -> FileDescriptor? {
        var template = Array("/tmp/iconr-build-stderr-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { $0.baseAddress.map { mkstemp($0) } ?? -1 }
        guard descriptor >= 0 else { return nil }
        template.withUnsafeBufferPointer { buffer in _ = buffer.baseAddress.map { unlink($0) } }
        return FileDescriptor(rawValue: descriptor)
    }

    /// The last three non-empty lines written to `descriptor` (at most 4 KiB), joined by " | ".
    private static func lastLines(of file: FileDescriptor?) -> String {
        guard let descriptor = file?.rawValue else { return "" }
        let size = lseek(descriptor, 0, SEEK_END)
        guard size > 0 else { return "" }
        let start = max(0, size - 4096)
        var buffer = [UInt8](repeating: 0, count: Int(size - start))
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, start) }
        guard count > 0 else { return "" }
        let lines = String(decoding: buffer[..<count], as: UTF8.self).split(separator: "\n").map {
            String($0.drop { $0 == " " || $0 == "\t" })
        }
        return lines.filter { !$0.isEmpty }.suffix(3).joined(separator: " | ")
    }

    /// Waits up to 50 ms for `ended` to read as ended (the child is exiting), passing
    /// interrupts on to `child` meanwhile; true if it has.
    private static func waitForEnd(
        of ended: FileDescriptor, forwarding interrupts: Interrupts, to child: pid_t
    ) -> Bool {
        interrupts.forward(to: child)
        var request = pollfd(fd: ended.rawValue, events: Int16(POLLIN), revents: 0)
        // Nothing yet, or interrupted: the caller checks the time and waits again.
        guard poll(&request, 1, 50) > 0 else { return false }
        // The child never writes: readable means ended (or a read error, which ends the wait too).
        return true
    }
}

/// What the threads of a supervised child are rendering, and since when, in memory shared
/// with the supervisor: a slot per render under way, each with the file's path and the
/// start on the monotonic clock. It replaced two pipe messages per file and render (1,712
/// for a Maki build), whose writes and wake-ups cost a cold build about 19 ms of 160.
///
/// A slot's state word holds a generation and, in its two low bits, whether the slot is free
/// (0), being written (1) or held by a render (2); freeing it starts a new generation, so the
/// supervisor, which reads without a lock, keeps what it read only when the word said "held"
/// before and after reading (a sequence lock). A thread renders one file at a time, so its
/// slot is the held one it owns.
private final class RenderBoard: Sendable {
    private static let slotSize = 64 << 10
    private static let slotCount = 64
    /// A slot: state, owning thread, start (ns), path length, then the path.
    private static let header = 32
    private let memory: SharedMemory

    init() throws(SystemError) {
        // The slots, then the child's exit status.
        memory = try SharedMemory(count: Self.slotSize * Self.slotCount + Self.header)
    }

    /// The word that holds a child's exit status, with bit 32 set once it is there.
    private var ending: UnsafeMutablePointer<UInt64> {
        (memory.base + Self.slotSize * Self.slotCount).assumingMemoryBound(to: UInt64.self)
    }

    /// Notes, in the child, that it is about to exit with `status`.
    func noteEnded(_ status: Int32) {
        CSystem_store_release(ending, 1 << 32 | UInt64(UInt32(bitPattern: status)))
    }

    /// The status the child noted before it exited, or nil (it has not, or it crashed).
    func endedStatus() -> Int32? {
        let word = CSystem_load_acquire(ending)
        return word >> 32 == 1 ? Int32(bitPattern: UInt32(truncatingIfNeeded: word)) : nil
    }

    /// The monotonic clock in nanoseconds, the same in every process.
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    private func word(_ slot: Int, _ index: Int) -> UnsafeMutablePointer<UInt64> {
        (memory.base + slot * Self.slotSize).assumingMemoryBound(to: UInt64.self) + index
    }

    /// Frees every slot (before a child starts).
    func clear() {
        for slot in 0..<Self.slotCount { CSystem_store_release(word(slot, 0), 0) }
        CSystem_store_release(ending, 0)
    }

    /// Notes that this thread renders `path` from now on. With every slot taken (more
    /// threads than slots), the render goes unnoted: a crash in it is not pinned on a file.
    func willRender(_ path: String) {
        let thread = UInt64(pthread_self())
        for slot in 0..<Self.slotCount {
            let state = CSystem_load_acquire(word(slot, 0))
            guard state & 3 == 0, CSystem_compare_exchange(word(slot, 0), state, state | 1) != 0 else { continue }
            // Atomic stores: other threads read the owner while looking for their own slot.
            CSystem_store_release(word(slot, 1), thread)
            CSystem_store_release(word(slot, 2), Self.now())
            let bytes = Array(path.utf8.prefix(Self.slotSize - Self.header))
            CSystem_store_release(word(slot, 3), UInt64(bytes.count))
            bytes.withUnsafeBytes { source in
                guard let from = source.baseAddress else { return }
                (memory.base + slot * Self.slotSize + Self.header).copyMemory(from: from, byteCount: source.count)
            }
            CSystem_store_release(word(slot, 0), state | 2)
            return
        }
    }

    /// Notes that this thread's render ended.
    func didRender() {
        let thread = UInt64(pthread_self())
        for slot in 0..<Self.slotCount {
            let state = CSystem_load_acquire(word(slot, 0))
            guard state & 3 == 2, CSystem_load_acquire(word(slot, 1)) == thread else { continue }
            CSystem_store_release(word(slot, 0), (state >> 2 + 1) << 2)
            return
        }
    }

    /// The paths being rendered now, each with its start (ns on the monotonic clock).
    func rendering() -> [String: UInt64] {
        var found: [String: UInt64] = [:]
        for slot in 0..<Self.slotCount {
            let before = CSystem_load_acquire(word(slot, 0))
            guard before & 3 == 2 else { continue }
            let started = CSystem_load_acquire(word(slot, 2))
            let count = min(Int(CSystem_load_acquire(word(slot, 3))), Self.slotSize - Self.header)
            let path = String(
                decoding: UnsafeRawBufferPointer(start: memory.base + slot * Self.slotSize + Self.header, count: count),
                as: UTF8.self)
            guard CSystem_load_acquire(word(slot, 0)) == before else { continue }
            found[path] = min(found[path] ?? .max, started)
        }
        return found
    }
}

/// SIGINT, SIGTERM and SIGHUP, blocked in the supervising process and collected between
/// short waits, to be passed on to the child.
private struct Interrupts {
    private var set = sigset_t()
    private var previous = sigset_t()

    init() {
        sigemptyset(&set)
        for signal in CrashSignals.interrupts { sigaddset(&set, signal) }
        sigprocmask(SIG_BLOCK, &set, &previous)
    }

    func restore() {
        var previous = previous
        sigprocmask(SIG_SETMASK, &previous, nil)
    }

    func forward(to child: pid_t) {
        var set = set
        var noWait = timespec(tv_sec: 0, tv_nsec: 0)
        while case let signal = sigtimedwait(&set, nil, &noWait), signal > 0 { kill(child, signal) }
    }
}
