/// The retained pushes by device token and by `apns-unique-id`, as sequence numbers into the
/// server's history: describing a phone replays its token's pushes, and a delivery-log look-up
/// finds its push, without reading the history through.
///
/// It costs nothing until the model needs it: it is built from the history (once, linear) the
/// first time a phone is described or a push looked up by unique id, and kept from then on,
/// one token look-up per push (each push points to its token's previous one), until a reset.
/// It holds as many pushes as the history retains, each forgotten as the history drops it.
/// Kept from the first push instead, it cut `Scripts/bench.sh`'s `binary ingest` row from 3.3
/// to 0.8 million notifications a second (2026-12-06): a server whose tests describe no phone
/// must not pay for it.
struct PushIndex {
    /// Whether it is kept: from the first describe or look-up to the next reset.
    private(set) var isActive = false
    /// For each indexed push, oldest first: the sequence number of its token's previous push
    /// (0: none). The push numbered `firstNumber + i` is the i-th.
    private var previous = FirstInFirstOut<UInt64>()
    private var firstNumber: UInt64 = 0
    /// Each token's newest push.
    private var newest: [DeviceToken: UInt64] = [:]
    private var byUniqueID: [String: UInt64] = [:]
    /// The most pushes kept (the history's retention).
    let capacity: Int?

    init(capacity: Int?) { self.capacity = capacity.map { max(1, $0) } }

    /// Starts keeping the index, from `retained` (the history, oldest first).
    mutating func activate(with retained: [PushNotification]) {
        guard !isActive else { return }
        isActive = true
        for notification in retained { add(notification) }
    }

    /// Indexes a push (a broadcast takes its place in the order, with no token of its own).
    mutating func add(_ notification: PushNotification) {
        let number = notification.sequenceNumber
        if previous.isEmpty { firstNumber = number }
        guard number >= firstNumber + UInt64(previous.count) else { return }
        while firstNumber + UInt64(previous.count) < number { previous.append(0) }
        guard notification.format != .broadcast else {
            previous.append(0)
            return forgetBeyondCapacity()
        }
        previous.append(newest.updateValue(number, forKey: notification.deviceToken) ?? 0)
        if let uniqueID = notification.uniqueID?.lowercased() { byUniqueID[uniqueID] = number }
        forgetBeyondCapacity()
    }

    /// The sequence numbers of `token`'s retained pushes, oldest first.
    func sequenceNumbers(of token: DeviceToken) -> [UInt64] {
        var numbers: [UInt64] = []
        var next = newest[token] ?? 0
        while next >= firstNumber, next > 0, let earlier = previous[Int(next - firstNumber)] {
            numbers.append(next)
            next = earlier
        }
        return numbers.reversed()
    }

    /// The sequence number of the push answered with `uniqueID` (any case), when retained.
    func sequenceNumber(uniqueID: String) -> UInt64? {
        byUniqueID[uniqueID.lowercased()].flatMap { $0 >= firstNumber ? $0 : nil }
    }

    /// Stops keeping it (a reset).
    mutating func removeAll() {
        self = PushIndex(capacity: capacity)
    }

    /// Forgets the oldest push past the capacity; the look-ups skip what points before the
    /// oldest, and are swept of it when they hold twice as many entries as can be current.
    private mutating func forgetBeyondCapacity() {
        guard let capacity, previous.count > capacity else { return }
        previous.removeFirst()
        firstNumber += 1
        let sweepAt = 2 * capacity + 1024
        if newest.count > sweepAt { newest = newest.filter { $0.value >= firstNumber } }
        if byUniqueID.count > sweepAt { byUniqueID = byUniqueID.filter { $0.value >= firstNumber } }
    }
}

/// A queue whose oldest element leaves in constant time (amortised), read by position.
struct FirstInFirstOut<Element> {
    private var storage: [Element] = []
    private var head = 0

    var count: Int { storage.count - head }
    var isEmpty: Bool { count == 0 }

    /// The element `offset` places after the oldest, when there is one.
    subscript(offset: Int) -> Element? {
        offset >= 0 && offset < count ? storage[head + offset] : nil
    }

    mutating func append(_ element: Element) { storage.append(element) }

    @discardableResult
    mutating func removeFirst() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
        head += 1
        if head >= 64, head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }
}
