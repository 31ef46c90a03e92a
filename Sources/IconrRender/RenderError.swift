import IconrCore

/// Why a document could not be rasterized or encoded.
public enum RenderError: Error, Hashable, Sendable, CustomStringConvertible {
    /// librsvg (or the XML parser under it) rejected the document; its message, with the position.
    case invalidDocument(String)
    /// Neither width/height nor a viewBox says how large the icon is.
    case noIntrinsicSize
    case invalidScale(Double)
    /// The raster would exceed the size limit; refused before allocating it.
    case tooLarge(PixelSize, limit: PixelSize)
    /// The memory for a raster of that size could not be had.
    case outOfMemory(PixelSize)
    /// cairo or libpng failed, with the library's message.
    case drawingFailed(String)
    case encodingFailed(String)
    case decodingFailed(String)
    /// The isolated renderer died by a signal (librsvg aborted or crashed).
    case crashed(signal: Int32)
    /// The render crashed in iconr's own code (a trap or a bad access there), not in librsvg.
    case crashedInIconr
    case timedOut(seconds: Double)
    /// The isolated renderer could not be started or spoke out of turn.
    case workerFailed(String)

    /// One line, without the file.
    public var description: String {
        switch self {
        case .invalidDocument(let message): "not a valid SVG document: \(message)"
        case .noIntrinsicSize:
            "the document has no size and draws nothing: give the root <svg> width and height, or a viewBox"
        case .invalidScale(let scale): "invalid scale \(scale): expected a finite number > 0"
        case .tooLarge(let size, let limit): "a \(size) raster exceeds the limit of \(limit)"
        case .outOfMemory(let size): "not enough memory for a \(size) raster"
        case .drawingFailed(let message): "drawing failed: \(message)"
        case .encodingFailed(let message): "PNG encoding failed: \(message)"
        case .decodingFailed(let message): "PNG decoding failed: \(message)"
        case .crashed(let signal): "librsvg crashed on this document (\(signalName(signal)))"
        case .crashedInIconr:
            "iconr itself crashed on this document (a defect in iconr's code, not librsvg's: please report it)"
        case .timedOut(let seconds): "rendering took longer than the \(seconds.shortText) s limit"
        case .workerFailed(let message): "render worker failed: \(message)"
        }
    }
}

private func signalName(_ signal: Int32) -> String {
    // A switch, not a dictionary: a dictionary of Int32 is type metadata the Swift runtime
    // makes on first use, some 50 us of a one-icon process's start.
    switch signal {
    case 4: "SIGILL"
    case 5: "SIGTRAP"
    case 6: "SIGABRT"
    case 7: "SIGBUS"
    case 8: "SIGFPE"
    case 9: "SIGKILL"
    case 11: "SIGSEGV"
    default: "signal \(signal)"
    }
}
