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

    /// As ``list(since:limit:where:)``, but while nothing matches, blocks the thread until
    /// something that matches arrives, `deadline` passes (then it returns `[]`), or
    /// `cancellation` is cancelled (then it throws `CancellationError`): a long poll that
    /// takes nothing from the queue tests pop.
    package func list(
        since: UInt64, limit: Int?, waitingUntil deadline: Deadline, cancellation: WaitCancellation,
        where predicate: (Element) -> Bool
    ) throws -> [Element] {
        try cancellation.whileWaiting(wake: { [lock] in lock.withLock { lock.broadcast() } }) {
            try lock.withLock {
                while true {
                    if cancellation.isCancelled { throw CancellationError() }
                    let found = unlockedList(since: since, limit: limit, where: predicate)
                    if !found.isEmpty || !lock.wait(until: deadline) {
                        return found.isEmpty ? unlockedList(since: since, limit: limit, where: predicate) : found
                    }
                }
            }
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
        lock.withLock {
            queue.append(contentsOf: batch)
            lock.broadcast()
        }
    }

    /// Inside the lock: the index of the first kept item with a sequence number above
    /// `sequence` (binary search: items are in order).
    private func firstIndex(after sequence: UInt64) -> Int {
        queue.items.sortedIndex(past: { $0.sequenceNumber > sequence })
    }
}
