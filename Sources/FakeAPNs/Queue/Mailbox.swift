#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A queue of what the server received (``PushNotification``s) or refused, which a test pops
/// with a timeout.
///
/// ```swift
/// let first = try server.notifications.pop(timeout: .seconds(2))          // XCTest, blocking
/// let next = try await server.notifications.next(timeout: .seconds(2))    // async / Swift Testing
/// let three = try server.notifications.pop(count: 3)
/// let forBob = try server.notifications.pop(awaiting: "a push for bob") { $0.deviceToken == bob }
/// ```
///
/// Every pop has two forms: a blocking one named `pop` (not available in async code, where it
/// would hold a thread of the cooperative pool) and an async one named `next`. Popping removes;
/// `snapshot()` looks without removing. A pop that times out throws a ``MailboxTimeout`` that
/// says what was awaited and what had arrived. Items stay in the queue after the server stops.
public final class Mailbox<Element: Sendable>: @unchecked Sendable {
    /// The timeout of every pop that does not name one.
    public static var defaultTimeout: Duration { .seconds(5) }

    private let lock = ConditionLock()
    private let noun: String
    // Protected by `lock`:
    private var queue: BoundedQueue<Element>
    private var arrivedTotal = 0
    /// What the blocking pops waiting now want, by count; those that want any item or the
    /// first that matches count in `syncWaitersForAny`. An arrival wakes the blocking pops only
    /// when one of them can be answered: a pop of 1,000 sleeps through the first 999.
    private var syncWaitedCounts: [Int] = []
    private var syncWaitersForAny = 0
    private var wakeUps = 0
    /// The async pops waiting now, oldest (lowest id) first.
    private var asyncWaiters: [AsyncWaiter] = []
    /// Async pops that have drawn their id but are not queued yet, and whether their task was
    /// cancelled meanwhile. A pop answered or queued is no longer here, so a cancellation that
    /// comes after the answer leaves nothing behind.
    private var unqueuedWaiters: [UInt64: Bool] = [:]
    private var nextWaiterID: UInt64 = 0
    private var liveTimers = 0

    /// An async pop, suspended: no thread waits for it, and its timeout is an entry of the
    /// process's `DeadlineTimer`.
    private struct AsyncWaiter {
        let id: UInt64
        let request: Request
        let continuation: CheckedContinuation<[Element], any Error>
        /// Its timeout, cancelled as soon as the waiter is answered.
        var timeout: DeadlineTimer.Entry?
    }

    private enum Request {
        case first(@Sendable (Element) -> Bool)
        case count(Int)
        case all
    }

    /// The most items the queue keeps; when more arrive the oldest are dropped (and counted).
    /// Nil: no limit.
    public var capacity: Int? { queue.capacity }

    /// A mailbox whose timeout messages call its items `noun` ("notification").
    init(noun: String, capacity: Int? = nil) {
        self.noun = noun
        queue = BoundedQueue(capacity: capacity)
    }

    /// How many items were dropped, oldest first, to honour `capacity`.
    public var droppedCount: Int {
        lock.withLock { queue.dropped }
    }

    // MARK: - Looking

    /// How many items wait in the queue.
    public var count: Int {
        lock.withLock { queue.count }
    }

    /// Whether the queue is empty.
    public var isEmpty: Bool { count == 0 }

    /// How many pops are waiting now, blocking or async.
    public var waitingCount: Int {
        lock.withLock { syncWaitedCounts.count + syncWaitersForAny + asyncWaiters.count }
    }

    /// How many times arrivals woke the blocking pops.
    var wakeUpCount: Int {
        lock.withLock { wakeUps }
    }

    /// How many items arrived since the server was created, popped or not.
    public var totalArrived: Int {
        lock.withLock { arrivedTotal }
    }

    /// How many timeouts of async pops are scheduled: one per async pop still waiting, none
    /// once every pop has been answered, cancelled or timed out.
    package var liveTimerCount: Int {
        lock.withLock { liveTimers }
    }

    /// How many async pops are between drawing their id and being queued or answered: none
    /// once every pop has ended, however its task was cancelled.
    package var unqueuedWaiterCount: Int {
        lock.withLock { unqueuedWaiters.count }
    }

    /// The queued items, oldest first, without removing them.
    public func snapshot() -> [Element] {
        lock.withLock { Array(queue.items) }
    }

