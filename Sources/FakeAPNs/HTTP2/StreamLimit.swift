/// The concurrent-stream limit a server announces in SETTINGS_MAX_CONCURRENT_STREAMS, as the
/// client may be holding to it, and what a new stream meets: the limit is this side's to
/// enforce, not nghttp2's (which would end the whole connection with PROTOCOL_ERROR for a
/// stream over a limit the client acknowledged, where RFC 9113 §5.1.2 lets a server refuse
/// that stream alone).
///
/// A client holds to a new value only once it has read it: a raised limit counts from the
/// moment it is announced (the client can only be slower), a lowered one once the client
/// acknowledged the SETTINGS frame that lowered it; until then the streams it opened under the
/// older value are admitted. Before the client's first acknowledgement the limit is HTTP/2's
/// initial one, none, so only ``cap`` bounds it.
struct StreamLimit {
    /// The most streams a client may have open at once, whatever it acknowledged: the limit
    /// APNs announces once a connection may send freely.
    static let cap: UInt32 = 1000

    /// The limit of the last SETTINGS frame the client acknowledged that carried one.
    private(set) var acknowledged = UInt32.max
    /// The limit each SETTINGS frame sent and not yet acknowledged carried (nil: none), oldest
    /// first.
    private var unacknowledged: [UInt32?] = []
    /// The limit new streams meet: the acknowledged one, or a higher one still in flight.
    private(set) var inForce = UInt32.max

    /// A SETTINGS frame left carrying `limit` (nil: a frame without one).
    mutating func announced(_ limit: UInt32?) {
        unacknowledged.append(limit)
        recompute()
    }

    /// The client acknowledged the oldest SETTINGS frame not yet acknowledged.
    mutating func acknowledgedOne() {
        guard !unacknowledged.isEmpty else { return }
        if let limit = unacknowledged.removeFirst() { acknowledged = limit }
        recompute()
    }

    private mutating func recompute() {
        inForce = unacknowledged.reduce(acknowledged) { highest, limit in max(highest, limit ?? 0) }
    }

    /// What a new stream meets when `open` streams of the client are open already: admitted
    /// while fewer than the limit in force and than ``cap`` are open; otherwise refused, and
    /// `pastAcknowledged` says whether the client broke a limit it had acknowledged.
    func admits(open: Int) -> Admission {
        let open = UInt64(max(open, 0))
        if open < UInt64(Self.cap) && open < UInt64(inForce) { return .admitted }
        return .refused(pastAcknowledged: open >= UInt64(acknowledged))
    }

    enum Admission: Equatable {
        case admitted
        case refused(pastAcknowledged: Bool)
    }
}
