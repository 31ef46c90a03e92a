import Glibc
import IconrCore

/// The worker side of `IsolatedRenderer`: serves framed render requests until its input
/// closes. Run it in a process of its own.
public enum RenderWorker {
    /// Serves requests read from stdin, answering on stdout.
    public static func serve() -> Never {
        let input: Int32 = 0, output: Int32 = 1
        exitWhenOrphaned()
        CrashSignals.endProcessAtOnce()
        // The document of the last render: a sprite build asks for one icon at several
        // scales in a row, and parsing is about half the cost of a small icon.
        var lastDocument: LoadedSVG?
        while let request = readFrame(from: input) {
            let reply: [UInt8]
            if let request = RenderRequest(decoding: request) {
                let result = Result { () throws(RenderError) -> RenderReply in
                    let baseFile = request.baseFile.isEmpty ? nil : request.baseFile
                    if request.isMeasurement {
                        return .measurement(
                            try Rasterizer.measure(request.svg, elementIDs: request.elementIDs, baseFile: baseFile))
                    }
                    let document =
                        if let lastDocument, lastDocument.bytes == request.svg, lastDocument.baseFile == baseFile {
                            lastDocument
                        } else {
                            try LoadedSVG(bytes: request.svg, baseFile: baseFile)
                        }
                    lastDocument = document
                    return .image(
                        try document.render(scale: request.scale, limits: RenderLimits(maxSize: request.maxSize)))
                }
                reply = RenderReply.encode(result)
            } else {
                reply = RenderReply.encode(.failure(.workerFailed("malformed request")))
            }
            guard writeAll(frame(reply), to: output) else { break }
        }
        _exit(0)
    }

    /// A worker busy with a runaway document would outlive a parent that died; it watches
    /// for being re-parented and leaves. (`PR_SET_PDEATHSIG` follows the spawning thread,
    /// not the process, so it would kill idle workers of thread pools.)
    private static func exitWhenOrphaned() {
        var thread = pthread_t()
        pthread_create(
            &thread, nil,
            { parent in
                while getppid() == pid_t(Int(bitPattern: parent)) { usleep(200_000) }
                _exit(0)
            }, UnsafeMutableRawPointer(bitPattern: Int(getppid())))
        pthread_detach(thread)
    }

    private static func readFrame(from descriptor: Int32) -> [UInt8]? {
        guard let header = readExactly(8, from: descriptor) else { return nil }
        var reader = ByteReader(header)
        guard let length = reader.uint64(), length <= 1 << 32 else { return nil }
        return readExactly(Int(length), from: descriptor)
    }

    private static func readExactly(_ count: Int, from descriptor: Int32) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: count)
        var received = 0
        while received < count {
            let result = buffer.withUnsafeMutableBytes {
                read(descriptor, $0.baseAddress! + received, count - received)
            }
            if result < 0, errno == EINTR { continue }
            guard result > 0 else { return nil }
            received += result
        }
        return buffer
    }

    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, bytes.count - written) }
            if result < 0, errno == EINTR { continue }
            guard result > 0 else { return false }
            written += result
        }
        return true
    }
}
