import FakeAPNs

/// Waits that end early when the API stops or their client goes away. Each runs as a task of
/// its own that suspends (holding no thread): `interruptAll()` cancels every one; cancelling
/// the task that called `run` (the HTTP server does when the client leaves) cancels that one.
final class InterruptibleWaits: @unchecked Sendable {
    /// Thrown to a wait that starts after `refuseNew()` or `interruptAll()`, or that
    /// `interruptAll()` ended.
    struct Interrupted: Error {}

    /// Thrown when the waiter gave up (its client left) before anything came.
    struct Abandoned: Error {}

    private let lock = ConditionLock()
    // Protected by `lock`:
    private var refusing = false
    private var stopped = false
    private var lastID = 0
    private var waits: [Int: @Sendable () -> Void] = [:]

    /// Runs `operation` (a wait that ends with `CancellationError` when cancelled). Once the
    /// caller's task is cancelled this throws ``Abandoned``; once the API stops, ``Interrupted``.
    func run<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let id: Int? = lock.withLock {
            guard !refusing else { return nil }
            lastID += 1
            return lastID
        }
        guard let id else { throw Interrupted() }
        let wait = Task { try await operation() }
        let registered = lock.withLock { () -> Bool in
            guard !stopped else { return false }
            waits[id] = { wait.cancel() }
            return true
        }
        if !registered { wait.cancel() }
        defer { lock.withLock { _ = waits.removeValue(forKey: id) } }
        do {
            return try await withTaskCancellationHandler { try await wait.value } onCancel: { wait.cancel() }
        } catch is CancellationError {
            if lock.withLock({ stopped }) { throw Interrupted() }
            throw Abandoned()
        }
    }

    /// How many waits are in progress.
    var count: Int {
        lock.withLock { waits.count }
    }

    /// Whether new waits are refused.
    var isInterrupted: Bool {
        lock.withLock { refusing }
    }

    /// Refuses new waits; those in progress go on.
    func refuseNew() {
        lock.withLock { refusing = true }
    }

    /// Cancels every wait in progress and refuses new ones.
    func interruptAll() {
        let cancellations: [@Sendable () -> Void] = lock.withLock {
            refusing = true
            stopped = true
            return Array(waits.values)
        }
        cancellations.forEach { $0() }
    }
}
