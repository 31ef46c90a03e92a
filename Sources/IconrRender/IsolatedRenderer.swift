import Glibc
import IconrCore

/// Renders in separate worker processes, so that an input that crashes librsvg or runs
/// for minutes costs an error instead of the caller's process. Workers are started with
/// `posix_spawn` (never `fork` of a threaded process), kept for reuse, and killed on a
/// timeout. Safe to use from many threads at once; each render has a worker to itself.
public final class IsolatedRenderer: Sendable {
    /// The executable that serves renders, run as `executable arguments...`; `iconr` with
    /// the argument `render-worker` is one.
    public let executable: String
    /// Its arguments, `render-worker` for `iconr`.
    public let arguments: [String]
    private let idleWorkers = Locked<[WorkerProcess]>([])

    /// Workers run as `executable arguments...`, started when a render needs one and kept for reuse.
    public init(executable: String, arguments: [String] = ["render-worker"]) {
        self.executable = executable
        self.arguments = arguments
    }

    deinit {
        for worker in idleWorkers.withLock({ $0 }) { worker.terminate() }
    }

    /// Like `Rasterizer.render`, in a worker process, within `limits.timeout` seconds;
    /// `baseFile` is where relative references resolve (nil: the document reads no file).
    public func render(
        _ svg: [UInt8], scale: Double, limits: RenderLimits = .default, baseFile: String? = nil
    ) throws(RenderError) -> RasterImage {
        guard scale.isFinite, scale > 0 else { throw RenderError.invalidScale(scale) }
        let reply = try perform(
            RenderRequest(svg: svg, scale: scale, maxSize: limits.maxSize, baseFile: baseFile), timeout: limits.timeout)
        guard case .image(let image) = reply else { throw RenderError.workerFailed("expected an image in the reply") }
        return image
    }

    /// The size in pixels at scale 1, measured in a worker process: loading alone can crash librsvg.
    public func intrinsicSize(
        of svg: [UInt8], timeout: Double = RenderLimits.default.timeout,
        baseFile: String? = nil
    ) throws(RenderError) -> (width: Double, height: Double) {
        let measurement = try measure(svg, elementIDs: [], timeout: timeout, baseFile: baseFile)
        return (measurement.width, measurement.height)
    }

    /// Like `Rasterizer.measure`, in a worker process.
    public func measure(
        _ svg: [UInt8], elementIDs: [String], timeout: Double = RenderLimits.default.timeout,
        baseFile: String? = nil
    ) throws(RenderError) -> SVGMeasurement {
        let request = RenderRequest(
            svg: svg, scale: 0, maxSize: PixelSize(width: 0, height: 0), elementIDs: elementIDs,
            baseFile: baseFile)
        guard case .measurement(let measurement) = try perform(request, timeout: timeout) else {
            throw RenderError.workerFailed("expected a measurement in the reply")
        }
        return measurement
    }

    private func perform(_ request: RenderRequest, timeout: Double) throws(RenderError) -> RenderReply {
        let worker: WorkerProcess
        if let idle = idleWorkers.withLock({ $0.popLast() }) {
            worker = idle
        } else {
            worker = try WorkerProcess(executable: executable, arguments: arguments)
        }
        let deadline = ContinuousClock.now + .milliseconds(Int64(min(timeout, 1e9) * 1000))
        do {
            let reply = try worker.exchange(request.encoded(), deadline: deadline)
            let result = try RenderReply.decode(reply)
            idleWorkers.withLock { $0.append(worker) }
            return try result.get()
        } catch let failure as WorkerProcess.Failure {
            worker.terminate()
            switch failure {
            case .timedOut: throw RenderError.timedOut(seconds: timeout)
            case .died(let signal?): throw RenderError.crashed(signal: signal)
            case .died(nil): throw RenderError.workerFailed("the worker exited unexpectedly")
            case .io(let message): throw RenderError.workerFailed(message)
            }
        } catch let error as RenderError {
            throw error
        } catch {
            worker.terminate()
            throw RenderError.workerFailed("\(error)")
        }
    }
}

