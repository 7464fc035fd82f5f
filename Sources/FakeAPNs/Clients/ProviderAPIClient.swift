#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A provider's connection to the HTTP/2 provider API (`api.push.apple.com`, port 443 or
/// 2197): one request per notification, one answer each. Works against FakeAPNs and any
/// server that speaks Apple's protocol.
///
/// ```swift
/// let client = try ProviderAPIClient(host: "127.0.0.1", port: server.http2Port!)
/// defer { client.close() }
/// let response = try client.send(ProviderAPIClient.Request(
///     token: token, payload: Array(#"{"aps":{"alert":"Hi"}}"#.utf8), topic: "com.example.app", pushType: .alert))
/// response.status   // 200
/// response.apnsID   // "6A1F…"
/// ```
public final class ProviderAPIClient {
    /// One request. Most are pushes, made with the `init(token:payload:…)` initializer; the
    /// other sends anything, for tests of how a server handles the unusual.
    public struct Request: Sendable {
        /// The method (`POST` for a push).
        public var method: String
        /// The path, `/3/device/<token hex>` for a push.
        public var path: String
        /// Regular headers in order (`apns-topic`, `authorization`, …); repeats are sent as given.
        public var headers: [(String, String)]
        /// The body: a push's JSON payload.
        public var body: [UInt8]

        /// Any request.
        ///
        /// ```swift
        /// let request = ProviderAPIClient.Request(
        ///     path: "/3/device/\(token.hex)", headers: [("apns-topic", "com.example.app")],
        ///     body: Array(#"{"aps":{"badge":1}}"#.utf8))
        /// ```
        public init(path: String, headers: [(String, String)] = [], body: [UInt8] = [], method: String = "POST") {
            self.method = method
            self.path = path
            self.headers = headers
            self.body = body
        }

        /// A push to `token`, with Apple's headers for the values given.
        ///
        /// ```swift
        /// let jwt = try ProviderTokenSigner.sign(keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
        /// let request = ProviderAPIClient.Request(
        ///     token: token, payload: Array(#"{"aps":{"content-available":1}}"#.utf8), topic: "com.example.app",
        ///     pushType: .background, priority: 5, providerToken: jwt)
        /// ```
        ///
        /// - Parameters:
        ///   - token: the device token, sent in the path as hex.
        ///   - payload: the JSON payload, the request's body.
        ///   - topic: `apns-topic`, the app's bundle ID (with a suffix for some push types).
        ///   - pushType: `apns-push-type`.
        ///   - priority: `apns-priority`: 10 now, 5 considering the device's power, 1 lowest.
        ///   - expiration: `apns-expiration` in UNIX seconds; 0: deliver now or never.
        ///   - collapseID: `apns-collapse-id`.
        ///   - apnsID: `apns-id`, a UUID the server echoes (it makes one up otherwise).
        ///   - providerToken: a JWT, sent as `authorization: bearer <token>`.
        public init(
            token: DeviceToken, payload: [UInt8], topic: String? = nil, pushType: PushType? = nil,
            priority: Int? = nil, expiration: Int? = nil, collapseID: String? = nil, apnsID: String? = nil,
            providerToken: String? = nil
        ) {
            var headers: [(String, String)] = []
            if let topic { headers.append(("apns-topic", topic)) }
            if let pushType { headers.append(("apns-push-type", pushType.rawValue)) }
            if let priority { headers.append(("apns-priority", String(priority))) }
            if let expiration { headers.append(("apns-expiration", String(expiration))) }
            if let collapseID { headers.append(("apns-collapse-id", collapseID)) }
            if let apnsID { headers.append(("apns-id", apnsID)) }
            if let providerToken { headers.append(("authorization", "bearer \(providerToken)")) }
            self.init(path: "/3/device/\(token.hex)", headers: headers, body: payload)
        }
    }

    /// The server's answer to one request.
    ///
    /// ```swift
    /// if response.status == 410, let timestamp = response.timestamp {
    ///     print("unregistered at", Date(timeIntervalSince1970: Double(timestamp) / 1000))
    /// }
    /// ```
    public struct Response: Sendable {
        /// The HTTP status: 200 accepted, 4xx or 5xx refused; 0 when the server reset the
        /// stream instead of answering (see ``resetCode``).
        public var status: Int
        /// The response headers other than `:status`, in order.
        public var headers: [(name: String, value: String)]
        /// The body: empty on success, `{"reason":"…"}` on refusal.
        public var body: [UInt8]
        /// RST_STREAM's error code when the server reset the stream (7: REFUSED_STREAM).
        public var resetCode: UInt32?

        /// A response, as the client builds it.
        public init(
            status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = [], resetCode: UInt32? = nil
        ) {
            self.status = status
            self.headers = headers
            self.body = body
            self.resetCode = resetCode
        }

