import Foundation

#if canImport(Glibc)
import Glibc
#endif

// MARK: - Binary provider API

/// A provider's connection to the binary gateway (the legacy provider API, port 2195): sends
/// notifications as bytes and learns whether they were taken.
///
/// The gateway answers nothing on success. It answers a refusal with a 6-byte error response
/// and closes the connection, dropping whatever followed. So silence is the answer, and
/// ``finish(quietPeriod:waitingUpTo:)`` waits for it: a quiet period after the last write with
/// the connection still open, then a clean close on both sides. Works against FakeAPNs and any
/// server that speaks Apple's protocol.
///
/// ```swift
/// let client = try BinaryProviderClient(host: "127.0.0.1", port: server.gatewayPort)
/// defer { client.close() }
/// let payload = Array(#"{"aps":{"alert":"Hi"}}"#.utf8)
/// try client.send(BinaryEncoder.frame(token: token, payload: payload, identifier: 7))
/// if let refusal = try client.finish() {
///     print(refusal.status.name, refusal.identifier)   // "Invalid token", 7
/// }
/// ```
public final class BinaryProviderClient {
    /// How long ``finish(quietPeriod:waitingUpTo:)`` waits after the last write, by default,
    /// before it takes the gateway's silence for acceptance: 1 second. FakeAPNs answers a
    /// refusal within milliseconds; the wait is for a busy machine and a gateway farther away.
    public static let defaultQuietPeriod: Duration = .seconds(1)

    private let tls: TLSClient
    /// When the last ``send(_:)`` wrote, so the quiet period counts from there.
    private var lastWrite: ContinuousClock.Instant?

    /// Connects and completes the TLS handshake.
    ///
    /// ```swift
    /// let client = try BinaryProviderClient(
    ///     host: "gateway.example.test", port: 2195, trustedCAsPEM: caBundle,
    ///     identity: TLSIdentity(certificateFile: "client.pem", privateKeyFile: "client.key"))
    /// ```
    ///
    /// Under TLS 1.3 the client's side of the handshake completes before the server has judged
    /// the client's certificate, so a server that refuses it says so later:
    /// ``finish(quietPeriod:waitingUpTo:)`` reports it.
    ///
    /// - Parameters:
    ///   - trustedCAsPEM: CAs the server's certificate must chain to (default: the test CA of
    ///     ``TestCertificates``; nil: accept any certificate). A host name is also checked
    ///     against the certificate.
    ///   - identity: the provider certificate to present.
    ///   - timeout: how long the handshake and each read may wait.
    /// - Throws: ``SocketError`` when the connection cannot be made ("Connection refused"),
    ///   ``TLSError`` with OpenSSL's words when the handshake fails.
    public init(
        host: String, port: Int, trustedCAsPEM: String? = TestCertificates.caPEM, identity: TLSIdentity? = nil,
        timeout: Duration = .seconds(10)
    ) throws {
        tls = try TLSClient(
            host: host, port: port, trustedCAsPEM: trustedCAsPEM, identity: identity, readTimeout: timeout)
    }

    /// Sends bytes: one or more commands built with ``BinaryEncoder``.
    ///
    /// ```swift
    /// try client.send(BinaryEncoder.enhanced(identifier: 1, token: token, payload: payload))
    /// ```
    ///
    /// - Throws: ``TLSError`` when the write fails, typically because the gateway already
    ///   refused an earlier notification (or the handshake) and closed;
    ///   ``finish(quietPeriod:waitingUpTo:)`` still reads its answer.
    public func send(_ frames: [UInt8]) throws {
        defer { lastWrite = ContinuousClock.now }
        try tls.send(frames)
    }

    /// Waits for the gateway's verdict on everything sent, and closes the sending side.
    ///
    /// ```swift
    /// let refusal = try client.finish(quietPeriod: .milliseconds(500))   // nil: all taken
    /// ```
    ///
    /// The verdict is the first of:
    /// - an error response: returned (the gateway closes after it);
    /// - a fatal TLS alert, such as a TLS 1.3 server refusing the client's certificate after
    ///   the client's side of the handshake completed: thrown, as "the server refused the
    ///   handshake: tlsv13 alert certificate required";
    /// - the gateway closing or resetting the connection without an error response: thrown
    ///   (it dropped the connection, or refused a command 0, which gets no error response);
    /// - `quietPeriod` of silence after the last ``send(_:)`` with the connection still open:
    ///   then close_notify goes out, and the gateway's close_notify, within `wait`, makes the
    ///   answer nil (everything was taken). An error response or alert in that time counts
    ///   as above; a close without close_notify, a reset or no close at all is thrown.
    ///
    /// - Returns: the gateway's error response, or nil when it took everything sent.
    /// - Throws: ``ProviderClientError`` for every outcome other than these two, saying which;
    ///   ``TLSError`` when OpenSSL reports another failure.
    public func finish(
        quietPeriod: Duration = defaultQuietPeriod, waitingUpTo wait: Duration = .seconds(10)
    ) throws -> BinaryErrorResponse? {
        var received: [UInt8] = []
        let quietEnd = (lastWrite ?? ContinuousClock.now) + quietPeriod
        switch try read(into: &received, until: quietEnd) {
        case .bytes:
            return try errorResponse(in: received)
        case .closeNotify:
            if !received.isEmpty { return try errorResponse(in: received) }
            throw ProviderClientError(
                message: "the gateway closed the connection without an error response before \(quietPeriod.secondsPhrase) "
                    + "of quiet: it dropped the connection, or refused a command 0 (which gets no error response)")
        case .abruptEnd(let how):
            if !received.isEmpty { return try errorResponse(in: received) }
            throw ProviderClientError(
                message: "the gateway ended the connection without an error response or close_notify (\(how)): "
                    + "what was sent may be lost")
        case .timedOut:
            break
        }
        tls.stream.sendCloseNotify()
        switch try read(into: &received, until: ContinuousClock.now + wait) {
        case .bytes:
            return try errorResponse(in: received)
        case .closeNotify:
            if !received.isEmpty { return try errorResponse(in: received) }
            return nil
        case .abruptEnd(let how):
            if !received.isEmpty { return try errorResponse(in: received) }
            throw ProviderClientError(
                message: "the gateway answered close_notify by ending the connection without one (\(how)): "
                    + "whether it took what was sent is unknown")
        case .timedOut:
            if !received.isEmpty { return try errorResponse(in: received) }
            throw ProviderClientError(
                message: "the gateway did not answer close_notify within \(wait.secondsPhrase): "
                    + "whether it took what was sent is unknown")
        }
    }

