import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

/// Scoped keys, the per-token rate and the connection wedged after `ExpiredProviderToken`, on
/// the wire, with clients the project did not write (curl, python3-h2) and tokens the test signs.
final class KeyScopeWireTests: XCTestCase {
    private let fixture = ServerFixture()
    private var server: FakeAPNsServer { fixture.server }

    private static func key(_ keyID: String) throws -> JWTSigningKey {
        try JWTSigningKey(
            keyID: keyID, teamID: TestCertificates.jwtTeamID, privateKeyPEM: TestCertificates.jwtSigningKeyPEM)
    }

    /// The token of each key signed so far: a client sends one token until it refreshes it.
    private var signed: [String: String] = [:]

    /// A push to the fixture token for `topic`, carrying the token of `keyID`, or a token of it
    /// issued at `issuedAt`.
    private func push(
        _ keyID: String, topic: String = "com.example.app", pushType: String = "alert", issuedAt: Date? = nil
    ) throws -> WirePush {
        var push = WirePush.device(Fixtures.token, #"{"aps":{"alert":"Hello"}}"#, topic: topic, pushType: pushType)
        let token: String
        if issuedAt == nil, let kept = signed[keyID] {
            token = kept
        } else {
            token = try ProviderTokenSigner.sign(
                keyID: keyID, teamID: TestCertificates.jwtTeamID, issuedAt: issuedAt ?? Date())
            if issuedAt == nil { signed[keyID] = token }
        }
        push.headers.append(("authorization", "bearer \(token)"))
        return push
    }

    private func start(_ keys: [JWTSigningKey], environment: PushEnvironment = .production,
                       _ change: (inout FakeAPNsServer.Configuration) -> Void = { _ in }) throws {
        var configuration = FakeAPNsServer.Configuration(authentication: .token(keys), environment: environment)
        change(&configuration)
        try fixture.start(configuration, for: self)
    }

    func testCurlMeetsBadEnvironmentKeyInTokenWithASandboxKeyOnProduction() throws {
        try start([
            try Self.key("SANDBOXK01").scoped(to: [.sandbox]), try Self.key("PRODKEY001").scoped(to: [.production]),
        ])
        let refused = try Curl.send(try push("SANDBOXK01"), to: server)
        XCTAssertEqual(refused.status, 403)
        XCTAssertEqual(refused.reason, "BadEnvironmentKeyInToken")
        XCTAssertEqual(try Curl.send(try push("PRODKEY001"), to: server).status, 200)
        let rejection = try server.rejections.pop(timeout: .seconds(5))
        XCTAssertEqual(rejection.reason, "BadEnvironmentKeyInToken")
    }

    func testCurlMeetsTheDocumentedSpellingWhenItIsChosen() throws {
        try start([try Self.key("SANDBOXK01").scoped(to: [.sandbox])]) { $0.documentedBadEnvironmentReason = true }
        XCTAssertEqual(try Curl.send(try push("SANDBOXK01"), to: server).reason, "BadEnvironmentKeyIdInToken")
    }

    func testPythonH2MeetsTopicDisallowedAndUnrelatedKeyIdInTokenOnOneConnection() throws {
        try start([
            try Self.key("TOPICKEY01").scoped(to: [.production], topics: ["com.example.app"]),
            try Self.key("TOPICKEY02").scoped(to: [.production], topics: ["com.example.app"]),
            try Self.key("TEAMKEY001"),
        ])
        let answers = try PythonH2.send([
            try push("TOPICKEY01"),
            try push("TOPICKEY01", topic: "com.example.other"),
            try push("TOPICKEY02"),
            try push("TEAMKEY001"),
            try push("TOPICKEY01", topic: "com.example.app.voip", pushType: "voip"),
        ], to: server)
        XCTAssertEqual(answers.map(\.status), [200, 400, 403, 403, 200])
        XCTAssertEqual(
            answers.map(\.reason), [nil, "TopicDisallowed", "UnrelatedKeyIdInToken", "UnrelatedKeyIdInToken", nil])
    }

    func testCurlMeetsTopicMismatchCreatingAChannelForABundleATopicKeyDoesNotList() throws {
        try start([try Self.key("TOPICKEY01").scoped(to: [.production], topics: ["com.example.app"])])
        let token = try ProviderTokenSigner.sign(keyID: "TOPICKEY01", teamID: TestCertificates.jwtTeamID)
        func create(_ bundle: String) -> WirePush {
            WirePush(
                path: "/1/apps/\(bundle)/channels", headers: [("authorization", "bearer \(token)")],
                body: #"{"message-storage-policy": 1, "push-type": "LiveActivity"}"#)
        }
        let other = try Curl.send(create("com.example.other"), to: server)
        XCTAssertEqual(other.status, 403)
        XCTAssertEqual(other.reason, "TopicMismatch")
        XCTAssertEqual(try Curl.send(create("com.example.app"), to: server).status, 201)
    }

    func testPythonH2WithUnscopedKeysWorksAsBefore() throws {
        try start([try Self.key("TEAMKEY001")])
        let answers = try PythonH2.send([try push("TEAMKEY001", topic: "com.example.anything")], to: server)
        XCTAssertEqual(answers.map(\.status), [200])
    }

    func testCurlMeetsTooManyRequestsPastThePerTokenRate() throws {
        try start([try Self.key("TEAMKEY001")]) {
            $0.deviceTokenRateLimit = DeviceTokenRateLimit(requests: 2, per: .seconds(600))
        }
        let answers = try (0..<3).map { _ in try Curl.send(try push("TEAMKEY001"), to: server) }
        XCTAssertEqual(answers.map(\.status), [200, 200, 429])
        XCTAssertEqual(answers.last?.reason, "TooManyRequests")
        let refusal = try server.rejections.pop(timeout: .seconds(5))
        XCTAssertEqual(refusal.reason, "TooManyRequests")
        XCTAssertTrue(refusal.detail.contains("2 pushes per token within 600.0 seconds"), refusal.detail)
        server.clock.advance(by: .seconds(600))
        XCTAssertEqual(
            try Curl.send(try push("TEAMKEY001"), to: server).status, 200, "the next window, on the server's clock")
    }

    func testPythonH2StaysExpiredOnItsConnectionWithTheSettingAndRecoversOnANewOne() throws {
        try start([try Self.key("TEAMKEY001")]) { $0.expiredProviderTokenWedgesConnection = true }
        let wedged = try PythonH2.send([
            try push("TEAMKEY001", issuedAt: Date() - 7200),
            try push("TEAMKEY001"),
        ], to: server)
        XCTAssertEqual(wedged.map(\.reason), ["ExpiredProviderToken", "ExpiredProviderToken"])
        XCTAssertEqual(try PythonH2.send([try push("TEAMKEY001")], to: server).map(\.status), [200])
    }

    func testPythonH2RecoversWithAFreshTokenByDefault() throws {
        try start([try Self.key("TEAMKEY001")])
        let answers = try PythonH2.send([
            try push("TEAMKEY001", issuedAt: Date() - 7200),
            try push("TEAMKEY001"),
        ], to: server)
        XCTAssertEqual(answers.map(\.status), [403, 200])
    }
}
