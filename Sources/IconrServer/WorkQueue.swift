import Dispatch
import Glibc
import IconrSystem
import Synchronization

/// A fixed set of threads taking work from a bounded queue: the server's slow work (renders,
/// sprite builds) runs here, so that the HTTP threads only route and answer.
///
/// Fair to the documents behind the work: items carry a group (the render queue's is the
/// template's digest), and at most `perGroup` items of one group run at once, so that many
/// requests for one slow icon leave threads to the others (they take the next item of
/// another group first). And bounded in time: an item still waiting `maxWait` after it was
/// queued is taken out and given up (its `expired` answers it, a 503), instead of keeping its
/// client for as long as the items before it take.
final class WorkQueue: Sendable {
    /// Items waiting or running at most.
    let limit: Int
    private let shared: Shared

    /// `threads` threads (at least 1) working through at most `limit` items at a time, at
    /// most `perGroup` of one group at once; an item waiting longer than `maxWait` expires
    /// (nil: none does, and no thread looks).
    init(threads: Int, limit: Int, perGroup: Int? = nil, maxWait: Duration? = nil) {
        self.limit = max(1, limit)
        shared = Shared(perGroup: max(1, perGroup ?? threads))
        for _ in 0..<max(1, threads) {
            start { $0.run() }
        }
        if let maxWait { start { $0.expireWaiting(after: maxWait) } }
    }

    /// Starts a detached thread running `body` on the shared state.
    private func start(_ body: @escaping (Shared) -> Void) {
        final class Start {
            let shared: Shared
            let body: (Shared) -> Void
            init(_ shared: Shared, _ body: @escaping (Shared) -> Void) {
                self.shared = shared
                self.body = body
            }
        }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(Start(shared, body)).toOpaque()
        let started = pthread_create(
            &thread, nil,
            { context in
                guard let context else { return nil }
                let start = Unmanaged<Start>.fromOpaque(context).takeRetainedValue()
                start.body(start.shared)
                return nil
            }, context)
        if started == 0 {
            pthread_detach(thread)
            shared.threads.add(1, ordering: .relaxed)
        } else {
            Unmanaged<Start>.fromOpaque(context).release()
        }
    }

    deinit {
        shared.state.withLock { $0.stopping = true }
        for _ in 0..<shared.threads.load(ordering: .relaxed) { shared.ready.signal() }
    }

    /// Queues `work` unless `limit` items already wait or run (then false, and nothing runs).
    /// `work` returns its answer (what sends the response), which runs once the item's place
    /// is given back: a client that has its answer finds the place free for its next request.
    /// `expired` runs instead of `work` when the item waited `maxWait` without starting.
    func submit(
        group: String = "", _ work: @escaping @Sendable () -> @Sendable () -> Void,
        expired: @escaping @Sendable () -> Void = {}
    ) -> Bool {
        let item = Item(group: group, queued: .now, work: work, expired: expired)
        let accepted = shared.state.withLock { state -> Bool in
            guard state.count < limit else { return false }
            state.count += 1
            state.waiting.append(item)
            return true
        }
        if accepted { shared.ready.signal() }
        return accepted
    }

    /// Items waiting or running.
    var count: Int { shared.state.withLock { $0.count } }

    private struct Item: Sendable {
        let group: String
        let queued: ContinuousClock.Instant
        let work: @Sendable () -> @Sendable () -> Void
        let expired: @Sendable () -> Void
    }

    /// What the threads share; they hold it, not the queue, so that the queue's `deinit`
    /// can stop them.
    private final class Shared: Sendable {
        let state = Locked((waiting: [Item](), running: [String: Int](), count: 0, stopping: false))
        let ready = DispatchSemaphore(value: 0)
        let threads = Atomic<Int>(0)
        let perGroup: Int

        init(perGroup: Int) {
            self.perGroup = perGroup
        }

        func run() {
            while true {
                ready.wait()
                // The first waiting item whose group has a thread to spare; when every waiting
                // item's group is at its limit, the thread waits for the next signal (an item
                // that finishes signals again).
                let next = state.withLock { state -> Item?? in
                    if state.stopping { return .some(nil) }
                    guard
                        let index = state.waiting.firstIndex(where: { state.running[$0.group, default: 0] < perGroup })
                    else { return nil }
                    let item = state.waiting.remove(at: index)
                    state.running[item.group, default: 0] += 1
                    return .some(item)
                }
                guard let next else { continue }
                guard let item = next else { return }
                let answer = item.work()
                let waitingLeft = state.withLock { state -> Bool in
                    state.count -= 1
                    state.running[item.group, default: 1] -= 1
                    if state.running[item.group] == 0 { state.running[item.group] = nil }
                    return !state.waiting.isEmpty
                }
                // An item held back for its group may go now.
                if waitingLeft { ready.signal() }
                answer()
            }
        }

        /// Four times a second, gives up the items that waited `maxWait` without starting.
        func expireWaiting(after maxWait: Duration) {
            while true {
                usleep(250_000)
                let now = ContinuousClock.now
                let (expired, stopping) = state.withLock { state -> ([Item], Bool) in
                    let old = state.waiting.filter { now - $0.queued >= maxWait }
                    guard !old.isEmpty else { return ([], state.stopping) }
                    state.waiting.removeAll { now - $0.queued >= maxWait }
                    state.count -= old.count
                    return (old, state.stopping)
                }
                if stopping { return }
                for item in expired { item.expired() }
            }
        }
    }
}
