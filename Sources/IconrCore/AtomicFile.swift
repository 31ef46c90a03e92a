import Glibc
import Synchronization

/// Why a file could not be written.
public struct FileWriteError: Error, Hashable, Sendable, CustomStringConvertible {
    public let path: String
    public let reason: String

    public var description: String { "\(path): cannot write it: \(reason)" }
}

/// Writes files whole or not at all: into a temporary file beside the destination, then
/// `rename` over it, so a reader never sees half a file and a failure leaves the old one.
public enum AtomicFile {
    /// Temporary files being written now, for `removeTemporaryFiles()`.
    private static let pending = Mutex<Set<String>>([])

    /// Removes the temporary files of writes under way; for an interrupt handler that is
    /// about to end the process.
    public static func removeTemporaryFiles() {
        pending.withLock { paths in
            for path in paths { unlink(path) }
            paths.removeAll()
        }
    }

    public static func write(_ bytes: [UInt8], to path: String) throws(FileWriteError) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        var info = stat()
        guard stat(directory, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw FileWriteError(path: path, reason: "no such directory \(directory)")
        }
        let temporary = directory + "/.\(name).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        pending.withLock { _ = $0.insert(temporary) }
        defer { pending.withLock { _ = $0.remove(temporary) } }
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw FileWriteError(path: path, reason: String(cString: strerror(errno))) }
        var failure: String?
        bytes.withUnsafeBytes { buffer in
            var written = 0
            while written < buffer.count {
                let result = Glibc.write(descriptor, buffer.baseAddress! + written, buffer.count - written)
                if result < 0, errno == EINTR { continue }
                if result <= 0 { failure = String(cString: strerror(errno)); return }
                written += result
            }
        }
        if close(descriptor) != 0, failure == nil { failure = String(cString: strerror(errno)) }
        if failure == nil, rename(temporary, path) != 0 { failure = String(cString: strerror(errno)) }
        if let failure {
            unlink(temporary)
            throw FileWriteError(path: path, reason: failure)
        }
    }
}
