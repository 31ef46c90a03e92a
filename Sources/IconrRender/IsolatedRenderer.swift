import Glibc
import IconrCore
import IconrSystem

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
    /// `baseFile` is where relative references resolve (nil: the document reads no file);
    /// `stylesheet`, the user stylesheet to draw with (`LoadedSVG.render`).
    public func render(
        _ svg: [UInt8], scale: Double, limits: RenderLimits = .default, baseFile: String? = nil,
        stylesheet: [UInt8]? = nil
    ) throws(RenderError) -> RasterImage {
        guard scale.isFinite, scale > 0 else { throw RenderError.invalidScale(scale) }
        let request = RenderRequest(
            svg: svg, scale: scale, maxSize: limits.maxSize, baseFile: baseFile, stylesheet: stylesheet)
        let reply = try perform(request, timeout: limits.timeout)
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

    /// Sends `request` to an idle worker (or a new one). A worker that dies on it may have
    /// been dead already, or killed from outside while it rendered: that is not the
    /// document's doing, so the request is sent once more, to a new worker, and only a second
    /// death is the document's crash. A timeout is not tried again.
    private func perform(_ request: RenderRequest, timeout: Double) throws(RenderError) -> RenderReply {
        let message = request.encoded()
        let first: WorkerProcess
        if let idle = idleWorkers.withLock({ $0.popLast() }) {
            first = idle
        } else {
            first = try WorkerProcess(executable: executable, arguments: arguments)
        }
        switch attempt(message, on: first, timeout: timeout) {
        case .success(let reply): return try reply.get()
        case .failure(.died), .failure(.crashedInIconr), .failure(.io):
            let second = try WorkerProcess(executable: executable, arguments: arguments)
            switch attempt(message, on: second, timeout: timeout) {
            case .success(let reply): return try reply.get()
            case .failure(let failure): throw Self.error(failure, timeout: timeout)
            }
        case .failure(let failure): throw Self.error(failure, timeout: timeout)
        }
    }

    /// One exchange with `worker`: the decoded reply (the worker then waits for the next
    /// request), or how the worker failed (it is then gone).
    private func attempt(
        _ message: [UInt8], on worker: WorkerProcess, timeout: Double
    ) -> Result<Result<RenderReply, RenderError>, WorkerProcess.Failure> {
        let deadline = ContinuousClock.now + .milliseconds(Int64(min(timeout, 1e9) * 1000))
        do {
            let reply = try worker.exchange(message, deadline: deadline)
            switch Result(catching: { () throws(RenderError) in try RenderReply.decode(reply) }) {
            case .success(let result):
                idleWorkers.withLock { $0.append(worker) }
                return .success(result)
            case .failure(let error):
                worker.terminate()
                return .success(.failure(error))
            }
        } catch {
            worker.terminate()
            return .failure(error)
        }
    }

    private static func error(_ failure: WorkerProcess.Failure, timeout: Double) -> RenderError {
        switch failure {
        case .timedOut: .timedOut(seconds: timeout)
        case .died(let signal?): .crashed(signal: signal)
        case .crashedInIconr: .crashedInIconr
        case .died(nil): .workerFailed("the worker exited unexpectedly")
        case .io(let message): .workerFailed(message)
        }
    }
}

/// One worker process and the socket to it.
final class WorkerProcess: @unchecked Sendable {
    enum Failure: Error {
        case timedOut
        /// The worker is gone; the signal that killed it, if one did.
        case died(signal: Int32?)
        /// The worker crashed in iconr's own code (it exited with `CrashSignals.ownFaultStatus`).
        case crashedInIconr
        case io(String)
    }

    private let pid: pid_t
    private let socket: FileDescriptor
    /// Set once the process is reaped, so its pid (which the system may reuse) is never signalled.
    private var reaped = false

    init(executable: String, arguments: [String]) throws(RenderError) {
        let started = Result { () throws(SystemError) in try Self.start(executable, arguments) }
        switch started {
        case .success(let (pid, socket)):
            self.pid = pid
            self.socket = socket
        case .failure(let error):
            throw RenderError.workerFailed(
                error.call == "posix_spawn" ? "cannot start \(executable): \(error.reason)" : "\(error)")
        }
    }

    /// Spawns the worker with one end of a socket pair as its stdin and stdout, and returns
    /// its pid and the other end. librsvg's panic messages are not ours to print (the parent
    /// reports the crash), so its stderr is /dev/null.
    private static func start(
        _ executable: String, _ arguments: [String]
    ) throws(SystemError) -> (
        pid_t, FileDescriptor
    ) {
        let (ours, theirs) = try FileDescriptor.socketPair()
        // The worker has its own copies of the socket; the parent's is not written.
        defer { try? theirs.close() }
        do {
            let pid = try ChildProcess.spawn(
                executable, arguments,
                fileActions: [
                    .duplicate(theirs, as: 0), .duplicate(theirs, as: 1), .open("/dev/null", flags: O_WRONLY, as: 2),
                ])
            return (pid, ours)
        } catch {
            try? ours.close()
            throw error
        }
    }

    /// Sends one framed message and waits for the framed reply until `deadline`.
    func exchange(_ message: [UInt8], deadline: ContinuousClock.Instant) throws(Failure) -> [UInt8] {
        do {
            try socket.writeAll(frame(message), noSignal: true)
        } catch {
            throw reasonForEnd()
        }
        var replies = FrameReader()
        let reply = try replies.next(limit: 1 << 34) { (buffer) throws(Failure) -> Int in
            try waitForInput(until: deadline)
            guard let count = try? socket.read(into: buffer), count > 0 else { throw reasonForEnd() }
            return count
        }
        switch reply {
        case .message(let bytes): return bytes
        case .end: throw reasonForEnd()
        case .tooLong(let length): throw Failure.io("reply of \(length) bytes is not a render")
        }
    }

    /// Kills the worker (if still running) and reaps it.
    func terminate() {
        // The worker is killed next: nothing it was sent can be lost by a failed close.
        try? socket.close()
        guard !reaped else { return }
        kill(pid, SIGKILL)
        _ = try? ChildProcess.wait(for: pid)
        reaped = true
    }

    /// Returns once the socket has input (or has closed), or throws `timedOut` at `deadline`.
    private func waitForInput(until deadline: ContinuousClock.Instant) throws(Failure) {
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { throw Failure.timedOut }
            let milliseconds = Int32(
                min(
                    remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1,
                    3_600_000))
            var descriptor = pollfd(fd: socket.rawValue, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, milliseconds)
            if ready > 0 { return }
            // Interrupted or not ready yet: wait again, for what is left of the time.
            if ready < 0, errno != EINTR { throw Failure.io("\(SystemError("poll"))") }
        }
    }

    /// After the socket closed: how the worker ended.
    private func reasonForEnd() -> Failure {
        guard let termination = try? ChildProcess.wait(for: pid) else { return .died(signal: nil) }
        reaped = true
        if termination == .exited(CrashSignals.ownFaultStatus) { return .crashedInIconr }
        return .died(signal: termination.signal)
    }
}

func frame(_ message: [UInt8]) -> [UInt8] {
    withUnsafeBytes(of: UInt64(message.count).littleEndian, Array.init) + message
}
