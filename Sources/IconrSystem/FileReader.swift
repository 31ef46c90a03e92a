import Glibc
import Synchronization

/// Why a file could not be read: the file, and what went wrong as data (the system call
/// and its errno, or what the file is), told in the words people expect (`no such file`).
public struct FileReadError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kept the file from being read.
    public enum Problem: Hashable, Sendable {
        /// A system call (`open`, `fstat`, `read`) failed.
        case system(SystemError)
        /// It is a folder, FIFO, device, socket or link (`kind`: "a FIFO"), not a regular file.
        case notRegularFile(kind: String)
        /// It is larger than `limit` bytes (`bytes`: its size, when known before reading).
        case tooLarge(bytes: Int?, limit: Int)
    }

    /// The file, as the caller named it.
    public let path: String
    /// What went wrong.
    public let problem: Problem

    package init(path: String, problem: Problem) {
        self.path = path
        self.problem = problem
    }

    /// What went wrong, without the path: `no such file`, `is a FIFO, not a regular file`.
    public var reason: String {
        switch problem {
        case .system(let error) where error.errno == ENOENT: "no such file"
        case .system(let error) where error.errno == EACCES: "permission denied"
        case .system(let error) where error.errno == EISDIR: "is a directory, not a regular file"
        case .system(let error) where error.errno == ELOOP: "is a symbolic link, which is not followed here"
        case .system(let error): "cannot read it: \(error.reason)"
        case .notRegularFile(let kind): "is \(kind), not a regular file"
        case .tooLarge(let bytes?, let limit):
            "is \(bytes) bytes, more than the \(Self.mebibytes(limit)) MiB a file may have here (--max-file-size)"
        case .tooLarge(nil, let limit):
            "is more than the \(Self.mebibytes(limit)) MiB a file may have here (--max-file-size)"
        }
    }

    /// `icons/flag.svg: no such file`.
    public var description: String { "\(path): \(reason)" }

    /// `limit` in MiB as people write it: `4`, `0.5`.
    private static func mebibytes(_ limit: Int) -> String {
        let value = (Double(limit) / 1_048_576 * 100).rounded() / 100
        return value == value.rounded() ? String(Int(value)) : String(value)
    }
}

