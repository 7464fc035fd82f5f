#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a verified JWT provider token said: which key signed it, for which team, and when.
public struct ProviderTokenClaims: Sendable, Hashable, CustomStringConvertible {
    /// The `kid` of the token's header: the 10-character key ID.
    public let keyID: String
    /// The `iss` claim: the 10-character team ID.
    public let teamID: String
    /// The `iat` claim, in whole seconds: a fraction the client sent is truncated. Within
    /// ``UnixTime/range``: a later `iat` is refused.
    public let issuedAt: Date

    /// Claims as verified.
    package init(keyID: String, teamID: String, issuedAt: Date) {
        self.keyID = keyID
        self.teamID = teamID
        self.issuedAt = issuedAt
    }

    /// The key, the team and `iat` in UNIX seconds.
    public var description: String { "key \(keyID) team \(teamID) iat \(UnixTime(clamping: issuedAt))" }
}
