import FakeAPNs
import FakeAPNsTestSupport
import Foundation
import XCTest

// Reads internals on purpose: SendCommand and FeedbackCommand, run in this process.
@testable import FakeAPNsDaemon

/// `fake-apns send` and `fake-apns feedback` against a server in this process: what arrives,
/// the line printed, the exit status.
final class ClientCommandsTests: XCTestCase {
    private static let token = "fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2"

    private let fixture = ServerFixture()
    private var server: FakeAPNsServer { fixture.server }

    override func setUpWithError() throws {
        try fixture.start(for: self)
    }

    private func testCert(_ name: String) -> String {
        testCertificatePath(name)
    }

    private func send(_ arguments: [String]) -> CommandOutcome {
        CommandOutcome(running: SendCommand.run, arguments)
    }

    private func sendHTTP2(_ arguments: [String]) -> CommandOutcome {
        send(["--port", String(fixture.http2Port), "--token", Self.token] + arguments)
    }

    private func sendBinary(_ arguments: [String]) -> CommandOutcome {
        send(["--protocol", "binary", "--port", String(server.gatewayPort), "--token", Self.token] + arguments)
    }

    /// Runs the built `fake-apns send` as a child process.
    private func runSendExecutable(_ arguments: [String]) throws -> CommandOutcome {
        try CommandOutcome(executable: ["send"] + arguments)
    }

    private func feedback(_ arguments: [String]) -> CommandOutcome {
        CommandOutcome(running: FeedbackCommand.run, arguments)
    }

    // MARK: - HTTP/2