    /// Removes and returns every queued item, oldest first.
    @discardableResult
    public func removeAll() -> [Element] {
        lock.withLock {
            let all = Array(queue.items)
            queue.removeAll()
            return all
        }
    }

    // MARK: - Popping, blocking

    /// Removes and returns the oldest item, blocking the thread up to `timeout` for one to
    /// arrive.
    @available(*, noasync, message: "pop blocks the thread; in async code use next")
    public func pop(timeout: Duration = defaultTimeout) throws -> Element {
        // What has arrived already is taken without a wait's bookkeeping.
        if let first = lock.withLock({ queue.removeFirst() }) { return first }
        return try wait(for: .count(1), awaited: "a \(noun)", timeout: timeout)[0]
    }

    /// Removes and returns the `count` oldest items, blocking the thread up to `timeout` until
    /// that many have arrived.
    @available(*, noasync, message: "pop blocks the thread; in async code use next")
    public func pop(count: Int, timeout: Duration = defaultTimeout) throws -> [Element] {
        guard count > 0 else { return [] }
        return try wait(for: .count(count), awaited: "\(count) \(noun)s", timeout: timeout)
    }

    /// Removes and returns the oldest item that matches `predicate`, blocking the thread up to
    /// `timeout` for one to arrive. Items that do not match stay queued.
    ///
    /// - Parameters:
    ///   - timeout: how long to wait.
    ///   - awaited: what the predicate looks for, as the timeout message says it
    ///     ("a push for bob"); nil: "a notification matching the predicate".
    ///   - predicate: which item to take.
    @available(*, noasync, message: "pop blocks the thread; in async code use next")
    public func pop(
        timeout: Duration = defaultTimeout, awaiting awaited: String? = nil,
        where predicate: @escaping @Sendable (Element) -> Bool
    ) throws -> Element {
        try wait(for: .first(predicate), awaited: awaitedText(awaited), timeout: timeout)[0]
    }

    /// Removes and returns everything queued, blocking the thread up to `timeout` for at least
    /// one item. For consumers that process arrivals in batches, such as a log writer.
    @available(*, noasync, message: "pop blocks the thread; in async code use next")
    public func popAll(timeout: Duration = defaultTimeout) throws -> [Element] {
        try wait(for: .all, awaited: "any \(noun)", timeout: timeout)
    }

    private func awaitedText(_ awaited: String?) -> String {
        awaited ?? "a \(noun) matching the predicate"
    }

    private func wait(
        for request: Request, awaited: @autoclosure () -> String, timeout: Duration
    ) throws -> [Element] {
        let deadline = Deadline.after(timeout)
        // `awaited` makes its text only when a pop times out.
        return try withoutActuallyEscaping(awaited) { awaited in
            try lock.withLock {
                startWaiting(request)
                defer { stopWaiting(request) }
                while true {
                    if let taken = take(request) { return taken }
                    if !lock.wait(until: deadline) {
                        if let taken = take(request) { return taken }
                        throw timeoutError(awaited: awaited(), timeout: timeout)
                    }
                }
            }
        }
    }

    // MARK: - Popping, async

    /// Removes and returns the oldest item, suspending up to `timeout` for one to arrive.
    public func next(timeout: Duration = defaultTimeout) async throws -> Element {
        try await suspend(for: .count(1), awaited: "a \(noun)", timeout: timeout)[0]
    }

    /// Removes and returns the `count` oldest items, suspending up to `timeout` until that
    /// many have arrived.
    public func next(count: Int, timeout: Duration = defaultTimeout) async throws -> [Element] {
        guard count > 0 else { return [] }
        return try await suspend(for: .count(count), awaited: "\(count) \(noun)s", timeout: timeout)
    }

    /// Removes and returns the oldest item that matches `predicate`, suspending up to
    /// `timeout` for one to arrive. Items that do not match stay queued.
    ///
    /// - Parameters:
    ///   - timeout: how long to wait.
    ///   - awaited: what the predicate looks for, as the timeout message says it
    ///     ("a push for bob"); nil: "a notification matching the predicate".
    ///   - predicate: which item to take.
    public func next(
        timeout: Duration = defaultTimeout, awaiting awaited: String? = nil,
        where predicate: @escaping @Sendable (Element) -> Bool
    ) async throws -> Element {
        try await suspend(for: .first(predicate), awaited: awaitedText(awaited), timeout: timeout)[0]
    }