/// One worker process and the socket to it.
final class WorkerProcess: @unchecked Sendable {
    enum Failure: Error {
        case timedOut
        /// The worker is gone; the signal that killed it, if one did.
        case died(signal: Int32?)
        case io(String)
    }

    private let pid: pid_t
    private let socket: Int32
    /// Set once the process is reaped, so its pid (which the system may reuse) is never signalled.
    private var reaped = false

    init(executable: String, arguments: [String]) throws(RenderError) {
        var sockets: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &sockets) == 0 else {
            throw RenderError.workerFailed("socketpair: \(String(cString: strerror(errno)))")
        }
        let spawned = Self.spawn(executable, arguments, socket: sockets[1])
        close(sockets[1])
        do {
            pid = try spawned.get()
        } catch {
            close(sockets[0])
            throw error
        }
        socket = sockets[0]
    }

    /// Starts `executable` with the socket as its stdin and stdout, stderr to /dev/null.
    private static func spawn(_ executable: String, _ arguments: [String], socket: Int32) -> Result<pid_t, RenderError>
    {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, socket, 0)
        posix_spawn_file_actions_adddup2(&actions, socket, 1)
        // librsvg's panic messages are not ours to print; the parent reports the crash.
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        // A worker starts with no signal blocked, whatever the spawning thread blocks (a
        // server blocks SIGINT and SIGTERM in every thread to wait for them in one).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        var pid: pid_t = 0
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard status == 0 else {
            return .failure(
                RenderError.workerFailed("cannot start \(executable): \(String(cString: strerror(status)))"))
        }
        return .success(pid)
    }

    /// Sends one framed message and waits for the framed reply until `deadline`.
    func exchange(_ message: [UInt8], deadline: ContinuousClock.Instant) throws(Failure) -> [UInt8] {
        try send(frame(message))
        let header = try receive(count: 8, deadline: deadline)
        let length = header.withUnsafeBytes { Int(UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self))) }
        guard length <= 1 << 34 else { throw Failure.io("reply of \(length) bytes is not a render") }
        return try receive(count: length, deadline: deadline)
    }

    /// Kills the worker (if still running) and reaps it.
    func terminate() {
        close(socket)
        guard !reaped else { return }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
        reaped = true
    }

    private func send(_ bytes: [UInt8]) throws(Failure) {
        var sent = 0
        while sent < bytes.count {
            let result = bytes.withUnsafeBytes { buffer in
                Glibc.send(socket, buffer.baseAddress! + sent, buffer.count - sent, Int32(MSG_NOSIGNAL))
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw reasonForEnd()
            }
            sent += result
        }
    }

    private func receive(count: Int, deadline: ContinuousClock.Instant) throws(Failure) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        var received = 0
        while received < count {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { throw Failure.timedOut }
            let milliseconds = Int32(
                min(
                    remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1,
                    3_600_000))
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, milliseconds)
            if ready < 0, errno != EINTR { throw Failure.io("poll: \(String(cString: strerror(errno)))") }
            if ready <= 0 { continue }
            let result = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress! + received, count - received, 0) }
            if result < 0, errno == EINTR { continue }
            if result <= 0 { throw reasonForEnd() }
            received += result
        }
        return buffer
    }

    /// After the socket closed: how the worker ended.
    private func reasonForEnd() -> Failure {
        var status: Int32 = 0
        guard waitpid(pid, &status, 0) == pid else { return .died(signal: nil) }
        reaped = true
        let signal = status & 0x7F
        return .died(signal: signal != 0 && signal != 0x7F ? signal : nil)
    }
}

func frame(_ message: [UInt8]) -> [UInt8] {
    withUnsafeBytes(of: UInt64(message.count).littleEndian, Array.init) + message
}
