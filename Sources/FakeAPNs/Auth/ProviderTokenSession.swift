#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The provider-token state of one HTTP/2 connection: the token it currently holds and the
/// team its first accepted token bound it to. A pure value; the connection owns it and passes
/// the time in.
///
/// Rules, after the token itself verifies (``ProviderTokenVerifier``):
/// - The first accepted token binds the connection to its team. A later token from another
///   team is ``APNsReason/invalidProviderToken``, as Apple documents ("the first push binds the
///   connection to a team") and as Pushy's mock answers. Another key of the same team is
///   accepted: Apple's ``APNsReason/unrelatedKeyIdInToken`` is for keys unrelated to the first
///   one, and keys of one team are related.
/// - Sending the same token string again is never an update, however much later.
/// - A different token whose `iat` is less than ``minimumRefreshInterval`` (20 minutes) after
///   the `iat` of the token the connection holds is ``APNsReason/tooManyProviderTokenUpdates``,
///   and the connection keeps its token. Apple words the rule as "recreating" tokens, so it is
///   measured between issue times, not between arrivals: a client that shares one token among
///   connections and opens a connection late in the token's life can still refresh on time.
///   A token re-signed within the same 20 minutes (a new token per request) is refused.
struct ProviderTokenSession: Sendable {
    /// The least time between the `iat`s of two tokens used on one connection.
    static let minimumRefreshInterval: TimeInterval = 20 * 60

    /// The token (without `bearer `) the connection currently holds, if any was accepted.
    private(set) var currentToken: String?
    /// The claims of ``currentToken``.
    private(set) var currentClaims: ProviderTokenClaims?
    /// The team the first accepted token bound the connection to.
    private(set) var boundTeamID: String?

    /// Verifies `authorization` with `verifier` at `now`, then applies the connection's rules;
    /// on success the token becomes the connection's current token.
    mutating func authenticate(
        authorization: String?, verifier: ProviderTokenVerifier, now: Date
    ) -> Result<ProviderTokenClaims, ProviderTokenFailure> {
        Result { () throws(ProviderTokenFailure) in
            let verified = try verifier.verifiedToken(authorization: authorization, now: now)
            try admit(token: verified.token, claims: verified.claims)
            return verified.claims
        }
    }

    /// Applies the connection's rules to a token that has already verified.
    mutating func admit(token: String, claims: ProviderTokenClaims) throws(ProviderTokenFailure) {
        if let boundTeamID, claims.teamID != boundTeamID {
            throw ProviderTokenFailure(
                .invalidProviderToken,
                "the token is for team \(claims.teamID), but the first push bound this connection to team "
                    + "\(boundTeamID); open a new connection"
            )
        }
        if token == currentToken { return }
        if let currentClaims {
            let interval = claims.issuedAt.timeIntervalSince(currentClaims.issuedAt)
            guard interval >= Self.minimumRefreshInterval else {
                let seconds = wholeNumber(interval)
                throw ProviderTokenFailure(
                    .tooManyProviderTokenUpdates,
                    "the token was issued \(seconds) \(seconds == "1" ? "second" : "seconds") after the one this connection holds; "
                        + "refresh tokens at most every 20 minutes"
                )
            }
        }
        boundTeamID = claims.teamID
        currentToken = token
        currentClaims = claims
    }
}
