import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs
// Reads internals on purpose: Daemon, ControlAPI and DevicesFile, a daemon in this process.
@testable import FakeAPNsDaemon

/// The control API's channels, subscriptions and deliveries, over real HTTP, with broadcasts
/// sent by curl (a client independent of this code) to the daemon's HTTP/2 port.
final class ChannelControlAPITests: XCTestCase {
    private let fixture = InProcessDaemonFixture()
    private var daemon: Daemon! { fixture.daemon }
    private var api: ControlAPI! { fixture.api }
    private var http: HTTPTestClient! { fixture.http }

    private let alice: DeviceToken = "fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2"
    private let bob: DeviceToken = "0102030405060708091011121314151617181920212223242526272829303132"
    private let bundle = "com.example.app"
    /// Base64 with both characters a path must escape.
    private let fixedID = "Zm9v/+8="
    private let escapedID = "Zm9v%2F%2B8%3D"

    override func setUpWithError() throws {
        try fixture.start(for: self)
    }

    private func createChannel(policy: Int = 0, id: String? = nil) throws -> String {
        let idField = id.map { #","id":"\#($0)""# } ?? ""
        let created = try http.post("/api/v1/channels", #"{"bundle":"\#(bundle)","storagePolicy":\#(policy)\#(idField)}"#)
        XCTAssertEqual(created.status, 201, created.text)
        return try XCTUnwrap(created.json?["id"]?.stringValue, created.text)
    }

    private func escaped(_ id: String) -> String {
        id.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }

    /// A broadcast by curl over HTTP/2 to the daemon's provider port; curl's output and status.
    private func broadcast(_ channelID: String, bundle: String? = nil, score: String = "2-1") throws -> (status: Int32, output: String) {
        let result = try runTool("/usr/bin/curl", [
            "--silent", "--show-error", "--http2", "--cacert", testCertificatePath("ca.pem"),
            "--write-out", "%{http_code}", "-H", "apns-channel-id: \(channelID)", "-H", "apns-push-type: LiveActivity",
            "-H", "apns-priority: 10",
            "-d", #"{"aps":{"event":"update","timestamp":1750000000,"content-state":{"score":"\#(score)"}}}"#,
            "https://127.0.0.1:\(daemon.server.http2Port!)/4/broadcasts/apps/\(bundle ?? self.bundle)",
        ])
        return (result.status, result.output + result.error)
    }

    // MARK: - Channels

    func testCreateListGetAndDeleteAChannel() throws {
        let id = try createChannel(policy: 1)
        let other = try http.post("/api/v1/channels", #"{"bundle":"com.example.other"}"#)
        XCTAssertEqual(other.json?["storagePolicy"]?.intValue, 0, "the policy defaults to 0")

        let all = try http.get("/api/v1/channels").json?["channels"]?.arrayValue ?? []
        XCTAssertEqual(all.compactMap { $0["bundle"]?.stringValue }, ["com.example.app", "com.example.other"])
        let mine = try XCTUnwrap(http.get("/api/v1/channels?bundle=\(bundle)").json?["channels"]?.arrayValue)
        XCTAssertEqual(mine.count, 1)
        XCTAssertEqual(mine.first?["id"]?.stringValue, id)
        XCTAssertEqual(mine.first?["environment"]?.stringValue, "sandbox")
        XCTAssertEqual(mine.first?["storagePolicy"]?.intValue, 1)
        XCTAssertEqual(mine.first?["subscriberCount"]?.intValue, 0)
        XCTAssertNotNil(mine.first?["createdAt"]?.stringValue)
        XCTAssertEqual(try http.get("/api/v1/channels?bundle=com.nobody").json?["channels"]?.arrayValue?.count, 0)

        let one = try http.get("/api/v1/channels/\(escaped(id))")
        XCTAssertEqual(one.status, 200, one.text)
        XCTAssertEqual(one.json?["subscriberCount"]?.intValue, 0)
        XCTAssertNil(one.json?["subscribers"], "the subscribers are read page by page")
        XCTAssertEqual(daemon.server.channels.channel(id: id)?.storagePolicy, .mostRecentMessage)

        XCTAssertEqual(try http.delete("/api/v1/channels/\(escaped(id))").status, 204)
        let gone = try http.get("/api/v1/channels/\(escaped(id))")
        XCTAssertEqual(gone.status, 404)
        XCTAssertEqual(gone.error, "not_found")
        XCTAssertTrue(gone.message.contains("%2F"), gone.message)
        XCTAssertEqual(try http.delete("/api/v1/channels/\(escaped(id))").status, 404)
    }

    func testAFixedIDIsTakenOnceAndReadThroughCurlPercentEncoded() throws {
        XCTAssertEqual(try createChannel(id: fixedID), fixedID)
        let read = try curl(port: http.port, "GET", "/api/v1/channels/\(escapedID)")
        XCTAssertEqual(read.status, 200, read.body)
        XCTAssertEqual(try JSONValue(parsing: read.body)["id"]?.stringValue, fixedID)
        // Unescaped, the '/' splits the path: no such endpoint.
        XCTAssertEqual(try http.get("/api/v1/channels/\(fixedID)").status, 404)

        let again = try http.post("/api/v1/channels", #"{"bundle":"\#(bundle)","id":"\#(fixedID)"}"#)
        XCTAssertEqual(again.status, 409)
        XCTAssertEqual(again.error, "conflict")
        let bad = try http.post("/api/v1/channels", #"{"bundle":"\#(bundle)","id":"not base64!"}"#)
        XCTAssertEqual(bad.status, 400)
        XCTAssertEqual(bad.error, "invalid_value")
        XCTAssertTrue(bad.message.contains("field 'id'"), bad.message)
    }

    func testChannelRequestsTheAPIRefuses() throws {
        let cases: [(String, String, String, Int, String)] = [
            ("POST", "/api/v1/channels", #"{"bundle":"b","colour":1}"#, 400, "unknown_field"),
            ("POST", "/api/v1/channels", #"{"storagePolicy":1}"#, 400, "missing_field"),
            ("POST", "/api/v1/channels", #"{"bundle":"b","storagePolicy":2}"#, 400, "invalid_value"),
            ("POST", "/api/v1/channels", #"{"bundle":""}"#, 400, "invalid_value"),
            ("POST", "/api/v1/channels", "[]", 400, "wrong_type"),
            ("GET", "/api/v1/channels?colour=red", "", 400, "unknown_parameter"),
            ("POST", "/api/v1/channels/bm9uZQ%3D%3D/subscriptions", #"{"token":"\#(alice.hex)"}"#, 404, "not_found"),
            ("DELETE", "/api/v1/channels/bm9uZQ%3D%3D/subscriptions/\(alice.hex)", "", 404, "not_found"),
            ("GET", "/api/v1/deliveries?since=x", "", 400, "invalid_parameter"),
            ("GET", "/api/v1/deliveries/0", "", 400, "invalid_path"),
            ("GET", "/api/v1/deliveries/7", "", 404, "not_found"),
            ("GET", "/api/v1/deliveries/next?timeout=61", "", 400, "invalid_parameter"),
        ]
        for (method, path, body, status, code) in cases {
            let response = try http.request(method, path, body: Array(body.utf8))
            XCTAssertEqual(response.status, status, "\(method) \(path): \(response.text)")
            XCTAssertEqual(response.error, code, "\(method) \(path): \(response.text)")
        }
        let id = escaped(try createChannel())
        for (path, body, code) in [
            ("/api/v1/channels/\(id)/subscriptions", #"{"token":"xyz"}"#, "invalid_token"),
            ("/api/v1/channels/\(id)/subscriptions", #"{"token":"\#(alice.hex)","topic":"t"}"#, "unknown_field"),
        ] {
            let response = try http.post(path, body)
            XCTAssertEqual(response.status, 400, response.text)
            XCTAssertEqual(response.error, code, response.text)
        }
        let notSubscribed = try http.delete("/api/v1/channels/\(id)/subscriptions/\(alice.hex)")
        XCTAssertEqual(notSubscribed.status, 404)
        XCTAssertTrue(notSubscribed.message.contains("not subscribed"), notSubscribed.message)
        XCTAssertEqual(try http.delete("/api/v1/channels/\(id)/subscriptions/zz").error, "invalid_token")

        for (method, path, allow) in [
            ("PUT", "/api/v1/channels", "GET, POST"), ("POST", "/api/v1/channels/\(id)", "GET, DELETE"),
            ("PUT", "/api/v1/channels/\(id)/subscriptions", "GET, POST"),
            ("GET", "/api/v1/channels/\(id)/subscriptions/\(alice.hex)", "DELETE"),
            ("POST", "/api/v1/deliveries", "GET, DELETE"), ("DELETE", "/api/v1/deliveries/next", "GET"),
        ] {
            let response = try http.request(method, path, body: Array("{}".utf8))
            XCTAssertEqual(response.status, 405, "\(method) \(path)")
            XCTAssertEqual(response.error, "method_not_allowed")
            XCTAssertEqual(response.header("Allow"), allow, "\(method) \(path)")
        }
    }

    func testTheLimitPerBundleIsNamed() throws {
        daemon.server.channels.maximumChannelsPerBundle = 1
        _ = try createChannel()
        let refused = try http.post("/api/v1/channels", #"{"bundle":"\#(bundle)","id":"\#(fixedID)"}"#)
        XCTAssertEqual(refused.status, 400)
        XCTAssertEqual(refused.error, "limit_reached")
        XCTAssertTrue(refused.message.contains("\(bundle) cannot have another channel: the limit is 1"), refused.message)
        XCTAssertEqual(daemon.server.channels.count, 1)
    }

    // MARK: - Subscriptions and deliveries

    func testABroadcastByCurlIsDeliveredToEachSubscriberAndToALateOneStored() throws {
        let id = try createChannel(policy: 1)
        let path = "/api/v1/channels/\(escaped(id))/subscriptions"
        let subscribed = try http.post(path, #"{"token":"\#(alice.hex)"}"#)
        XCTAssertEqual(subscribed.status, 201, subscribed.text)
        XCTAssertEqual(subscribed.json?["token"]?.stringValue, alice.hex, subscribed.text)
        XCTAssertEqual(subscribed.json?["channel"]?.stringValue, id)
        XCTAssertEqual(subscribed.json?["subscriberCount"]?.intValue, 1)

        let sent = try broadcast(id)
        XCTAssertEqual(sent.status, 0, sent.output)
        XCTAssertTrue(sent.output.hasSuffix("200"), sent.output)
        let delivered = try http.get("/api/v1/deliveries/next?timeout=10")
        XCTAssertEqual(delivered.status, 200, delivered.text)
        let delivery = try XCTUnwrap(delivered.json)
        XCTAssertEqual(delivery["sequence"]?.intValue, 1)
        XCTAssertEqual(delivery["token"]?.stringValue, alice.hex)
        XCTAssertEqual(delivery["channel"]?.stringValue, id)
        XCTAssertEqual(delivery["storedMessage"]?.boolValue, false)
        XCTAssertNotNil(delivery["deliveredAt"]?.stringValue)
        XCTAssertEqual(delivery["notification"]?["format"]?.stringValue, "broadcast")
        XCTAssertEqual(delivery["notification"]?["payload"]?["aps"]?["content-state"]?["score"]?.stringValue, "2-1")

        // Bob subscribes later: the stored message reaches him at once.
        XCTAssertEqual(try http.post(path, #"{"token":"\#(bob.hex)"}"#).json?["subscriberCount"]?.intValue, 2)
        let stored = try http.get("/api/v1/deliveries/next?timeout=10&token=\(bob.hex)&channel=\(escaped(id))")
        XCTAssertEqual(stored.json?["storedMessage"]?.boolValue, true, stored.text)
        XCTAssertEqual(stored.json?["sequence"]?.intValue, 2)

        // The history keeps what was popped.
        let listed = try http.get("/api/v1/deliveries?channel=\(escaped(id))").json
        XCTAssertEqual(listed?["deliveries"]?.arrayValue?.compactMap { $0["token"]?.stringValue }, [alice.hex, bob.hex])
        XCTAssertEqual(listed?["dropped"]?.intValue, 0)
        XCTAssertEqual(try http.get("/api/v1/deliveries?since=1").json?["deliveries"]?.arrayValue?.count, 1)
        XCTAssertEqual(try http.get("/api/v1/deliveries?limit=1&token=\(bob.hex)").json?["deliveries"]?[0]?["sequence"]?.intValue, 2)
        XCTAssertEqual(try http.get("/api/v1/deliveries?channel=bm9uZQ%3D%3D").json?["deliveries"]?.arrayValue?.count, 0)
        XCTAssertEqual(try http.get("/api/v1/deliveries/2").json?["token"]?.stringValue, bob.hex)

        // Alice leaves: the next broadcast reaches Bob only.
        XCTAssertEqual(try http.delete("\(path)/\(alice.hex)").status, 204)
        XCTAssertEqual(try http.get(path).json?["subscribers"]?.arrayValue, [.string(bob.hex)])
        XCTAssertTrue(try broadcast(id, score: "3-1").output.hasSuffix("200"))
        let third = try http.get("/api/v1/deliveries/next?timeout=10")
        XCTAssertEqual(third.json?["token"]?.stringValue, bob.hex, third.text)
        XCTAssertEqual(third.json?["sequence"]?.intValue, 3)

        XCTAssertEqual(try http.delete("/api/v1/deliveries").status, 204)
        XCTAssertEqual(try http.get("/api/v1/deliveries").json?["deliveries"]?.arrayValue?.count, 0)
        let none = try http.get("/api/v1/deliveries/next?timeout=0.2&token=\(alice.hex)")
        XCTAssertEqual(none.status, 408)
        XCTAssertEqual(none.error, "timeout")
        XCTAssertTrue(none.message.contains("broadcast delivery matching token \(alice.hex)"), none.message)
    }

    func testAWaitStartedBeforeTheBroadcastGetsIt() throws {
        let id = try createChannel()
        XCTAssertEqual(try http.post("/api/v1/channels/\(escaped(id))/subscriptions", #"{"token":"\#(alice.hex)"}"#).status, 201)
        let answer = Locked<HTTPTestClient.Response?>(nil)
        let client = http!
        let waiter = try OSThread(name: "delivery-wait") {
            answer.withLock { $0 = try? client.get("/api/v1/deliveries/next?timeout=20") }
        }
        XCTAssertTrue(eventually(timeout: .seconds(10)) { self.daemon.server.channels.deliveries.waitingCount == 1 })
        XCTAssertTrue(try broadcast(id).output.hasSuffix("200"))
        waiter.join()
        XCTAssertEqual(answer.withLock { $0?.json?["token"]?.stringValue }, alice.hex)
    }

    func testResetForgetsChannelsAndDeliveries() throws {
        let id = try createChannel()
        XCTAssertEqual(try http.post("/api/v1/channels/\(escaped(id))/subscriptions", #"{"token":"\#(alice.hex)"}"#).status, 201)
        XCTAssertTrue(try broadcast(id).output.hasSuffix("200"))
        XCTAssertEqual(try http.post("/api/v1/reset").status, 200)
        XCTAssertEqual(try http.get("/api/v1/channels").json?["channels"]?.arrayValue?.count, 0)
        XCTAssertEqual(try http.get("/api/v1/deliveries").json?["deliveries"]?.arrayValue?.count, 0)
        XCTAssertEqual(daemon.server.channels.deliveries.count, 0)
    }

    func testBroadcastBundlesRefusesOtherBundles() throws {
        try fixture.start(["--broadcast-bundles", "\(bundle),com.example.second"], for: self)
        XCTAssertEqual(daemon.server.channels.broadcastBundleIDs, [bundle, "com.example.second"])
        XCTAssertTrue(daemon.server.channels.isBroadcastEnabled(for: bundle))
        XCTAssertFalse(daemon.server.channels.isBroadcastEnabled(for: "com.example.other"))
        let channel = try createChannel()
        XCTAssertTrue(try broadcast(channel).output.hasSuffix("200"))
        let refused = try broadcast(channel, bundle: "com.example.other").output
        XCTAssertEqual(refused, #"{"reason":"FeatureNotEnabled"}400"#)
        let rejection = try http.get("/api/v1/rejections/next?timeout=5&reason=FeatureNotEnabled")
        XCTAssertEqual(rejection.json?["channelOperation"]?.stringValue, "broadcast", rejection.text)
        XCTAssertEqual(rejection.json?["topic"]?.stringValue, "com.example.other", rejection.text)
        XCTAssertEqual(rejection.json?["channel"]?.stringValue, channel, rejection.text)
        XCTAssertNotNil(rejection.json?["requestID"]?.stringValue, rejection.text)
        try fixture.start(for: self)
        XCTAssertNil(daemon.server.channels.broadcastBundleIDs, "without the option, every bundle")
        XCTAssertThrowsError(try Options.parse(["--broadcast-bundles", "a,,b"])) { error in
            XCTAssertTrue("\(error)".contains("--broadcast-bundles takes bundle ids separated by commas"), "\(error)")
        }
    }

    func testAFaultRuleFromTheControlAPIMatchesAChannel() throws {
        let busy = try createChannel()
        let quiet = try createChannel()
        let added = try http.post(
            "/api/v1/faults", #"{"match":{"channel":"\#(busy)"},"action":{"respond":"TooManyRequests"},"times":"always"}"#)
        XCTAssertEqual(added.status, 201, added.text)
        let listed = try http.get("/api/v1/faults").json?["faults"]?[0]
        XCTAssertEqual(listed?["match"]?["channel"]?.stringValue, busy)
        XCTAssertEqual(try broadcast(busy).output, #"{"reason":"TooManyRequests"}429"#)
        XCTAssertTrue(try broadcast(quiet).output.hasSuffix("200"))
        XCTAssertEqual(try http.get("/api/v1/faults").json?["faults"]?[0]?["hits"], 1)
        let rejection = try http.get("/api/v1/rejections/next?timeout=5")
        XCTAssertEqual(rejection.json?["cause"]?.stringValue, "fault", rejection.text)
        XCTAssertEqual(rejection.json?["channel"]?.stringValue, busy, rejection.text)
        XCTAssertEqual(try http.post("/api/v1/faults", #"{"match":{"channel":""},"action":"resetStream"}"#).status, 400)
    }

    // MARK: - Metrics

    func testMetricsCountChannelsBroadcastsAndDeliveries() throws {
        let kept = try createChannel(policy: 1)
        XCTAssertEqual(try http.delete("/api/v1/channels/\(escaped(try createChannel()))").status, 204)
        XCTAssertEqual(try http.post("/api/v1/channels/\(escaped(kept))/subscriptions", #"{"token":"\#(alice.hex)"}"#).status, 201)
        XCTAssertEqual(try http.post("/api/v1/channels/\(escaped(kept))/subscriptions", #"{"token":"\#(bob.hex)"}"#).status, 201)
        XCTAssertTrue(try broadcast(kept).output.hasSuffix("200"))
        XCTAssertTrue(eventually { self.daemon.server.channels.deliveryCount == 2 })
        let text = try http.get("/metrics").text
        for line in [
            "# TYPE fakeapns_channels_created_total counter", "fakeapns_channels_created_total 2",
            "# TYPE fakeapns_channels_deleted_total counter", "fakeapns_channels_deleted_total 1",
            "# TYPE fakeapns_channels_open gauge", "fakeapns_channels_open 1",
            "# TYPE fakeapns_broadcasts_received_total counter", "fakeapns_broadcasts_received_total 1",
            "# TYPE fakeapns_broadcast_deliveries_total counter", "fakeapns_broadcast_deliveries_total 2",
        ] {
            XCTAssertTrue(text.split(separator: "\n").contains(Substring(line)), "\(line) in\n\(text)")
        }
        XCTAssertTrue(text.contains("# HELP fakeapns_channels_open "), text)
    }

    // MARK: - --devices channels

    func testDevicesFileChannelsAreCreatedSubscribedAndRecreatedAtReset() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("devices-\(UUID().uuidString).txt")
        try """
            \(alice.hex) \(bundle)
            channel \(bundle) policy=1 id=\(fixedID) \(alice.hex) \(bob.hex)
            channel com.example.other
            """.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let contents = try DevicesFile.read(file.path)
        XCTAssertEqual(contents.devices.map(\.token), [alice])
        try fixture.start(channels: contents.channels, for: self)

        let listed = try XCTUnwrap(daemon.startLine["channels"]?.arrayValue)
        XCTAssertEqual(listed.count, 2)
        XCTAssertEqual(listed[0]["id"]?.stringValue, fixedID)
        XCTAssertEqual(listed[0]["storagePolicy"]?.intValue, 1)
        XCTAssertEqual(listed[0]["subscriberCount"]?.intValue, 2)
        let picked = try XCTUnwrap(listed[1]["id"]?.stringValue)
        XCTAssertEqual(listed[1]["bundle"]?.stringValue, "com.example.other")

        for _ in 0..<2 {
            let one = try http.get("/api/v1/channels/\(escapedID)/subscriptions")
            XCTAssertEqual(one.json?["subscribers"]?.arrayValue, [.string(alice.hex), .string(bob.hex)], one.text)
            XCTAssertEqual(one.json?["next"], .null, one.text)
            XCTAssertEqual(try http.get("/api/v1/channels/\(escaped(picked))").status, 200)
            XCTAssertEqual(try http.delete("/api/v1/channels/\(escapedID)").status, 204)
            XCTAssertEqual(try http.post("/api/v1/reset").status, 200)
        }
    }

    func testDevicesFileChannelErrorsNameTheLineAndField() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("devices-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: file) }
        for (text, expected) in [
            ("# c\nchannel", "line 2: the channel has no bundle"),
            ("channel b policy=2", "line 1: policy must be 0 or 1, not '2'"),
            ("channel b colour=red", "line 1: unexpected 'colour=red'"),
            ("channel b \(alice.hex) xyz", "line 1, subscriber 'xyz'"),
        ] {
            try text.write(to: file, atomically: true, encoding: .utf8)
            XCTAssertThrowsError(try DevicesFile.read(file.path)) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(error) should contain \(expected)")
            }
        }
        try "channel b id=\(fixedID)\n\nchannel c id=\(fixedID)\nchannel d id=%%".write(to: file, atomically: true, encoding: .utf8)
        let contents = try DevicesFile.read(file.path)
        XCTAssertThrowsError(try fixture.start(channels: contents.channels, for: self)) { error in
            XCTAssertTrue("\(error)".contains("line 3: a channel already has the id \(fixedID)"), "\(error)")
        }
        XCTAssertThrowsError(try fixture.start(channels: [contents.channels[2]], for: self)) { error in
            XCTAssertTrue("\(error)".contains("line 4: \"%%\" is not a channel id"), "\(error)")
        }
    }
}

/// The `fake-apns` executable with channels in its `--devices` file.
final class DevicesFileChannelDaemonTests: XCTestCase {
    func testTheStartLineComesFirstAndNamesTheChannels() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("devices-\(UUID().uuidString).txt")
        try "channel com.example.app policy=1 id=Zm9v/+8= fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2\n"
            .write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let start = try DaemonFixture.started(["--devices", file.path, "--log", "json"], for: self).startLine
        XCTAssertEqual(start["event"]?.stringValue, "listening")
        XCTAssertEqual(start["channels"]?[0]?["id"]?.stringValue, "Zm9v/+8=")
        XCTAssertEqual(start["channels"]?[0]?["subscriberCount"]?.intValue, 1)
        let web = try XCTUnwrap(start["listeners"]?.arrayValue?.first { $0["name"]?.stringValue == "web" }?["port"]?.intValue)
        let read = try curl(port: web, "GET", "/api/v1/channels/Zm9v%2F%2B8%3D/subscriptions")
        XCTAssertEqual(read.status, 200, read.body)
        XCTAssertEqual(try JSONValue(parsing: read.body)["subscribers"]?[0]?.stringValue,
                       "fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2")
    }
}
