import FakeAPNsTestSupport
import Foundation
import XCTest

// Reads internals on purpose: ProviderTokenSession and the verifier's answers, the rules themselves.
@testable import FakeAPNs

/// Keys limited to an environment and to topics (Apple's keys since February 2025), and a
/// connection that stays unusable after `ExpiredProviderToken`: the connection's rules, one
/// session in memory, no socket.
final class KeyScopeTests: XCTestCase {
    private static let now = Date(timeIntervalSince1970: 1_700_000_000)
    private static let teamID = TestCertificates.jwtTeamID
    private static let app = "com.example.app"

    /// A key of the test team under `keyID`, signed with the test private key.
    private static func key(_ keyID: String) throws -> JWTSigningKey {
        try JWTSigningKey(keyID: keyID, teamID: teamID, privateKeyPEM: TestCertificates.jwtSigningKeyPEM)
    }

    private static func bearer(_ keyID: String, issuedAt: Date = now) throws -> String {
        "bearer " + (try ProviderTokenSigner.sign(keyID: keyID, teamID: teamID, issuedAt: issuedAt))
    }

    /// The token of each key and time signed so far: a client sends one token until it refreshes it.
    private var signed: [String: String] = [:]

    /// The reason `session` answers the token of `keyID` issued `at` for `topic` on a server
    /// playing `environment`; nil when accepted.
    private func reason(
        _ session: inout ProviderTokenSession, _ verifier: ProviderTokenVerifier, _ keyID: String,
        topic: String = app, environment: PushEnvironment = .production, at time: Date = now
    ) throws -> String? {
        let name = "\(keyID)@\(time.timeIntervalSince1970)"
        let authorization = try signed[name] ?? Self.bearer(keyID, issuedAt: time)
        signed[name] = authorization
        let result = session.authenticate(
            authorization: authorization, verifier: verifier, now: time, topic: topic, environment: environment)
        if case .failure(let failure) = result { return failure.reason.rawValue }
        return nil
    }

    /// A verifier trusting a team-scoped key TEAMKEY001 for production, another TEAMKEY002 for
    /// both, a topic-specific key TOPICKEY01 for production and `com.example.app` related to
    /// RELATEDK01 (topic-specific, `com.example.other`), and an unrelated topic key TOPICKEY02.
    private static func verifier() throws -> ProviderTokenVerifier {
        ProviderTokenVerifier(keys: [
            try key("TEAMKEY001").scoped(to: [.production]),
            try key("TEAMKEY002"),
            try key("TOPICKEY01").scoped(to: [.production], topics: [app], relatedKeyID: "RELATEDK01"),
            try key("RELATEDK01").scoped(to: [.production], topics: ["com.example.other"]),
            try key("TOPICKEY02").scoped(to: [.production], topics: [app]),
        ])
    }

    // MARK: - Scopes on the key

    func testAKeyIsUnscopedUntilScoped() throws {
        let key = try Self.key("ABC123DEFG")
        XCTAssertEqual(key.environments, [.sandbox, .production])
        XCTAssertNil(key.topics)
        XCTAssertTrue(key.allows(topic: "anything.at.all"))
        let scoped = try key.scoped(to: [.sandbox], topics: [Self.app])
        XCTAssertNotEqual(key, scoped, "the scope is part of a key's identity")
        XCTAssertTrue(scoped.allows(topic: Self.app))
        XCTAssertTrue(scoped.allows(topic: "com.example.app.voip"), "a push type's suffix is allowed after a topic")
        XCTAssertTrue(scoped.allows(topic: "com.example.app.push-type.liveactivity"))
        XCTAssertFalse(scoped.allows(topic: "com.example.other"))
        XCTAssertFalse(scoped.allows(topic: "com.example.other.voip"))
    }

