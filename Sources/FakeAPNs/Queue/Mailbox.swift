import Foundation

/// A blocking queue of what the server received (``PushNotification``s) or refused, which a test
/// pops with a timeout.
///
/// ```swift
/// let first = try server.notifications.pop(timeout: .seconds(2))          // XCTest
/// let next = try await server.notifications.pop(timeout: .seconds(2))     // async / Swift Testing
/// let three = try server.notifications.pop(count: 3)
/// let forBob = try server.notifications.pop { $0.deviceToken == bob }
/// ```
///
/// Popping removes; `snapshot()` looks without removing. A pop that times out throws a
/// ``MailboxTimeout`` that says what was awaited and what had arrived. Items stay in the queue
/// after the server stops.
public final class Mailbox<Element: Sendable>: @unchecked Sendable {
    /// The timeout of every pop that does not name one.
    public static var defaultTimeout: Duration { .seconds(5) }

    private let lock = ConditionLock()
    private let noun: String
    // Protected by `lock`:
    private var items: [Element] = []
    private var head = 0
    private var arrivedTotal = 0
    private var syncWaiters = 0
    private var asyncWaiters: [AsyncWaiter] = []
    private var cancelledWaiters: Set<UInt64> = []
    private var nextWaiterID: UInt64 = 0

    private struct AsyncWaiter {
        let id: UInt64
        let request: Request
        let continuation: CheckedContinuation<[Element], any Error>
    }

    private enum Request {
        case first(@Sendable (Element) -> Bool)
        case count(Int)
        case all
    }

    private let stamp: (@Sendable (inout Element, Int) -> Void)?
    private let arrived: (@Sendable ([Element]) -> Void)?
    private let settled: (@Sendable () -> Void)?
    private var dropped = 0
    /// The most items the queue keeps; when more arrive the oldest are dropped (and counted).
    /// Nil: no limit.
    public let capacity: Int?

    /// A mailbox whose timeout messages call its items `noun` ("notification"). `stamp`
    /// gives each arriving item its place in the order of arrival, from 1; `arrived` sees
    /// each stamped batch, in order, inside the queue's lock (it must be quick). `settled` runs
    /// on the appending thread after each append, once the lock is released and the waiting
    /// pops have their items: a consumer of `arrived` that falls behind may block there to
    /// slow the producer down.
    init(
        noun: String, capacity: Int? = nil, stamp: (@Sendable (inout Element, Int) -> Void)? = nil,
        arrived: (@Sendable ([Element]) -> Void)? = nil, settled: (@Sendable () -> Void)? = nil
    ) {
        self.noun = noun
        self.capacity = capacity.map { max(1, $0) }
        self.stamp = stamp
        self.arrived = arrived
        self.settled = settled
    }

    /// How many items were dropped, oldest first, to honour `capacity`.
    public var droppedCount: Int {
        lock.withLock { dropped }
    }

    // MARK: - Looking

    /// How many items wait in the queue.
    public var count: Int {
        lock.withLock { items.count - head }
    }

    /// Whether the queue is empty.
    public var isEmpty: Bool { count == 0 }

    /// How many pops are waiting now, blocking or async.
    public var waitingCount: Int {
        lock.withLock { syncWaiters + asyncWaiters.count }
    }

    /// How many items arrived since the server was created, popped or not.
    public var totalArrived: Int {
        lock.withLock { arrivedTotal }
    }

    /// The queued items, oldest first, without removing them.
    public func snapshot() -> [Element] {
        lock.withLock { Array(items[head...]) }
    }

    /// Removes and returns every queued item, oldest first.
    @discardableResult
    public func removeAll() -> [Element] {
        lock.withLock {
            let all = Array(items[head...])
            items.removeAll(keepingCapacity: false)
            head = 0
            return all
        }
    }

    // MARK: - Popping, blocking

    /// Removes and returns the oldest item, waiting up to `timeout` for one to arrive.
    public func pop(timeout: Duration = defaultTimeout) throws -> Element {
        try wait(for: .count(1), awaited: "a \(noun)", timeout: timeout)[0]
    }

    /// Removes and returns the `count` oldest items, waiting up to `timeout` until that many
    /// have arrived.
    public func pop(count: Int, timeout: Duration = defaultTimeout) throws -> [Element] {
        guard count > 0 else { return [] }
        return try wait(for: .count(count), awaited: "\(count) \(noun)s", timeout: timeout)
    }

    /// Removes and returns the oldest item that matches `predicate`, waiting up to `timeout`
    /// for one to arrive. Items that do not match stay queued.
    ///
    /// - Parameter description: what the predicate looks for, for the timeout message.
    public func pop(
        timeout: Duration = defaultTimeout, matching description: String = "the predicate",
        where predicate: @escaping @Sendable (Element) -> Bool
    ) throws -> Element {
        try wait(for: .first(predicate), awaited: "a \(noun) matching \(description)", timeout: timeout)[0]
    }

    /// Removes and returns everything queued, waiting up to `timeout` for at least one item.
    /// For consumers that process arrivals in batches, such as a log writer.
    public func popAll(timeout: Duration = defaultTimeout) throws -> [Element] {
        try wait(for: .all, awaited: "any \(noun)", timeout: timeout)
    }

