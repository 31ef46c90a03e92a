import Glibc

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
    private static let pending = Locked<Set<String>>([])

    /// Removes the temporary files of writes under way; for an interrupt handler that is
    /// about to end the process.
    public static func removeTemporaryFiles() {
        pending.withLock { paths in
            for path in paths { unlink(path) }
            paths.removeAll()
        }
    }

    public static func write(_ bytes: [UInt8], to path: String) throws(FileWriteError) {
        try writeTogether([(bytes, path)])
    }

    /// Writes several files so that they change together: every temporary file is written
    /// first (a failure leaves all destinations as they were), then all are renamed into
    /// place while holding the lock `removeTemporaryFiles()` takes, so an interrupt handler
    /// waits for the renames: a sprite's PNG never stands beside an older JSON.
    public static func writeTogether(_ files: [(bytes: [UInt8], path: String)]) throws(FileWriteError) {
        var temporaries: [String] = []
        do {
            for file in files { temporaries.append(try writeTemporary(file.bytes, for: file.path)) }
        } catch {
            pending.withLock { paths in
                for path in temporaries { unlink(path); paths.remove(path) }
            }
            throw error
        }
        let failure = pending.withLock { paths -> FileWriteError? in
            defer { for path in temporaries { paths.remove(path) } }
            for (index, file) in files.enumerated() where rename(temporaries[index], file.path) != 0 {
                let reason = String(cString: strerror(errno))
                temporaries[index...].forEach { unlink($0) }
                return FileWriteError(path: file.path, reason: reason)
            }
            return nil
        }
        if let failure { throw failure }
    }

    /// Writes `bytes` into a new temporary file beside `path` and returns its path.
    private static func writeTemporary(_ bytes: [UInt8], for path: String) throws(FileWriteError) -> String {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let temporary = directory + "/.\(name).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        pending.withLock { _ = $0.insert(temporary) }
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let reason = errno == ENOENT || errno == ENOTDIR ? "no such directory \(directory)" : String(cString: strerror(errno))
            pending.withLock { _ = $0.remove(temporary) }
            throw FileWriteError(path: path, reason: reason)
        }
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
        if let failure {
            unlink(temporary)
            pending.withLock { _ = $0.remove(temporary) }
            throw FileWriteError(path: path, reason: failure)
        }
        return temporary
    }
}
