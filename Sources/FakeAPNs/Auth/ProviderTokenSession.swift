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
/// - A different token that the server first saw less than ``minimumRefreshInterval``
///   (20 minutes) after it first saw the token the connection holds, both on the server's clock
///   (``ProviderTokenSightings``), is ``APNsReason/tooManyProviderTokenUpdates``, and the
///   connection keeps its token. The times the server first saw the tokens are compared, not
///   their `iat`s (which are real time, and stay so when a test moves the server's clock), nor
///   their arrivals on this connection: a client that shares one token among connections and
///   opens a connection late in the token's life can still refresh on time. A token re-signed
///   within the same 20 minutes (a new token per request) is refused. A token first seen
///   before the one the connection holds (the clock was set back between them) is not a
///   refresh too early.
struct ProviderTokenSession: Sendable {
    /// The least time between the first sightings of two tokens used on one connection.
    static let minimumRefreshInterval: TimeInterval = 20 * 60

    /// The token (without `bearer `) the connection currently holds, if any was accepted.
    private(set) var currentToken: String?
    /// The claims of ``currentToken``.
    private(set) var currentClaims: ProviderTokenClaims?
    /// The team the first accepted token bound the connection to.
    private(set) var boundTeamID: String?
    /// When the server's clock first saw ``currentToken``.
    private(set) var currentFirstSeen: Date?

    /// Verifies `authorization` with `verifier` at `now`, then applies the connection's rules,
    /// as a connection on its own whose clock reads `now`: a token it does not hold is first
    /// seen at `now`. On success the token becomes the connection's current token.
    mutating func authenticate(
        authorization: String?, verifier: ProviderTokenVerifier, now: Date
    ) -> Result<ProviderTokenClaims, ProviderTokenFailure> {
        Result { () throws(ProviderTokenFailure) in
            let verified = try verifier.verifiedToken(authorization: authorization, now: now)
            let firstSeen = verified.token == currentToken ? currentFirstSeen ?? now : now
            try admit(token: verified.token, claims: verified.claims, firstSeen: firstSeen)
            return verified.claims
        }
    }

    /// Verifies `authorization` with `verifier`, a token the server has not seen at the real
    /// time and a known one at its age on the server's clock (``ProviderTokenSightings``), then
    /// applies the connection's rules; on success the token becomes the connection's current
    /// token.
    mutating func authenticate(
        authorization: String?, verifier: ProviderTokenVerifier, sightings: ProviderTokenSightings
    ) -> Result<ProviderTokenClaims, ProviderTokenFailure> {
        Result { () throws(ProviderTokenFailure) in
            var known: Date?
            let verified = try verifier.verifiedToken(authorization: authorization) { token in
                let time = sightings.judgingTime(for: token)
                known = time.firstSeen
                return time.at
            }
            let firstSeen = known ?? sightings.record(verified.token, claims: verified.claims, real: verified.judgedAt)
            try admit(token: verified.token, claims: verified.claims, firstSeen: firstSeen)
            return verified.claims
        }
    }

    /// Applies the connection's rules to a token that has already verified, which the server's
    /// clock first saw at `firstSeen`.
    mutating func admit(token: String, claims: ProviderTokenClaims, firstSeen: Date) throws(ProviderTokenFailure) {
        if let boundTeamID, claims.teamID != boundTeamID {
            throw ProviderTokenFailure(
                .invalidProviderToken,
                "the token is for team \(claims.teamID), but the first push bound this connection to team "
                    + "\(boundTeamID); open a new connection"
            )
        }
        if token == currentToken { return }
        if let currentFirstSeen {
            let interval = firstSeen.timeIntervalSince(currentFirstSeen)
            guard interval < 0 || interval >= Self.minimumRefreshInterval else {
                let seconds = wholeNumber(interval)
                throw ProviderTokenFailure(
                    .tooManyProviderTokenUpdates,
                    "the server first saw the token \(seconds) \(seconds == "1" ? "second" : "seconds") after the one "
                        + "this connection holds, by its clock; refresh tokens at most every 20 minutes"
                )
            }
        }
        boundTeamID = claims.teamID
        currentToken = token
        currentClaims = claims
        currentFirstSeen = firstSeen
    }
}
