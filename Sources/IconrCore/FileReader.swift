import Glibc

/// Why a file could not be read: the file, and what went wrong as data (the system call
/// and its errno, or what the file is), told in the words people expect (`no such file`).
public struct FileReadError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Problem: Hashable, Sendable {
        /// A system call (`open`, `fstat`, `read`) failed with this errno.
        case system(call: String, errno: Int32)
        /// It is a folder, FIFO, device, socket or link (`kind`: "a FIFO"), not a regular file.
        case notRegularFile(kind: String)
        /// It is larger than `limit` bytes (`bytes`: its size, when known before reading).
        case tooLarge(bytes: Int?, limit: Int)
    }

    public let path: String
    public let problem: Problem

    /// What went wrong, without the path: `no such file`, `is a FIFO, not a regular file`.
    public var reason: String {
        switch problem {
        case .system(_, ENOENT): "no such file"
        case .system(_, EACCES): "permission denied"
        case .system(_, EISDIR): "is a directory, not a regular file"
        case .system(_, ELOOP): "is a symbolic link, which is not followed here"
        case .system(_, let code): "cannot read it: \(String(cString: strerror(code)))"
        case .notRegularFile(let kind): "is \(kind), not a regular file"
        case .tooLarge(let bytes?, let limit): "is \(bytes) bytes, more than the \(limit >> 20) MiB an icon may have"
        case .tooLarge(nil, let limit): "is more than the \(limit >> 20) MiB an icon may have"
        }
    }

    public var description: String { "\(path): \(reason)" }
}

/// Reads whole files with plain system calls: no Foundation start-up on the path of a
/// one-icon command.
public enum FileReader {
    /// Files larger than this are refused rather than read (icons are kilobytes).
    public static let maxSize = 64 << 20

    /// The bytes of the regular file at `path` (a FIFO, device or folder is an error);
    /// without `followingLinks`, a symbolic link is an error too.
    public static func read(_ path: String, followingLinks: Bool = true) throws(FileReadError) -> [UInt8] {
        try readWithTime(path, followingLinks: followingLinks).bytes
    }

    /// The file's bytes and its modification time, in nanoseconds since 1970.
    public static func readWithTime(
        _ path: String, followingLinks: Bool = true
    ) throws(FileReadError) -> (bytes: [UInt8], modified: Int) {
        // Non-blocking, so that opening a FIFO returns at once instead of waiting for a writer.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (followingLinks ? 0 : O_NOFOLLOW))
        guard descriptor >= 0 else { throw FileReadError(path: path, problem: .system(call: "open", errno: errno)) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw FileReadError(path: path, problem: .system(call: "fstat", errno: errno))
        }
        // Only regular files: a FIFO or a device could block forever or never end.
        if let kind = nonRegularKind(info.st_mode) {
            throw FileReadError(path: path, problem: .notRegularFile(kind: kind))
        }
        guard Int(info.st_size) <= maxSize else {
            throw FileReadError(path: path, problem: .tooLarge(bytes: Int(info.st_size), limit: maxSize))
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: max(4096, Int(info.st_size) + 1))
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw FileReadError(path: path, problem: .system(call: "read", errno: errno)) }
            if count == 0 { return (bytes, info.st_mtim.tv_sec * 1_000_000_000 + info.st_mtim.tv_nsec) }
            bytes += chunk[0..<count]
            guard bytes.count <= maxSize else {
                throw FileReadError(path: path, problem: .tooLarge(bytes: nil, limit: maxSize))
            }
        }
    }

    /// The names in a folder, without hidden ones (temporary files start with a dot);
    /// empty when it cannot be read.
    public static func names(in directory: String) -> [String] {
        guard let handle = opendir(directory) else { return [] }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if !name.hasPrefix(".") { names.append(name) }
        }
        return names
    }

    /// Makes the folder `path` and any missing parents, like `mkdir -p`. False (with `errno`
    /// set) when it cannot, or when something other than a folder is in the way.
    public static func makeFolder(_ path: String) -> Bool {
        if mkdir(path, 0o755) == 0 || errno == EEXIST {
            var info = stat()
            return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
        }
        guard errno == ENOENT, let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return false }
        return makeFolder(String(path[..<slash])) && (mkdir(path, 0o755) == 0 || errno == EEXIST)
    }

    /// "a directory", "a FIFO", ... for anything but a regular file; nil for a regular file.
    public static func nonRegularKind(_ mode: mode_t) -> String? {
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
