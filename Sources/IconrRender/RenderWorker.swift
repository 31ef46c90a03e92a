import Glibc
import IconrCore
import IconrSystem

/// The worker side of `IsolatedRenderer`: serves framed render requests until its input
/// closes. Run it in a process of its own.
public enum RenderWorker {
    /// Serves requests read from stdin, answering on stdout.
    public static func serve() -> Never {
        let input = FileDescriptor(rawValue: 0), output = FileDescriptor.standardOutput
        exitWhenOrphaned()
        CrashSignals.endProcessAtOnce()
        // The documents of the last renders, the latest first: a sprite build asks for one
        // icon at several scales in a row, parsing is about half the cost of a small icon,
        // and the variants of a restyled template share its marked document (a server asks
        // for several icons in turn). A document drawn with a user stylesheet is only ever
        // drawn with one: librsvg keeps what an earlier one set.
        var recent: [(document: LoadedSVG, styled: Bool)] = []
        var requests = FrameReader()
        // A failed read ends the stream, as its end does.
        while case .message(let request) = requests.next(limit: 1 << 32, read: { (try? input.read(into: $0)) ?? 0 }) {
            let reply: [UInt8]
            if let request = RenderRequest(decoding: request) {
                let result = Result { () throws(RenderError) -> RenderReply in
                    let baseFile = request.baseFile.isEmpty ? nil : request.baseFile
                    if request.isMeasurement {
                        return .measurement(
                            try Rasterizer.measure(request.svg, elementIDs: request.elementIDs, baseFile: baseFile))
                    }
                    let styled = !request.stylesheet.isEmpty
                    let kept = recent.firstIndex {
                        $0.styled == styled && $0.document.baseFile == baseFile && $0.document.bytes == request.svg
                    }
                    let document =
                        if let kept { recent.remove(at: kept).document } else {
                            try LoadedSVG(bytes: request.svg, baseFile: baseFile)
                        }
                    recent.insert((document, styled), at: 0)
                    // At most 8, and the others' sources within 16 MiB (librsvg's trees are larger).
                    while recent.count > 8 || recent.dropFirst().reduce(0, { $0 + $1.document.bytes.count }) > 16 << 20
                    {
                        recent.removeLast()
                    }
                    return .image(
                        try document.render(
                            scale: request.scale, limits: RenderLimits(maxSize: request.maxSize),
                            stylesheet: styled ? request.stylesheet : nil))
                }
                reply = RenderReply.encode(result)
            } else {
                reply = RenderReply.encode(.failure(.workerFailed("malformed request")))
            }
            guard (try? output.writeAll(frame(reply))) != nil else { break }
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
}
