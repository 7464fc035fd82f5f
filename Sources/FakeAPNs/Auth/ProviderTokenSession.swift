#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The provider-token state of one HTTP/2 connection: the token it currently holds, the team
/// and the key its first accepted token bound it to. A pure value; the connection owns it and
/// passes the time, the request's topic and the server's environment in.
///
/// Rules, after the token itself verifies (``ProviderTokenVerifier``), in this order:
/// - A key not valid for the server's environment (``JWTSigningKey/environments``) is
///   refused with ``ProviderTokenVerifier/badEnvironmentReason``: `BadEnvironmentKeyInToken` by
///   default, the spelling APNs was seen to send (APNSwift PR #229, 2025); Apple's pages spell
///   it ``APNsReason/badEnvironmentKeyIdInToken``.
/// - The first accepted token binds the connection to its team. A later token from another
///   team is ``APNsReason/invalidProviderToken``, as Apple documents ("the first push binds the
///   connection to a team") and as Pushy's mock answers.
/// - The first accepted token also binds the connection to its key. A later key must be
///   related to it (`JWTSigningKey.isRelated(to:)`): the same key, the related key a
///   topic-specific key names, or, when neither is topic-specific, any key of the team. Else
///   ``APNsReason/unrelatedKeyIdInToken``, as Apple documents for a topic-specific key followed
///   by an unrelated topic-specific key or a team-scoped one, and for a team-scoped key followed
///   by a topic-specific one.
/// - A topic-specific key's token for a topic it does not list is ``APNsReason/topicDisallowed``
///   (Apple documents the refusal but names no reason: this one is the project's choice).
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
/// - With ``ProviderTokenVerifier/expiredTokenWedgesConnection`` (off by default), once the
///   connection was answered ``APNsReason/expiredProviderToken``, every later request is
///   answered the same until the client reconnects, as Pushy's maintainers saw APNs do
///   (jchambers/pushy PR #783).
struct ProviderTokenSession: Sendable {
    /// The least time between the first sightings of two tokens used on one connection.
    static let minimumRefreshInterval: TimeInterval = 20 * 60

    /// The token (without `bearer `) the connection currently holds, if any was accepted.
    private(set) var currentToken: String?
    /// The claims of ``currentToken``.
    private(set) var currentClaims: ProviderTokenClaims?
    /// The trusted key of ``currentToken``.
    private(set) var currentKey: JWTSigningKey?
    /// The team the first accepted token bound the connection to.
    private(set) var boundTeamID: String?
    /// The key of the first accepted token: later keys must be related to it.
    private(set) var boundKey: JWTSigningKey?
    /// When the server's clock first saw ``currentToken``.
    private(set) var currentFirstSeen: Date?
    /// Whether the connection was answered `ExpiredProviderToken` with
    /// ``ProviderTokenVerifier/expiredTokenWedgesConnection`` on: it stays so until it closes.
    private(set) var isWedgedByExpiry = false

    /// Verifies `authorization` with `verifier` at `now`, then applies the connection's rules,
    /// as a connection on its own whose clock reads `now`: a token it does not hold is first
    /// seen at `now`. `topic` and `environment` are the request's topic and the server's
    /// environment; nil skips their rules. On success the token becomes the connection's
    /// current token.
    mutating func authenticate(
        authorization: String?, verifier: ProviderTokenVerifier, now: Date, topic: String? = nil,
        environment: PushEnvironment? = nil
    ) -> Result<ProviderTokenClaims, ProviderTokenFailure> {
        wedgingOnExpiry(verifier) { session throws(ProviderTokenFailure) in
            let verified = try verifier.verifiedToken(authorization: authorization, now: now)
            let firstSeen = verified.token == session.currentToken ? session.currentFirstSeen ?? now : now
            try session.admit(
                token: verified.token, claims: verified.claims, firstSeen: firstSeen, verifier: verifier, topic: topic,
                environment: environment)
            return verified.claims
        }
    }

