import Glibc
import IconrCore
import IconrRender
import IconrSystem
import Synchronization

/// Why iconr could not produce an icon, as one line naming the file.
public enum IconrError: Error, Sendable, CustomStringConvertible {
    /// The template's metadata or XML is malformed.
    case template(TemplateError)
    /// A parameter value is not a color.
    case parameter(ParameterError, file: String?)
    /// A parameter name the icon does not declare.
    case unknownParameter(UnknownParameterError, file: String?)
    /// librsvg, cairo or libpng failed, or the isolated renderer crashed or timed out.
    case render(RenderError, file: String?)
    /// A file could not be read (what went wrong is in the `FileReadError`).
    case read(FileReadError)
    /// The file is a PNG image where an SVG template was expected.
    case notATemplate(path: String)
    /// A folder could not be made, or is not a folder of icons.
    case folder(path: String, problem: FolderProblem)
    /// A variants file is not one, or gives a color that is not one.
    case variants(path: String, problem: VariantsProblem)
    /// An icon library has no template of that name.
    case unknownIcon(String, directory: String)
    /// The task that asked was cancelled before its render started.
    case cancelled

    /// One line, naming the file when there is one: `icons/flag.svg: no such file`.
    public var description: String {
        // A template error names the file and the place in it together: `flag.svg:12:5: ...`.
        if case .template(let error) = self { return error.description }
        return file.map { "\($0): \(reason)" } ?? reason
    }

    /// The file (or folder) the error is about, when there is one.
    public var file: String? {
        switch self {
        case .template(let error): error.file
        case .parameter(_, let file), .unknownParameter(_, let file), .render(_, let file): file
        case .read(let error): error.path
        case .notATemplate(let path), .folder(let path, _), .variants(let path, _): path
        case .unknownIcon, .cancelled: nil
        }
    }

    /// What went wrong, without the file: for a message whose reader knows which file it
    /// is, or must not learn where it is (a server's answer names icons, not its paths).
    public var reason: String {
        switch self {
        case .template(let error):
            TemplateError(file: nil, location: error.location, message: error.message).description
        case .parameter(let error, _): error.description
        case .unknownParameter(let error, _): error.description
        case .render(let error, _): error.description
        case .read(let error): error.reason
        case .notATemplate: "is a PNG image, not an SVG template (iconr sprite takes PNG icons as they are)"
        case .folder(_, .cannotCreate(let purpose, let error)): "cannot create \(purpose): \(error.reason)"
        case .folder(_, .notAFolderOfIcons): "not a folder of icons"
        case .folder(_, .noSuchFolder): "no such folder"
        case .variants(_, .malformed):
            "not a variants file: expected {\"icon\": [{\"params\": {\"name\": \"color\"}, \"id\": \"optional\"}]}"
        case .variants(_, .parameter(let icon, let error)): "icon \"\(icon)\": \(error)"
        case .unknownIcon(let name, let directory): "unknown icon \"\(name)\": no \(name).svg in \(directory)"
        case .cancelled: "cancelled"
        }
    }

    /// Why a folder did not do.
    public enum FolderProblem: Hashable, Sendable {
        /// Making it (`purpose`: "the cache directory", "the folder") failed.
        case cannotCreate(purpose: String, SystemError)
        /// It is not a folder.
        case notAFolderOfIcons
        /// Nothing is there.
        case noSuchFolder
    }

    /// Why a variants file did not do.
    public enum VariantsProblem: Hashable, Sendable {
        /// It is not `{"icon": [{"params": {...}, "id": ...}]}`.
        case malformed
        /// A color of one of `icon`'s variants is not a color.
        case parameter(icon: String, ParameterError)
    }
}

extension IconrError {
    /// The SVG bytes of the template file at `path`, decompressed when it is an `.svgz`; an
    /// `.read` error names the file when it cannot be read, and a PNG is `.notATemplate`.
    /// Why `path` is no folder of icons: nothing is there, or something else is.
    package static func notAFolder(_ path: String) -> IconrError {
        .folder(path: path, problem: FileReader.exists(path) ? .notAFolderOfIcons : .noSuchFolder)
    }

    package static func readingTemplate(_ path: String) throws(IconrError) -> [UInt8] {
        let bytes: [UInt8]
        do {
            bytes = try FileReader.readIcon(path)
        } catch {
            throw IconrError.read(error)
        }
        if PNGDecoder.isPNG(bytes) {
            throw IconrError.notATemplate(path: path)
        }
        guard Gzip.isCompressed(bytes) else { return bytes }
        do {
            return try Gzip.decompress(bytes, limit: FileReader.iconLimit.load(ordering: .relaxed))
        } catch {
            throw IconrError.render(error, file: path)
        }
    }

    /// The bytes of the file at `path`, or a `.read` error naming it (`no such file`, ...).
    package static func reading(_ path: String) throws(IconrError) -> [UInt8] {
        do {
            return try FileReader.read(path)
        } catch {
            throw IconrError.read(error)
        }
    }
}
