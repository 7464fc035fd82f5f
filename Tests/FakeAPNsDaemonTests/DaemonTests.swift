import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: TLSClient, a gateway client that sends raw frames and reads the raw answer.
@testable import FakeAPNs

#if canImport(Glibc)
import Glibc
#endif

/// The `fake-apns` executable as a user runs it: start line, one JSON line per notification,
/// clean stop on signals, usage errors.
final class DaemonTests: XCTestCase {
    private func startedDaemon(_ arguments: [String] = []) throws -> (DaemonFixture, Int) {
        let (daemon, ports) = try startedDaemonWithPorts(arguments)
        return (daemon, ports.gateway)
    }

    private func startedDaemonWithPorts(_ arguments: [String]) throws -> (DaemonFixture, (gateway: Int, feedback: Int)) {
        let daemon = try DaemonFixture.started(arguments, for: self)
        let start = daemon.startLine
        XCTAssertEqual(start["event"]?.stringValue, "listening")
        let gateway = try XCTUnwrap(start["listeners"]?[0])
        XCTAssertEqual(gateway["name"]?.stringValue, "gateway")
        XCTAssertEqual(gateway["host"]?.stringValue, "127.0.0.1")
        let port = try XCTUnwrap(gateway["port"]?.intValue)
        XCTAssertGreaterThan(port, 0)
        let feedback = try XCTUnwrap(start["listeners"]?[1])
        XCTAssertEqual(feedback["name"]?.stringValue, "feedback")
        let feedbackPort = try XCTUnwrap(feedback["port"]?.intValue)
        XCTAssertGreaterThan(feedbackPort, 0)
        let http2 = try XCTUnwrap(start["listeners"]?[2])
        XCTAssertEqual(http2["name"]?.stringValue, "http2")
        http2Port = try XCTUnwrap(http2["port"]?.intValue)
        let channels = try XCTUnwrap(start["listeners"]?[3])
        XCTAssertEqual(channels["name"]?.stringValue, "channels")
        XCTAssertGreaterThan(try XCTUnwrap(channels["port"]?.intValue), 0)
        let web = try XCTUnwrap(start["listeners"]?[4])
        XCTAssertEqual(web["name"]?.stringValue, "web")
        webPort = try XCTUnwrap(web["port"]?.intValue)
        XCTAssertGreaterThan(webPort, 0)
        return (daemon, (port, feedbackPort))
    }

    private var http2Port = 0
    private var webPort = 0

    /// `fake-apns ARGUMENTS`, the built executable as a user runs it: exit status and its JSON line.
    private func fakeAPNs(_ arguments: [String]) throws -> (status: Int32, line: JSONValue?) {
        let result = try runTool(DaemonFixture.executable.path, arguments)
        let line = result.output.split(separator: "\n").last.flatMap { try? JSONValue(parsing: String($0)) }
        return (result.status, line)
    }

    /// One control API call with curl: status and JSON body.
    private func api(_ method: String, _ path: String, _ body: String? = nil) throws -> (status: Int, json: JSONValue?) {
        let result = try curl(port: webPort, method, path, json: body)
        XCTAssertEqual(result.exit, 0, result.error)
        return (result.status, result.body.isEmpty ? nil : try? JSONValue(parsing: result.body))
    }