    /// Removes and returns everything queued, suspending up to `timeout` for at least one item.
    public func nextAll(timeout: Duration = defaultTimeout) async throws -> [Element] {
        try await suspend(for: .all, awaited: "any \(noun)", timeout: timeout)
    }

    /// Suspends the task until `request` can be answered, `timeout` passes (then it throws a
    /// ``MailboxTimeout``) or the task is cancelled (then it throws `CancellationError` and
    /// takes nothing). No thread waits meanwhile: an arrival, the process's `DeadlineTimer`
    /// or the cancellation handler resumes it.
    private func suspend(for request: Request, awaited: String, timeout: Duration) async throws -> [Element] {
        let id = lock.withLock {
            nextWaiterID += 1
            unqueuedWaiters[nextWaiterID] = false
            return nextWaiterID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[Element], any Error>) in
                let immediate: Result<[Element], any Error>? = lock.withLock {
                    if unqueuedWaiters.removeValue(forKey: id) == true { return .failure(CancellationError()) }
                    if let taken = take(request) { return .success(taken) }
                    insertWaiter(AsyncWaiter(id: id, request: request, continuation: continuation))
                    return nil
                }
                if let immediate {
                    continuation.resume(with: immediate)
                    return
                }
                scheduleTimeout(for: id, awaited: awaited, timeout: timeout)
            }
        } onCancel: {
            let waiting = lock.withLock { () -> Bool in
                if waiterIndex(id) != nil { return true }
                if unqueuedWaiters[id] != nil { unqueuedWaiters[id] = true }
                return false
            }
            if waiting { resumeWaiter(id, with: .failure(CancellationError())) }
        }
    }

    /// Gives a waiter its timeout, unless it was answered meanwhile. Scheduled outside the
    /// lock, and attached to the waiter after: whoever answers the waiter first cancels it, and
    /// a timeout that comes first finds the waiter already queued.
    private func scheduleTimeout(for id: UInt64, awaited: String, timeout: Duration) {
        let entry = DeadlineTimer.shared.schedule(after: timeout) { [weak self] in
            guard let self else { return }
            let error = lock.withLock { timeoutError(awaited: awaited, timeout: timeout) }
            resumeWaiter(id, with: .failure(error))
        }
        let attached = lock.withLock { () -> Bool in
            guard let index = waiterIndex(id) else { return false }
            asyncWaiters[index].timeout = entry
            liveTimers += 1
            return true
        }
        if !attached { DeadlineTimer.shared.cancel(entry) }
    }

    private func resumeWaiter(_ id: UInt64, with result: Result<[Element], any Error>) {
        let waiter: AsyncWaiter? = lock.withLock {
            waiterIndex(id).map { removeWaiter(at: $0) }
        }
        waiter?.continuation.resume(with: result)
    }

    /// Inside the lock: queues a waiter in id order (its id was drawn before the lock was
    /// taken, so a later one may be queued already).
    private func insertWaiter(_ waiter: AsyncWaiter) {
        var index = asyncWaiters.count
        while index > 0 && asyncWaiters[index - 1].id > waiter.id { index -= 1 }
        asyncWaiters.insert(waiter, at: index)
    }

    /// Inside the lock: where the waiter `id` is, found by halving (waiters are in id order).
    private func waiterIndex(_ id: UInt64) -> Int? {
        let index = asyncWaiters.sortedIndex(past: { $0.id >= id })
        return index < asyncWaiters.count && asyncWaiters[index].id == id ? index : nil
    }

    /// Inside the lock: takes a waiter out and cancels its timeout.
    private func removeWaiter(at index: Int) -> AsyncWaiter {
        let waiter = asyncWaiters.remove(at: index)
        if let timeout = waiter.timeout {
            DeadlineTimer.shared.cancel(timeout)
            liveTimers -= 1
        }
        return waiter
    }

    // MARK: - Arriving

    /// Appends items in order and wakes whoever waits for them.
    func append(contentsOf batch: [Element]) {
        var batch = batch
        append(moving: &batch)
    }

    /// Appends items in order, taking them out of `batch` (left empty, possibly with spare
    /// capacity to reuse), and wakes whoever waits for them. When the queue is empty the
    /// batch's storage becomes the queue's: no element is copied.
    func append(moving batch: inout [Element]) {
        guard !batch.isEmpty else { return }
        var ready: [(CheckedContinuation<[Element], any Error>, [Element])] = []
        let wake = lock.withLock { () -> Bool in
            arrivedTotal += batch.count
            queue.append(moving: &batch)
            return answerWaiters(into: &ready)
        }
        if wake { lock.broadcast() }
        for (continuation, taken) in ready {
            continuation.resume(returning: taken)
        }
    }

    /// Appends one item.
    func append(_ item: Element) {
        append(contentsOf: [item])
    }

    // MARK: - Putting back

    /// Puts items taken by a pop back at the front of the queue, in their order, for the next
    /// pop: for a consumer that took them and could not pass them on (the control API's `next`
    /// whose client left before its answer went out). Wakes whoever waits, as an arrival does;
    /// the arrival count does not change.
    package func putBack(_ items: [Element]) {
        guard !items.isEmpty else { return }
        var ready: [(CheckedContinuation<[Element], any Error>, [Element])] = []
        let wake = lock.withLock { () -> Bool in
            queue.prepend(items)
            return answerWaiters(into: &ready)
        }
        if wake { lock.broadcast() }
        for (continuation, taken) in ready {
            continuation.resume(returning: taken)
        }
    }

    // MARK: - Inside the lock

    /// After items came (arrived or put back): answers the async pops they can answer, oldest
    /// first, into `ready` (resumed once the lock is released), and says whether a blocking pop
    /// may now be answered. Waiting threads are woken after the lock is released: woken inside
    /// it, each would wake only to wait for the lock, a second sleep and wake-up before it
    /// could pop.
    private func answerWaiters(into ready: inout [(CheckedContinuation<[Element], any Error>, [Element])]) -> Bool {
        var index = 0
        // An empty queue answers no waiter: the scan ends with the items.
        while index < asyncWaiters.count && queue.count > 0 {
            if let taken = take(asyncWaiters[index].request) {
                ready.append((removeWaiter(at: index).continuation, taken))
            } else {
                index += 1
            }
        }
        guard syncWaitersForAny > 0 || syncWaitedCounts.contains(where: { $0 <= queue.count }) else { return false }
        wakeUps += 1
        return true
    }

    private func startWaiting(_ request: Request) {
        if case .count(let wanted) = request {
            syncWaitedCounts.append(wanted)
        } else {
            syncWaitersForAny += 1
        }
    }

    private func stopWaiting(_ request: Request) {
        if case .count(let wanted) = request {
            if let index = syncWaitedCounts.firstIndex(of: wanted) { syncWaitedCounts.remove(at: index) }
        } else {
            syncWaitersForAny -= 1
        }
    }

    private func take(_ request: Request) -> [Element]? {
        switch request {
        case .count(let wanted): queue.removeFirst(wanted)
        case .all: queue.removeEverything()
        case .first(let predicate): queue.removeFirst(where: predicate).map { [$0] }
        }
    }

    private func timeoutError(awaited: String, timeout: Duration) -> MailboxTimeout {
        let queued = queue.items
        return MailboxTimeout(
            awaited: awaited, timeout: timeout,
            queued: queued.prefix(MailboxTimeout.listedLimit).map { String(describing: $0) },
            queuedCount: queued.count, arrivedTotal: arrivedTotal, noun: noun)
    }
}

/// A pop that waited its whole timeout. Its description says what was awaited and what
/// the queue held, so a failing test tells its own story.
public struct MailboxTimeout: Error, Sendable, CustomStringConvertible {
    static let listedLimit = 10

    /// What the pop waited for ("a notification", "a push for bob").
    public let awaited: String
    /// How long it waited.
    public let timeout: Duration
    /// Descriptions of the items still queued when it gave up (at most ten).
    public let queued: [String]
    /// How many items were queued when it gave up.
    public let queuedCount: Int
    /// How many items had arrived in all, popped or not.
    public let arrivedTotal: Int
    let noun: String

    /// The message a failing test shows: what was awaited, for how long, and what was queued.
    public var description: String {
        var text = "Timed out after \(timeout) waiting for \(awaited); "
        if queuedCount == 0 {
            text += "the queue is empty"
        } else {
            text += "the queue holds \(queuedCount): " + queued.joined(separator: "; ")
            if queuedCount > queued.count { text += "; …" }
        }
        text += " (\(arrivedTotal) \(noun)\(arrivedTotal == 1 ? "" : "s") arrived in all)"
        return text
    }
}
