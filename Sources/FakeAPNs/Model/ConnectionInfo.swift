/// The connection a notification came over. One instance is shared by every notification of
/// a connection.
public final class ConnectionInfo: Sendable, Hashable, CustomStringConvertible {
    /// A number unique among the connections of one server, from 1.
    public let id: Int
    /// The client's address, "127.0.0.1:53122" or "[::1]:53122".
    public let peer: String
    /// The verified client certificate, when the client sent one.
    public let clientCertificate: ClientCertificateInfo?
    /// The TLS version negotiated, e.g. "TLSv1.3"; empty on the plaintext listener.
    public let tlsVersion: String
    /// How the connection carried its bytes: TLS, or on the plaintext listener HTTP/1.1 or
    /// cleartext HTTP/2.
    public let transport: ConnectionTransport

    /// A connection record.
    package init(
        id: Int, peer: String, clientCertificate: ClientCertificateInfo? = nil, tlsVersion: String = "",
        transport: ConnectionTransport = .tls
    ) {
        self.id = id
        self.peer = peer
        self.clientCertificate = clientCertificate
        self.tlsVersion = tlsVersion
        self.transport = transport
    }

    /// The same connection, now known to carry `transport` (a plaintext connection says which
    /// protocol once its first bytes arrive).
    package func carrying(_ transport: ConnectionTransport) -> ConnectionInfo {
        ConnectionInfo(
            id: id, peer: peer, clientCertificate: clientCertificate, tlsVersion: tlsVersion, transport: transport)
    }

    /// "connection 3 from 127.0.0.1:53122".
    public var description: String { "connection \(id) from \(peer)" }

    /// The same connection: the same id and peer.
    public static func == (lhs: ConnectionInfo, rhs: ConnectionInfo) -> Bool {
        lhs.id == rhs.id && lhs.peer == rhs.peer
    }

    /// Hashes the id, which tells connections of one server apart.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
    }
}

/// How a connection carried its bytes.
public enum ConnectionTransport: String, Sendable, Hashable, CaseIterable {
    /// TLS, as Apple's servers speak: every listener but the plaintext one.
    case tls
    /// The plaintext listener, before the client's first bytes said which protocol it speaks.
    case plaintext
    /// HTTP/1.1 on the plaintext listener.
    case http1 = "http/1.1"
    /// Cleartext HTTP/2 on the plaintext listener: with prior knowledge, or after
    /// `Upgrade: h2c`.
    case h2c
}
