/// The connection a notification came over. One instance is shared by every notification of
/// a connection.
public final class ConnectionInfo: Sendable, Hashable, CustomStringConvertible {
    /// A number unique among the connections of one server, from 1.
    public let id: Int
    /// The client's address, "127.0.0.1:53122" or "[::1]:53122".
    public let peer: String
    /// The verified client certificate, when the client sent one.
    public let clientCertificate: ClientCertificateInfo?
    /// The TLS version negotiated, e.g. "TLSv1.3".
    public let tlsVersion: String

    /// A connection record.
    package init(id: Int, peer: String, clientCertificate: ClientCertificateInfo? = nil, tlsVersion: String = "") {
        self.id = id
        self.peer = peer
        self.clientCertificate = clientCertificate
        self.tlsVersion = tlsVersion
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
