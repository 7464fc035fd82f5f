import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: Mailbox.init, to collect handshake failures.
@testable import FakeAPNs

/// Certificate and token authentication on the HTTP/2 provider API.
final class HTTP2AuthenticationTests: XCTestCase {
    private let fixture = ServerFixture()
    private var server: FakeAPNsServer { fixture.server }

    private func token(issuedAt: Date = Date(), encoding: ProviderTokenSigner.SignatureEncoding = .raw, teamID: String = TestCertificates.jwtTeamID) throws -> String {
        try ProviderTokenSigner.sign(
            keyID: TestCertificates.jwtKeyID, teamID: teamID, issuedAt: issuedAt, signatureEncoding: encoding)
    }

    private func bearer(_ token: String) -> [(String, String)] {
        [("authorization", "bearer \(token)")]
    }

    /// A provider identity of `TestCerts/`, from its files as a user would load it.
    private static func identity(_ name: String) throws -> TLSIdentity {
        try TLSIdentity(
            certificateFile: testCertificatePath("\(name).pem"), privateKeyFile: testCertificatePath("\(name).key"))
    }

    /// Certificate authentication on a server whose client certificates must chain to
    /// `trustedCAs` (files of `TestCerts/`, as `--trusted-ca` reads them), asked for in `mode`;
    /// the handshake failures it reports go to `failures`.
    private func startTrusting(
        _ trustedCAs: [String], mode: ClientCertificatePolicy.Mode, failures: Mailbox<String>
    ) throws {
        let pem = try trustedCAs.map { try String(contentsOfFile: testCertificatePath($0), encoding: .utf8) }.joined()
        try fixture.start(.init(
            authentication: .certificate, clientCertificates: ClientCertificatePolicy(mode: mode, trustedCAsPEM: pem),
            onEvent: { event in
                if case .handshakeFailed(_, .http2, let reason) = event { failures.append(reason) }
            }), for: self)
    }

    // MARK: - Certificates

    func testCertificateTopicsDecideWhatIsAllowed() throws {
        try fixture.start(.init(authentication: .certificate), for: self)
        let client = try server.connectHTTP2(identity: .testClient)
        XCTAssertEqual(try client.send(.push(topic: "com.example.app")).status, 200)
        XCTAssertEqual(try client.send(.push(topic: "com.example.app.voip", pushType: "voip")).status, 200)
        XCTAssertEqual(try client.send(.push(topic: "com.example.app.complication", pushType: "complication")).status, 200)
        XCTAssertEqual(try client.send(.push(topic: "com.example.other")).reason, "TopicDisallowed")
        XCTAssertEqual(try client.send(.push(topic: nil)).reason, "MissingTopic", "a multi-topic certificate needs apns-topic")
        let notification = try server.notifications.pop(timeout: .seconds(5))
        XCTAssertEqual(notification.connection.clientCertificate?.topics, ["com.example.app", "com.example.app.voip", "com.example.app.complication"])
        XCTAssertEqual(notification.connection.clientCertificate?.environments, [.sandbox, .production])
    }