        /// The first value of a header (names are lowercase in HTTP/2).
        public func header(_ name: String) -> String? {
            headers.first { $0.name == name }?.value
        }

        /// The `apns-id` header: the request's, or the one the server made up.
        public var apnsID: String? { header("apns-id") }
        /// The `apns-unique-id` header, answered in the sandbox environment only: it finds the
        /// push's delivery log (``FakeAPNsServer/deliveryLog(uniqueID:)``).
        public var uniqueID: String? { header("apns-unique-id") }

        /// The `reason` of a refusal's body (`BadDeviceToken`, `Unregistered`, …).
        public var reason: String? { json?["reason"]?.stringValue }

        /// With 410 `Unregistered`: when the device stopped taking notifications for the
        /// topic, in milliseconds since 1970.
        public var timestamp: Int? { json?["timestamp"]?.intValue }

        /// The body as JSON, when it is.
        var json: JSONValue? { try? JSONValue.parse(body) }
    }

    /// The TLS connection under the HTTP/2 session.
    let tls: TLSClient
    private var session: NGHTTP2Session!
    private let authority: String
    private let timeout: Duration
    /// The answers of the exchange under way, one per request, in request order: a short
    /// list, searched from its end (most exchanges have one request).
    @exclusivity(unchecked) private var pending: [PendingAnswer] = []
    /// Where answers are read into, made once: a request is one write and, mostly, one read.
    private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
    /// GOAWAY from the server, when one came.
    private(set) var goAway: (lastStream: Int32, errorCode: UInt32, debugData: [UInt8])?

    /// Connects, completes the TLS handshake and, with `offerALPN`, agrees on HTTP/2.
    ///
    /// ```swift
    /// let client = try ProviderAPIClient(
    ///     host: "api.sandbox.push.apple.com", port: 443,
    ///     trustedCAsPEM: try String(contentsOfFile: "/etc/ssl/certs/ca-certificates.crt", encoding: .utf8))
    /// ```
    ///
    /// - Parameters:
    ///   - host: the server's name or address (`127.0.0.1`, `localhost`).
    ///   - port: its port (`server.http2Port!`; Apple's are 443 and 2197).
    ///   - trustedCAsPEM: CAs the server's certificate must chain to (default: the test CA of
    ///     ``TestCertificates``; nil: accept any certificate). A host name is also checked
    ///     against the certificate.
    ///   - identity: the provider certificate to present (certificate authentication).
    ///   - offerALPN: offer `h2` in the handshake, as Apple requires; false speaks HTTP/2 with
    ///     prior knowledge.
    ///   - timeout: how long the handshake and each answer may take.
    /// - Throws: ``SocketError`` when the connection cannot be made ("Connection refused"),
    ///   ``TLSError`` with OpenSSL's words when the handshake fails, ``ProviderClientError``
    ///   when the server picks a protocol other than HTTP/2.
    public init(
        host: String, port: Int, trustedCAsPEM: String? = TestCertificates.caPEM, identity: TLSIdentity? = nil,
        offerALPN: Bool = true, timeout: Duration = .seconds(10)
    ) throws {
        tls = try TLSClient(
            host: host, port: port, trustedCAsPEM: trustedCAsPEM, identity: identity, readTimeout: timeout,
            offerHTTP2: offerALPN)
        self.timeout = timeout
        authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        if let agreed = tls.stream.negotiatedProtocol, agreed != "h2" {
            tls.close()
            throw ProviderClientError(message: "\(host):\(port) chose \(agreed) over TLS, not HTTP/2 (h2)")
        }
        session = try NGHTTP2Session(server: false, delegate: WeakDelegate(self))
        session.submitSettings([(Int32(NGHTTP2Settings.maxConcurrentStreams), 1000)])
    }

    /// The protocol agreed in the handshake: "h2", or nil without ALPN.
    public var negotiatedProtocol: String? { tls.stream.negotiatedProtocol }

    /// The stream limit the server announced last.
    var serverStreamLimit: UInt32 { session.remoteSetting(NGHTTP2Settings.maxConcurrentStreams) }