    /// Verifies `authorization` with `verifier`, a token the server has not seen at the real
    /// time and a known one at its age on the server's clock (``ProviderTokenSightings``), then
    /// applies the connection's rules for a request to `topic` on a server playing
    /// `environment`; on success the token becomes the connection's current token.
    mutating func authenticate(
        authorization: String?, verifier: ProviderTokenVerifier, sightings: ProviderTokenSightings,
        topic: String?, environment: PushEnvironment
    ) -> Result<ProviderTokenClaims, ProviderTokenFailure> {
        wedgingOnExpiry(verifier) { session throws(ProviderTokenFailure) in
            var known: Date?
            let verified = try verifier.verifiedToken(authorization: authorization) { token in
                let time = sightings.judgingTime(for: token)
                known = time.firstSeen
                return time.at
            }
            let firstSeen = known ?? sightings.record(verified.token, claims: verified.claims, real: verified.judgedAt)
            try session.admit(
                token: verified.token, claims: verified.claims, firstSeen: firstSeen, verifier: verifier, topic: topic,
                environment: environment)
            return verified.claims
        }
    }

    /// `check` run on this session, unless an earlier `ExpiredProviderToken` wedged it; with
    /// ``ProviderTokenVerifier/expiredTokenWedgesConnection`` on, an `ExpiredProviderToken`
    /// from `check` wedges it.
    private mutating func wedgingOnExpiry(
        _ verifier: ProviderTokenVerifier,
        _ check: (inout ProviderTokenSession) throws(ProviderTokenFailure) -> ProviderTokenClaims
    ) -> Result<ProviderTokenClaims, ProviderTokenFailure> {
        if isWedgedByExpiry {
            return .failure(ProviderTokenFailure(
                .expiredProviderToken,
                "this connection was answered ExpiredProviderToken before and stays so until the client reconnects"))
        }
        let result = Result { () throws(ProviderTokenFailure) in try check(&self) }
        if case .failure(let failure) = result, failure.reason == .expiredProviderToken,
            verifier.expiredTokenWedgesConnection
        {
            isWedgedByExpiry = true
        }
        return result
    }

    /// Applies the connection's rules to a token that has already verified, which the server's
    /// clock first saw at `firstSeen`, for a request to `topic` on a server playing
    /// `environment` (nil: those rules are skipped).
    mutating func admit(
        token: String, claims: ProviderTokenClaims, firstSeen: Date, verifier: ProviderTokenVerifier,
        topic: String? = nil, environment: PushEnvironment? = nil
    ) throws(ProviderTokenFailure) {
        if token == currentToken, let currentKey {
            // Admitted before: only the topic is new.
            try Self.check(topic, for: currentKey)
            return
        }
        guard let key = verifier.keys[claims.keyID] else {
            throw ProviderTokenFailure(
                .invalidProviderToken, "the token's kid \(claims.keyID) is not a key this server trusts")
        }
        if let environment, !key.environments.contains(environment) {
            let environments = key.environments.map(\.rawValue).sorted().joined(separator: " and ")
            throw ProviderTokenFailure(
                verifier.badEnvironmentReason,
                "key \(key.keyID) is for \(environments); this server plays \(environment)")
        }
        if let boundTeamID, claims.teamID != boundTeamID {
            throw ProviderTokenFailure(
                .invalidProviderToken,
                "the token is for team \(claims.teamID), but the first push bound this connection to team "
                    + "\(boundTeamID); open a new connection"
            )
        }
        if let boundKey, !boundKey.isRelated(to: key) {
            throw ProviderTokenFailure(
                .unrelatedKeyIdInToken,
                "the first push bound this connection to \(Self.kind(of: boundKey)) \(boundKey.keyID); "
                    + "\(Self.kind(of: key)) \(key.keyID) is not related to it; open a new connection"
            )
        }
        try Self.check(topic, for: key)
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
        if boundKey == nil { boundKey = key }
        currentToken = token
        currentClaims = claims
        currentKey = key
        currentFirstSeen = firstSeen
    }

    /// Throws `TopicDisallowed` when `key` is topic-specific and does not list `topic`.
    private static func check(_ topic: String?, for key: JWTSigningKey) throws(ProviderTokenFailure) {
        guard let topic, !key.allows(topic: topic) else { return }
        let listed = (key.topics ?? []).sorted().prefix(5).joined(separator: ", ")
        let more = (key.topics?.count ?? 0) > 5 ? ", …" : ""
        throw ProviderTokenFailure(
            .topicDisallowed, "topic \(topic) is not among the topics of key \(key.keyID) (\(listed)\(more))")
    }

    /// "topic-specific key" or "team-scoped key", for messages.
    private static func kind(of key: JWTSigningKey) -> String {
        key.isTopicSpecific ? "topic-specific key" : "team-scoped key"
    }
}
