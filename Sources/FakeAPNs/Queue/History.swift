import Dispatch

/// Something that knows its place in the order of arrival.
public protocol Sequenced: Sendable {
    /// Its place in the order of arrival at its server, from 1.
    var sequenceNumber: UInt64 { get }
}

extension PushNotification: Sequenced {}
extension Rejection: Sequenced {}
extension BroadcastDelivery: Sequenced {}

/// Everything a server received (or refused), in order, whether popped or not, up to a
/// retention limit (oldest dropped first, and counted). What the daemon's API lists; tests
/// usually pop the queue instead.
public final class History<Element: Sequenced>: @unchecked Sendable {
    private let lock = ConditionLock()
    private var queue: BoundedQueue<Element>
    /// Batches appended so far, and the async long polls waiting for the next one.
    private var batches = 0
    private var arrivalWaits: [UInt64: ArrivalWait] = [:]
    private var lastWaiterID: UInt64 = 0

    private enum ArrivalWait {
        case starting
        case waiting(CheckedContinuation<Void, Never>)
        case ended
    }

    /// The most items kept; nil: no limit.
    public var capacity: Int? { queue.capacity }

    init(capacity: Int?) {
        queue = BoundedQueue(capacity: capacity)
    }

    /// How many items are kept.
    public var count: Int { lock.withLock { queue.count } }

    /// The sequence number of the newest item kept; 0 when none is.
    package var lastSequenceNumber: UInt64 { lock.withLock { queue.items.last?.sequenceNumber ?? 0 } }

    /// How many items were dropped to honour the retention limit.
    public var droppedCount: Int { lock.withLock { queue.dropped } }

    /// The kept items with a sequence number above `since`, oldest first, that match
    /// `predicate`, at most `limit` of them.
    public func list(since: UInt64 = 0, limit: Int? = nil, where predicate: (Element) -> Bool = { _ in true }) -> [Element] {
        lock.withLock { unlockedList(since: since, limit: limit, where: predicate) }
    }

    private func unlockedList(since: UInt64, limit: Int?, where predicate: (Element) -> Bool) -> [Element] {
        var result: [Element] = []
        let items = queue.items
        for index in firstIndex(after: since)..<items.endIndex where predicate(items[index]) {
            result.append(items[index])
            if let limit, result.count >= limit { break }
        }
        return result
    }

    /// As ``list(since:limit:where:)``, but while nothing matches, suspends until something
    /// that matches arrives or `end` comes (then it returns `[]`): a long poll that takes
    /// nothing from the queue tests pop, and holds no thread. Cancelling the task throws
    /// `CancellationError`.
    package func list(
        since: UInt64, limit: Int?, waitingUntil end: ContinuousClock.Instant,
        where predicate: @escaping @Sendable (Element) -> Bool
    ) async throws -> [Element] {
        while true {
            try Task.checkCancellation()
            let (found, seen) = lock.withLock { (unlockedList(since: since, limit: limit, where: predicate), batches) }
            if !found.isEmpty || ContinuousClock.now >= end { return found }
            await nextBatch(after: seen, until: end)
        }
    }

    /// Returns once a batch arrives after the `seen`th, `end` comes, or the task is cancelled.
    private func nextBatch(after seen: Int, until end: ContinuousClock.Instant) async {
        let id = lock.withLock {
            lastWaiterID += 1
            arrivalWaits[lastWaiterID] = .starting
            return lastWaiterID
        }
        defer { lock.withLock { _ = arrivalWaits.removeValue(forKey: id) } }
        let stop: @Sendable () -> Void = { [weak self] in
            guard let self else { return }
            let waiter = lock.withLock { () -> CheckedContinuation<Void, Never>? in
                guard let wait = arrivalWaits[id] else { return nil }
                arrivalWaits[id] = .ended
                if case .waiting(let continuation) = wait { return continuation }
                return nil
            }
            waiter?.resume()
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let waiting = lock.withLock { () -> Bool in
                    guard batches == seen, case .starting = arrivalWaits[id] else { return false }
                    arrivalWaits[id] = .waiting(continuation)
                    return true
                }
                guard waiting else { return continuation.resume() }
                let (seconds, attoseconds) = (end - ContinuousClock.now).components
                let nanoseconds = max(0, Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
                DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds), execute: stop)
            }
        } onCancel: {
            stop()
        }
    }

    /// The kept item with this sequence number.
    public func item(_ sequenceNumber: UInt64) -> Element? {
        lock.withLock {
            let items = queue.items
            let index = firstIndex(after: sequenceNumber &- 1)
            guard index < items.endIndex, items[index].sequenceNumber == sequenceNumber else { return nil }
            return items[index]
        }
    }

    /// Forgets every item.
    public func removeAll() {
        lock.withLock { queue.removeAll() }
    }

    /// Adds items that arrived, in order.
    func append(contentsOf batch: [Element]) {
        guard !batch.isEmpty else { return }
        let waiters = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            queue.append(contentsOf: batch)
            batches += 1
            var waiters: [CheckedContinuation<Void, Never>] = []
            for (id, wait) in arrivalWaits {
                if case .waiting(let continuation) = wait {
                    waiters.append(continuation)
                    arrivalWaits[id] = .ended
                }
            }
            return waiters
        }
        waiters.forEach { $0.resume() }
    }

    /// Inside the lock: the index of the first kept item with a sequence number above
    /// `sequence` (binary search: items are in order).
    private func firstIndex(after sequence: UInt64) -> Int {
        queue.items.sortedIndex(past: { $0.sequenceNumber > sequence })
    }
}
