/// Items in order of arrival, up to a capacity beyond which the oldest are dropped (and
/// counted): the storage of both ``Mailbox`` and ``History``. Removing from the front moves a
/// head index instead of the items; the storage is compacted once the dead front is large.
/// Not thread-safe: its owner holds a lock around every use.
struct BoundedQueue<Element> {
    private(set) var storage: [Element] = []
    /// The index in `storage` of the oldest item kept.
    private(set) var head = 0
    /// How many items were dropped to honour `capacity`.
    private(set) var dropped = 0
    /// The most items kept; nil: no limit.
    let capacity: Int?

    init(capacity: Int?) {
        self.capacity = capacity.map { max(1, $0) }
    }

    var count: Int { storage.count - head }

    /// The kept items, oldest first, indexed as in `storage`.
    var items: ArraySlice<Element> { storage[head...] }

    /// Appends a batch, taking it out of `batch` (left empty, possibly with spare capacity to
    /// reuse). When the queue is empty the batch's storage becomes the queue's: no element is
    /// copied.
    mutating func append(moving batch: inout [Element]) {
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
            swap(&storage, &batch)
        } else {
            storage.append(contentsOf: batch)
            batch.removeAll(keepingCapacity: true)
        }
        dropBeyondCapacity()
    }

    /// Appends a copy of a batch.
    mutating func append(contentsOf batch: [Element]) {
        storage.append(contentsOf: batch)
        dropBeyondCapacity()
    }

    /// Removes and returns the `count` oldest items; nil when fewer are kept.
    mutating func removeFirst(_ count: Int) -> [Element]? {
        guard self.count >= count else { return nil }
        if self.count - count <= count {
            // Fewer stay than leave (a consumer popping large slices as they fill): the storage
            // leaves with the taken items, and the few that stay are copied out of it.
            var taken: [Element] = []
            swap(&taken, &storage)
            storage.append(contentsOf: taken[(head + count)...])
            taken.removeSubrange((head + count)...)
            if head > 0 { taken.removeFirst(head) }
            head = 0
            return taken
        }
        let taken = Array(storage[head..<head + count])
        head += count
        compactIfWorthIt()
        return taken
    }

    /// The oldest element, removed; nil when there is none.
    mutating func removeFirst() -> Element? {
        guard storage.count > head else { return nil }
        let taken = storage[head]
        head += 1
        compactIfWorthIt()
        return taken
    }

    /// Removes and returns every kept item; nil when none is.
    mutating func removeEverything() -> [Element]? {
        guard storage.count > head else { return nil }
        if head > 0 { storage.removeFirst(head) }
        var taken: [Element] = []
        swap(&taken, &storage)
        head = 0
        return taken
    }

    /// Removes and returns the oldest item that matches `predicate`; the others stay in order.
    mutating func removeFirst(where predicate: (Element) -> Bool) -> Element? {
        guard let index = storage[head...].firstIndex(where: predicate) else { return nil }
        let taken = storage[index]
        if index == head {
            head += 1
            compactIfWorthIt()
        } else {
            storage.remove(at: index)
        }
        return taken
    }

    /// Puts `items` back in front of the oldest, in their order; the capacity is not applied
    /// (they were kept before), so the queue may hold that many more until the next append.
    mutating func prepend(_ items: [Element]) {
        if head >= items.count {
            head -= items.count
            storage.replaceSubrange(head..<head + items.count, with: items)
        } else {
            storage.insert(contentsOf: items, at: head)
        }
    }

    /// Forgets every item (the count of dropped ones stays).
    mutating func removeAll() {
        storage.removeAll(keepingCapacity: false)
        head = 0
    }

    private mutating func dropBeyondCapacity() {
        guard let capacity, count > capacity else { return }
        let excess = count - capacity
        head += excess
        dropped += excess
        compactIfWorthIt()
    }

    private mutating func compactIfWorthIt() {
        if head == storage.count {
            storage.removeAll(keepingCapacity: storage.count < 65_536)
            head = 0
        } else if head > 4096 && head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
    }
}