    func testPrintsOneJSONLinePerAcceptedNotification() throws {
        let (daemon, port) = try startedDaemon()
        let client = try TLSClient(host: "127.0.0.1", port: port)
        try client.send(
            BinaryEncoder.enhanced(identifier: 42, expiration: 1_900_000_000, token: Fixtures.token, payload: Fixtures.alert)
                + BinaryEncoder.simple(token: Fixtures.otherToken, payload: Array("not json".utf8)))
        let first = try daemon.next()
        XCTAssertEqual(first["event"]?.stringValue, "notification")
        XCTAssertEqual(first["token"]?.stringValue, Fixtures.token.hex)
        XCTAssertEqual(first["identifier"]?.intValue, 42)
        XCTAssertEqual(first["expiration"]?.intValue, 1_900_000_000)
        XCTAssertEqual(first["priority"]?.intValue, 10)
        XCTAssertEqual(first["format"]?.stringValue, "enhanced")
        XCTAssertEqual(first["payload"]?["aps"]?["alert"]?.stringValue, "Hello")
        XCTAssertNotNil(first["receivedAt"]?.stringValue)
        let second = try daemon.next()
        XCTAssertEqual(second["format"]?.stringValue, "simple")
        XCTAssertEqual(second["payload"], .null)
        XCTAssertEqual(second["payloadText"]?.stringValue, "not json")
        XCTAssertNotNil(second["payloadError"]?.stringValue)
        XCTAssertEqual(daemon.stop(), 0)
    }

    func testSIGTERMWithClientsConnectedExitsZeroWithinASecondAndFreesThePort() throws {
        let (daemon, port) = try startedDaemon()
        let idle = try RawConnection(port: port)
        let stalled = try TLSClient(host: "127.0.0.1", port: port)
        try stalled.send([1, 0, 0])
        XCTAssertEqual(daemon.stop(signal: SIGTERM, timeout: .seconds(3)), 0)
        let again = try FakeAPNsServer.started(configuration: .init(gatewayPort: port))
        again.stop()
        withExtendedLifetime((idle, stalled)) {}
    }

    func testSIGINTExitsZero() throws {
        let (daemon, _) = try startedDaemon()
        XCTAssertEqual(daemon.stop(signal: SIGINT, timeout: .seconds(3)), 0)
    }

    func testClientCertificatesCanBeRequired() throws {
        let (daemon, port) = try startedDaemon(["--client-certificates", "required"])
        let client = try TLSClient(host: "127.0.0.1", port: port, identity: .testClient)
        try client.send(BinaryEncoder.frame(token: Fixtures.token, payload: Fixtures.alert, identifier: 3))
        let line = try daemon.next()
        XCTAssertEqual(line["clientTopic"]?.stringValue, "com.example.app")
        XCTAssertEqual(daemon.stop(), 0)
    }

    func testHelpListsEveryOption() throws {
        let daemon = try DaemonFixture(arguments: ["--help"])
        XCTAssertEqual(daemon.waitForExit(timeout: .seconds(10)), 0)
        XCTAssertTrue(eventually { daemon.lines.snapshot().contains { $0.contains("Usage errors exit 64") } })
        let help = daemon.lines.removeAll().joined(separator: "\n")
        for option in ["--host", "--gateway-port", "--feedback-port", "--http2-port", "--channels-port", "--web-port", "--web-host", "--web-public", "--retention", "--log", "--log-file", "--auth", "--jwt-key", "--environment", "--devices", "--broadcast-bundles", "--strict", "--cert", "--key", "--key-passphrase", "--client-certificates",
                       "--trusted-ca", "--max-payload-size", "--version", "--help"] {
            XCTAssertTrue(help.contains(option), "help mentions \(option)")
        }
    }

