import Dispatch

/// Waits that a stopping API can end at once. A connection thread blocks on one while the wait
/// itself runs as a task (the mailboxes' async pops honour cancellation; their blocking pops
/// cannot be interrupted), so `interruptAll()` cancels every task and each blocked thread
/// wakes with `CancellationError`.
final class InterruptibleWaits: Sendable {
    /// Thrown to a wait that starts after `refuseNew()` or `interruptAll()`.
    struct Interrupted: Error {}

    /// Thrown when the waiter gave up (its client left) before anything came.
    struct Abandoned: Error {}

    private struct State {
        var interrupted = false
        var lastID = 0
        var tasks: [Int: Task<Void, Never>] = [:]
    }

    private let state = Locked(State())

    /// Runs `operation` and blocks the calling thread until it ends, checking `abandoned` every
    /// 50 ms: once it says the waiter is gone, the wait is cancelled, so a client that left does
    /// not take an item nobody will read. Never call it from a task: it blocks a thread of the
    /// cooperative pool.
    func run<T: Sendable>(
        abandoned: () -> Bool = { false }, _ operation: @escaping @Sendable () async throws -> T
    ) throws -> T {
        let outcome = Outcome<T>()
        let started: (id: Int, task: Task<Void, Never>)? = state.withLock { state in
            guard !state.interrupted else { return nil }
            state.lastID += 1
            let task = Task {
                do {
                    outcome.finish(.success(try await operation()))
                } catch {
                    outcome.finish(.failure(error))
                }
            }
            state.tasks[state.lastID] = task
            return (state.lastID, task)
        }
        guard let started else { throw Interrupted() }
        defer { state.withLock { _ = $0.tasks.removeValue(forKey: started.id) } }
        while true {
            if let result = outcome.wait(milliseconds: 50) { return try result.get() }
            if abandoned() {
                started.task.cancel()
                let result = outcome.wait()
                if case .failure = result { throw Abandoned() }
                return try result.get()
            }
        }
    }

    /// Whether new waits are refused.
    var isInterrupted: Bool {
        state.withLock { $0.interrupted }
    }

    /// Refuses new waits; those in progress go on.
    func refuseNew() {
        state.withLock { $0.interrupted = true }
    }

    /// Cancels every wait in progress and refuses new ones.
    func interruptAll() {
        let tasks = state.withLock { state in
            state.interrupted = true
            defer { state.tasks.removeAll() }
            return Array(state.tasks.values)
        }
        tasks.forEach { $0.cancel() }
    }
}

/// One result, handed from a task to a blocked thread.
private final class Outcome<T: Sendable>: Sendable {
    private let result = Locked<Result<T, any Error>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    func finish(_ value: Result<T, any Error>) {
        result.withLock { $0 = value }
        done.signal()
    }

    func wait() -> Result<T, any Error> {
        done.wait()
        return result.withLock { $0! }
    }

    /// The result, or nil when none came within `milliseconds`.
    func wait(milliseconds: Int) -> Result<T, any Error>? {
        guard done.wait(timeout: .now() + .milliseconds(milliseconds)) == .success else { return nil }
        return result.withLock { $0! }
    }
}
