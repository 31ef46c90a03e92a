import Glibc

/// A system call that failed: which one, and its `errno`.
public struct SystemError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The C function, e.g. `open`, `rename`, `posix_spawn`.
    public let call: String
    /// The `errno` it set (or, for calls that return it, the code it returned).
    public let errno: Int32

    /// The failure of `call`, with the current `errno` unless another code is given.
    public init(_ call: String, errno: Int32 = Glibc.errno) {
        self.call = call
        self.errno = errno
    }

    /// The system's words for the errno (`No such file or directory`).
    public var reason: String { String(cString: strerror(errno)) }

    /// `open: No such file or directory`.
    public var description: String { "\(call): \(reason)" }
}

/// Calls `call` again for as long as it fails with `EINTR` (a signal arrived before it did
/// anything), and returns what it finally returned.
@inlinable
package func retryingInterrupted<Result: BinaryInteger>(_ call: () -> Result) -> Result {
    while true {
        let result = call()
        if result >= 0 || errno != EINTR { return result }
    }
}
