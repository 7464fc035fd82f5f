import Foundation

/// A blocking HTTP/2 client over TLS, for the project's own clients of the provider API (the
/// tests, the daemon's `send`). Sends requests on concurrent streams and collects the answers.
final class HTTP2Client: HTTP2SessionDelegate {
    /// One request.
    struct Request {
        var method = "POST"
        var path: String
        /// Regular headers, in order; repeats are sent as given.
        var headers: [(String, String)] = []
        var body: [UInt8] = []
    }

    /// One answer, or how the stream ended without one.
    struct Response {
        var status = 0
        var headers: [(name: String, value: String)] = []
        var body: [UInt8] = []
        /// RST_STREAM's error code when the server reset the stream.
        var resetCode: UInt32?

        /// The first value of a header.
        func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
        /// The body as JSON, when it is.
        var json: JSONValue? { try? JSONValue.parse(body) }
        /// `reason` of an error body.
        var reason: String? { json?["reason"]?.stringValue }
    }

    let tls: TLSClient
    private var session: NGHTTP2Session!
    private let authority: String
    private var responses: [Int32: Response] = [:]
    private var open: Set<Int32> = []
    /// GOAWAY from the server, when one came.
    private(set) var goAway: (lastStream: Int32, errorCode: UInt32, debugData: [UInt8])?

    /// Connects, offering ALPN h2 unless `offerALPN` is false (HTTP/2 with prior knowledge).
    init(
        host: String, port: Int, trustedCAsPEM: String? = TestCertificates.caPEM, identity: TLSIdentity? = nil,
        offerALPN: Bool = true, timeout: Duration = .seconds(10)
    ) throws {
        tls = try TLSClient(
            host: host, port: port, trustedCAsPEM: trustedCAsPEM, identity: identity, readTimeout: timeout,
            offerHTTP2: offerALPN)
        authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        session = try NGHTTP2Session(server: false, delegate: WeakDelegate(self))
        session.submitSettings([(Int32(NGHTTP2Settings.maxConcurrentStreams), 1000)])
    }

    /// The protocol ALPN agreed on ("h2"), nil with prior knowledge.
    var negotiatedProtocol: String? { tls.stream.negotiatedProtocol }

    /// The stream limit the server announced last.
    var serverStreamLimit: UInt32 { session.remoteSetting(NGHTTP2Settings.maxConcurrentStreams) }

    /// Reads and processes what the server sent so far (its SETTINGS after connecting).
    func exchangeSettings() throws {
        try flush()
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        let count = try buffer.withUnsafeMutableBytes { try tls.stream.read(into: $0) }
        try buffer.withUnsafeBytes { try session.receive(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        try flush()
    }

    /// Sends one request and waits for its answer.
    func send(_ request: Request) throws -> Response {
        try send([request])[0]
    }

    /// Sends requests on concurrent streams and waits for every answer, in request order.
    func send(_ requests: [Request]) throws -> [Response] {
        let streams = requests.map { request in
            let headers = [(":method", request.method), (":scheme", "https"), (":authority", authority), (":path", request.path)]
                + request.headers
            let stream = session.submitRequest(headers: headers, body: request.body)
            open.insert(stream)
            responses[stream] = Response()
            return stream
        }
        try flush()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while streams.contains(where: open.contains) {
            let count = try buffer.withUnsafeMutableBytes { try tls.stream.read(into: $0) }
            if count == 0 { break }
            try buffer.withUnsafeBytes { try session.receive(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            try flush()
        }
        return streams.map { responses.removeValue(forKey: $0) ?? Response() }
    }

    /// Closes the connection.
    func close() {
        tls.close()
    }

    private func flush() throws {
        let output = try session.takeOutput()
        if !output.isEmpty { try tls.send(output) }
    }

    // MARK: - Session events

    func streamBegan(_ stream: Int32) {}

    func header(_ stream: Int32, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        let name = String(decoding: name, as: UTF8.self)
        let value = String(decoding: value, as: UTF8.self)
        if name == ":status" {
            responses[stream]?.status = Int(value) ?? 0
        } else {
            responses[stream]?.headers.append((name, value))
        }
    }

    func data(_ stream: Int32, _ bytes: UnsafeRawBufferPointer) {
        responses[stream]?.body.append(contentsOf: bytes)
    }

    func streamEnded(_ stream: Int32) {}

    func streamClosed(_ stream: Int32, errorCode: UInt32) {
        if errorCode != 0 { responses[stream]?.resetCode = errorCode }
        open.remove(stream)
    }

    func goAwayReceived(lastStream: Int32, errorCode: UInt32, debugData: [UInt8]) {
        goAway = (lastStream, errorCode, debugData)
        // Streams the server will never process end now.
        for stream in open where stream > lastStream { open.remove(stream) }
    }
}

/// Passes a session's events on to a client without keeping it alive: the client holds its
/// session, which holds its delegate strongly.
private final class WeakDelegate: HTTP2SessionDelegate {
    private weak var client: HTTP2Client?

    init(_ client: HTTP2Client) { self.client = client }

    func streamBegan(_ stream: Int32) { client?.streamBegan(stream) }
    func header(_ stream: Int32, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        client?.header(stream, name: name, value: value)
    }
    func data(_ stream: Int32, _ bytes: UnsafeRawBufferPointer) { client?.data(stream, bytes) }
    func headersEnded(_ stream: Int32, endsStream: Bool) { client?.headersEnded(stream, endsStream: endsStream) }
    func streamEnded(_ stream: Int32) { client?.streamEnded(stream) }
    func streamClosed(_ stream: Int32, errorCode: UInt32) { client?.streamClosed(stream, errorCode: errorCode) }
    func goAwayReceived(lastStream: Int32, errorCode: UInt32, debugData: [UInt8]) {
        client?.goAwayReceived(lastStream: lastStream, errorCode: errorCode, debugData: debugData)
    }
}
