import IconrCore
import IconrRender

/// Why iconr could not produce an icon, as one line naming the file.
public enum IconrError: Error, Sendable, CustomStringConvertible {
    /// The template's metadata or XML is malformed.
    case template(TemplateError)
    /// A parameter value is not a color.
    case parameter(ParameterError, file: String?)
    /// librsvg, cairo or libpng failed, or the isolated renderer crashed or timed out.
    case render(RenderError, file: String?)
    /// The file could not be read or written.
    case io(String, file: String)
    /// An icon library has no template of that name.
    case unknownIcon(String, directory: String)
    /// The task that asked was cancelled before its render started.
    case cancelled

    public var description: String {
        switch self {
        case .template(let error): error.description
        case .parameter(let error, let file): prefixed(file, error.description)
        case .render(let error, let file): prefixed(file, error.description)
        case .io(let message, let file): prefixed(file, message)
        case .unknownIcon(let name, let directory): "unknown icon \"\(name)\": no \(name).svg in \(directory)"
        case .cancelled: "cancelled"
        }
    }
}

private func prefixed(_ file: String?, _ message: String) -> String {
    file.map { "\($0): \(message)" } ?? message
}

extension IconrError {
    /// The SVG bytes of the template file at `path`, decompressed when it is an `.svgz`; an
    /// `.io` error names the file when it cannot be read, and a PNG is refused by name.
    public static func readingTemplate(_ path: String) throws(IconrError) -> [UInt8] {
        let bytes = try reading(path)
        if PNGDecoder.isPNG(bytes) {
            throw IconrError.io("is a PNG image, not an SVG template (iconr sprite takes PNG icons as they are)", file: path)
        }
        guard Gzip.isCompressed(bytes) else { return bytes }
        do {
            return try Gzip.decompress(bytes)
        } catch {
            throw IconrError.render(error, file: path)
        }
    }

    /// The bytes of the file at `path`, or an `.io` error naming it (`no such file`, ...).
    public static func reading(_ path: String) throws(IconrError) -> [UInt8] {
        do {
            return try FileReader.read(path)
        } catch {
            throw IconrError.io(error.reason, file: path)
        }
    }
}
