import Glibc
import Synchronization

/// Why a file could not be written: the file, and what went wrong as data.
public struct FileWriteError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kept the file from being written.
    public enum Problem: Hashable, Sendable {
        /// A system call (`open`, `write`, `close`, `rename`) failed.
        case system(SystemError)
        /// The folder it would go in does not exist.
        case noSuchFolder(String)
        /// It is a FIFO, device or socket (`kind`: "a FIFO"): refused, never opened (a FIFO
        /// with no reader would hold the command).
        case notRegularFile(kind: String)
        /// It is a FIFO that no process reads (a log opened without waiting for one).
        case noReader
    }

    /// The file, as the caller named it.
    public let path: String
    /// What went wrong.
    public let problem: Problem

    package init(path: String, problem: Problem) {
        self.path = path
        self.problem = problem
    }

    /// What went wrong, without the path.
    public var reason: String {
        switch problem {
        case .system(let error): error.reason
        case .noSuchFolder(let folder): "no such directory \(folder)"
        case .notRegularFile(let kind): "is \(kind), not a regular file (-o - writes to standard output)"
        case .noReader: "is a FIFO that no process reads (start its reader first)"
        }
    }

    /// `out/sprite.png: cannot write it: No space left on device`.
    public var description: String { "\(path): cannot write it: \(reason)" }
}