    /// Sends one request and waits for its answer.
    ///
    /// ```swift
    /// let request = ProviderAPIClient.Request(token: token, payload: payload, topic: "com.example.app")
    /// let response = try client.send(request)
    /// if response.status != 200 { print(response.status, response.reason ?? "") }
    /// ```
    ///
    /// - Throws: ``ProviderClientError`` when no answer came within the timeout or the server
    ///   closed the connection without answering (with its GOAWAY, when it sent one);
    ///   ``TLSError`` when the connection fails.
    public func send(_ request: Request) throws -> Response {
        let started = ContinuousClock.now
        let answer: Response
        do {
            answer = try exchange(request)
        } catch {
            // A read that gives up on SO_RCVTIMEO surfaces as an OpenSSL "want read" error;
            // the clock tells it from a real failure.
            if ContinuousClock.now - started >= timeout - .milliseconds(50) {
                throw ProviderClientError(message: "no answer within \(timeout.secondsPhrase)")
            }
            throw error
        }
        guard answer.status != 0 || answer.resetCode != nil else {
            var message = "the server closed the connection without answering"
            if let goAway {
                message += " (GOAWAY, error code \(goAway.errorCode)"
                if !goAway.debugData.isEmpty { message += ", " + String(decoding: goAway.debugData, as: UTF8.self) }
                message += ")"
            }
            throw ProviderClientError(message: message)
        }
        return answer
    }

    /// Closes the connection.
    public func close() {
        tls.close()
    }

    // MARK: - Raw exchanges, for tests of the server

    /// Reads and processes what the server sent so far (its SETTINGS after connecting).
    func exchangeSettings() throws {
        try flush()
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        let count = try buffer.withUnsafeMutableBytes { try tls.stream.read(into: $0) }
        try buffer.withUnsafeBytes { try session.receive(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        try flush()
    }

    /// Sends one request and returns what came back: status 0 and no reset code when the
    /// server closed the connection without answering it.
    func exchange(_ request: Request) throws -> Response {
        try exchange([request])[0]
    }

    /// Sends requests on concurrent streams and waits for every answer, in request order
    /// (status 0 for a request the server never answered).
    func exchange(_ requests: [Request]) throws -> [Response] {
        // An exchange that failed may have left its answers: they are no longer waited for.
        pending.removeAll(keepingCapacity: true)
        for request in requests {
            let stream = session.submitRequest(
                pseudoHeaders: [(":method", request.method), (":scheme", "https"), (":authority", authority), (":path", request.path)],
                headers: request.headers, body: request.body)
            pending.append(PendingAnswer(stream: stream))
        }
        try flush()
        while pending.contains(where: \.open) {
            let count = try readBuffer.withUnsafeMutableBytes { try tls.stream.read(into: $0) }
            if count == 0 { break }
            try readBuffer.withUnsafeBytes { try session.receive(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            try flush()
        }
        let answers = pending.map(\.response)
        pending.removeAll(keepingCapacity: true)
        return answers
    }

    /// One request's answer as it arrives.
    private struct PendingAnswer {
        let stream: Int32
        var response = Response(status: 0)
        /// Until the stream closes, or a GOAWAY says it will not be processed.
        var open = true

        init(stream: Int32) {
            self.stream = stream
            response.headers.reserveCapacity(4)
        }
    }

    /// Where `stream`'s answer is in ``pending``.
    private func pendingIndex(_ stream: Int32) -> Int? {
        var index = pending.count
        while index > 0 {
            index -= 1
            if pending[index].stream == stream { return index }
        }
        return nil
    }

    private func flush() throws {
        let output = try session.takeOutput()
        if !output.isEmpty { try tls.send(output) }
    }
}

// MARK: - Session events

extension ProviderAPIClient: HTTP2SessionDelegate {
    func streamBegan(_ stream: Int32) {}

    func header(_ stream: Int32, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        guard let index = pendingIndex(stream) else { return }
        let statusName: StaticString = ":status"
        if name.count == statusName.utf8CodeUnitCount, memcmp(name.baseAddress!, statusName.utf8Start, name.count) == 0 {
            // Three digits, read without making text of them.
            var status = 0
            for digit in value {
                guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9"), status < 1000 else { status = 0; break }
                status = status * 10 + Int(digit - UInt8(ascii: "0"))
            }
            pending[index].response.status = status
        } else {
            pending[index].response.headers.append(
                (String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
    }

    func data(_ stream: Int32, _ bytes: UnsafeRawBufferPointer) {
        guard let index = pendingIndex(stream) else { return }
        pending[index].response.body.append(contentsOf: bytes)
    }

    func streamEnded(_ stream: Int32) {}

    func streamClosed(_ stream: Int32, errorCode: UInt32) {
        guard let index = pendingIndex(stream) else { return }
        if errorCode != 0 { pending[index].response.resetCode = errorCode }
        pending[index].open = false
    }

    func goAwayReceived(lastStream: Int32, errorCode: UInt32, debugData: [UInt8]) {
        goAway = (lastStream, errorCode, debugData)
        // Streams the server will never process end now.
        for index in pending.indices where pending[index].stream > lastStream { pending[index].open = false }
    }
}

/// Passes a session's events on to a client without keeping it alive: the client holds its
/// session, which holds its delegate strongly.
private final class WeakDelegate: HTTP2SessionDelegate {
    private weak var client: ProviderAPIClient?

    init(_ client: ProviderAPIClient) { self.client = client }

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
