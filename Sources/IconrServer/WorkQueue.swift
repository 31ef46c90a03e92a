import Dispatch
import Glibc
import IconrSystem
import Synchronization

/// A fixed set of threads taking work in order from a bounded queue: the server's slow work
/// (renders, sprite builds) runs here, so that the HTTP threads only route and answer.
final class WorkQueue: Sendable {
    /// Items waiting or running at most.
    let limit: Int
    private let shared: Shared

    /// `threads` threads (at least 1) working through at most `limit` items at a time.
    init(threads: Int, limit: Int) {
        self.limit = max(1, limit)
        shared = Shared()
        for _ in 0..<max(1, threads) {
            var thread = pthread_t()
            let started = pthread_create(
                &thread, nil,
                { context in
                    guard let context else { return nil }
                    Unmanaged<Shared>.fromOpaque(context).takeRetainedValue().run()
                    return nil
                }, Unmanaged.passRetained(shared).toOpaque())
            if started == 0 {
                pthread_detach(thread)
                shared.threads.add(1, ordering: .relaxed)
            } else {
                Unmanaged.passUnretained(shared).release()
            }
        }
    }

    deinit {
        shared.state.withLock { $0.stopping = true }
        for _ in 0..<shared.threads.load(ordering: .relaxed) { shared.ready.signal() }
    }

    /// Queues `work` unless `limit` items already wait or run (then false, and nothing runs).
    /// `work` returns its answer (what sends the response), which runs once the item's place
    /// is given back: a client that has its answer finds the place free for its next request.
    func submit(_ work: @escaping @Sendable () -> @Sendable () -> Void) -> Bool {
        let accepted = shared.state.withLock { state -> Bool in
            guard state.count < limit else { return false }
            state.count += 1
            state.waiting.append(work)
            return true
        }
        if accepted { shared.ready.signal() }
        return accepted
    }

    /// Items waiting or running.
    var count: Int { shared.state.withLock { $0.count } }

    /// What the threads share; they hold it, not the queue, so that the queue's `deinit`
    /// can stop them.
    private final class Shared: Sendable {
        let state = Locked((waiting: [@Sendable () -> @Sendable () -> Void](), count: 0, stopping: false))
        let ready = DispatchSemaphore(value: 0)
        let threads = Atomic<Int>(0)

        func run() {
            while true {
                ready.wait()
                let next = state.withLock { state -> (@Sendable () -> @Sendable () -> Void)? in
                    state.stopping || state.waiting.isEmpty ? nil : state.waiting.removeFirst()
                }
                guard let next else { return }
                let answer = next()
                state.withLock { $0.count -= 1 }
                answer()
            }
        }
    }
}