    func testImpossibleScopesAreRefusedWithTheirReason() throws {
        let key = try Self.key("ABC123DEFG")
        XCTAssertThrowsError(try key.scoped(to: [])) { XCTAssertTrue("\($0)".contains("no environment")) }
        XCTAssertThrowsError(try key.scoped(to: [.sandbox], topics: [])) { XCTAssertTrue("\($0)".contains("no topic")) }
        let tooMany = Set((0...JWTSigningKey.maximumTopicCount).map { "com.example.app\($0)" })
        XCTAssertThrowsError(try key.scoped(to: [.sandbox], topics: tooMany)) {
            XCTAssertTrue("\($0)".contains("401 topics"))
        }
        XCTAssertThrowsError(try key.scoped(to: [.sandbox], relatedKeyID: "OTHERKEY01")) {
            XCTAssertTrue("\($0)".contains("only a topic-specific key"))
        }
        XCTAssertThrowsError(try key.scoped(to: [.sandbox], topics: [Self.app], relatedKeyID: "ABC123DEFG")) {
            XCTAssertTrue("\($0)".contains("another key"))
        }
    }

    // MARK: - Environment

    func testAKeyForTheOtherEnvironmentIsBadEnvironmentKeyInTokenAsAPNsWasSeenToSpellIt() throws {
        var session = ProviderTokenSession()
        let verifier = try Self.verifier()
        XCTAssertEqual(try reason(&session, verifier, "TEAMKEY001", environment: .sandbox), "BadEnvironmentKeyInToken")
        XCTAssertNil(session.currentToken, "a refused token binds nothing")
        XCTAssertNil(
            try reason(&session, verifier, "TEAMKEY002", environment: .sandbox), "an unscoped key works in both")
        var production = ProviderTokenSession()
        XCTAssertNil(try reason(&production, verifier, "TEAMKEY001", environment: .production))
    }

    func testTheDocumentedSpellingIsASetting() throws {
        var verifier = try Self.verifier()
        verifier.badEnvironmentReason = .badEnvironmentKeyIdInToken
        var session = ProviderTokenSession()
        XCTAssertEqual(
            try reason(&session, verifier, "TOPICKEY01", environment: .sandbox), "BadEnvironmentKeyIdInToken")
        XCTAssertEqual(APNsReason.badEnvironmentKeyIdInToken.status, 403)
    }

    // MARK: - Topics

    func testATopicOutsideATopicSpecificKeysListIsTopicDisallowed() throws {
        var session = ProviderTokenSession()
        let verifier = try Self.verifier()
        XCTAssertEqual(try reason(&session, verifier, "TOPICKEY01", topic: "com.example.other"), "TopicDisallowed")
        XCTAssertNil(try reason(&session, verifier, "TOPICKEY01"))
        XCTAssertNil(try reason(&session, verifier, "TOPICKEY01", topic: "com.example.app.voip"))
        XCTAssertEqual(
            try reason(&session, verifier, "TOPICKEY01", topic: "com.example.other"), "TopicDisallowed",
            "the token the connection holds is still checked against each request's topic")
    }

    func testATeamScopedKeyPushesToAnyTopic() throws {
        var session = ProviderTokenSession()
        XCTAssertNil(try reason(&session, try Self.verifier(), "TEAMKEY001", topic: "com.example.anything"))
    }

    // MARK: - Key switches

    func testAnUnrelatedTopicSpecificKeyAfterATopicSpecificOneIsUnrelatedKeyIdInToken() throws {
        var session = ProviderTokenSession()
        let verifier = try Self.verifier()
        XCTAssertNil(try reason(&session, verifier, "TOPICKEY01"))
        XCTAssertEqual(try reason(&session, verifier, "TOPICKEY02", at: Self.now + 1200), "UnrelatedKeyIdInToken")
        XCTAssertEqual(session.currentKey?.keyID, "TOPICKEY01", "the connection keeps its key")
    }

    func testATeamScopedKeyAfterATopicSpecificOneIsUnrelatedKeyIdInToken() throws {
        var session = ProviderTokenSession()
        let verifier = try Self.verifier()
        XCTAssertNil(try reason(&session, verifier, "TOPICKEY01"))
        XCTAssertEqual(try reason(&session, verifier, "TEAMKEY001", at: Self.now + 1200), "UnrelatedKeyIdInToken")
    }

