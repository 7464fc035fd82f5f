import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

/// A push with no `apns-topic` (issue 32, item 6b), sent by curl. Apple needs the topic with
/// token authentication and takes a single-topic certificate's otherwise; with no
/// authentication (the lenient mode) the push is accepted and recorded with no topic, so that
/// it is filed under no app, unless the client presented a certificate with one topic, which
/// stands for it as it does at Apple.
final class MissingTopicTests: XCTestCase {
    private let fixture = ServerFixture()
    private var server: FakeAPNsServer { fixture.server }
    private let payload = #"{"aps":{"alert":"no topic","badge":3}}"#

    /// curl's status for a push without `apns-topic`, and its `reason` when refused.
    private func push(_ arguments: [String], url: String) throws -> (status: Int, body: String) {
        let result = try runTool("/usr/bin/curl", [
            "--silent", "--show-error", "--write-out", "\n%{http_code} %{http_version}",
            "--header", "apns-push-type: alert", "--data", payload,
        ] + arguments + [url])
        XCTAssertEqual(result.status, 0, result.error)
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false)
        let last = lines.last.map(String.init) ?? ""
        XCTAssertTrue(last.hasSuffix(" 2"), "curl spoke HTTP/2: \(last)")
        return (Int(last.split(separator: " ").first ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    private var path: String { "/3/device/\(Fixtures.token.hex)" }

    func testWithoutAuthenticationOverCleartextHTTP2ThePushHasNoTopic() throws {
        var configuration = FakeAPNsServer.Configuration()
        configuration.plaintextPort = 0
        try fixture.start(configuration, for: self)
        let answer = try push(["--http2-prior-knowledge"], url: "http://127.0.0.1:\(fixture.plaintextPort)\(path)")
        XCTAssertEqual(answer.status, 200, answer.body)
        let notification = try server.notifications.pop(timeout: .seconds(5))
        XCTAssertNil(notification.topic, "no topic is made up, the empty one least of all")
        XCTAssertEqual(notification.payload.aps.badge, 3)
        XCTAssertTrue(server.rejections.isEmpty)
    }

    func testWithoutAuthenticationASingleTopicCertificateSuppliesTheTopic() throws {
        try fixture.start(.init(clientCertificates: .optional()), for: self)
        let url = "https://127.0.0.1:\(fixture.http2Port)\(path)"
        let tls = ["--http2", "--cacert", testCertificatePath("ca.pem")]

        let sandbox = try push(
            tls + ["--cert", testCertificatePath("client-sandbox.pem"), "--key", testCertificatePath("client-sandbox.key")],
            url: url)
        XCTAssertEqual(sandbox.status, 200, sandbox.body)
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).topic, "com.example.sandbox")

        // Three topics (the app's, .voip, .complication): Apple would answer MissingTopic; the
        // lenient mode accepts the push with none.
        let universal = try push(
            tls + ["--cert", testCertificatePath("client.pem"), "--key", testCertificatePath("client.key")], url: url)
        XCTAssertEqual(universal.status, 200, universal.body)
        XCTAssertNil(try server.notifications.pop(timeout: .seconds(5)).topic)

        let anonymous = try push(tls, url: url)
        XCTAssertEqual(anonymous.status, 200, anonymous.body)
        XCTAssertNil(try server.notifications.pop(timeout: .seconds(5)).topic)
    }

    func testWithTokenAuthenticationThePushIsRefusedMissingTopic() throws {
        var configuration = FakeAPNsServer.Configuration(authentication: .testToken)
        configuration.plaintextPort = 0
        try fixture.start(configuration, for: self)
        let bearer = try ProviderTokenSigner.sign(keyID: TestCertificates.jwtKeyID, teamID: TestCertificates.jwtTeamID)
        let answer = try push(
            ["--http2-prior-knowledge", "--header", "authorization: bearer \(bearer)"],
            url: "http://127.0.0.1:\(fixture.plaintextPort)\(path)")
        XCTAssertEqual(answer.status, 400)
        XCTAssertEqual(answer.body, #"{"reason":"MissingTopic"}"#)
        XCTAssertTrue(server.notifications.isEmpty)
    }
}
