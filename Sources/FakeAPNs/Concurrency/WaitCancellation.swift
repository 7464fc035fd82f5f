/// A token that ends a blocking wait early: the waiter registers how it is woken, and
/// `cancel()`, called from any thread, marks the token and wakes every registered waiter, which
/// then gives up with `CancellationError`. The control API hands one to each `next` so that a
/// client going away, or the daemon stopping, ends the wait at once.
///
/// ```swift
/// let cancellation = WaitCancellation()
/// // on the waiting thread:
/// let first = try mailbox.pop(timeout: .seconds(30), cancellation: cancellation)
/// // on another one, when the waiter is no longer wanted:
/// cancellation.cancel()
/// ```
package final class WaitCancellation: Sendable {
    private struct State {
        var cancelled = false
        var lastID = 0
        var wakers: [Int: @Sendable () -> Void] = [:]
    }

    private let state = Locked(State())

    /// A token not cancelled yet.
    package init() {}

    /// Whether `cancel()` was called.
    package var isCancelled: Bool {
        state.withLock { $0.cancelled }
    }

    /// Marks the token and wakes every waiter registered on it; later calls do nothing.
    package func cancel() {
        let wakers: [@Sendable () -> Void] = state.withLock { state in
            guard !state.cancelled else { return [] }
            state.cancelled = true
            defer { state.wakers.removeAll() }
            return Array(state.wakers.values)
        }
        wakers.forEach { $0() }
    }

    /// Runs `body` (a wait) with `wake` registered: a `cancel()` meanwhile calls `wake`, which
    /// must make the wait look at `isCancelled` again (a broadcast under the lock the wait holds
    /// while it checks, so that no wake-up falls between the check and the wait).
    package func whileWaiting<T>(wake: @escaping @Sendable () -> Void, _ body: () throws -> T) rethrows -> T {
        let id: Int? = state.withLock { state in
            guard !state.cancelled else { return nil }
            state.lastID += 1
            state.wakers[state.lastID] = wake
            return state.lastID
        }
        defer {
            if let id { state.withLock { _ = $0.wakers.removeValue(forKey: id) } }
        }
        return try body()
    }
}
