import FakeAPNs
import FakeAPNsTestSupport
import Foundation
import XCTest

// Reads internals on purpose: ChannelsCommand and SendCommand, run in this process.
@testable import FakeAPNsDaemon

/// `fake-apns channels` and `fake-apns send --broadcast`, the built executable against
/// python3-h2's `apns_broadcast_server.py`: what went on the wire, the line printed, the exit
/// status; and their usage errors.
final class ChannelsCommandTests: XCTestCase {
    private static let payload = #"{"aps":{"event":"update","content-state":{"score":"2-1"},"timestamp":1700000000}}"#

    private var server: BroadcastTestServer!

    override func setUpWithError() throws {
        server = try BroadcastTestServer()
    }

    override func tearDown() {
        server = nil
    }

    /// Runs the built `fake-apns` with `arguments` and the test server's port.
    private func run(_ arguments: [String]) throws -> CommandOutcome {
        try CommandOutcome(executable: arguments + ["--port", String(server.port)])
    }

    private func channels(_ arguments: [String]) -> CommandOutcome {
        CommandOutcome(running: ChannelsCommand.run, arguments)
    }

    private func send(_ arguments: [String]) -> CommandOutcome {
        CommandOutcome(running: SendCommand.run, arguments)
    }

    private func lastRequest() throws -> BroadcastTestServer.Recorded {
        try XCTUnwrap(server.requests().last)
    }

    // MARK: - Against the test server