    func testATopicSpecificKeyAfterATeamScopedOneIsUnrelatedKeyIdInToken() throws {
        var session = ProviderTokenSession()
        let verifier = try Self.verifier()
        XCTAssertNil(try reason(&session, verifier, "TEAMKEY001"))
        XCTAssertEqual(try reason(&session, verifier, "TOPICKEY01", at: Self.now + 1200), "UnrelatedKeyIdInToken")
    }

    func testTheRelatedKeyIsAcceptedEitherWayWithItsOwnTopics() throws {
        let verifier = try Self.verifier()
        var session = ProviderTokenSession()
        XCTAssertNil(try reason(&session, verifier, "TOPICKEY01"))
        XCTAssertEqual(
            try reason(&session, verifier, "RELATEDK01", at: Self.now + 1200), "TopicDisallowed",
            "the related key pushes to its own topics only")
        XCTAssertNil(try reason(&session, verifier, "RELATEDK01", topic: "com.example.other", at: Self.now + 1200))
        var reverse = ProviderTokenSession()
        XCTAssertNil(try reason(&reverse, verifier, "RELATEDK01", topic: "com.example.other"))
        XCTAssertNil(
            try reason(&reverse, verifier, "TOPICKEY01", at: Self.now + 1200),
            "a key that names the first key as its related key is related to it")
    }

    func testAKeyOfTheOtherEnvironmentAfterAFirstPushIsBadEnvironmentKeyInToken() throws {
        var verifier = try Self.verifier()
        verifier = ProviderTokenVerifier(
            keys: Array(verifier.keys.values) + [try Self.key("SANDBOXK01").scoped(to: [.sandbox])])
        for first in ["TOPICKEY01", "TEAMKEY001"] {
            var session = ProviderTokenSession()
            XCTAssertNil(try reason(&session, verifier, first))
            XCTAssertEqual(
                try reason(&session, verifier, "SANDBOXK01", at: Self.now + 1200), "BadEnvironmentKeyInToken",
                "after \(first)")
        }
    }

    func testUnscopedKeysOfOneTeamStillFollowEachOther() throws {
        var session = ProviderTokenSession()
        let verifier = try Self.verifier()
        XCTAssertNil(try reason(&session, verifier, "TEAMKEY001"))
        XCTAssertNil(try reason(&session, verifier, "TEAMKEY002", at: Self.now + 1200))
    }

    // MARK: - After ExpiredProviderToken

    func testByDefaultAFreshTokenRecoversAConnectionAfterExpiredProviderToken() throws {
        var session = ProviderTokenSession()
        let verifier = try Self.verifier()
        let stale = session.authenticate(
            authorization: try Self.bearer("TEAMKEY002", issuedAt: Self.now - 3601), verifier: verifier, now: Self.now)
        XCTAssertEqual(try? stale.get(), nil)
        XCTAssertNil(try reason(&session, verifier, "TEAMKEY002"))
        XCTAssertFalse(session.isWedgedByExpiry)
    }

    func testWithTheSettingAConnectionStaysExpiredUntilTheClientReconnects() throws {
        var verifier = try Self.verifier()
        verifier.expiredTokenWedgesConnection = true
        var session = ProviderTokenSession()
        XCTAssertNil(try reason(&session, verifier, "TEAMKEY002"))
        XCTAssertEqual(try reason(&session, verifier, "TEAMKEY002", at: Self.now + 1200), nil)
        let stale = session.authenticate(
            authorization: try Self.bearer("TEAMKEY002", issuedAt: Self.now), verifier: verifier, now: Self.now + 3601)
        guard case .failure(let failure) = stale else { return XCTFail("an hour-old token was accepted") }
        XCTAssertEqual(failure.reason, .expiredProviderToken)
        XCTAssertTrue(session.isWedgedByExpiry)
        XCTAssertEqual(
            try reason(&session, verifier, "TEAMKEY002", at: Self.now + 3601), "ExpiredProviderToken",
            "a fresh token on the same connection is still refused")
        var reconnected = ProviderTokenSession()
        XCTAssertNil(try reason(&reconnected, verifier, "TEAMKEY002", at: Self.now + 3601))
    }
}