/// Reads whole files with plain system calls: no Foundation start-up on the path of a
/// one-icon command.
package enum FileReader {
    /// Files larger than this are refused rather than read (icons are kilobytes), unless a
    /// read names a limit of its own.
    package static let maxSize = 64 << 20
    /// The largest icon file (SVG, SVGZ, PNG, or a file an icon draws) read, in bytes; the
    /// commands' `--max-file-size` sets it for the process. 4 MiB by default: real icons are
    /// kilobytes (openstreetmap-carto's largest pattern 0.8 MB, Studio takes under 400 KB),
    /// and librsvg's memory grows with the document (a 50 MB SVG peaked at 2.4 GB).
    package static let iconLimit = Atomic<Int>(4 << 20)

    /// `read(path)` of an icon file: at most `iconLimit` bytes.
    package static func readIcon(_ path: String) throws(FileReadError) -> [UInt8] {
        try read(path, maxSize: iconLimit.load(ordering: .relaxed))
    }

    /// The bytes of the regular file at `path` (a FIFO, device or folder is an error), of at
    /// most `maxSize` bytes; without `followingLinks`, a symbolic link is an error too.
    package static func read(
        _ path: String, followingLinks: Bool = true, maxSize: Int = maxSize
    ) throws(FileReadError) -> [UInt8] {
        try readWithTime(path, followingLinks: followingLinks, maxSize: maxSize).bytes
    }

    /// The file's bytes and its modification time, in nanoseconds since 1970.
    package static func readWithTime(
        _ path: String, followingLinks: Bool = true, maxSize: Int = maxSize
    ) throws(FileReadError) -> (bytes: [UInt8], modified: Int) {
        // Non-blocking, so that opening a FIFO returns at once instead of waiting for a writer.
        let file: FileDescriptor
        do {
            file = try FileDescriptor.open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | (followingLinks ? 0 : O_NOFOLLOW))
        } catch {
            throw FileReadError(path: path, problem: .system(error))
        }
        // Closing a file only read loses nothing: its result is not an error here.
        defer { try? file.close() }
        var info = stat()
        guard fstat(file.rawValue, &info) == 0 else {
            throw FileReadError(path: path, problem: .system(SystemError("fstat")))
        }
        // Only regular files: a FIFO or a device could block forever or never end.
        if let kind = nonRegularKind(info.st_mode) {
            throw FileReadError(path: path, problem: .notRegularFile(kind: kind))
        }
        guard Int(info.st_size) <= maxSize else {
            throw FileReadError(path: path, problem: .tooLarge(bytes: Int(info.st_size), limit: maxSize))
        }
        // One buffer of the file's size and a byte more, so that a file read whole ends in
        // one more read that returns 0; a file that grows meanwhile (or says it is empty, as
        // some kernel files do) gets a larger buffer. A sprite build keeps every icon file's
        // bytes: a buffer of at least 4 KiB for a 1 KiB icon was most of its memory.
        var bytes = [UInt8](repeating: 0, count: info.st_size > 0 ? Int(info.st_size) + 1 : 4096)
        var count = 0
        while true {
            if count == bytes.count { bytes += [UInt8](repeating: 0, count: bytes.count) }
            let result = bytes.withUnsafeMutableBytes { raw in
                Result { () throws(SystemError) in
                    try file.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[count...]))
                }
            }
            let read: Int
            switch result {
            case .success(let count): read = count
            case .failure(let error): throw FileReadError(path: path, problem: .system(error))
            }
            if read == 0 {
                // A buffer grown past what was read is copied to its size.
                guard bytes.count - count <= 1 else { return (Array(bytes[..<count]), info.st_mtim.nanoseconds) }
                bytes.removeLast(bytes.count - count)
                return (bytes, info.st_mtim.nanoseconds)
            }
            count += read
            guard count <= maxSize else {
                throw FileReadError(path: path, problem: .tooLarge(bytes: nil, limit: maxSize))
            }
        }
    }

    /// A name in a folder and what `stat` says of what it names (links followed).
    package struct ListedName: Sendable {
        package let name: String
        package let isFolder: Bool
        package let stamp: FileStamp
    }

    /// The names in a folder, without hidden ones, that `wanted` accepts (and its folders, with
    /// `folders`), each stat'ed relative to the open folder (no path is looked up again); a
    /// name that readdir says is a regular file or a folder is stat'ed only when wanted. Empty
    /// when the folder cannot be read; a name that cannot be stat'ed is left out. A name that
    /// is not UTF-8 (no listing here can name or open it) goes to `undecodable` instead, each
    /// byte that is no printable ASCII written `\xNN`.
    package static func listing(
        of directory: String, folders: Bool, wanted: (String) -> Bool, undecodable: (String) -> Void = { _ in }
    ) -> [ListedName] {
        var listed: [ListedName] = []
        forEachName(in: directory, undecodable: undecodable) { folder, name, type in
            if type == Int(DT_DIR) && !folders { return }
            let isWanted = wanted(name)
            if type == Int(DT_REG) && !isWanted { return }
            var info = stat()
            guard fstatat(folder, name, &info, 0) == 0 else { return }
            let isFolder = (info.st_mode & S_IFMT) == S_IFDIR
            guard isFolder ? folders : isWanted else { return }
            listed.append(ListedName(name: name, isFolder: isFolder, stamp: FileStamp(info)))
        }
        return listed
    }

    /// The path with every symbolic link followed, `..` and `.` resolved; nil when it does
    /// not exist.
    package static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Whether `path`, its links followed, is in the folder `base` (a `realPath`) or below.
    package static func isWithin(_ base: String, _ path: String) -> Bool {
        guard let resolved = realPath(path) else { return false }
        return resolved.hasPrefix(base == "/" ? base : base + "/")
    }

    /// `0F`: a byte in two uppercase hex digits.
    private static func hexByte(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }

    /// The names in a folder, without hidden ones (temporary files start with a dot);
    /// empty when it cannot be read.
    package static func names(in directory: String) -> [String] {
        var names: [String] = []
        forEachName(in: directory) { _, name, _ in names.append(name) }
        return names
    }

    /// The hidden names in `directory` (`.` and `..` aside), unsorted: where temporary files are.
    package static func hiddenNames(in directory: String) -> [String] {
        var names: [String] = []
        forEachName(in: directory, hidden: true) { _, name, _ in
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// Calls `body` with the open folder's descriptor, each name in it that is not hidden (or,
    /// with `hidden`, each that is), and readdir's type for it (`DT_REG`, `DT_DIR`, ... or
    /// `DT_UNKNOWN`); nothing when the folder cannot be read. A name that is not UTF-8 goes to
    /// `undecodable` instead, its odd bytes as `\xNN`.
    private static func forEachName(
        in directory: String, hidden: Bool = false, undecodable: (String) -> Void = { _ in },
        _ body: (Int32, String, Int) -> Void
    ) {
        guard let handle = opendir(directory) else { return }
        defer { closedir(handle) }
        let folder = dirfd(handle)
        while let entry = readdir(handle) {
            // Decoded in place; only a name that is not UTF-8 is copied, to be written out.
            let (name, odd): (String?, String?) = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                let bytes = raw.prefix { $0 != 0 }
                guard (bytes.first == UInt8(ascii: ".")) == hidden else { return (nil, nil) }
                if let name = String(validating: bytes, as: UTF8.self) { return (name, nil) }
                return (
                    nil,
                    bytes.map { (0x20..<0x7F).contains($0) ? String(UnicodeScalar($0)) : "\\x" + hexByte($0) }.joined()
                )
            }
            if let name { body(folder, name, Int(entry.pointee.d_type)) } else if let odd { undecodable(odd) }
        }
    }

    /// Whether anything is at `path` (following a symbolic link).
    package static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// Whether `path` is a folder (following a symbolic link).
    package static func isFolder(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Makes the folder `path` and any missing parents, like `mkdir -p`. Something other than
    /// a folder in the way is `ENOTDIR`.
    package static func makeFolder(_ path: String) throws(SystemError) {
        if mkdir(path, 0o755) == 0 || errno == EEXIST {
            var info = stat()
            guard stat(path, &info) == 0 else { throw SystemError("stat") }
            guard (info.st_mode & S_IFMT) == S_IFDIR else { throw SystemError("mkdir", errno: ENOTDIR) }
            return
        }
        guard errno == ENOENT, let slash = path.lastIndex(of: "/"), slash != path.startIndex else {
            throw SystemError("mkdir")
        }
        try makeFolder(String(path[..<slash]))
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else { throw SystemError("mkdir") }
    }

    /// "a directory", "a FIFO", ... for anything but a regular file; nil for a regular file.
    package static func nonRegularKind(_ mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: nil
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        default: "not a file"
        }
    }
}
