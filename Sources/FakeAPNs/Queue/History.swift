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
    private var items: [Element] = []
    private var head = 0
    private var dropped = 0
    /// The most items kept; nil: no limit.
    public let capacity: Int?

    init(capacity: Int?) {
        self.capacity = capacity.map { max(1, $0) }
    }

    /// How many items are kept.
    public var count: Int { lock.withLock { items.count - head } }

    /// How many items were dropped to honour the retention limit.
    public var droppedCount: Int { lock.withLock { dropped } }

    /// The kept items with a sequence number above `since`, oldest first, that match
    /// `predicate`, at most `limit` of them.
    public func list(since: UInt64 = 0, limit: Int? = nil, where predicate: (Element) -> Bool = { _ in true }) -> [Element] {
        lock.withLock {
            var result: [Element] = []
            let start = firstIndex(after: since)
            for index in start..<items.count where predicate(items[index]) {
                result.append(items[index])
                if let limit, result.count >= limit { break }
            }
            return result
        }
    }

    /// The kept item with this sequence number.
    public func item(_ sequenceNumber: UInt64) -> Element? {
        lock.withLock {
            let index = firstIndex(after: sequenceNumber &- 1)
            guard index < items.count, items[index].sequenceNumber == sequenceNumber else { return nil }
            return items[index]
        }
    }

    /// Forgets every item.
    public func removeAll() {
        lock.withLock {
            items.removeAll()
            head = 0
        }
    }

    /// Adds items that arrived, in order.
    func append(contentsOf batch: [Element]) {
        guard !batch.isEmpty else { return }
        lock.withLock {
            items.append(contentsOf: batch)
            if let capacity, items.count - head > capacity {
                let excess = items.count - head - capacity
                head += excess
                dropped += excess
                if head > 4096 && head * 2 > items.count {
                    items.removeFirst(head)
                    head = 0
                }
            }
        }
    }

    /// The index of the first kept item with a sequence number above `sequence` (binary
    /// search: items are in order).
    private func firstIndex(after sequence: UInt64) -> Int {
        var low = head
        var high = items.count
        while low < high {
            let middle = (low + high) / 2
            if items[middle].sequenceNumber <= sequence { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