    func testDevicesFileStrictModeAndRejectionLines() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("devices-\(UUID().uuidString).txt")
        try """
            # test devices
            \(Fixtures.token.hex) com.example.app sandbox

            \(Fixtures.otherToken.hex) production
            """.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let (daemon, port) = try startedDaemon(["--devices", file.path, "--strict"])
        let accepted = try TLSClient(host: "127.0.0.1", port: port)
        try accepted.send(BinaryEncoder.enhanced(identifier: 1, token: Fixtures.token, payload: Fixtures.alert))
        XCTAssertEqual(try daemon.next()["identifier"]?.intValue, 1)
        for (identifier, token) in [(UInt32(2), Fixtures.otherToken), (3, DeviceToken(bytes: [1, 2, 3]))] {
            let client = try TLSClient(host: "127.0.0.1", port: port)
            try client.send(BinaryEncoder.enhanced(identifier: identifier, token: token, payload: Fixtures.alert))
            XCTAssertEqual(BinaryErrorResponse(bytes: try client.readToEnd())?.status, .invalidToken)
            let line = try daemon.next()
            XCTAssertEqual(line["event"]?.stringValue, "rejected")
            XCTAssertEqual(line["identifier"]?.intValue, Int(identifier))
            XCTAssertEqual(line["status"]?.intValue, 8)
            XCTAssertEqual(line["reason"]?.stringValue, "Invalid token")
            XCTAssertEqual(line["cause"]?.stringValue, "registry")
        }
        XCTAssertEqual(daemon.stop(), 0)
    }

    func testFeedbackListenerServesTuplesOfTheDaemon() throws {
        let (daemon, ports) = try startedDaemonWithPorts([])
        XCTAssertEqual(try FeedbackClient.read(host: "127.0.0.1", port: ports.feedback), [])
        XCTAssertEqual(daemon.stop(), 0)
    }

    func testBadDevicesFileFailsToStartNamingTheLine() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("devices-\(UUID().uuidString).txt")
        try "abcd\nnot-hex\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let daemon = try DaemonFixture(arguments: DaemonFixture.freePorts + ["--devices", file.path])
        XCTAssertEqual(daemon.waitForExit(timeout: .seconds(10)), 1)
        XCTAssertTrue(daemon.standardError.contains("line 2"), daemon.standardError)
    }

    func testDevicesFileRefusesATokenLongerThanAPNsTakes() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("devices-\(UUID().uuidString).txt")
        try "\(String(repeating: "ab", count: 100)) com.example.app\n\(String(repeating: "ab", count: 101))\n"
            .write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let daemon = try DaemonFixture(arguments: DaemonFixture.freePorts + ["--devices", file.path])
        XCTAssertEqual(daemon.waitForExit(timeout: .seconds(10)), 1)
        XCTAssertTrue(daemon.standardError.contains("line 2: a token of 101 bytes; APNs takes 1 to 100"), daemon.standardError)
    }

    func testServesHTTP2WithTokenAuthenticationFromAJWTKeyFile() throws {
        let p8 = testCertificatePath("AuthKey_ABC123DEFG.p8")
        let (daemon, _) = try startedDaemon(["--jwt-key", "ABC123DEFG:DEF123GHIJ:\(p8)"])
        let client = try ProviderAPIClient(host: "127.0.0.1", port: http2Port)
        let token = try ProviderTokenSigner.sign(keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
        XCTAssertEqual(try client.send(.push(extra: [("authorization", "bearer \(token)")])).status, 200)
        let line = try daemon.next()
        XCTAssertEqual(line["format"]?.stringValue, "http2")
        XCTAssertEqual(line["topic"]?.stringValue, "com.example.app")
        XCTAssertNotNil(line["apnsID"]?.stringValue)
        XCTAssertEqual(try client.send(.push()).reason, "MissingProviderToken")
        XCTAssertEqual(try daemon.next()["reason"]?.stringValue, "MissingProviderToken")
        XCTAssertEqual(daemon.stop(), 0)
    }

    /// The plaintext listener is named in the start line when on, and its pushes and
    /// connections are logged with their transport.
    func testThePlaintextListenerIsInTheStartLineAndItsRecordsSayHowTheyCame() throws {
        let daemon = try DaemonFixture.started(["--plaintext-port", "0"], for: self)
        let start = daemon.startLine
        let listeners = try XCTUnwrap(start["listeners"]?.arrayValue)
        XCTAssertEqual(listeners.compactMap { $0["name"]?.stringValue }, ["gateway", "feedback", "http2", "channels", "plaintext", "web"])
        let plaintext = try XCTUnwrap(listeners.first { $0["name"]?.stringValue == "plaintext" })
        XCTAssertEqual(plaintext["host"]?.stringValue, "127.0.0.1")
        let port = try XCTUnwrap(plaintext["port"]?.intValue)
        XCTAssertGreaterThan(port, 0)
        let result = try runTool("/usr/bin/curl", [
            "--silent", "--http1.1", "--fail-with-body", "--header", "apns-topic: com.example.app",
            "--data", #"{"aps":{"alert":"plain"}}"#, "http://127.0.0.1:\(port)/3/device/\(Fixtures.token.hex)",
        ])
        XCTAssertEqual(result.status, 0, result.error + result.output)
        let opened = try daemon.next(["connection-opened"])
        XCTAssertEqual(opened["listener"]?.stringValue, "plaintext")
        XCTAssertEqual(opened["transport"]?.stringValue, "plaintext")
        let line = try daemon.next()
        XCTAssertEqual(line["transport"]?.stringValue, "http/1.1")
        XCTAssertEqual(line["payload"]?["aps"]?["alert"]?.stringValue, "plain")
        XCTAssertEqual(daemon.stop(), 0)

        let refused = try runTool(DaemonFixture.executable.path, DaemonFixture.freePorts + ["--plaintext-port", "0", "--auth", "certificate"])
        XCTAssertEqual(refused.status, 64)
        XCTAssertTrue(refused.error.contains("the client certificate needs TLS"), refused.error)
    }

    func testLogsConnectionsAsJSONLinesAndAsTextToAFile() throws {
        let (daemon, port) = try startedDaemon()
        let client = try TLSClient(host: "127.0.0.1", port: port)
        try client.send(BinaryEncoder.enhanced(identifier: 5, token: Fixtures.token, payload: Fixtures.alert))
        XCTAssertEqual(try daemon.next(["connection-opened"])["listener"]?.stringValue, "gateway")
        XCTAssertEqual(try daemon.next()["identifier"]?.intValue, 5)
        client.close()
        XCTAssertEqual(try daemon.next(["connection-closed"])["listener"]?.stringValue, "gateway")
        XCTAssertEqual(daemon.stop(), 0)

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("fake-apns-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: file) }
        let (textDaemon, textPort) = try startedDaemon(["--log", "text", "--log-file", file.path])
        let textClient = try TLSClient(host: "127.0.0.1", port: textPort)
        try textClient.send(BinaryEncoder.enhanced(identifier: 6, token: Fixtures.token, payload: Fixtures.alert))
        XCTAssertTrue(eventually {
            ((try? String(contentsOf: file, encoding: .utf8)) ?? "").contains("accepted #1 enhanced token \(Fixtures.token.hex) id 6")
        })
        XCTAssertEqual(textDaemon.stop(), 0)
    }

    func testEnvironmentVariablesConfigureTheDaemon() throws {
        let daemon = try DaemonFixture.started(
            onFreePorts: false,
            environment: ["FAKE_APNS_GATEWAY_PORT": "0", "FAKE_APNS_FEEDBACK_PORT": "0", "FAKE_APNS_HTTP2_PORT": "0",
                          "FAKE_APNS_WEB_PORT": "0", "FAKE_APNS_ENVIRONMENT": "production"],
            for: self)
        let start = daemon.startLine
        XCTAssertEqual(start["environment"]?.stringValue, "production")
        XCTAssertNotEqual(start["listeners"]?[0]?["port"]?.intValue, 2195)
        XCTAssertEqual(daemon.stop(), 0)
    }

    func testEndToEndSendWaitFaultRejectionResetAndStop() throws {
        let (daemon, gatewayPort) = try startedDaemon()
        let token = Fixtures.token.hex
        XCTAssertEqual(try api("GET", "/healthz").status, 200)

        // HTTP/2, sent by the daemon's own client, awaited through the control API.
        let http2 = try fakeAPNs(["send", "--port", String(http2Port), "--token", token, "--alert", "Over HTTP/2",
                                  "--topic", "com.example.app"])
        XCTAssertEqual(http2.status, 0)
        XCTAssertEqual(http2.line?["status"]?.intValue, 200)
        let first = try api("GET", "/api/v1/notifications/next?timeout=5&token=\(token)")
        XCTAssertEqual(first.status, 200)
        XCTAssertEqual(first.json?["payload"]?["aps"]?["alert"]?.stringValue, "Over HTTP/2")
        XCTAssertEqual(first.json?["format"]?.stringValue, "http2")

        // The binary gateway, the same way.
        let binary = try fakeAPNs(["send", "--protocol", "binary", "--port", String(gatewayPort), "--token", token,
                                   "--alert", "Over binary", "--identifier", "7"])
        XCTAssertEqual(binary.status, 0)
        XCTAssertEqual(binary.line?["accepted"], true)
        let second = try api("GET", "/api/v1/notifications/next?timeout=5")
        XCTAssertEqual(second.json?["identifier"]?.intValue, 7)

        // A fault injected over the API refuses the next binary send.
        let fault = try api("POST", "/api/v1/faults", #"{"match":{"token":"\#(token)"},"action":{"reject":8}}"#)
        XCTAssertEqual(fault.status, 201)
        let refused = try fakeAPNs(["send", "--protocol", "binary", "--port", String(gatewayPort), "--token", token,
                                    "--alert", "Refused", "--identifier", "8"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertEqual(refused.line?["status"]?.intValue, 8)
        let rejection = try api("GET", "/api/v1/rejections/next?timeout=5")
        XCTAssertEqual(rejection.status, 200)
        XCTAssertEqual(rejection.json?["reason"]?.stringValue, "Invalid token")
        XCTAssertEqual(rejection.json?["identifier"]?.intValue, 8)

        // Reset: no fault, nothing stored; sending works again.
        XCTAssertEqual(try api("POST", "/api/v1/reset").status, 200)
        XCTAssertEqual(try api("GET", "/api/v1/faults").json?["faults"]?.arrayValue?.count, 0)
        XCTAssertEqual(try api("GET", "/api/v1/notifications").json?["notifications"]?.arrayValue?.count, 0)
        XCTAssertEqual(try fakeAPNs(["send", "--protocol", "binary", "--port", String(gatewayPort), "--token", token,
                                     "--alert", "After reset"]).status, 0)
        XCTAssertEqual(try api("GET", "/api/v1/notifications/next?timeout=5").json?["payload"]?["aps"]?["alert"]?.stringValue,
                       "After reset")
        XCTAssertTrue(try api("GET", "/metrics").status == 200)

        XCTAssertEqual(daemon.stop(signal: SIGTERM, timeout: .seconds(3)), 0)
    }

    func testBadAuthModeExits64() throws {
        let daemon = try DaemonFixture(arguments: ["--auth", "password"])
        XCTAssertEqual(daemon.waitForExit(timeout: .seconds(10)), 64)
        XCTAssertTrue(daemon.standardError.contains("--auth"), daemon.standardError)
    }

    func testUnknownOptionExits64NamingIt() throws {
        let daemon = try DaemonFixture(arguments: ["--gateway-prot", "1"])
        XCTAssertEqual(daemon.waitForExit(timeout: .seconds(10)), 64)
        XCTAssertTrue(daemon.standardError.contains("--gateway-prot"), daemon.standardError)
    }

    func testBadPortExits64() throws {
        let daemon = try DaemonFixture(arguments: ["--gateway-port", "70000"])
        XCTAssertEqual(daemon.waitForExit(timeout: .seconds(10)), 64)
        XCTAssertTrue(daemon.standardError.contains("--gateway-port"), daemon.standardError)
    }

    func testMissingCertificateFileIsAClearError() throws {
        let daemon = try DaemonFixture(
            arguments: DaemonFixture.freePorts + ["--cert", "/nonexistent.pem", "--key", "/nonexistent.key"])
        XCTAssertEqual(daemon.waitForExit(timeout: .seconds(10)), 1)
        XCTAssertTrue(daemon.standardError.contains("nonexistent.pem"), daemon.standardError)
    }
}