    func testSingleTopicCertificateSuppliesAMissingTopic() throws {
        try fixture.start(.init(authentication: .certificate), for: self)
        let sandbox = TLSIdentity(
            certificateChainPEM: TestCertificates.sandboxClientCertificatePEM, privateKeyPEM: TestCertificates.sandboxClientKeyPEM)
        XCTAssertEqual(try server.connectHTTP2(identity: sandbox).send(.push(topic: nil)).status, 200)
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).topic, "com.example.sandbox")
    }

    func testCertificateAuthenticationAsksForACertificateThoughTheTLSPolicyIsOff() throws {
        try fixture.start(.init(authentication: .certificate, clientCertificates: .off), for: self)
        let response = try server.connectHTTP2().send(.push())
        XCTAssertEqual(response.status, 403)
        XCTAssertEqual(response.reason, "MissingProviderToken")
        XCTAssertEqual(try server.connectHTTP2(identity: try Self.identity("client")).send(.push()).status, 200)
        let notification = try server.notifications.pop(timeout: .seconds(5))
        XCTAssertEqual(notification.connection.clientCertificate?.topic, "com.example.app")
    }

    func testCertificateAuthenticationRefusesACertificateTheConfiguredCAsDidNotSign() throws {
        for mode in [ClientCertificatePolicy.Mode.off, .optional] {
            let failures = Mailbox<String>(noun: "handshake failure")
            try startTrusting(["untrusted-ca.pem"], mode: mode, failures: failures)
            // A TLS 1.3 client sends its certificate after the handshake's end as it sees it, so
            // it connects, and learns of the refusal on its first request: an "unknown CA" alert
            // read, or a write to the connection the server has closed.
            let refused = try server.connectHTTP2(identity: try Self.identity("client"))
            XCTAssertThrowsError(try refused.send(.push()), "\(mode)") { error in
                XCTAssertTrue(error is TLSError, "\(mode): \(error)")
            }
            let reason = try failures.pop(timeout: .seconds(10))
            XCTAssertTrue(reason.contains("certificate verify failed"), "\(mode): \(reason)")
            XCTAssertEqual(server.notifications.count, 0, "\(mode)")
            let untrusted = try server.connectHTTP2(identity: try Self.identity("client-untrusted"))
            XCTAssertEqual(try untrusted.send(.push(topic: "com.example.untrusted")).status, 200, "\(mode)")
            server.stop()
        }
    }

    func testCertificateAuthenticationAcceptsACertificateOfAnyConfiguredCA() throws {
        for mode in [ClientCertificatePolicy.Mode.off, .optional] {
            try startTrusting(["untrusted-ca.pem", "ca.pem"], mode: mode, failures: Mailbox(noun: "handshake failure"))
            let client = try server.connectHTTP2(identity: try Self.identity("client"))
            XCTAssertEqual(try client.send(.push()).status, 200, "\(mode)")
            let untrusted = try server.connectHTTP2(identity: try Self.identity("client-untrusted"))
            XCTAssertEqual(try untrusted.send(.push(topic: "com.example.untrusted")).status, 200, "\(mode)")
            server.stop()
        }
    }

    func testSandboxCertificateOnAProductionServerIsBadCertificateEnvironment() throws {
        try fixture.start(.init(authentication: .certificate, environment: .production), for: self)
        let sandbox = TLSIdentity(
            certificateChainPEM: TestCertificates.sandboxClientCertificatePEM, privateKeyPEM: TestCertificates.sandboxClientKeyPEM)
        let response = try server.connectHTTP2(identity: sandbox).send(.push(topic: "com.example.sandbox"))
        XCTAssertEqual(response.status, 403)
        XCTAssertEqual(response.reason, "BadCertificateEnvironment")
    }

    // MARK: - Tokens

    func testValidTokenInEitherSignatureEncodingIsAccepted() throws {
        try fixture.start(.init(authentication: .testToken), for: self)
        for encoding in [ProviderTokenSigner.SignatureEncoding.raw, .der] {
            let response = try server.connectHTTP2().send(.push(extra: bearer(try token(encoding: encoding))))
            XCTAssertEqual(response.status, 200, "\(encoding)")
        }
        let claims = try server.notifications.pop(timeout: .seconds(5)).providerToken
        XCTAssertEqual(claims?.keyID, TestCertificates.jwtKeyID)
        XCTAssertEqual(claims?.teamID, TestCertificates.jwtTeamID)
    }

    func testTokenProblemsGetTheirReasons() throws {
        try fixture.start(.init(authentication: .testToken), for: self)
        let good = try token()
        var tampered = Array(good.utf8)
        tampered[tampered.count - 5] = tampered[tampered.count - 5] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let cases: [([(String, String)], Int, String)] = [
            ([], 403, "MissingProviderToken"),
            ([("authorization", "basic abc")], 403, "MissingProviderToken"),
            (bearer("not.a.token"), 403, "InvalidProviderToken"),
            (bearer(String(decoding: tampered, as: UTF8.self)), 403, "InvalidProviderToken"),
            (bearer(try token(teamID: "ZZZ999ZZZZ")), 403, "InvalidProviderToken"),
            (bearer(try token(issuedAt: Date().addingTimeInterval(-3601))), 403, "ExpiredProviderToken"),
        ]
        for (headers, status, reason) in cases {
            // A new connection each, so no token is bound to it yet.
            let response = try server.connectHTTP2().send(.push(extra: headers))
            XCTAssertEqual(response.status, status, reason)
            XCTAssertEqual(response.reason, reason)
        }
        XCTAssertEqual(server.notifications.count, 0)
    }

    func testTokenWithoutTopicIsMissingTopic() throws {
        try fixture.start(.init(authentication: .testToken), for: self)
        XCTAssertEqual(try server.connectHTTP2().send(.push(topic: nil, extra: bearer(try token()))).reason, "MissingTopic")
    }

    func testExpiryFollowsTheInjectedClock() throws {
        let now = Locked(Date(timeIntervalSince1970: 1_800_000_000))
        try fixture.start(.init(authentication: .testToken, clock: { now.withLock { $0 } }), for: self)
        let issued = try token(issuedAt: Date(timeIntervalSince1970: 1_800_000_000))
        let client = try server.connectHTTP2()
        XCTAssertEqual(try client.send(.push(extra: bearer(issued))).status, 200)
        now.withLock { $0 = Date(timeIntervalSince1970: 1_800_003_599) }
        XCTAssertEqual(try client.send(.push(extra: bearer(issued))).status, 200)
        now.withLock { $0 = Date(timeIntervalSince1970: 1_800_003_601) }
        XCTAssertEqual(try client.send(.push(extra: bearer(issued))).reason, "ExpiredProviderToken")
    }

    func testNewTokenWithinTwentyMinutesOnOneConnectionIsTooManyProviderTokenUpdates() throws {
        try fixture.start(.init(authentication: .testToken), for: self)
        let now = Date()
        let client = try server.connectHTTP2()
        XCTAssertEqual(try client.send(.push(extra: bearer(try token(issuedAt: now.addingTimeInterval(-1800))))).status, 200)
        let tooSoon = try client.send(.push(extra: bearer(try token(issuedAt: now))))
        XCTAssertEqual(tooSoon.status, 429, "the iats are 30 minutes apart, but the server saw both at once")
        XCTAssertEqual(tooSoon.reason, "TooManyProviderTokenUpdates")
        server.clock.advance(by: .seconds(20 * 60))
        XCTAssertEqual(try client.send(.push(extra: bearer(try token()))).status, 200,
                       "20 minutes on the server's clock after it first saw the first is fine")
        XCTAssertEqual(try server.connectHTTP2().send(.push(extra: bearer(try token(issuedAt: now.addingTimeInterval(-60))))).status, 200,
                       "a new connection may use any fresh token")
    }
}
