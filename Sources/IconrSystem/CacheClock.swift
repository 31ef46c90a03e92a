import Synchronization

/// The time iconr's caches go by: when a file was last checked for changes, and whether a
/// file's stamps are old enough to trust (`FileStamp.isSettled`). `.system` is the machine's
/// clocks; a test makes its own and moves it ahead instead of sleeping.
package final class CacheClock: Sendable {
    /// The machine's clocks, never moved.
    package static let system = CacheClock()

    /// How far this clock was moved ahead, in nanoseconds.
    private let skipped = Atomic<Int64>(0)

    package init() {}

    /// The monotonic time, moved ahead by what `advance` skipped.
    package var now: ContinuousClock.Instant {
        ContinuousClock.now + .nanoseconds(skipped.load(ordering: .relaxed))
    }

    /// The wall-clock time in nanoseconds since the epoch (`FileStamp.now`), moved alike.
    package var wallNanoseconds: Int {
        FileStamp.now + Int(skipped.load(ordering: .relaxed))
    }

    /// Moves the clock ahead, as if `duration` had passed.
    package func advance(by duration: Duration) {
        let nanoseconds = duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
        skipped.add(nanoseconds, ordering: .relaxed)
    }
}
