/// Who sent a push, as the sender audit names it: who authenticated (the provider token's team
/// and key, or the client certificate's subject), else the client's address without its port.
///
/// The text is what the sender report's `sender` field and its `?sender=` filter read:
/// `token:TEAMID:KEYID`, `certificate:SUBJECT` or `address:127.0.0.1`.
public struct PushSender: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// `token:TEAMID:KEYID`, `certificate:SUBJECT` or `address:HOST`.
    public let description: String

    /// The sender named by `text`, as the report writes it.
    public init(_ text: String) { description = text }

    /// The sender named by `value`, as the report writes it.
    public init(stringLiteral value: String) { description = value }

    /// The sender with this provider token.
    package init(token claims: ProviderTokenClaims) {
        description = "token:\(claims.teamID):\(claims.keyID)"
    }

    /// The sender of a connection whose pushes said nothing of who sent them: its client
    /// certificate's subject, else its address without the port.
    package init(connection: ConnectionInfo) {
        if let certificate = connection.clientCertificate {
            description = "certificate:\(certificate.subject)"
        } else {
            description = "address:\(Self.host(of: connection.peer))"
        }
    }

    /// The sender of a push: its provider token's, else its connection's.
    package init(claims: ProviderTokenClaims?, connection: ConnectionInfo) {
        if let claims { self.init(token: claims) } else { self.init(connection: connection) }
    }

    /// Whether a report filtered by `filter` shows this sender: the same text, or `filter`
    /// followed by `:` (`token:TEAMID` matches every key of the team).
    public func matches(_ filter: String) -> Bool {
        description == filter || (description.hasPrefix(filter) && description.dropFirst(filter.count).first == ":")
    }

    /// "127.0.0.1:53122" → "127.0.0.1", "[::1]:53122" → "::1".
    static func host(of peer: String) -> String {
        if peer.hasPrefix("["), let close = peer.firstIndex(of: "]") {
            return String(peer[peer.index(after: peer.startIndex)..<close])
        }
        guard let colon = peer.lastIndex(of: ":") else { return peer }
        return String(peer[..<colon])
    }
}
