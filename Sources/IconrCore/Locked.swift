import Glibc

/// A value that threads share, read and changed only while holding its pthread mutex.
///
/// Why not `Synchronization.Mutex`: on Linux a contended `Mutex` is handed over inside the
/// kernel (`FUTEX_LOCK_PI`), where ThreadSanitizer cannot see it, so the test run under
/// `--sanitize=thread` reported races between accesses that the lock did order. The sanitizer
/// intercepts pthread mutexes, and uncontended they cost the same.
public final class Locked<Value>: @unchecked Sendable {
    // Inlinable, so that each use is specialized for its value and closure: called
    // generically across modules, a memory-cache hit spent a fifth of its time in retains,
    // releases and value copies.
    @usableFromInline let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    @usableFromInline let value = UnsafeMutablePointer<Value>.allocate(capacity: 1)

    public init(_ initialValue: Value) {
        mutex.initialize(to: pthread_mutex_t())
        // Adaptive: a thread that finds the lock taken spins briefly before it sleeps, as
        // `Mutex` does; with a plain mutex, 2 threads hitting one cache served a third fewer
        // requests per second.
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        value.initialize(to: initialValue)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Runs `body` with the value while holding the lock.
    @inlinable
    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }

    /// Runs `body` with the value if no other thread holds the lock; otherwise returns nil
    /// at once.
    @inlinable
    public func withLockIfAvailable<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}
