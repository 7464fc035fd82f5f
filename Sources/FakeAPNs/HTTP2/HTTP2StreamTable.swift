/// What a connection keeps of a request while its header block and body arrive.
struct HTTP2PendingRequest {
    var fields = RequestHeaderFields()
    /// The header list's size as RFC 9113 §6.5.2 counts it for SETTINGS_MAX_HEADER_LIST_SIZE:
    /// name and value bytes and 32 a field, every field counted, kept or not.
    var headerListSize = 0
    /// Body bytes kept (up to the connection's limit), and how many arrived in all.
    var body: [UInt8] = []
    var bodySize = 0

    /// Empty again, keeping the body's storage for the next request.
    mutating func reset() {
        fields.reset()
        headerListSize = 0
        body.removeAll(keepingCapacity: true)
        bodySize = 0
    }

    /// Adds a header field as nghttp2 passes it on, unless it takes the list over `sizeLimit`:
    /// from then on fields are only counted, and the request is refused on its size, never
    /// judged on the fields kept.
    mutating func addHeader(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>, sizeLimit: Int) {
        headerListSize += name.count + value.count + 32
        guard headerListSize <= sizeLimit else { return }
        fields.add(lowercaseName: name, value: value)
    }

    /// Adds body bytes, keeping them while the body stays within `limit`.
    mutating func append(_ bytes: UnsafeRawBufferPointer, limit: Int) {
        bodySize += bytes.count
        if body.count + bytes.count <= limit {
            body.append(contentsOf: bytes)
        }
    }
}

/// A connection's incomplete requests by stream id: an open-addressing table (linear probing,
/// Fibonacci hashing, deletion by backward shift) whose slots keep their request's storage for
/// the next one. A `Dictionary` hashed every stream id with SipHash and moved the whole request
/// in and out on each body chunk, several times per request; here a lookup is a multiply and a
/// compare or two, and slots are changed in place.
///
/// Stream ids are positive (0 marks a free slot). At most half the slots are used.
struct HTTP2StreamTable {
    private var ids: [Int32]
    private var requests: [HTTP2PendingRequest]
    private var shift: Int
    private(set) var count = 0
    /// Body storage of handled requests, for slots that have none: clients send the HEADERS
    /// of many requests before their DATA, so one spare would rarely be there.
    private var spareBodies: [[UInt8]] = []
    private static let spareBodyLimit = 128

    /// Eight slots to begin with: an idle connection's table costs about 2 KB; a busy one
    /// grows it.
    init() {
        shift = 64 - 3
        ids = Array(repeating: 0, count: 1 << 3)
        requests = Array(repeating: HTTP2PendingRequest(), count: 1 << 3)
    }

    private var mask: Int { ids.count - 1 }

    /// The slot a stream id's search begins at.
    private func home(_ stream: Int32) -> Int {
        Int(truncatingIfNeeded: (UInt64(UInt32(bitPattern: stream)) &* 0x9E37_79B9_7F4A_7C15) >> UInt64(shift))
    }

    /// The slot of `stream`, or nil when it is not in the table.
    func slot(of stream: Int32) -> Int? {
        var index = home(stream)
        while true {
            let id = ids[index]
            if id == stream { return index }
            if id == 0 { return nil }
            index = (index + 1) & mask
        }
    }

    /// The stream whose request a slot holds (0: none).
    func stream(at slot: Int) -> Int32 {
        ids[slot]
    }

    /// The streams whose requests are still arriving, in no order.
    var pendingStreams: [Int32] { ids.filter { $0 != 0 } }

    /// The slot of `stream`, holding an empty request (emptied if the stream was there).
    mutating func insert(_ stream: Int32) -> Int {
        if let index = slot(of: stream) {
            requests[index].reset()
            return index
        }
        if (count + 1) * 2 > ids.count { grow() }
        var index = home(stream)
        while ids[index] != 0 { index = (index + 1) & mask }
        ids[index] = stream
        requests[index].reset()
        if requests[index].body.capacity == 0, let spare = spareBodies.popLast() { requests[index].body = spare }
        count += 1
        return index
    }

    /// Takes back a handled request's body storage for a later request, so that a steady
    /// stream of requests allocates none.
    mutating func recycle(_ body: inout [UInt8]) {
        guard spareBodies.count < Self.spareBodyLimit, body.capacity > 0 else { return }
        var spare: [UInt8] = []
        swap(&spare, &body)
        spare.removeAll(keepingCapacity: true)
        spareBodies.append(spare)
    }

    /// The request in a slot that ``slot(of:)`` or ``insert(_:)`` gave, valid until the next
    /// insertion or removal.
    subscript(slot: Int) -> HTTP2PendingRequest {
        get { requests[slot] }
        _modify { yield &requests[slot] }
    }

    /// Takes the request out of `slot` and frees the slot; what was after it moves back so
    /// that every search still finds its stream.
    mutating func remove(at slot: Int) -> HTTP2PendingRequest {
        var taken = HTTP2PendingRequest()
        swap(&taken, &requests[slot])
        var hole = slot
        var index = slot
        while true {
            index = (index + 1) & mask
            let id = ids[index]
            if id == 0 { break }
            // The entry stays unless the hole lies on its way from its home slot to here.
            let distanceFromHome = (index - home(id)) & mask
            let distanceFromHole = (index - hole) & mask
            if distanceFromHome >= distanceFromHole {
                ids[hole] = id
                requests.swapAt(hole, index)
                hole = index
            }
        }
        ids[hole] = 0
        count -= 1
        return taken
    }

    private mutating func grow() {
        let oldIDs = ids
        var oldRequests = requests
        shift -= 1
        ids = Array(repeating: 0, count: oldIDs.count * 2)
        requests = Array(repeating: HTTP2PendingRequest(), count: oldIDs.count * 2)
        for (old, id) in oldIDs.enumerated() where id != 0 {
            var index = home(id)
            while ids[index] != 0 { index = (index + 1) & mask }
            ids[index] = id
            swap(&requests[index], &oldRequests[old])
        }
    }
}