    func testCreateReadListAndDeleteEachPrintTheirOutcome() throws {
        let requestID = "5b7b2a0e-3f5c-4d1e-9a3b-2c1d0e9f8a7b"
        let create = try run([
            "channels", "create", "--bundle", "com.example.app", "--storage-policy", "1", "--request-id", requestID,
        ])
        XCTAssertEqual(create.status, 0, "\(create.errors)")
        let created = try create.json()
        XCTAssertEqual(created["action"]?.stringValue, "create")
        XCTAssertEqual(created["status"]?.intValue, 201)
        XCTAssertEqual(created["requestID"]?.stringValue, requestID)
        XCTAssertEqual(created["reason"], .null)
        let channelID = try XCTUnwrap(created["channelID"]?.stringValue)
        var sent = try lastRequest()
        XCTAssertEqual(sent.method, "POST")
        XCTAssertEqual(sent.path, "/1/apps/com.example.app/channels")
        XCTAssertEqual(sent.header("apns-request-id"), requestID)
        XCTAssertEqual(sent.body, #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#)

        let read = try run(["channels", "read", "--bundle", "com.example.app", "--channel", channelID])
        XCTAssertEqual(read.status, 0, "\(read.errors)")
        let readLine = try read.json()
        XCTAssertEqual(readLine["status"]?.intValue, 200)
        XCTAssertEqual(readLine["storagePolicy"]?.intValue, 1)
        XCTAssertEqual(readLine["pushType"]?.stringValue, "LiveActivity")
        XCTAssertNotNil(readLine["requestID"]?.stringValue)
        sent = try lastRequest()
        XCTAssertEqual(sent.method, "GET")
        XCTAssertEqual(sent.header("apns-channel-id"), channelID)

        let list = try run(["channels", "list", "--bundle", "com.example.app"])
        XCTAssertEqual(list.status, 0, "\(list.errors)")
        XCTAssertEqual(try list.json()["channels"], .array([.string(channelID)]))
        XCTAssertEqual(try lastRequest().path, "/1/apps/com.example.app/all-channels")

        let delete = try run(["channels", "delete", "--bundle", "com.example.app", "--channel", channelID])
        XCTAssertEqual(delete.status, 0, "\(delete.errors)")
        XCTAssertEqual(try delete.json()["status"]?.intValue, 204)
        sent = try lastRequest()
        XCTAssertEqual(sent.method, "DELETE")
        XCTAssertEqual(sent.header("apns-channel-id"), channelID)

        let gone = try run(["channels", "read", "--bundle", "com.example.app", "--channel", channelID])
        XCTAssertEqual(gone.status, 1)
        let goneLine = try gone.json()
        XCTAssertEqual(goneLine["status"]?.intValue, 400)
        XCTAssertEqual(goneLine["reason"]?.stringValue, "ChannelNotRegistered")
    }

    func testTheJWTKeySignsTheManagementRequest() throws {
        let key = "ABC123DEFG:DEF123GHIJ:" + testCertificatePath("AuthKey_ABC123DEFG.p8")
        let list = try run(["channels", "list", "--bundle", "com.example.app", "--jwt-key", key])
        XCTAssertEqual(list.status, 0, "\(list.errors)")
        let authorization = try XCTUnwrap(lastRequest().header("authorization"))
        let claims = try ProviderTokenVerifier(keys: [.test]).verify(authorization: authorization, now: Date()).get()
        XCTAssertEqual(claims.keyID, "ABC123DEFG")
        XCTAssertEqual(claims.teamID, "DEF123GHIJ")
    }

    func testSendBroadcastSendsApplesHeadersAndPrintsTheIDs() throws {
        let client = try ProviderAPIClient(host: "127.0.0.1", port: server.port)
        defer { client.close() }
        let channelID = try XCTUnwrap(client.createChannel(bundleID: "com.example.app", storagePolicy: 1).channelID)

        let sent = try run([
            "send", "--broadcast", "--bundle", "com.example.app", "--channel", channelID, "--json", Self.payload,
        ])
        XCTAssertEqual(sent.status, 0, "\(sent.errors)")
        let line = try sent.json()
        XCTAssertEqual(line["protocol"]?.stringValue, "http2")
        XCTAssertEqual(line["broadcast"], true)
        XCTAssertEqual(line["status"]?.intValue, 200)
        XCTAssertNotNil(line["uniqueID"]?.stringValue)
        XCTAssertNotNil(line["requestID"]?.stringValue)
        XCTAssertEqual(line["reason"], .null)
        var request = try lastRequest()
        XCTAssertEqual(request.method, "POST")
        XCTAssertEqual(request.path, "/4/broadcasts/apps/com.example.app")
        XCTAssertEqual(request.header("apns-channel-id"), channelID)
        XCTAssertEqual(request.header("apns-push-type"), "LiveActivity")
        XCTAssertEqual(request.header("apns-priority"), "10")
        XCTAssertNil(request.header("apns-expiration"))
        XCTAssertNil(request.header("apns-topic"))
        XCTAssertEqual(request.body, Self.payload)

        let tuned = try run([
            "send", "--broadcast", "--bundle", "com.example.app", "--channel", channelID, "--json", Self.payload,
            "--priority", "5", "--expiration", "0", "--push-type", "liveactivity",
        ])
        XCTAssertEqual(tuned.status, 0, "\(tuned.errors)")
        request = try lastRequest()
        XCTAssertEqual(request.header("apns-priority"), "5")
        XCTAssertEqual(request.header("apns-expiration"), "0")
        XCTAssertEqual(request.header("apns-push-type"), "liveactivity")
    }

    func testARefusedBroadcastExitsOneWithTheReason() throws {
        let sent = try run([
            "send", "--broadcast", "--bundle", "com.example.app", "--channel", "dHN0LXNyY2gtY2hubA==",
            "--json", Self.payload,
        ])
        XCTAssertEqual(sent.status, 1)
        let line = try sent.json()
        XCTAssertEqual(line["status"]?.intValue, 400)
        XCTAssertEqual(line["reason"]?.stringValue, "ChannelNotRegistered")
        XCTAssertNil(line["uniqueID"])
    }

    // MARK: - Usage

    func testUsageErrorsExit64AndSendNothing() throws {
        let port = ["--port", String(server.port)]
        let cases: [(CommandOutcome, String)] = [
            (channels(port), "channels takes an action"),
            (channels(["rename", "--bundle", "com.example.app"] + port), "not 'rename'"),
            (channels(["create"] + port), "--bundle is required"),
            (channels(["read", "--bundle", "com.example.app"] + port), "channels read needs --channel"),
            (channels(["create", "--bundle", "com.example.app", "--channel", "abc"] + port), "--channel applies to"),
            (channels(["create", "--bundle", "com.example.app", "--storage-policy", "2"] + port), "0 or 1"),
            (channels(["list", "--bundle", "com.example.app", "--storage-policy", "1"] + port), "create only"),
            (channels(["list", "--bundle", "com.example.app", "--jwt-key", "nope"] + port), "KEYID:TEAMID:FILE"),
            (send(["--broadcast", "--bundle", "b", "--json", "{}"] + port), "needs --channel ID and --bundle ID"),
            (
                send(["--broadcast", "--bundle", "b", "--channel", "c", "--token", "00", "--json", "{}"] + port),
                "--token does not apply to --broadcast"
            ),
            (
                send(["--broadcast", "--bundle", "b", "--channel", "c", "--protocol", "binary", "--json", "{}"]),
                "drop --protocol binary"
            ),
            (send(["--token", "00", "--channel", "c", "--json", "{}"] + port), "--channel applies to --broadcast only"),
        ]
        for (outcome, message) in cases {
            XCTAssertEqual(outcome.status, 64, "\(outcome.errors)")
            XCTAssertTrue(outcome.lines.isEmpty, "\(outcome.lines)")
            XCTAssertTrue(outcome.errors.joined().contains(message), "\(outcome.errors) lacks \(message)")
        }
        XCTAssertTrue(try server.requests().isEmpty)
    }

    func testHelpNamesTheActionsAndTheCommandIsListed() throws {
        let help = channels(["--help"])
        XCTAssertEqual(help.status, 0)
        let text = help.lines.joined(separator: "\n")
        for action in ["create", "read", "list", "delete"] {
            XCTAssertTrue(text.contains("fake-apns channels \(action) --bundle com.example.app"), action)
        }
        XCTAssertTrue(text.contains("--storage-policy 0|1"))
        XCTAssertTrue(text.contains("default 2198"))
        XCTAssertEqual(channels(["create", "--help"]).lines, help.lines)
        XCTAssertTrue(Options.help.contains("fake-apns channels"))
        XCTAssertTrue(SendCommand.help.contains("fake-apns send --broadcast --bundle com.example.app --channel"))
        let main = try runTool(DaemonFixture.executable.path, ["channels", "--help"])
        XCTAssertEqual(main.status, 0)
        XCTAssertTrue(main.output.contains("Usage: fake-apns channels create|read|list|delete"), main.output)
    }
}
