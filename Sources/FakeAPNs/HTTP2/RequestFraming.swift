/// How a provider API connection's requests arrive and its answers leave: what
/// `HTTP2Connection` asks of its session. ``NGHTTP2Session`` frames HTTP/2; the plaintext
/// listener's `PlaintextSession` frames HTTP/1.1 and hands over to HTTP/2 for a cleartext
/// HTTP/2 client. Either reports each request to its `HTTP2SessionDelegate` as an HTTP/2
/// stream (pseudo-header fields first), so every request meets the same checks in the same
/// order and gets the same answer whatever carried it.
protocol RequestFraming: AnyObject {
    /// Queues SETTINGS (the stream limit, the header list size, ...).
    func submitSettings(_ settings: [(id: Int32, value: UInt32)])
    /// Queues an answer: `:status` and the other headers, and the body when not empty.
    func submitResponse(_ stream: Int32, headers: [(String, String)], body: [UInt8])
    /// Queues the answer to an accepted notification: 200, `apns-id`, and `apns-unique-id`
    /// when given.
    func submitAccepted(_ stream: Int32, apnsID: UnsafeBufferPointer<UInt8>, uniqueID: UnsafeBufferPointer<UInt8>?)
    /// Abandons a request without an answer.
    func submitReset(_ stream: Int32, errorCode: UInt32)
    /// Ends the connection once the answers queued so far have left.
    func submitGoAway(lastStream: Int32, errorCode: UInt32, debugData: [UInt8])
    /// Feeds received bytes; throws when they break the protocol (an answer saying so may
    /// then be queued).
    func receive(_ bytes: UnsafeRawBufferPointer) throws
    /// Appends everything queued to `output`.
    func takeOutput(appendingTo output: inout [UInt8]) throws
    /// Whether the session still reads or writes.
    var isAlive: Bool { get }
    /// Whether the bytes received so far end between two messages (frames, requests): a
    /// connection quiet there is idle; quiet inside one, it is stalled.
    var isBetweenMessages: Bool { get }
}
