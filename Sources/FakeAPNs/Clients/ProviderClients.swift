import Foundation

#if canImport(Glibc)
import Glibc
#endif

// MARK: - Binary provider API

/// A provider's connection to the binary gateway (the legacy provider API, port 2195): sends
/// notifications as bytes and learns whether one was refused.
///
/// The gateway answers nothing on success. It answers a refusal with a 6-byte error response
/// and closes the connection, dropping whatever followed. So a client learns the outcome by
/// closing its sending side (`finish`) and reading until the gateway closes: an error response
/// if something was refused, nothing otherwise. Works against FakeAPNs and any server that
/// speaks Apple's protocol.
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
    private let tls: TLSClient

    /// Connects and completes the TLS handshake.
    ///
    /// ```swift
    /// let client = try BinaryProviderClient(
    ///     host: "gateway.example.test", port: 2195, trustedCAsPEM: caBundle,
    ///     identity: TLSIdentity(certificateFile: "client.pem", privateKeyFile: "client.key"))
    /// ```
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
    ///   refused an earlier notification and closed; ``finish(waitingUpTo:)`` still reads its
    ///   error response.
    public func send(_ frames: [UInt8]) throws {
        try tls.send(frames)
    }

    /// Closes the sending side (TLS close_notify) and reads until the gateway closes, or until
    /// `wait` passes.
    ///
    /// ```swift
    /// let refusal = try client.finish(waitingUpTo: .seconds(2))   // nil: nothing was refused
    /// ```
    ///
    /// - Returns: the gateway's error response, or nil when it closed without one or stayed
    ///   silent for the whole wait (both mean it refused nothing that it reports).
    /// - Throws: ``TLSError`` when the connection fails before an answer,
    ///   ``ProviderClientError`` when the gateway sends bytes that are not an error response.
    public func finish(waitingUpTo wait: Duration = .seconds(10)) throws -> BinaryErrorResponse? {
        let deadline = ContinuousClock.now + wait
        var received: [UInt8] = []
        // A response that is already here is read before close_notify goes out: a gateway that
        // has closed answers a late close_notify with a TCP reset.
        try readAvailable(into: &received, until: ContinuousClock.now)
        if received.count < 6 {
            tls.stream.sendCloseNotify()
            try readAvailable(into: &received, until: deadline)
        }
        guard !received.isEmpty else { return nil }
        guard received.count >= 6, let response = BinaryErrorResponse(bytes: received.prefix(6)) else {
            throw ProviderClientError(
                message: "the gateway sent \(received.count) bytes that are not an error response: "
                    + received.prefix(16).map { String($0, radix: 16) }.joined(separator: " "))
        }
        return response
    }

    /// Closes the connection.
    public func close() {
        tls.close()
    }

    /// Reads until 6 bytes are in, the gateway closes, or `deadline` passes.
    private func readAvailable(into received: inout [UInt8], until deadline: ContinuousClock.Instant) throws {
        var chunk = [UInt8](repeating: 0, count: 1024)
        while received.count < 6 {
            let remaining = max(deadline - ContinuousClock.now, .zero)
            let milliseconds = Int32(min(remaining / .milliseconds(1), Double(Int32.max)).rounded(.up))
            var descriptor = pollfd(fd: tls.stream.socket, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, milliseconds) > 0 else { return }
            // A TLS 1.3 session ticket can make the socket readable with no data behind it;
            // the read then waits, so it must not wait past the deadline.
            setReadTimeout(max(deadline - ContinuousClock.now, .milliseconds(1)))
            let count: Int
            do {
                count = try chunk.withUnsafeMutableBytes { try tls.stream.read(into: $0) }
            } catch {
                if !received.isEmpty || ContinuousClock.now >= deadline { return }
                throw error
            }
            if count == 0 { return }
            received += chunk[0..<count]
        }
    }

    private func setReadTimeout(_ timeout: Duration) {
        let (seconds, attoseconds) = timeout.components
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
        setsockopt(tls.stream.socket, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
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
                throw ProviderClientError(message: "no answer within \(Self.seconds(timeout)) seconds")
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

    private static func seconds(_ duration: Duration) -> String {
        let value = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return value == value.rounded() ? String(Int(value)) : String(value)
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
