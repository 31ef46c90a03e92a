import Glibc

/// Why a file could not be written.
/// Why a file could not be written: the file, and what went wrong as data.
public struct FileWriteError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Problem: Hashable, Sendable {
        /// A system call (`open`, `write`, `close`, `rename`) failed with this errno.
        case system(call: String, errno: Int32)
        /// The folder it would go in does not exist.
        case noSuchFolder(String)
        /// `write` wrote nothing and reported no error.
        case nothingWritten
    }

    public let path: String
    public let problem: Problem

    /// What went wrong, without the path.
    public var reason: String {
        switch problem {
        case .system(_, let code): String(cString: strerror(code))
        case .noSuchFolder(let folder): "no such directory \(folder)"
        case .nothingWritten: "nothing was written"
        }
    }

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
    /// waits for the renames: a sprite's PNG never stands beside an older JSON. A rename that
    /// fails puts back the files the earlier renames replaced (each old file is kept under a
    /// hard link until all renames are done).
    ///
    /// A destination that is not a regular file is written, not replaced: a device or FIFO
    /// (`/dev/stdout`, `/dev/null`) is opened and written in place, after every temporary file;
    /// a symbolic link is followed, so the file it points to changes and the link stays.
    public static func writeTogether(_ files: [(bytes: [UInt8], path: String)]) throws(FileWriteError) {
        var replaced: [(bytes: [UInt8], path: String, target: String)] = []
        var inPlace: [(bytes: [UInt8], path: String)] = []
        for file in files {
            switch destination(of: file.path) {
            case .regular(let target): replaced.append((file.bytes, file.path, target))
            case .special: inPlace.append(file)
            }
        }
        var temporaries: [String] = []
        do {
            for file in replaced {
                temporaries.append(try writeTemporary(file.bytes, for: file.target, naming: file.path))
            }
        } catch {
            pending.withLock { paths in
                for path in temporaries {
                    unlink(path)
                    paths.remove(path)
                }
            }
            throw error
        }
        let failure = pending.withLock { paths -> FileWriteError? in
            defer { for path in temporaries { paths.remove(path) } }
            // Keep each old file under a second name until every rename has worked.
            var backups: [String?] = []
            // Destinations that existed but could not be linked (a file system without hard
            // links): a rollback leaves their new content rather than remove them.
            var unbacked = Set<Int>()
            defer { for backup in backups { if let backup { unlink(backup) } } }
            for (index, file) in replaced.enumerated() {
                let backup = temporaries[index] + ".old"
                if link(file.target, backup) == 0 {
                    backups.append(backup)
                } else {
                    backups.append(nil)
                    if errno != ENOENT { unbacked.insert(index) }
                }
            }
            for (index, file) in replaced.enumerated() where rename(temporaries[index], file.target) != 0 {
                let code = errno
                temporaries[index...].forEach { unlink($0) }
                // Put back what the renames before this one replaced.
                for earlier in 0..<index {
                    if let backup = backups[earlier] {
                        rename(backup, replaced[earlier].target)
                    } else if !unbacked.contains(earlier) {
                        unlink(replaced[earlier].target)
                    }
                }
                return FileWriteError(path: file.path, problem: .system(call: "rename", errno: code))
            }
            return nil
        }
        if let failure { throw failure }
        for file in inPlace { try writeInPlace(file.bytes, to: file.path) }
    }

    /// Where writing `path` goes: a regular file (existing or not) at the path a symbolic
    /// link leads to, or something special (a device, a FIFO) to write in place.
    private enum Destination {
        case regular(String)
        case special
    }

    private static func destination(of path: String) -> Destination {
        var info = stat()
        guard lstat(path, &info) == 0 else { return .regular(path) }
        if (info.st_mode & S_IFMT) == S_IFREG { return .regular(path) }
        guard stat(path, &info) == 0 else { return .regular(path) }
        if (info.st_mode & S_IFMT) == S_IFREG, let resolved = realpath(path, nil) {
            defer { free(resolved) }
            return .regular(String(cString: resolved))
        }
        // A directory stays "regular": its rename fails and says so.
        return (info.st_mode & S_IFMT) == S_IFDIR ? .regular(path) : .special
    }

    /// Opens the existing special file `path` and writes `bytes` to it.
    private static func writeInPlace(_ bytes: [UInt8], to path: String) throws(FileWriteError) {
        let descriptor = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY)
        guard descriptor >= 0 else { throw FileWriteError(path: path, problem: .system(call: "open", errno: errno)) }
        var failure = writeAll(bytes, to: descriptor)
        if close(descriptor) != 0, failure == nil { failure = .system(call: "close", errno: errno) }
        if let failure { throw FileWriteError(path: path, problem: failure) }
    }

    /// Writes every byte; what failed, or nil.
    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> FileWriteError.Problem? {
        bytes.withUnsafeBytes { buffer -> FileWriteError.Problem? in
            guard let base = buffer.baseAddress else { return nil }
            var written = 0
            while written < buffer.count {
                let result = Glibc.write(descriptor, base + written, buffer.count - written)
                if result < 0, errno == EINTR { continue }
                if result <= 0 { return result < 0 ? .system(call: "write", errno: errno) : .nothingWritten }
                written += result
            }
            return nil
        }
    }

    /// Writes `bytes` into a new temporary file beside `path` and returns its path; errors
    /// name `shownPath` (the path as the caller gave it, before links were followed).
    private static func writeTemporary(
        _ bytes: [UInt8], for path: String, naming shownPath: String
    ) throws(FileWriteError) -> String {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let temporary = directory + "/.\(name).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        pending.withLock { _ = $0.insert(temporary) }
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let problem: FileWriteError.Problem =
                errno == ENOENT || errno == ENOTDIR ? .noSuchFolder(directory) : .system(call: "open", errno: errno)
            pending.withLock { _ = $0.remove(temporary) }
            throw FileWriteError(path: shownPath, problem: problem)
        }
        var failure = writeAll(bytes, to: descriptor)
        if close(descriptor) != 0, failure == nil { failure = .system(call: "close", errno: errno) }
        if let failure {
            unlink(temporary)
            pending.withLock { _ = $0.remove(temporary) }
            throw FileWriteError(path: shownPath, problem: failure)
        }
        return temporary
    }
}
