#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

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
    ///   - host: the server's name or address (`127.0.0.1`, `localhost`).
    ///   - port: its port (`server.gatewayPort`; Apple's was 2195).
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
