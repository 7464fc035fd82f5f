import FakeAPNs
import Foundation
import XCTest

// Reads internals on purpose: TokenCommand and CACommand, run in this process.
@testable import FakeAPNsDaemon

/// `fake-apns token` and `fake-apns ca`: what they print, and that a server takes it.
final class TokenAndCACommandTests: XCTestCase {
    private static let device = "fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2"

    private func token(_ arguments: [String]) -> (status: Int32, lines: [String], errors: [String]) {
        let outcome = CommandOutcome(running: TokenCommand.run, arguments)
        return (outcome.status, outcome.lines, outcome.errors)
    }

    /// The JSON of one base64url part of a JWT.
    private func part(_ token: String, _ index: Int) throws -> JSONValue {
        var base64 = String(token.split(separator: ".")[index])
            .replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return try JSONValue(parsing: String(decoding: XCTUnwrap(Data(base64Encoded: base64)), as: UTF8.self))
    }

    /// A P-256 key the servers here do not trust, in a file named as Apple names keys.
    private func otherKey(named name: String = "AuthKey_ABC123DEFG.p8") throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fake-apns-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent(name)
        try TestCertificates.clientKeyPEM.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    func testTheDefaultTokenIsTheTestKeysAndTheTokenVerifierTakesIt() throws {
        let before = Date().timeIntervalSince1970.rounded(.down)
        let (status, lines, errors) = token([])
        XCTAssertEqual(status, 0, "\(errors)")
        XCTAssertEqual(lines.count, 1)
        let jwt = try XCTUnwrap(lines.first)
        XCTAssertEqual(jwt.split(separator: ".").count, 3)
        XCTAssertEqual(try part(jwt, 0), ["alg": "ES256", "kid": "ABC123DEFG"])
        let claims = try part(jwt, 1)
        XCTAssertEqual(claims["iss"], "DEF123GHIJ")
        let iat = try XCTUnwrap(claims["iat"]?.intValue)
        XCTAssertTrue(Double(iat) >= before && Double(iat) <= Date().timeIntervalSince1970, "iat \(iat)")
        let verified = ProviderTokenVerifier(keys: [.test]).verify(authorization: "bearer \(jwt)", now: Date())
        XCTAssertEqual(try verified.get().teamID, "DEF123GHIJ")
    }

    func testTheOptionsSetTheKeyTheIDsAndTheIssueTime() throws {
        let (status, lines, errors) = token(["--key-id", "KEY4567890", "--team-id", "TEAM123456", "--issued-at", "1700000000"])
        XCTAssertEqual(status, 0, "\(errors)")
        let jwt = try XCTUnwrap(lines.first)
        XCTAssertEqual(try part(jwt, 0)["kid"], "KEY4567890")
        XCTAssertEqual(try part(jwt, 1), ["iss": "TEAM123456", "iat": 1_700_000_000])
        // The key ID comes from a file named AuthKey_<key ID>.p8.
        let key = try otherKey(named: "AuthKey_KEY4567890.p8")
        let signed = token(["--key", key.path, "--team-id", "TEAM123456"])
        XCTAssertEqual(signed.status, 0, "\(signed.errors)")
        XCTAssertEqual(try part(XCTUnwrap(signed.lines.first), 0)["kid"], "KEY4567890")
        let trusted = try JWTSigningKey(keyID: "KEY4567890", teamID: "TEAM123456", privateKeyPEM: TestCertificates.clientKeyPEM)
        let verified = ProviderTokenVerifier(keys: [trusted]).verify(authorization: "bearer \(signed.lines[0])", now: Date())
        XCTAssertNoThrow(try verified.get())
    }

    func testUsageErrorsExit64NamingTheOption() throws {
        let unnamed = try otherKey(named: "signing.p8")
        let ca = ChildProcess.repository.appendingPathComponent("TestCerts/ca.pem").path
        for (arguments, named) in [
            (["--key", unnamed.path, "--team-id", "T"], "--key-id"),
            (["--key", try otherKey().path], "--team-id"),
            (["--key", "/nonexistent.p8", "--key-id", "K", "--team-id", "T"], "--key /nonexistent.p8: no such file"),
            (["--key", ca, "--key-id", "K", "--team-id", "T"], "--key \(ca): not a PEM private key"),
            (["--issued-at", "yesterday"], "--issued-at"),
            (["--bogus"], "--bogus"),
            (["--key-id"], "--key-id"),
        ] {
            let (status, lines, errors) = token(arguments)
            XCTAssertEqual(status, 64, "\(arguments)")
            XCTAssertEqual(lines, [], "\(arguments)")
            XCTAssertTrue(errors.joined().contains(named), "\(arguments): \(errors)")
        }
    }

    func testCurlWithThePrintedTokenIsAcceptedByTokenAuthenticationAndAnotherKeysIsNot() throws {
        let other = try otherKey().path
        try withFakeAPNs(configuration: .init(feedbackPort: nil, authentication: .token([.test]))) { server in
            let port = try XCTUnwrap(server.http2Port)
            func post(_ token: String) throws -> ChildProcess {
                try ChildProcess.shell(
                    """
                    curl -s --http2 --cacert <(fake-apns ca) -H "authorization: bearer \(token)" \
                      -H 'apns-topic: com.example.app' -d '{"aps":{"alert":"Hi"}}' \
                      -w '%{http_code}' https://127.0.0.1:\(port)/3/device/\(Self.device)
                    """)
            }
            let accepted = try post("$(fake-apns token)")
            XCTAssertEqual(accepted.status, 0, accepted.errors)
            XCTAssertEqual(accepted.output, "200")
            XCTAssertEqual(try server.notifications.pop(timeout: .seconds(10)).deviceToken.hex, Self.device)

            let refused = try post("$(fake-apns token --key \(other) --team-id DEF123GHIJ)")
            XCTAssertEqual(refused.status, 0, refused.errors)
            XCTAssertEqual(refused.output, #"{"reason":"InvalidProviderToken"}403"#)
        }
    }

    func testCAPrintsTheBuiltInTestCA() throws {
        let printed = CommandOutcome(running: CACommand.run, [])
        XCTAssertEqual(printed.status, 0)
        XCTAssertEqual(printed.lines, [TestCertificates.caPEM.trimmingCharacters(in: .newlines)])
        let run = try ChildProcess.shell("fake-apns ca | openssl x509 -noout -subject")
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertTrue(run.output.contains("FakeAPNs Test CA"), run.output)
        let bogus = CommandOutcome(running: CACommand.run, ["--bogus"])
        XCTAssertEqual(bogus.status, 64)
        XCTAssertTrue(bogus.errors.joined().contains("--bogus"), "\(bogus.errors)")
    }

    func testHelpListsTheCommandsAndTheirOptions() {
        for command in ["fake-apns token", "fake-apns ca"] {
            XCTAssertTrue(Options.help.contains(command), command)
        }
        let help = token(["--help"])
        XCTAssertEqual(help.status, 0)
        for option in ["--key ", "--key-id ", "--team-id ", "--issued-at ", "--help "] {
            XCTAssertTrue(help.lines.joined().contains(option), option)
        }
        let ca = CommandOutcome(running: CACommand.run, ["--help"])
        XCTAssertEqual(ca.status, 0)
        XCTAssertTrue(ca.lines.joined().contains("Usage: fake-apns ca"))
    }
}
