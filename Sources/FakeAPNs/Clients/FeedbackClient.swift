/// A client of the feedback service: connects, reads every tuple until the server closes.
/// Works against FakeAPNs and anything that speaks Apple's feedback protocol.
///
/// ```swift
/// let tuples = try FeedbackClient.read(host: "127.0.0.1", port: server.feedbackPort!)
/// ```
public enum FeedbackClient {
    /// Reads the pending tuples.
    ///
    /// - Parameters:
    ///   - host: the server's name or address (`127.0.0.1`, `localhost`).
    ///   - port: its port (`server.feedbackPort!`; Apple's was 2196).
    ///   - trustedCAsPEM: CAs the server's certificate must chain to (default: the test CA;
    ///     nil: accept any certificate).
    ///   - identity: the provider certificate to present, when the service asks for one.
    ///   - timeout: how long to wait for the server to finish.
    public static func read(
        host: String, port: Int, trustedCAsPEM: String? = TestCertificates.caPEM, identity: TLSIdentity? = nil,
        timeout: Duration = .seconds(10)
    ) throws -> [FeedbackTuple] {
        let client = try TLSClient(
            host: host, port: port, trustedCAsPEM: trustedCAsPEM, identity: identity, readTimeout: timeout)
        defer { client.close() }
        let (tuples, rest) = FeedbackTuple.decodeAll(try client.readToEnd())
        guard rest.isEmpty else {
            throw FeedbackClientError(message: "the feedback service ended inside a tuple (\(rest.count) stray bytes)")
        }
        return tuples
    }
}

/// A feedback read that did not end with whole tuples.
public struct FeedbackClientError: Error, Sendable, CustomStringConvertible {
    /// What was wrong.
    public let message: String
    public var description: String { message }
}