    /// Closes the connection.
    public func close() {
        tls.close()
    }

    /// Reads until 6 bytes are in (`.bytes`), the gateway ends the connection, or `deadline`
    /// passes; a fatal alert is thrown in words.
    private func read(into received: inout [UInt8], until deadline: ContinuousClock.Instant) throws
        -> TLSStream.DeadlineRead
    {
        var chunk = [UInt8](repeating: 0, count: 1024)
        while true {
            let outcome: TLSStream.DeadlineRead
            do {
                outcome = try chunk.withUnsafeMutableBytes { try tls.stream.read(into: $0, until: deadline) }
            } catch let alert as TLSStream.PeerAlert {
                throw ProviderClientError(message: "the server refused the handshake: \(alert.reason)")
            }
            guard case .bytes(let count) = outcome else { return outcome }
            received += chunk[0..<count]
            if received.count >= 6 { return outcome }
        }
    }

    /// The error response `received` holds, or an error saying what else it is.
    private func errorResponse(in received: [UInt8]) throws -> BinaryErrorResponse {
        guard received.count >= 6, let response = BinaryErrorResponse(bytes: received.prefix(6)) else {
            throw ProviderClientError(
                message: "the gateway sent \(received.count) bytes that are not an error response: "
                    + received.prefix(16).map { String($0, radix: 16) }.joined(separator: " "))
        }
        return response
    }
}

// MARK: - HTTP/2 provider API

/// A provider's connection to the HTTP/2 provider API (`api.push.apple.com`, port 443 or
/// 2197): one request per notification, one answer each. Works against FakeAPNs and any
/// server that speaks Apple's protocol.
///
/// ```swift
/// let client = try ProviderAPIClient(host: "127.0.0.1", port: server.http2Port)
/// defer { client.close() }
/// let response = try client.send(ProviderAPIClient.Request(
///     token: token, payload: Array(#"{"aps":{"alert":"Hi"}}"#.utf8), topic: "com.example.app", pushType: .alert))
/// response.status   // 200
/// response.apnsID   // "6a1f…"
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

        /// The `reason` of a refusal's body (`BadDeviceToken`, `Unregistered`, …).
        public var reason: String? { (try? JSONValue.parse(body))?["reason"]?.stringValue }

        /// With 410 `Unregistered`: when the device stopped taking notifications for the
        /// topic, in milliseconds since 1970.
        public var timestamp: Int? { (try? JSONValue.parse(body))?["timestamp"]?.intValue }
    }

    private let client: HTTP2Client
    private let timeout: Duration

    /// Connects, completes the TLS handshake and, with `offerALPN`, agrees on HTTP/2.
    ///
    /// ```swift
    /// let client = try ProviderAPIClient(
    ///     host: "api.sandbox.push.apple.com", port: 443,
    ///     trustedCAsPEM: try String(contentsOfFile: "/etc/ssl/certs/ca-certificates.crt", encoding: .utf8))
    /// ```
    ///
    /// - Parameters:
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
        client = try HTTP2Client(
            host: host, port: port, trustedCAsPEM: trustedCAsPEM, identity: identity, offerALPN: offerALPN,
            timeout: timeout)
        self.timeout = timeout
        if let agreed = client.negotiatedProtocol, agreed != "h2" {
            client.close()
            throw ProviderClientError(message: "\(host):\(port) chose \(agreed) over TLS, not HTTP/2 (h2)")
        }
    }

    /// The protocol agreed in the handshake: "h2", or nil without ALPN.
    public var negotiatedProtocol: String? { client.negotiatedProtocol }

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
        let answer: HTTP2Client.Response
        do {
            answer = try client.send(
                HTTP2Client.Request(
                    method: request.method, path: request.path, headers: request.headers, body: request.body))
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
            if let goAway = client.goAway {
                message += " (GOAWAY, error code \(goAway.errorCode)"
                if !goAway.debugData.isEmpty { message += ", " + String(decoding: goAway.debugData, as: UTF8.self) }
                message += ")"
            }
            throw ProviderClientError(message: message)
        }
        return Response(status: answer.status, headers: answer.headers, body: answer.body, resetCode: answer.resetCode)
    }

    /// Closes the connection.
    public func close() {
        client.close()
    }

}

// MARK: - Errors

/// A provider client's failure that is neither a socket's nor OpenSSL's: no answer in time, a
/// connection closed without an answer, bytes that make no sense.
public struct ProviderClientError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a sentence.
    public let message: String

    /// An error with a message.
    public init(message: String) {
        self.message = message
    }

    public var description: String { message }
}
