import FakeAPNs
import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: Options.parse and the parsed scopes.
@testable import FakeAPNsDaemon

/// `--jwt-key-scope` and the other token settings of the daemon, and `GET /api/v1/keys`.
final class KeyScopeDaemonTests: XCTestCase {
    private static let p8 = testCertificatePath("AuthKey_ABC123DEFG.p8")

    func testScopesParseFromTheCommandLineAndTheEnvironment() throws {
        let options = try Options.parse([
            "--jwt-key", "ABC123DEFG:DEF123GHIJ:\(Self.p8)", "--jwt-key", "TOPICKEY01:DEF123GHIJ:\(Self.p8)",
            "--jwt-key-scope", "ABC123DEFG:production",
            "--jwt-key-scope", "TOPICKEY01:sandbox:com.example.app,com.example.other:RELATEDK01",
            "--device-token-rate", "5/0.5", "--documented-bad-environment-reason", "--expired-token-wedges-connection",
        ])
        XCTAssertEqual(options.jwtKeyScopes, [
            .init(keyID: "ABC123DEFG", environments: [.production], topics: nil, relatedKeyID: nil),
            .init(keyID: "TOPICKEY01", environments: [.sandbox], topics: ["com.example.app", "com.example.other"],
                  relatedKeyID: "RELATEDK01"),
        ])
        XCTAssertEqual(options.deviceTokenRate, DeviceTokenRateLimit(requests: 5, per: .milliseconds(500)))
        XCTAssertTrue(options.documentedBadEnvironmentReason)
        XCTAssertTrue(options.expiredTokenWedgesConnection)
        let fromEnvironment = try Options.parse([], environment: [
            "FAKE_APNS_AUTH": "token", "FAKE_APNS_JWT_KEY_SCOPE": "ABC123DEFG:both:com.example.app",
        ])
        XCTAssertEqual(fromEnvironment.jwtKeyScopes.first?.environments, [.sandbox, .production])
        XCTAssertEqual(fromEnvironment.jwtKeyScopes.first?.topics, ["com.example.app"])
    }

    func testBadScopesAreUsageErrorsNamingTheOption() {
        let cases: [([String], String)] = [
            (["--auth", "token", "--jwt-key-scope", "ABC123DEFG:staging"], "--jwt-key-scope takes KEYID:ENVIRONMENT"),
            (["--auth", "token", "--jwt-key-scope", "ABC123DEFG:sandbox:com.a,,com.b"], "--jwt-key-scope takes"),
            (["--auth", "token", "--jwt-key-scope", "ABC123DEFG:sandbox:com.a:ABC123DEFG"], "--jwt-key-scope takes"),
            (["--auth", "token", "--jwt-key-scope", "OTHERKEY01:sandbox"],
             "names key OTHERKEY01, which no --jwt-key trusts"),
            (["--auth", "token", "--jwt-key-scope", "ABC123DEFG:sandbox", "--jwt-key-scope", "ABC123DEFG:production"],
             "scopes key ABC123DEFG twice"),
            (["--jwt-key-scope", "ABC123DEFG:sandbox"], "--jwt-key-scope needs token authentication"),
            (["--device-token-rate", "0/10"], "--device-token-rate takes COUNT/SECONDS"),
            (["--device-token-rate", "5/nan"], "--device-token-rate takes COUNT/SECONDS"),
            (["--device-token-rate", "5"], "--device-token-rate takes COUNT/SECONDS"),
        ]
        for (arguments, message) in cases {
            XCTAssertThrowsError(try Options.parse(arguments), "\(arguments)") { error in
                XCTAssertTrue("\(error)".contains(message), "\(arguments): \(error)")
            }
        }
    }

    /// The executable, with curl on both sides: a sandbox-only key on a production daemon is
    /// refused, a topic key pushes to its topic only, and the control API lists both scopes.
    func testTheDaemonScopesItsKeysAndShowsThem() throws {
        let daemon = try DaemonFixture.started([
            "--environment", "production",
            "--jwt-key", "ABC123DEFG:DEF123GHIJ:\(Self.p8)", "--jwt-key", "TOPICKEY01:DEF123GHIJ:\(Self.p8)",
            "--jwt-key-scope", "ABC123DEFG:sandbox", "--jwt-key-scope", "TOPICKEY01:production:com.example.app",
        ], for: self)
        defer { _ = daemon.stop() }
        let http2 = try daemon.port("http2")
        func push(_ keyID: String, topic: String) throws -> (status: Int, body: String) {
            let token = try ProviderTokenSigner.sign(keyID: keyID, teamID: "DEF123GHIJ")
            let result = try runTool("/usr/bin/curl", [
                "--silent", "--show-error", "--http2", "--cacert", testCertificatePath("ca.pem"),
                "--write-out", "\n%{http_code}", "--header", "authorization: bearer \(token)",
                "--header", "apns-topic: \(topic)", "--header", "apns-push-type: alert",
                "--data-binary", #"{"aps":{"alert":"Hello"}}"#,
                "https://localhost:\(http2)/3/device/\(Fixtures.token.hex)",
            ])
            XCTAssertEqual(result.status, 0, result.error)
            let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false)
            return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
        }
        let sandboxKey = try push("ABC123DEFG", topic: "com.example.app")
        XCTAssertEqual(sandboxKey.status, 403)
        XCTAssertTrue(sandboxKey.body.contains("BadEnvironmentKeyInToken"), sandboxKey.body)
        XCTAssertEqual(try push("TOPICKEY01", topic: "com.example.app").status, 200)
        let otherTopic = try push("TOPICKEY01", topic: "com.example.other")
        XCTAssertEqual(otherTopic.status, 400)
        XCTAssertTrue(otherTopic.body.contains("TopicDisallowed"), otherTopic.body)

        let answer = try curl(port: try daemon.port("web"), "GET", "/api/v1/keys", maxTime: 20)
        XCTAssertEqual(answer.status, 200, answer.body)
        let keys = try JSONValue(parsing: answer.body)
        XCTAssertEqual(keys["authentication"]?.stringValue, "token")
        XCTAssertEqual(keys["badEnvironmentReason"]?.stringValue, "BadEnvironmentKeyInToken")
        let listed = try XCTUnwrap(keys["keys"]?.arrayValue)
        XCTAssertEqual(listed.compactMap { $0["keyID"]?.stringValue }, ["ABC123DEFG", "TOPICKEY01"])
        XCTAssertEqual(listed[0]["environments"]?.arrayValue?.compactMap(\.stringValue), ["sandbox"])
        XCTAssertEqual(listed[0]["topics"], .null)
        XCTAssertEqual(listed[1]["topics"]?.arrayValue?.compactMap(\.stringValue), ["com.example.app"])
        XCTAssertEqual(try curl(port: try daemon.port("web"), "DELETE", "/api/v1/keys").status, 405)
    }
}
