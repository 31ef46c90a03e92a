import Glibc

/// Zeroed memory shared with the processes this one forks after making it (an anonymous
/// shared mapping), unmapped when the last reference goes.
public final class SharedMemory: @unchecked Sendable {
    /// The first byte, aligned to a page.
    public let base: UnsafeMutableRawPointer
    /// Bytes mapped.
    public let count: Int

    /// Maps `count` bytes; pages are allocated only when first written.
    public init(count: Int) throws(SystemError) {
        guard let mapping = mmap(nil, count, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0),
            mapping != MAP_FAILED
        else { throw SystemError("mmap") }
        base = mapping
        self.count = count
    }

    deinit {
        munmap(base, count)
    }
}