    func testHTTP2SendArrivesWithItsPayloadTopicAndPushType() throws {
        let outcome = sendHTTP2([
            "--alert", "Hello", "--title", "Greeting", "--badge", "3", "--sound", "default",
            "--custom", #"orderID="A-1""#,
            "--topic", "com.example.app", "--push-type", "alert", "--priority", "5", "--collapse-id", "group-1",
        ])
        XCTAssertEqual(outcome.status, 0, "\(outcome.errors)")
        let notification = try server.notifications.pop(timeout: .seconds(5))
        XCTAssertEqual(notification.deviceToken.hex, Self.token)
        XCTAssertEqual(
            notification.payload.text,
            #"{"aps":{"alert":{"title":"Greeting","body":"Hello"},"badge":3,"sound":"default"},"orderID":"A-1"}"#)
        XCTAssertEqual(notification.topic, "com.example.app")
        XCTAssertEqual(notification.pushType, .alert)
        XCTAssertEqual(notification.priority.rawValue, 5)
        XCTAssertEqual(notification.collapseID, "group-1")
    }

    func testHTTP2SendPrintsStatusAndTheServersApnsID() throws {
        let json = try sendHTTP2(["--alert", "Hi", "--topic", "com.example.app"]).json()
        let notification = try server.notifications.pop(timeout: .seconds(5))
        let expected: JSONValue = [
            "protocol": "http2", "status": 200, "apnsID": .string(notification.apnsID ?? "?"), "reason": .null,
        ]
        XCTAssertEqual(json, expected)
    }

    func testHTTP2SendSendsItsOwnApnsIDAndExpiration() throws {
        let id = "6a1f4a4b-2a33-4d7c-9a3b-2b3f5e1c0d9e"
        let json = try sendHTTP2([
            "--json", #"{"aps":{"content-available":1}}"#, "--topic", "com.example.app",
            "--push-type", "background", "--priority", "5", "--apns-id", id,
            "--expiration", "1900000000",
        ]).json()
        XCTAssertEqual(json["apnsID"]?.stringValue, id)
        let notification = try server.notifications.pop(timeout: .seconds(5))
        XCTAssertEqual(notification.payload.text, #"{"aps":{"content-available":1}}"#, "--json is sent as written")
        XCTAssertEqual(notification.apnsID, id)
        XCTAssertEqual(notification.expiration, 1_900_000_000)
    }

    func testRefusedHTTP2SendPrintsTheReasonAndExitsOne() throws {
        server.faults.add(FaultRule(match: .every, action: .reject(.invalidToken)))
        let outcome = sendHTTP2(["--alert", "Hi", "--topic", "com.example.app"])
        XCTAssertEqual(outcome.status, 1)
        let json = try outcome.json()
        XCTAssertEqual(json["status"], 400)
        XCTAssertEqual(json["reason"], "BadDeviceToken")
        XCTAssertNotNil(json["apnsID"]?.stringValue)
    }

    func testUnregisteredDeviceAnswers410WithATimestamp() throws {
        server.devices.unregister(try DeviceToken(hex: Self.token), at: Date(timeIntervalSince1970: 1_700_000_000))
        let outcome = sendHTTP2(["--alert", "Hi", "--topic", "com.example.app"])
        XCTAssertEqual(outcome.status, 1)
        let json = try outcome.json()
        XCTAssertEqual(json["status"], 410)
        XCTAssertEqual(json["reason"], "Unregistered")
        XCTAssertEqual(json["timestamp"], 1_700_000_000_000)
    }

    func testResetStreamPrintsTheResetCode() throws {
        server.faults.add(FaultRule(match: .every, action: .resetStream))
        let outcome = sendHTTP2(["--alert", "Hi", "--topic", "com.example.app"])
        XCTAssertEqual(outcome.status, 1)
        let json = try outcome.json()
        XCTAssertEqual(json["status"], .null)
        XCTAssertEqual(json["resetCode"], 7)
    }

    func testTokenAuthenticationSignsWithTheP8Key() throws {
        try fixture.restart(.init(authentication: .testToken))
        let key = "ABC123DEFG:DEF123GHIJ:" + testCert("AuthKey_ABC123DEFG.p8")
        let outcome = sendHTTP2(["--alert", "Hi", "--topic", "com.example.app", "--jwt-key", key])
        XCTAssertEqual(try outcome.json()["status"], 200, "\(outcome.lines)")
        let notification = try server.notifications.pop(timeout: .seconds(5))
        XCTAssertEqual(notification.providerToken?.keyID, "ABC123DEFG")
        XCTAssertEqual(notification.providerToken?.teamID, "DEF123GHIJ")
    }

    func testTokenAuthenticationWithoutAKeyIsRefused() throws {
        try fixture.restart(.init(authentication: .testToken))
        let outcome = sendHTTP2(["--alert", "Hi", "--topic", "com.example.app"])
        XCTAssertEqual(outcome.status, 1)
        let json = try outcome.json()
        XCTAssertEqual(json["status"], 403)
        XCTAssertEqual(json["reason"], "MissingProviderToken")
    }

    func testCertificateAuthenticationPresentsTheClientCertificate() throws {
        try fixture.restart(.init(authentication: .certificate, clientCertificates: .required()))
        let certificate = ["--cert", testCert("client.pem"), "--key", testCert("client.key")]
        let outcome = sendHTTP2(
            ["--alert", "Hi", "--topic", "com.example.app.voip", "--push-type", "voip"] + certificate)
        XCTAssertEqual(outcome.status, 0, "\(outcome.lines) \(outcome.errors)")
        let notification = try server.notifications.pop(timeout: .seconds(5))
        XCTAssertEqual(notification.topic, "com.example.app.voip")
        XCTAssertEqual(notification.connection.clientCertificate?.topic, "com.example.app")
        let otherApp = sendHTTP2(["--alert", "Hi", "--topic", "com.example.other"] + certificate)
        XCTAssertEqual(otherApp.status, 1)
        XCTAssertEqual(try otherApp.json()["reason"], "TopicDisallowed")
    }

    // MARK: - Binary

    func testBinarySendArrivesInTheChosenFormat() throws {
        for (format, extra, identifier, expiration) in [
            ("simple", [String](), UInt32(0), UInt32?.none),
            ("enhanced", ["--identifier", "7", "--expiration", "1900000000"], 7, 1_900_000_000),
            ("frame", ["--identifier", "8", "--priority", "5"], 8, 0),
        ] {
            let outcome = sendBinary(["--format", format, "--alert", "Hi"] + extra)
            XCTAssertEqual(try outcome.json(), ["protocol": "binary", "accepted": true], format)
            XCTAssertEqual(outcome.status, 0, format)
            let notification = try server.notifications.pop(timeout: .seconds(5))
            XCTAssertEqual(notification.format.rawValue, format)
            XCTAssertEqual(notification.identifier, identifier, format)
            XCTAssertEqual(notification.expiration, expiration, format)
            XCTAssertEqual(notification.payload.text, #"{"aps":{"alert":"Hi"}}"#, format)
        }
        XCTAssertEqual(server.notifications.count, 0)
    }

    func testBinaryFrameIsTheDefaultFormatWithPriorityTen() throws {
        XCTAssertEqual(sendBinary(["--badge", "1"]).status, 0)
        let notification = try server.notifications.pop(timeout: .seconds(5))
        XCTAssertEqual(notification.format, .frame)
        XCTAssertEqual(notification.priority.rawValue, 10)
    }

    func testRefusedBinarySendPrintsTheStatusAndExitsOne() throws {
        server.faults.add(FaultRule(match: .every, action: .reject(.invalidToken)))
        let outcome = sendBinary(["--alert", "Hi", "--identifier", "7"])
        XCTAssertEqual(outcome.status, 1)
        XCTAssertEqual(
            try outcome.json(),
            [
                "protocol": "binary", "accepted": false, "status": 8, "statusName": "Invalid token", "identifier": 7,
            ])
    }

    func testBinarySendPresentsTheClientCertificate() throws {
        try fixture.restart(.init(clientCertificates: .required()))
        let outcome = sendBinary(["--alert", "Hi", "--cert", testCert("client.pem"), "--key", testCert("client.key")])
        XCTAssertEqual(outcome.status, 0, "\(outcome.errors)")
        let notification = try server.notifications.pop(timeout: .seconds(5))
        XCTAssertEqual(notification.connection.clientCertificate?.topic, "com.example.app")
    }

    func testBinarySendWithoutTheRequiredCertificateFailsEveryTimeNamingTheRefusedHandshake() throws {
        // Under TLS 1.3 the client's handshake completes before the server judges the missing
        // certificate; the refusal arrives after the write, and must never read as accepted.
        try fixture.restart(.init(clientCertificates: .required()))
        let arguments = ["--protocol", "binary", "--port", String(server.gatewayPort), "--token", Self.token]
        for run in 1...50 {
            let outcome = try runSendExecutable(arguments + ["--alert", "Hi"])
            XCTAssertEqual(outcome.status, 1, "run \(run): \(outcome)")
            XCTAssertEqual(outcome.lines, [], "run \(run)")
            let message = outcome.errors.joined(separator: "\n")
            XCTAssertTrue(
                message.contains("the server refused the handshake: tlsv13 alert certificate required"),
                "run \(run): \(message)")
        }
        XCTAssertEqual(server.notifications.count, 0)
    }

    func testBinarySendExecutableReportsAcceptedAndTheNotificationArrivesOnce() throws {
        for configuration in [FakeAPNsServer.Configuration(clientCertificates: .required()), .init()] {
            try fixture.restart(configuration)
            let certificate =
                configuration.clientCertificates.mode == .required
                ? ["--cert", testCert("client.pem"), "--key", testCert("client.key")] : []
            let outcome = try runSendExecutable(
                ["--protocol", "binary", "--port", String(server.gatewayPort), "--token", Self.token]
                    + ["--alert", "Once", "--quiet-period", "0.3"] + certificate)
            XCTAssertEqual(outcome.status, 0, "\(outcome)")
            XCTAssertEqual(outcome.lines, [#"{"protocol":"binary","accepted":true}"#], "\(outcome)")
            XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).payload.text, #"{"aps":{"alert":"Once"}}"#)
            // The gateway answered close_notify, so it had judged everything sent.
            XCTAssertEqual(server.notifications.count, 0, "queued once")
        }
    }

    func testRefusedSimpleBinarySendFailsThoughTheGatewaySendsNoErrorResponse() throws {
        server.faults.add(FaultRule(match: .every, action: .reject(.invalidToken)))
        let outcome = sendBinary(["--format", "simple", "--alert", "Hi"])
        XCTAssertEqual(outcome.status, 1)
        XCTAssertEqual(outcome.lines, [])
        XCTAssertTrue(outcome.errors.joined().contains("without an error response"), "\(outcome.errors)")
    }

    func testBinarySendWaitsTheQuietPeriodBeforeCallingItAccepted() throws {
        let started = ContinuousClock.now
        XCTAssertEqual(sendBinary(["--alert", "Hi", "--quiet-period", "0.5"]).status, 0)
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - started, .milliseconds(500))
    }

    func testTokenInNSDataFormIsAccepted() throws {
        let outcome = sendBinary([
            "--alert", "Hi", "--token", "<fe15a27d 5df3c347 78defb1f 4f388026 5cc52c0c 04768222 3be59fb6 8500a9a2>",
        ])
        XCTAssertEqual(outcome.status, 0, "\(outcome.errors)")
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).deviceToken.hex, Self.token)
    }

    // MARK: - Connections

    func testRefusedConnectionExitsOneWithTheSystemsWords() throws {
        let port = fixture.http2Port
        server.stop()
        let outcome = send(["--port", String(port), "--token", Self.token, "--alert", "Hi"])
        XCTAssertEqual(outcome.status, 1)
        XCTAssertEqual(outcome.lines, [])
        XCTAssertTrue(outcome.errors.joined().contains("Connection refused"), "\(outcome.errors)")
    }

    func testUntrustedServerFailsWithOpenSSLsWordsUnlessInsecure() throws {
        let untrusted = sendHTTP2(["--alert", "Hi", "--topic", "com.example.app", "--ca", testCert("untrusted-ca.pem")])
        XCTAssertEqual(untrusted.status, 1)
        XCTAssertTrue(untrusted.errors.joined().contains("certificate verify failed"), "\(untrusted.errors)")
        let insecure = sendHTTP2(["--alert", "Hi", "--topic", "com.example.app", "--insecure"])
        XCTAssertEqual(insecure.status, 0, "\(insecure.errors)")
        let trusted = sendHTTP2(["--alert", "Hi", "--topic", "com.example.app", "--ca", testCert("ca.pem")])
        XCTAssertEqual(trusted.status, 0, "\(trusted.errors)")
    }

    // MARK: - Feedback

    func testFeedbackPrintsEveryAddedTupleOnce() throws {
        server.feedback.add(try DeviceToken(hex: Self.token), at: Date(timeIntervalSince1970: 1_700_000_000))
        server.feedback.add(DeviceToken(bytes: [0xAB, 0xCD]), at: Date(timeIntervalSince1970: 42))
        let outcome = feedback(["--port", String(fixture.feedbackPort)])
        XCTAssertEqual(outcome.status, 0, "\(outcome.errors)")
        XCTAssertEqual(
            try outcome.lines.map { try JSONValue(parsing: $0) },
            [
                ["token": .string(Self.token), "timestamp": 1_700_000_000, "time": "2023-11-14T22:13:20.000000Z"],
                ["token": "abcd", "timestamp": 42, "time": "1970-01-01T00:00:42.000000Z"],
            ])
        XCTAssertEqual(feedback(["--port", String(fixture.feedbackPort)]).lines, [], "each tuple is handed out once")
    }

    func testFeedbackWithNothingPendingPrintsNothingAndSucceeds() {
        let outcome = feedback(["--port", String(fixture.feedbackPort)])
        XCTAssertEqual(outcome.status, 0)
        XCTAssertEqual(outcome.lines, [])
    }

    func testFeedbackPresentsTheClientCertificate() throws {
        try fixture.restart(.init(clientCertificates: .required()))
        server.feedback.add(try DeviceToken(hex: Self.token), at: Date(timeIntervalSince1970: 5))
        XCTAssertEqual(feedback(["--port", String(fixture.feedbackPort)]).status, 1, "the server wants a certificate")
        let outcome = feedback([
            "--port", String(fixture.feedbackPort), "--cert", testCert("client.pem"),
            "--key", testCert("client.key"),
        ])
        XCTAssertEqual(outcome.status, 0, "\(outcome.errors)")
        XCTAssertEqual(outcome.lines.count, 1)
    }

    // MARK: - Usage

    func testUsageErrorsExit64NamingTheOption() {
        let token = ["--token", Self.token]
        for (arguments, named) in [
            (["--alert", "Hi"], "--token"),
            (token + ["--alert", "Hi", "--protocol", "smtp"], "--protocol"),
            (token + ["--alert", "Hi", "--port", "70000"], "--port"),
            (["--token", "fe1g", "--alert", "Hi"], "--token"),
            (token + ["--badge", "many"], "--badge"),
            (token + ["--json", "{"], "--json"),
            (token + ["--json", "{}", "--alert", "Hi"], "--alert"),
            (token + ["--custom", "id=abc"], "--custom"),
            (token + ["--alert", "Hi", "--identifier", "7"], "--identifier"),
            (token + ["--alert", "Hi", "--protocol", "binary", "--topic", "com.example.app"], "--topic"),
            (
                token + ["--alert", "Hi", "--protocol", "binary", "--format", "simple", "--identifier", "1"],
                "--identifier"
            ),
            (token + ["--alert", "Hi", "--jwt-key", "ABC"], "--jwt-key"),
            (token + ["--alert", "Hi", "--jwt-key", "A:B:/nonexistent.p8"], "--jwt-key"),
            (token + ["--alert", "Hi", "--cert", "client.pem"], "--key"),
            (token + ["--alert", "Hi", "--ca", "/nonexistent.pem"], "--ca"),
            (token + ["--alert", "Hi", "--insecure", "--ca", "x.pem"], "--insecure"),
            (token + ["--alert", "Hi", "--timeout", "0"], "--timeout"),
            (token + ["--alert"], "--alert"),
            (token + ["--bogus"], "--bogus"),
            (token, "--alert"),
        ] {
            let outcome = send(arguments)
            XCTAssertEqual(outcome.status, 64, "\(arguments)")
            XCTAssertEqual(outcome.lines, [], "\(arguments)")
            XCTAssertTrue(outcome.errors.joined().contains(named), "\(arguments): \(outcome.errors)")
        }
        for (arguments, named) in [
            (["--port", "x"], "--port"), (["--key", "k.pem"], "--cert"), (["--alert", "Hi"], "--alert"),
        ] {
            let outcome = feedback(arguments)
            XCTAssertEqual(outcome.status, 64, "\(arguments)")
            XCTAssertTrue(outcome.errors.joined().contains(named), "\(arguments): \(outcome.errors)")
        }
    }

    func testHelpListsEveryOptionAndExitsZero() {
        let send = send(["--help"])
        XCTAssertEqual(send.status, 0)
        for option in [
            "--protocol", "--host", "--port", "--token", "--alert", "--title", "--badge", "--sound",
            "--content-available", "--json", "--custom", "--topic", "--push-type", "--priority",
            "--expiration", "--collapse-id", "--apns-id", "--identifier", "--format", "--cert", "--key",
            "--key-passphrase", "--jwt-key", "--ca", "--insecure", "--timeout", "--quiet-period", "--help",
        ] {
            XCTAssertTrue(send.lines.joined().contains(option + " "), option)
        }
        XCTAssertTrue(send.lines.joined().contains("--quiet-period seconds (default 1)"), "the wait is stated")
        let feedback = feedback(["--help"])
        XCTAssertEqual(feedback.status, 0)
        for option in ["--host", "--port", "--cert", "--key", "--key-passphrase", "--ca", "--insecure", "--timeout"] {
            XCTAssertTrue(feedback.lines.joined().contains(option + " "), option)
        }
    }
}