/// Writes files whole or not at all: into a temporary file beside the destination, then
/// `rename` over it, so a reader never sees half a file and a failure leaves the old one.
package enum AtomicFile {
    /// Temporary files being written now, for `removeTemporaryFiles()`.
    private static let pending = Locked<Set<String>>([])

    /// Set (under `pending`'s lock) once `removeTemporaryFiles()` ran: the process is
    /// exiting, and no temporary file may be made, nor renamed, after that.
    private static let stopping = Atomic<Bool>(false)

    /// Removes the temporary files of writes under way; for an interrupt handler that is
    /// about to end the process.
    package static func removeTemporaryFiles() {
        pending.withLock { paths in
            stopping.store(true, ordering: .relaxed)
            for path in paths { unlink(path) }
            paths.removeAll()
        }
    }

    /// Holds a writing thread once an interrupt handler removed the temporaries: the process
    /// exits meanwhile, and a file made now would be left behind.
    private static func waitForExit() -> Never {
        while true { sleep(60) }
    }

    /// Makes the file `path` holding `bytes` unless a file is there: written aside, then
    /// linked in, so that of processes making it at once all agree on one. Whether the link
    /// made it (false: there was a file, or the folder cannot be written).
    @discardableResult
    package static func create(_ bytes: [UInt8], at path: String, permissions: mode_t) -> Bool {
        let temporary = path + ".\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        guard let file = try? FileDescriptor.open(temporary, O_WRONLY | O_CREAT | O_EXCL, permissions: permissions)
        else { return false }
        defer { unlink(temporary) }
        guard (try? writeAndClose(file, { file throws(SystemError) in try file.writeAll(bytes) })) != nil else {
            return false
        }
        return link(temporary, path) == 0
    }

    package static func write(_ bytes: [UInt8], to path: String) throws(FileWriteError) {
        try writeTogether([(bytes, path)])
    }

    /// Writes `path` as `write(_:to:)` does, from `pieces`, each written as it is made, so
    /// that a large file (a sprite build's cache pack) never stands whole in memory.
    package static func write(pieces: some Sequence<[UInt8]>, to path: String) throws(FileWriteError) {
        try writeTogether(filling: [
            (path, { file throws(SystemError) in for piece in pieces { try file.writeAll(piece) } })
        ])
    }

    /// What writes a file's bytes into the descriptor it is given.
    private typealias Fill = (FileDescriptor) throws(SystemError) -> Void

    /// Writes several files so that they change together: every temporary file is written
    /// first (a failure leaves all destinations as they were), then all are renamed into
    /// place while holding the lock `removeTemporaryFiles()` takes, so an interrupt handler
    /// waits for the renames: a sprite's PNG never stands beside an older JSON. A rename that
    /// fails puts back the files the earlier renames replaced (each old file is kept under a
    /// hard link until all renames are done).
    ///
    /// A destination that is a FIFO, device or socket is refused before any file is opened
    /// (`FileWriteError.Problem.notRegularFile`); a symbolic link is followed, so the file it
    /// points to changes and the link stays.
    ///
    /// A regular file that holds the bytes already is left in place and only stamped with the
    /// time, as a write would have (so that `make` sees it new): a temporary file renamed over
    /// an existing one took ext4 here 50 us of CPU and 110 us (to a new name, 21-26 us), and
    /// a cache-hit `iconr render` that rewrote the same PNG paid it every time.
    package static func writeTogether(_ files: [(bytes: [UInt8], path: String)]) throws(FileWriteError) {
        try writeTogether(
            filling: files.filter { !holdsAlready($0.bytes, at: $0.path) }.map { file in
                (file.path, { descriptor throws(SystemError) in try descriptor.writeAll(file.bytes) })
            })
    }

    /// Whether `path` (its links followed) is a regular file holding exactly `bytes`, and took
    /// the time as its modification time.
    private static func holdsAlready(_ bytes: [UInt8], at path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, Int(info.st_size) == bytes.count,
            (try? FileReader.read(path, maxSize: bytes.count)) == bytes
        else { return false }
        return utimensat(AT_FDCWD, path, nil, 0) == 0
    }

    /// `writeTogether(_:)` with each file's bytes written by its `fill`.
    private static func writeTogether(filling files: [(path: String, fill: Fill)]) throws(FileWriteError) {
        var replaced: [(fill: Fill, path: String, target: String)] = []
        for file in files {
            switch destination(of: file.path) {
            case .regular(let target): replaced.append((file.fill, file.path, target))
            case .special(let kind): throw FileWriteError(path: file.path, problem: .notRegularFile(kind: kind))
            }
        }
        // What a killed write of a set left in these folders is put right first.
        if replaced.count > 1 {
            for folder in Set(replaced.map { folder(of: $0.target) }) { recoverInterruptedWrites(in: folder) }
        }
        var temporaries: [String] = []
        do {
            for file in replaced {
                temporaries.append(try writeTemporary(for: file.target, naming: file.path, file.fill))
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
        // A set's renames are announced first: a process killed among them leaves the intent,
        // and the next write to the folder finishes them (`recoverInterruptedWrites`).
        let intent = replaced.count > 1 ? writeIntent(Array(zip(temporaries, replaced.map(\.target)))) : nil
        defer { if let intent { unlink(intent) } }
        let failure = pending.withLock { paths -> FileWriteError? in
            defer { for path in temporaries { paths.remove(path) } }
            // Keep each old file under a second name until every rename has worked.
            var backups: [String?] = []
            // Destinations that existed but could not be linked (a file system without hard
            // links): a rollback leaves their new content rather than remove them.
            var unbacked = Set<Int>()
            defer { for backup in backups { if let backup { unlink(backup) } } }
            // One file needs none: its rename replaces the old one or leaves it.
            for (index, file) in replaced.enumerated() where replaced.count > 1 {
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
                return FileWriteError(path: file.path, problem: .system(SystemError("rename", errno: code)))
            }
            return nil
        }
        if let failure { throw failure }
    }

    /// The folder `path` is in (`.` for a bare name, `/` for one at the root).
    package static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The first bytes of an intent's name: `.iconr-set.<pid>.<random>`.
    private static let intentPrefix = ".iconr-set."

    /// Writes, beside the first destination, the renames a set is about to make (each
    /// temporary and its destination, NUL-separated), and returns its path; nil when it
    /// cannot (the renames go on: only a kill among them would need it).
    private static func writeIntent(_ renames: [(temporary: String, target: String)]) -> String? {
        guard let first = renames.first else { return nil }
        let path =
            folder(of: first.target) + "/" + intentPrefix + "\(getpid()).\(UInt32.random(in: 0...UInt32.max))"
        var bytes: [UInt8] = []
        for rename in renames {
            bytes += rename.temporary.utf8 + [0] + rename.target.utf8 + [0]
        }
        guard let file = try? FileDescriptor.open(path, O_WRONLY | O_CREAT | O_EXCL, permissions: 0o644) else {
            return nil
        }
        guard (try? writeAndClose(file, { file throws(SystemError) in try file.writeAll(bytes) })) != nil else {
            unlink(path)
            return nil
        }
        return path
    }

    /// Puts right what writes killed in `folder` left (a process that died, not one that
    /// runs): a set whose renames had begun (its intent is there) gets the rest of them, so
    /// that its files are all of one write again (each was written whole before the first
    /// rename); then the temporary files (`.<name>.<pid>.<n>.tmp`, and the `.old` names of
    /// replaced files) and intents of dead processes are removed. Only regular files named so,
    /// in the folder itself (its descriptor: a link swapped in meanwhile leads nowhere).
    package static func recoverInterruptedWrites(in folder: String) {
        let directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { return }
        defer { close(directory) }
        let names = FileReader.hiddenNames(in: folder)
        func deadOwner(_ name: Substring) -> Bool {
            guard let pid = pid_t(name), pid > 0, pid != getpid() else { return false }
            return kill(pid, 0) != 0 && errno == ESRCH
        }
        func isRegular(_ name: String) -> Bool {
            var info = stat()
            return fstatat(directory, name, &info, AT_SYMLINK_NOFOLLOW) == 0 && (info.st_mode & S_IFMT) == S_IFREG
        }
        func name(of path: String) -> String {
            path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
        }
        for intent in names where intent.hasPrefix(intentPrefix) {
            let fields = intent.dropFirst(intentPrefix.utf8.count).split(separator: ".")
            guard fields.count == 2, deadOwner(fields[0]), isRegular(intent),
                let bytes = try? FileReader.read(folder + "/" + intent, followingLinks: false, maxSize: 1 << 20)
            else { continue }
            let paths = bytes.split(separator: 0, omittingEmptySubsequences: false).map {
                String(decoding: $0, as: UTF8.self)
            }
            for index in stride(from: 0, to: paths.count - 1, by: 2) {
                let (temporary, target) = (paths[index], paths[index + 1])
                // Only a temporary of this kind, for a file beside it.
                let (temporaryName, targetName) = (name(of: temporary), name(of: target))
                guard Self.folder(of: temporary) == Self.folder(of: target), temporaryOwner(temporaryName) != nil,
                    !targetName.isEmpty
                else { continue }
                if Self.folder(of: target) == folder {
                    if isRegular(temporaryName) { renameat(directory, temporaryName, directory, targetName) }
                } else {
                    // A file of the set in another folder (a style emitted elsewhere, a link's target).
                    var info = stat()
                    if lstat(temporary, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG { rename(temporary, target) }
                }
            }
            unlinkat(directory, intent, 0)
        }
        for name in names {
            guard let owner = temporaryOwner(name), deadOwner(owner), isRegular(name) else { continue }
            unlinkat(directory, name, 0)
        }
    }

    /// The pid in a temporary file's name (`.<name>.<pid>.<n>.tmp` or the same with `.old`),
    /// or nil for any other name.
    private static func temporaryOwner(_ name: String) -> Substring? {
        guard name.hasPrefix(".") else { return nil }
        var rest = Substring(name)
        if rest.hasSuffix(".old") { rest = rest.dropLast(4) }
        guard rest.hasSuffix(".tmp") else { return nil }
        let fields = rest.dropLast(4).split(separator: ".", omittingEmptySubsequences: false)
        guard fields.count >= 4, let random = fields.last, UInt32(random) != nil else { return nil }
        let pid = fields[fields.count - 2]
        return pid_t(pid) != nil ? pid : nil
    }

    /// Where writing `path` goes: a regular file (existing or not) at the path a symbolic
    /// link leads to, or something special (a FIFO, a device, a socket: its kind).
    private enum Destination {
        case regular(String)
        case special(String)
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
        guard (info.st_mode & S_IFMT) != S_IFDIR, let kind = FileReader.nonRegularKind(info.st_mode) else {
            return .regular(path)
        }
        return .special(kind)
    }

    /// Has `fill` write the file, and closes it; a failed close is a failed write.
    private static func writeAndClose(_ file: FileDescriptor, _ fill: Fill) throws(SystemError) {
        do {
            try fill(file)
        } catch {
            try? file.close()
            throw error
        }
        try file.close()
    }

    /// Makes a new temporary file beside `path`, has `fill` write it, and returns its path;
    /// errors name `shownPath` (the path as the caller gave it, before links were followed).
    private static func writeTemporary(
        for path: String, naming shownPath: String, _ fill: Fill
    ) throws(FileWriteError) -> String {
        let directory = folder(of: path)
        let name = path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
        let temporary = directory + "/.\(name).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        // After an interrupt handler removed the temporaries, none is made: the renames of a
        // write already under way then fail on the removed ones, and nothing is replaced.
        let stopped = pending.withLock { paths -> Bool in
            if stopping.load(ordering: .relaxed) { return true }
            paths.insert(temporary)
            return false
        }
        if stopped { waitForExit() }
        let file: FileDescriptor
        do {
            file = try FileDescriptor.open(temporary, O_WRONLY | O_CREAT | O_EXCL, permissions: 0o644)
        } catch {
            let problem: FileWriteError.Problem =
                error.errno == ENOENT || error.errno == ENOTDIR ? .noSuchFolder(directory) : .system(error)
            pending.withLock { _ = $0.remove(temporary) }
            throw FileWriteError(path: shownPath, problem: problem)
        }
        // The handler may have run between the check and the open: then this file is ours to remove.
        if stopping.load(ordering: .relaxed) {
            unlink(temporary)
            waitForExit()
        }
        do {
            try writeAndClose(file, fill)
        } catch {
            unlink(temporary)
            pending.withLock { _ = $0.remove(temporary) }
            throw FileWriteError(path: shownPath, problem: .system(error))
        }
        return temporary
    }
}
