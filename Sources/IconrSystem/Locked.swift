import Glibc

/// A value that threads share, read and changed only while holding its pthread mutex: both
/// in one block of memory, every pthread call checked, and `Sendable` only when the value is.
///
/// Why not `Synchronization.Mutex`: on Linux a contended `Mutex` is handed over inside the
/// kernel (`FUTEX_LOCK_PI`), where ThreadSanitizer cannot see it, so the test run under
/// `--sanitize=thread` reported races between accesses that the lock did order. The sanitizer
/// intercepts pthread mutexes, and uncontended they cost the same.
package struct Locked<Value> {
    /// The block holding the value and, after it, the mutex. (It was a `ManagedBuffer`
    /// subclass: the runtime made that generic class and its generic superclass for each
    /// value type on first use, 195,000 of a cache hit's 1.75 million instructions. This
    /// class's layout does not depend on the value.)
    @usableFromInline
    final class Storage {
        @usableFromInline let value: UnsafeMutablePointer<Value>
        @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>

        init(_ initialValue: Value) {
            let mutexOffset =
                (MemoryLayout<Value>.size + MemoryLayout<pthread_mutex_t>.alignment - 1)
                / MemoryLayout<pthread_mutex_t>.alignment * MemoryLayout<pthread_mutex_t>.alignment
            let block = UnsafeMutableRawPointer.allocate(
                byteCount: mutexOffset + MemoryLayout<pthread_mutex_t>.size,
                alignment: max(MemoryLayout<Value>.alignment, MemoryLayout<pthread_mutex_t>.alignment))
            value = block.initializeMemory(as: Value.self, to: initialValue)
            mutex = (block + mutexOffset).initializeMemory(as: pthread_mutex_t.self, to: pthread_mutex_t())
            // Adaptive: a thread that finds the lock taken spins briefly before it sleeps, as
            // `Mutex` does; with a plain mutex, 2 threads hitting one cache served a third
            // fewer requests per second.
            var attributes = pthread_mutexattr_t()
            pthread_mutexattr_init(&attributes)
            pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
            let status = pthread_mutex_init(mutex, &attributes)
            pthread_mutexattr_destroy(&attributes)
            precondition(status == 0, "pthread_mutex_init failed: \(status)")
        }

        deinit {
            let status = pthread_mutex_destroy(mutex)
            precondition(status == 0, "pthread_mutex_destroy failed: \(status)")
            value.deinitialize(count: 1)
            UnsafeMutableRawPointer(value).deallocate()
        }
    }

    // Inlinable, so that each use is specialized for its value and closure: called
    // generically across modules, a memory-cache hit spent a fifth of its time in retains,
    // releases and value copies.
    @usableFromInline let storage: Storage

    package init(_ initialValue: Value) {
        storage = Storage(initialValue)
    }

    /// Runs `body` with the value while holding the lock.
    @inlinable
    package func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let mutex = storage.mutex
        let locked = pthread_mutex_lock(mutex)
        precondition(locked == 0, "pthread_mutex_lock failed: \(locked)")
        defer {
            let unlocked = pthread_mutex_unlock(mutex)
            precondition(unlocked == 0, "pthread_mutex_unlock failed: \(unlocked)")
        }
        return try body(&storage.value.pointee)
    }

    /// Runs `body` with the value if no other thread holds the lock; otherwise returns nil
    /// at once.
    @inlinable
    package func withLockIfAvailable<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result? {
        let mutex = storage.mutex
        let status = pthread_mutex_trylock(mutex)
        guard status == 0 else {
            precondition(status == EBUSY, "pthread_mutex_trylock failed: \(status)")
            return nil
        }
        defer {
            let unlocked = pthread_mutex_unlock(mutex)
            precondition(unlocked == 0, "pthread_mutex_unlock failed: \(unlocked)")
        }
        return try body(&storage.value.pointee)
    }
}

/// The lock orders every access to the value, so sharing it is safe when the value itself
/// may cross threads.
extension Locked: @unchecked Sendable where Value: Sendable {}
