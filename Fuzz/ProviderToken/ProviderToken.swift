// libFuzzer target: provider tokens (JWT), `ProviderTokenVerifier` and `ProviderTokenSession`.
//
// The input is text: each line is one request's `authorization` header value, sent in turn on
// one HTTP/2 connection (an empty input is a request without the header). Every line is
// verified on its own and through the connection's session, at the fixed time
// 2023-11-14T22:13:20Z (UNIX 1700000000), against the built-in test key (ABC123DEFG, team
// DEF123GHIJ) and a second key with the same public key (OTHERKEY01, team OTHERTEAM1), so the
// seeds, real tokens signed with the test private key (by `ProviderTokenSigner.sign`, and by
// `openssl dgst` for the fractional and string `iat` forms it does not write), verify.
//
// Invariants: verification never traps; a failure is Missing/Invalid/ExpiredProviderToken with
// a detail; a success names a trusted key and its team, with an iat from an hour ago to a
// minute ahead, and the same token is expired an hour and a second after its iat and invalid
// more than a minute before it; the session refuses what the verifier refuses, for the same
// reason, and otherwise only for another team (InvalidProviderToken) or a refresh under 20
// minutes after it first saw the token it holds (TooManyProviderTokenUpdates: at one fixed time,
// every new token), keeping its state when it refuses.

import Foundation
@testable import FakeAPNs

private let now = Date(timeIntervalSince1970: 1_700_000_000)
private let otherKey: JWTSigningKey = {
    do {
        return try JWTSigningKey(
            keyID: "OTHERKEY01", teamID: "OTHERTEAM1", publicKeyPEM: TestCertificates.jwtPublicKeyPEM)
    } catch {
        fatalError("the second key does not load: \(error)")
    }
}()
private let verifier = ProviderTokenVerifier(keys: [.test, otherKey])
private let teams = [JWTSigningKey.test.keyID: JWTSigningKey.test.teamID, otherKey.keyID: otherKey.teamID]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let input = count > 0 ? Array(UnsafeRawBufferPointer(start: start, count: count)) : []
    var session = ProviderTokenSession()
    if input.isEmpty {
        check(nil, session: &session)
        return 0
    }
    for line in input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).prefix(16) {
        check(String(decoding: line, as: UTF8.self), session: &session)
    }
    return 0
}

private func check(_ authorization: String?, session: inout ProviderTokenSession) {
    let alone = verifier.verify(authorization: authorization, now: now)
    let before = session
    let inSession = session.authenticate(authorization: authorization, verifier: verifier, now: now)
    let unchanged = session.currentToken == before.currentToken && session.currentClaims == before.currentClaims
        && session.boundTeamID == before.boundTeamID

    switch alone {
    case .failure(let failure):
        require(
            [.missingProviderToken, .invalidProviderToken, .expiredProviderToken].contains(failure.reason)
                && !failure.detail.isEmpty, "verify failed with \(failure)")
        if authorization == nil { require(failure.reason == .missingProviderToken, "no header gave \(failure)") }
        guard case .failure(let again) = inSession, again == failure else {
            fatalError("ProviderToken invariant: the session answers \(inSession), the verifier \(failure)")
        }
        require(unchanged, "the session changed on a refused token")
    case .success(let claims):
        require(teams[claims.keyID] == claims.teamID, "verified for key \(claims.keyID) team \(claims.teamID)")
        let age = now.timeIntervalSince(claims.issuedAt)
        require(age >= -ProviderTokenVerifier.defaultClockSkew && age <= 3600, "verified a token \(age) s old")
        let expired = verifier.verify(authorization: authorization, now: claims.issuedAt.addingTimeInterval(3601))
        require(failureReason(expired) == .expiredProviderToken, "an hour later: \(expired)")
        let early = verifier.verify(authorization: authorization, now: claims.issuedAt.addingTimeInterval(-61))
        require(failureReason(early) == .invalidProviderToken, "a minute before: \(early)")
        let token: String
        do {
            token = try verifier.verifiedToken(authorization: authorization, now: now).token
        } catch {
            fatalError("ProviderToken invariant: verify accepts what verifiedToken refuses: \(error)")
        }
        switch inSession {
        case .success(let sessionClaims):
            require(sessionClaims == claims, "the session's claims differ")
            if let team = before.boundTeamID { require(team == claims.teamID, "team \(team) took \(claims.teamID)") }
            if let held = before.currentFirstSeen, before.currentToken != token {
                let interval = now.timeIntervalSince(held)
                require(interval >= ProviderTokenSession.minimumRefreshInterval, "a refresh after \(interval) s")
            }
            require(
                session.currentToken == token && session.currentClaims == claims
                    && session.boundTeamID == claims.teamID, "the session did not take the token")
        case .failure(let failure):
            switch failure.reason {
            case .invalidProviderToken:
                require(before.boundTeamID != nil && before.boundTeamID != claims.teamID, "session refused: \(failure)")
            case .tooManyProviderTokenUpdates:
                require(before.currentToken != nil && before.currentToken != token, "session refused: \(failure)")
            default:
                require(false, "the session refused a verified token: \(failure)")
            }
            require(unchanged, "the session changed on a refused token")
        }
    }
}

private func failureReason(_ result: Result<ProviderTokenClaims, ProviderTokenFailure>) -> APNsReason? {
    if case .failure(let failure) = result { return failure.reason }
    return nil
}

private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("ProviderToken invariant: \(message())") }
}
