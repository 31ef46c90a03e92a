import Glibc

/// An open file descriptor, with the reads and writes iconr makes on files, pipes and
/// sockets: every call retried on `EINTR`, every failure a `SystemError`, `close` checked.
/// It does not close itself: its owner calls `close()` exactly once.
package struct FileDescriptor: Hashable, Sendable {
    package let rawValue: Int32

    package init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    package static let standardOutput = FileDescriptor(rawValue: 1)
    package static let standardError = FileDescriptor(rawValue: 2)

    /// `open(2)` with `O_CLOEXEC` added.
    package static func open(
        _ path: String, _ flags: Int32, permissions: mode_t = 0
    ) throws(SystemError)
        -> FileDescriptor
    {
        let descriptor = retryingInterrupted { Glibc.open(path, flags | O_CLOEXEC, permissions) }
        guard descriptor >= 0 else { throw SystemError("open") }
        return FileDescriptor(rawValue: descriptor)
    }

    /// A `pipe(2)`: its read end and its write end.
    package static func pipe() throws(SystemError) -> (read: FileDescriptor, write: FileDescriptor) {
        var ends: [Int32] = [0, 0]
        guard Glibc.pipe(&ends) == 0 else { throw SystemError("pipe") }
        return (FileDescriptor(rawValue: ends[0]), FileDescriptor(rawValue: ends[1]))
    }

    /// A connected pair of Unix stream sockets (`socketpair(2)`), both close-on-exec.
    package static func socketPair() throws(SystemError) -> (FileDescriptor, FileDescriptor) {
        var ends: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw SystemError("socketpair")
        }
        return (FileDescriptor(rawValue: ends[0]), FileDescriptor(rawValue: ends[1]))
    }

    /// Writes every byte. On a socket, `noSignal` sends with `MSG_NOSIGNAL`, so a peer that has
    /// gone is an `EPIPE` error instead of a SIGPIPE that ends the process.
    package func writeAll(_ bytes: [UInt8], noSignal: Bool = false) throws(SystemError) {
        let failure = bytes.withUnsafeBytes { buffer -> SystemError? in
            guard let base = buffer.baseAddress else { return nil }
            var written = 0
            while written < buffer.count {
                let result = retryingInterrupted {
                    noSignal
                        ? send(rawValue, base + written, buffer.count - written, Int32(MSG_NOSIGNAL))
                        : write(rawValue, base + written, buffer.count - written)
                }
                guard result > 0 else {
                    return SystemError(noSignal ? "send" : "write", errno: result < 0 ? errno : EIO)
                }
                written += result
            }
            return nil
        }
        if let failure { throw failure }
    }

    /// Reads what is there into `buffer`, at most its size; 0 at the end of the file.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int {
        let result = retryingInterrupted { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
        guard result >= 0 else { throw SystemError("read") }
        return result
    }

    /// Reads what is there, at most `count` bytes; empty at the end of the file.
    package func read(upTo count: Int) throws(SystemError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let result = buffer.withUnsafeMutableBytes { raw in Result { () throws(SystemError) in try read(into: raw) } }
        buffer.removeLast(count - (try result.get()))
        return buffer
    }

    /// Reads `count` bytes from `offset` of a file (`pread`), fewer only where the file ends.
    package func read(upTo count: Int, at offset: Int) throws(SystemError) -> [UInt8] {
        guard count > 0 else { return [] }
        var buffer = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let result = buffer.withUnsafeMutableBytes { raw in
                retryingInterrupted {
                    pread(rawValue, raw.baseAddress.map { $0 + done }, count - done, off_t(offset + done))
                }
            }
            guard result >= 0 else { throw SystemError("pread") }
            if result == 0 { break }
            done += result
        }
        buffer.removeLast(count - done)
        return buffer
    }

    /// What asking for a file's lock came to.
    package enum Lock: Sendable {
        /// It is this descriptor's now.
        case taken
        /// Another open file holds it (asked without waiting).
        case heldByAnother
        /// The file system has no such locks, or the call failed.
        case unavailable
    }

    /// Takes the file's advisory lock (`flock`: per open file, so two descriptors of one
    /// process exclude each other too, and a process that dies lets go of it): exclusive to
    /// write, shared to read; waits for it unless `waiting` is false.
    @discardableResult
    package func lock(exclusive: Bool, waiting: Bool = true) -> Lock {
        let operation = (exclusive ? LOCK_EX : LOCK_SH) | (waiting ? 0 : LOCK_NB)
        if retryingInterrupted({ flock(rawValue, operation) }) == 0 { return .taken }
        return errno == EWOULDBLOCK ? .heldByAnother : .unavailable
    }

    /// Lets go of the file's lock.
    package func unlock() {
        flock(rawValue, LOCK_UN)
    }

    /// Closes it; an error (a delayed write failure on some file systems) is thrown, not lost.
    /// Not retried on `EINTR`: on Linux the descriptor is closed even then.
    package func close() throws(SystemError) {
        guard Glibc.close(rawValue) == 0 || errno == EINTR else { throw SystemError("close") }
    }
}
