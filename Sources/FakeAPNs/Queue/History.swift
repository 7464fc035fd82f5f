/// Something that knows its place in the order of arrival.
public protocol Sequenced: Sendable {
    /// Its place in the order of arrival at its server, from 1.
    var sequenceNumber: UInt64 { get }
}

extension PushNotification: Sequenced {}
extension Rejection: Sequenced {}

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

    /// How many items were dropped to honour the retention limit.
    public var droppedCount: Int { lock.withLock { queue.dropped } }

    /// The kept items with a sequence number above `since`, oldest first, that match
    /// `predicate`, at most `limit` of them.
    public func list(since: UInt64 = 0, limit: Int? = nil, where predicate: (Element) -> Bool = { _ in true }) -> [Element] {
        lock.withLock {
            var result: [Element] = []
            let items = queue.items
            for index in firstIndex(after: since)..<items.endIndex where predicate(items[index]) {
                result.append(items[index])
                if let limit, result.count >= limit { break }
            }
            return result
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
        lock.withLock { queue.append(contentsOf: batch) }
    }

    /// Inside the lock: the index of the first kept item with a sequence number above
    /// `sequence` (binary search: items are in order).
    private func firstIndex(after sequence: UInt64) -> Int {
        let items = queue.items
        var low = items.startIndex
        var high = items.endIndex
        while low < high {
            let middle = (low + high) / 2
            if items[middle].sequenceNumber <= sequence { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