    private func wait(for request: Request, awaited: String, timeout: Duration) throws -> [Element] {
        let deadline = Deadline.after(timeout)
        return try lock.withLock {
            syncWaiters += 1
            defer { syncWaiters -= 1 }
            while true {
                if let taken = take(request) { return taken }
                if !lock.wait(until: deadline) {
                    if let taken = take(request) { return taken }
                    throw timeoutError(awaited: awaited, timeout: timeout)
                }
            }
        }
    }

    // MARK: - Popping, async

    /// Removes and returns the oldest item, suspending up to `timeout` for one to arrive.
    public func pop(timeout: Duration = defaultTimeout) async throws -> Element {
        try await suspend(for: .count(1), awaited: "a \(noun)", timeout: timeout)[0]
    }

    /// Removes and returns the `count` oldest items, suspending up to `timeout` until that
    /// many have arrived.
    public func pop(count: Int, timeout: Duration = defaultTimeout) async throws -> [Element] {
        guard count > 0 else { return [] }
        return try await suspend(for: .count(count), awaited: "\(count) \(noun)s", timeout: timeout)
    }

    /// Removes and returns the oldest item that matches `predicate`, suspending up to
    /// `timeout` for one to arrive. Items that do not match stay queued.
    public func pop(
        timeout: Duration = defaultTimeout, matching description: String = "the predicate",
        where predicate: @escaping @Sendable (Element) -> Bool
    ) async throws -> Element {
        try await suspend(for: .first(predicate), awaited: "a \(noun) matching \(description)", timeout: timeout)[0]
    }

    private func suspend(for request: Request, awaited: String, timeout: Duration) async throws -> [Element] {
        let id = lock.withLock {
            nextWaiterID += 1
            return nextWaiterID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[Element], any Error>) in
                let immediate: Result<[Element], any Error>? = lock.withLock {
                    if cancelledWaiters.remove(id) != nil { return .failure(CancellationError()) }
                    if let taken = take(request) { return .success(taken) }
                    asyncWaiters.append(AsyncWaiter(id: id, request: request, continuation: continuation))
                    return nil
                }
                if let immediate {
                    continuation.resume(with: immediate)
                    return
                }
                let (seconds, attoseconds) = timeout.components
                let nanoseconds = max(0, Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
                DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [self] in
                    let error = lock.withLock { timeoutError(awaited: awaited, timeout: timeout) }
                    resumeWaiter(id, with: .failure(error))
                }
            }
        } onCancel: {
            let removed = lock.withLock { () -> Bool in
                if asyncWaiters.contains(where: { $0.id == id }) { return true }
                cancelledWaiters.insert(id)
                return false
            }
            if removed { resumeWaiter(id, with: .failure(CancellationError())) }
        }
    }

    private func resumeWaiter(_ id: UInt64, with result: Result<[Element], any Error>) {
        let waiter: AsyncWaiter? = lock.withLock {
            guard let index = asyncWaiters.firstIndex(where: { $0.id == id }) else { return nil }
            return asyncWaiters.remove(at: index)
        }
        waiter?.continuation.resume(with: result)
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
        lock.withLock {
            let added = batch.count
            let start: Int
            if head == items.count {
                items.removeAll(keepingCapacity: true)
                head = 0
                swap(&items, &batch)
                start = 0
            } else {
                start = items.count
                items.append(contentsOf: batch)
                batch.removeAll(keepingCapacity: true)
            }
            if let stamp {
                for index in start..<items.count { stamp(&items[index], arrivedTotal + index - start + 1) }
            }
            arrivedTotal += added
            arrived?(Array(items[start...]))
            if let capacity, items.count - head > capacity {
                let excess = items.count - head - capacity
                head += excess
                dropped += excess
                compactIfWorthIt()
            }
            if !asyncWaiters.isEmpty {
                var index = 0
                while index < asyncWaiters.count {
                    if let taken = take(asyncWaiters[index].request) {
                        ready.append((asyncWaiters[index].continuation, taken))
                        asyncWaiters.remove(at: index)
                    } else {
                        index += 1
                    }
                }
            }
            if syncWaiters > 0 { lock.broadcast() }
        }
        for (continuation, taken) in ready {
            continuation.resume(returning: taken)
        }
        settled?()
    }

    /// Appends one item.
    func append(_ item: Element) {
        append(contentsOf: [item])
    }

    // MARK: - Inside the lock

    private func take(_ request: Request) -> [Element]? {
        switch request {
        case .count(let wanted):
            guard items.count - head >= wanted else { return nil }
            let taken = Array(items[head..<head + wanted])
            head += wanted
            compactIfWorthIt()
            return taken
        case .all:
            guard items.count > head else { return nil }
            if head > 0 { items.removeFirst(head) }
            var taken: [Element] = []
            swap(&taken, &items)
            head = 0
            return taken
        case .first(let predicate):
            guard let index = items[head...].firstIndex(where: predicate) else { return nil }
            let taken = items[index]
            if index == head {
                head += 1
                compactIfWorthIt()
            } else {
                items.remove(at: index)
            }
            return [taken]
        }
    }

    private func compactIfWorthIt() {
        if head == items.count {
            items.removeAll(keepingCapacity: items.count < 65_536)
            head = 0
        } else if head > 4096 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
    }

    private func timeoutError(awaited: String, timeout: Duration) -> MailboxTimeout {
        let queued = items[head...]
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

    /// What the pop waited for ("a notification matching token 0a0b…").
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
