import FakeAPNs

/// Blocking waits that end early when their client goes away or the API stops. Each wait gets
/// a ``WaitCancellation`` for its blocking pop: `interruptAll()` cancels every one, and one
/// watcher thread, running only while a wait is in progress, looks every 50 ms whether a
/// waiter's client has closed its connection and cancels that wait, so a client that left
/// does not take an item nobody will read.
final class InterruptibleWaits: @unchecked Sendable {
    /// Thrown to a wait that starts after `refuseNew()` or `interruptAll()`, or that
    /// `interruptAll()` ended.
    struct Interrupted: Error {}

    /// Thrown when the waiter gave up (its client left) before anything came.
    struct Abandoned: Error {}

    private struct Wait {
        let cancellation: WaitCancellation
        let abandoned: @Sendable () -> Bool
        var gaveUp = false
    }

    /// How often the watcher looks whether waiters are still there.
    private static let watchInterval = Duration.milliseconds(50)

    private let lock = ConditionLock()
    // Protected by `lock`:
    private var refusing = false
    private var stopped = false
    private var lastID = 0
    private var waits: [Int: Wait] = [:]
    private var watcher: OSThread?

    /// Runs `operation` (a blocking wait given a cancellation) on the calling thread. Once
    /// `abandoned` says the waiter is gone the wait is cancelled and this throws
    /// ``Abandoned``; once the API stops, ``Interrupted``. `abandoned` is asked on the
    /// watcher's thread, while `operation` runs, never after this returns.
    func run<T>(
        abandoned: @escaping @Sendable () -> Bool = { false }, _ operation: (WaitCancellation) throws -> T
    ) throws -> T {
        let cancellation = WaitCancellation()
        let id: Int? = try lock.withLock {
            guard !refusing else { return nil }
            lastID += 1
            waits[lastID] = Wait(cancellation: cancellation, abandoned: abandoned)
            if watcher == nil {
                watcher = try OSThread(name: "control-waits") { [self] in watch() }
            }
            lock.broadcast()
            return lastID
        }
        guard let id else { throw Interrupted() }
        do {
            let result = try operation(cancellation)
            lock.withLock { _ = waits.removeValue(forKey: id) }
            return result
        } catch is CancellationError {
            let gaveUp = lock.withLock { waits.removeValue(forKey: id)?.gaveUp ?? false }
            if gaveUp { throw Abandoned() }
            throw Interrupted()
        } catch {
            lock.withLock { _ = waits.removeValue(forKey: id) }
            throw error
        }
    }

    /// Whether new waits are refused.
    var isInterrupted: Bool {
        lock.withLock { refusing }
    }

    /// Refuses new waits; those in progress go on.
    func refuseNew() {
        lock.withLock { refusing = true }
    }

    /// Cancels every wait in progress, refuses new ones, and joins the watcher.
    func interruptAll() {
        let (cancellations, watcher): ([WaitCancellation], OSThread?) = lock.withLock {
            refusing = true
            stopped = true
            lock.broadcast()
            defer { self.watcher = nil }
            return (waits.values.map(\.cancellation), self.watcher)
        }
        cancellations.forEach { $0.cancel() }
        watcher?.join()
    }

    /// The watcher's loop: sleeps while no wait is in progress, and until the API stops.
    private func watch() {
        while true {
            let gone: [WaitCancellation]? = lock.withLock {
                while waits.isEmpty && !stopped { lock.wait() }
                if stopped { return nil }
                _ = lock.wait(until: .after(Self.watchInterval))
                if stopped { return nil }
                // Asked inside the lock, so that no wait ends (and its connection with it)
                // while its client is being looked at; each answer is a poll that does not block.
                var gone: [WaitCancellation] = []
                for (id, wait) in waits where !wait.gaveUp && wait.abandoned() {
                    waits[id]?.gaveUp = true
                    gone.append(wait.cancellation)
                }
                return gone
            }
            guard let gone else { return }
            gone.forEach { $0.cancel() }
        }
    }
}
