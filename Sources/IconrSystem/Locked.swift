import Glibc

/// A value that threads share, read and changed only while holding its pthread mutex: one
/// allocation holding both (the way swift-nio's `NIOLockedValueBox` is built), every pthread
/// call checked, and `Sendable` only when the value is.
///
/// Why not `Synchronization.Mutex`: on Linux a contended `Mutex` is handed over inside the
/// kernel (`FUTEX_LOCK_PI`), where ThreadSanitizer cannot see it, so the test run under
/// `--sanitize=thread` reported races between accesses that the lock did order. The sanitizer
/// intercepts pthread mutexes, and uncontended they cost the same.
package struct Locked<Value> {
    /// The value (the buffer's header) and the mutex (its one element), in one allocation.
    @usableFromInline
    final class Storage: ManagedBuffer<Value, pthread_mutex_t> {
        // The header (the value) is destroyed by ManagedBuffer itself; the mutex is ours.
        deinit {
            withUnsafeMutablePointerToElements { mutex in
                let status = pthread_mutex_destroy(mutex)
                precondition(status == 0, "pthread_mutex_destroy failed: \(status)")
            }
        }
    }

    // Inlinable, so that each use is specialized for its value and closure: called
    // generically across modules, a memory-cache hit spent a fifth of its time in retains,
    // releases and value copies.
    @usableFromInline let storage: Storage

    package init(_ initialValue: Value) {
        let buffer = Storage.create(minimumCapacity: 1) { _ in initialValue }
        storage = unsafeDowncast(buffer, to: Storage.self)
        storage.withUnsafeMutablePointerToElements { mutex in
            // Adaptive: a thread that finds the lock taken spins briefly before it sleeps, as
            // `Mutex` does; with a plain mutex, 2 threads hitting one cache served a third
            // fewer requests per second.
            var attributes = pthread_mutexattr_t()
            pthread_mutexattr_init(&attributes)
            pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
            mutex.initialize(to: pthread_mutex_t())
            let status = pthread_mutex_init(mutex, &attributes)
            pthread_mutexattr_destroy(&attributes)
            precondition(status == 0, "pthread_mutex_init failed: \(status)")
        }
    }

    /// Runs `body` with the value while holding the lock.
    @inlinable
    package func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try storage.withUnsafeMutablePointers { value, mutex throws(Failure) -> Result in
            let locked = pthread_mutex_lock(mutex)
            precondition(locked == 0, "pthread_mutex_lock failed: \(locked)")
            defer {
                let unlocked = pthread_mutex_unlock(mutex)
                precondition(unlocked == 0, "pthread_mutex_unlock failed: \(unlocked)")
            }
            return try body(&value.pointee)
        }
    }

    /// Runs `body` with the value if no other thread holds the lock; otherwise returns nil
    /// at once.
    @inlinable
    package func withLockIfAvailable<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result? {
        try storage.withUnsafeMutablePointers { value, mutex throws(Failure) -> Result? in
            let status = pthread_mutex_trylock(mutex)
            guard status == 0 else {
                precondition(status == EBUSY, "pthread_mutex_trylock failed: \(status)")
                return nil
            }
            defer {
                let unlocked = pthread_mutex_unlock(mutex)
                precondition(unlocked == 0, "pthread_mutex_unlock failed: \(unlocked)")
            }
            return try body(&value.pointee)
        }
    }
}

/// The lock orders every access to the value, so sharing it is safe when the value itself
/// may cross threads.
extension Locked: @unchecked Sendable where Value: Sendable {}
