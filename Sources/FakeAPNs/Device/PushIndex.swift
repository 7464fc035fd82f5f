/// The retained pushes by device token and by `apns-unique-id`, as sequence numbers into the
/// server's history: describing a phone replays its token's pushes and a delivery-log look-up
/// finds its push without reading the history through. Holds as many pushes as the history
/// retains (all, with no retention limit), each forgotten as the history drops it.
struct PushIndex {
    private var byToken: [DeviceToken: FirstInFirstOut<UInt64>] = [:]
    private var byUniqueID: [String: UInt64] = [:]
    /// Every indexed push in order, to forget the oldest first.
    private var order = FirstInFirstOut<(sequenceNumber: UInt64, token: DeviceToken, uniqueID: String?)>()
    /// The most pushes kept (the history's retention).
    let capacity: Int?

    init(capacity: Int?) { self.capacity = capacity.map { max(1, $0) } }

    /// Indexes a device push (not a broadcast, which has no token of its own).
    mutating func add(_ notification: PushNotification) {
        guard notification.format != .broadcast else { return }
        let token = notification.deviceToken
        let uniqueID = notification.uniqueID?.lowercased()
        byToken[token, default: FirstInFirstOut()].append(notification.sequenceNumber)
        if let uniqueID { byUniqueID[uniqueID] = notification.sequenceNumber }
        order.append((notification.sequenceNumber, token, uniqueID))
        if let capacity, order.count > capacity { forgetOldest() }
    }

    /// The sequence numbers of `token`'s retained pushes, oldest first.
    func sequenceNumbers(of token: DeviceToken) -> [UInt64] { byToken[token]?.elements ?? [] }

    /// The sequence number of the push answered with `uniqueID` (any case), when retained.
    func sequenceNumber(uniqueID: String) -> UInt64? { byUniqueID[uniqueID.lowercased()] }

    mutating func removeAll() {
        byToken = [:]
        byUniqueID = [:]
        order = FirstInFirstOut()
    }

    private mutating func forgetOldest() {
        guard let oldest = order.removeFirst() else { return }
        byToken[oldest.token]?.removeFirst()
        if byToken[oldest.token]?.isEmpty == true { byToken[oldest.token] = nil }
        if let uniqueID = oldest.uniqueID, byUniqueID[uniqueID] == oldest.sequenceNumber {
            byUniqueID[uniqueID] = nil
        }
    }
}

/// A queue whose oldest element leaves in constant time (amortised).
struct FirstInFirstOut<Element> {
    private var storage: [Element] = []
    private var head = 0

    var count: Int { storage.count - head }
    var isEmpty: Bool { count == 0 }
    var first: Element? { head < storage.count ? storage[head] : nil }
    var elements: [Element] { Array(storage[head...]) }

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
