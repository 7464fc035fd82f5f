import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: TLSClient, a gateway client that sends raw frames.
@testable import FakeAPNs
// Reads internals on purpose: Daemon, ControlAPI and ControlCommand, a daemon in this process.
@testable import FakeAPNsDaemon

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's control API over real HTTP: a daemon in this process on free ports, its API on
/// a free port, notifications sent over the real protocols.
final class ControlAPITests: XCTestCase {
    private let fixture = InProcessDaemonFixture()
    private var daemon: Daemon! { fixture.daemon }
    private var api: ControlAPI! { fixture.api }
    private var http: HTTPTestClient! { fixture.http }

    private let alice: DeviceToken = "fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2"
    private let bob: DeviceToken = "0102030405060708091011121314151617181920212223242526272829303132"

    override func setUpWithError() throws {
        try fixture.start(for: self)
    }

    // MARK: - Sending over the real protocols

    private func payload(_ text: String) -> [UInt8] {
        Array(#"{"aps":{"alert":"\#(text)"}}"#.utf8)
    }

    /// Sends enhanced binary notifications on one connection and waits until the server has
    /// them all (accepted or refused).
    private func sendBinary(_ notifications: [(DeviceToken, String)]) throws {
        let server = daemon.server
        let before = server.notifications.totalArrived + server.rejections.totalArrived
        let client = try TLSClient(host: "127.0.0.1", port: server.gatewayPort)
        defer { client.close() }
        for (index, (token, text)) in notifications.enumerated() {
            try client.send(BinaryEncoder.enhanced(
                identifier: UInt32(index + 1), token: token, payload: payload(text)))
        }
        XCTAssertTrue(eventually {
            server.notifications.totalArrived + server.rejections.totalArrived >= before + notifications.count
        })
    }

    private func sendBinary(_ token: DeviceToken, _ text: String) throws {
        try sendBinary([(token, text)])
    }

    /// Sends one HTTP/2 notification and returns the answer.
    @discardableResult
    private func sendHTTP2(_ token: DeviceToken, topic: String, _ text: String) throws -> ProviderAPIClient.Response {
        let client = try ProviderAPIClient(host: "127.0.0.1", port: daemon.server.http2Port!)
        defer { client.close() }
        return try client.send(ProviderAPIClient.Request(
            path: "/3/device/\(token.hex)", headers: [("apns-topic", topic), ("apns-push-type", "alert")],
            body: payload(text)))
    }

    private func alert(_ json: JSONValue?) -> String? {
        json?["payload"]?["aps"]?["alert"]?.stringValue
    }

    // MARK: - Health and metrics

    func testHealthzAnswersOK() throws {
        let response = try http.get("/healthz")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("Content-Type"), "application/json")
        XCTAssertEqual(response.json, ["status": "ok"])
    }

    func testMetricsArePrometheusTextWithTheCounterNames() throws {
        try sendBinary(alice, "counted")
        let response = try http.get("/metrics")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4"), true)
        for name in ["fakeapns_notifications_accepted_total", "fakeapns_notifications_rejected_total",
                     "fakeapns_connections_opened_total", "fakeapns_queue_depth"] {
            XCTAssertTrue(response.text.contains("# TYPE \(name) "), name)
        }
        let accepted = #"fakeapns_notifications_accepted_total{format="enhanced"} 1"#
        XCTAssertTrue(response.text.contains(accepted), response.text)
    }

    // MARK: - Waiting for notifications

    func testNextWaitsForANotificationAndReturnsIt() throws {
        let started = ContinuousClock.now
        let waiter = inBackground { [http] in try http!.get("/api/v1/notifications/next?timeout=10") }
        XCTAssertTrue(eventually { self.daemon.server.notifications.waitingCount == 1 })
        try sendBinary(alice, "awaited")
        let response = try waiter.pop(timeout: .seconds(10)).get()
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.json?["token"]?.stringValue, alice.hex)
        XCTAssertEqual(alert(response.json), "awaited")
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(5))
        XCTAssertEqual(daemon.server.notifications.count, 0, "next pops the queue")
    }

    func testTwoConcurrentWaitersEachGetOneNotification() throws {
        let first = inBackground { [http] in try http!.get("/api/v1/notifications/next?timeout=10") }
        let second = inBackground { [http] in try http!.get("/api/v1/notifications/next?timeout=10") }
        XCTAssertTrue(eventually { self.daemon.server.notifications.waitingCount == 2 })
        try sendBinary([(alice, "one"), (bob, "two")])
        let answers = try [first, second].map { try $0.pop(timeout: .seconds(10)).get() }
        XCTAssertEqual(answers.map(\.status), [200, 200])
        XCTAssertEqual(Set(answers.compactMap { alert($0.json) }), ["one", "two"])
    }

    func testNextTimesOutWith408Quickly() throws {
        let started = ContinuousClock.now
        let response = try http.get("/api/v1/notifications/next?timeout=0.3")
        let elapsed = ContinuousClock.now - started
        XCTAssertEqual(response.status, 408)
        XCTAssertEqual(response.error, "timeout")
        XCTAssertTrue(response.message.contains("Timed out"), response.message)
        XCTAssertGreaterThanOrEqual(elapsed, .milliseconds(250))
        XCTAssertLessThan(elapsed, .seconds(2))
    }

    func testNextTakesOnlyANotificationThatMatchesItsFilter() throws {
        try sendBinary([(alice, "for alice"), (bob, "for bob")])
        let forBob = try http.get("/api/v1/notifications/next?timeout=1&token=\(bob.hex)")
        XCTAssertEqual(alert(forBob.json), "for bob")
        let timeout = try http.get("/api/v1/notifications/next?timeout=0.1&token=\(bob.hex)")
        XCTAssertEqual(timeout.status, 408)
        XCTAssertTrue(timeout.message.contains("token \(bob.hex)"), timeout.message)
        XCTAssertEqual(alert(try http.get("/api/v1/notifications/next?timeout=1").json), "for alice")
    }

    func testStopEndsBlockedWaitersPromptlyAndFreesThePort() throws {
        let port = http.port
        let waiter = inBackground { [http] in try http!.get("/api/v1/notifications/next?timeout=30") }
        XCTAssertTrue(eventually { self.daemon.server.notifications.waitingCount == 1 })
        let started = ContinuousClock.now
        api.stop()
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(2))
        let response = try waiter.pop(timeout: .seconds(5)).get()
        XCTAssertEqual(response.status, 503)
        XCTAssertEqual(response.error, "unavailable")
        let again = ControlAPI(daemon: daemon, metrics: Metrics())
        defer { again.stop() }
        XCTAssertEqual(try again.start(host: "127.0.0.1", port: port), port)
    }

    func testDaemonStopAnswersEveryWaitingCurl503() throws {
        let port = daemon.webPort
        let curls = (0..<20).map { _ in
            inBackground {
                try runTool("/usr/bin/curl", ["--silent", "--show-error", "--write-out", "\n%{http_code}",
                             "http://127.0.0.1:\(port)/api/v1/notifications/next?timeout=30"])
            }
        }
        XCTAssertTrue(eventually(timeout: .seconds(30)) { self.daemon.server.notifications.waitingCount == 20 })
        daemon.stop()
        for curl in curls {
            let (status, output, error) = try curl.pop(timeout: .seconds(10)).get()
            XCTAssertEqual(status, 0, error)
            let lines = output.split(separator: "\n")
            XCTAssertEqual(lines.last, "503", output)
            XCTAssertEqual(try JSONValue(parsing: String(lines.first ?? ""))["error"], "unavailable", output)
        }
    }

    func testWaitsAndConnectionsHoldNoThreadAndStopAnswersAndClosesThemAll() throws {
        XCTAssertEqual(try http.get("/healthz").status, 200, "the API has run")
        let threads = processStatus(getpid(), "Threads")
        let request = Array("GET /api/v1/notifications/next?timeout=30 HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        let waiting = try (0..<50).map { _ in
            let socket = try Socket.connect(host: "127.0.0.1", port: http.port)
            _ = request.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            return socket
        }
        let idle = try (0..<2).map { _ in try Socket.connect(host: "127.0.0.1", port: http.port) }
        defer { (waiting + idle).forEach { close($0) } }
        XCTAssertTrue(eventually { self.daemon.server.notifications.waitingCount == 50 })
        XCTAssertTrue(eventually { self.api.openConnections == 52 })
        // The clients are sockets of this process, not threads: what grows is the server's.
        XCTAssertLessThan(processStatus(getpid(), "Threads") - threads, 10, "50 waits and 2 idle connections")
        api.stop()
        XCTAssertEqual(api.openConnections, 0)
        for socket in waiting {
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            XCTAssertEqual(try HTTPTestClient.parse(HTTPTestClient.readToEnd(socket)).status, 503)
        }
    }

    func testAWaiterWhoseClientLeftTakesNothing() throws {
        let socket = try Socket.connect(host: "127.0.0.1", port: http.port)
        let request = "GET /api/v1/notifications/next?timeout=30 HTTP/1.1\r\nHost: x\r\n\r\n"
        _ = Array(request.utf8).withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        XCTAssertTrue(eventually { self.daemon.server.notifications.waitingCount == 1 })
        close(socket)
        XCTAssertTrue(eventually(timeout: .seconds(2)) { self.daemon.server.notifications.waitingCount == 0 })
        try sendBinary(alice, "for whoever comes next")
        XCTAssertEqual(alert(try http.get("/api/v1/notifications/next?timeout=1").json), "for whoever comes next")
    }

    func testAPushThatComesJustAfterAWaiterResetIsLeftForTheNextWaiter() throws {
        for round in 0..<40 {
            let socket = try Socket.connect(host: "127.0.0.1", port: http.port)
            let request = "GET /api/v1/notifications/next?timeout=30 HTTP/1.1\r\nHost: x\r\n\r\n"
            _ = Array(request.utf8).withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            XCTAssertTrue(eventually { self.daemon.server.notifications.waitingCount == 1 })
            // A reset (RST, not FIN), as a client that times out and closes at once may leave.
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(socket, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            close(socket)
            daemon.server.notifications.append(PushNotification(
                deviceToken: alice, payload: Payload(#"{"aps":{"alert":"round \#(round)"}}"#), format: .simple,
                connection: ConnectionInfo(id: 1, peer: "127.0.0.1:9")))
            let next = try http.get("/api/v1/notifications/next?timeout=5")
            XCTAssertEqual(alert(next.json), "round \(round)", "round \(round): \(next.text)")
        }
        XCTAssertEqual(daemon.server.notifications.count, 0)
    }


    // MARK: - Listing notifications

    func testListFiltersByTokenAndTopic() throws {
        try sendHTTP2(alice, topic: "com.example.a", "alice a")
        try sendHTTP2(bob, topic: "com.example.a", "bob a")
        try sendHTTP2(alice, topic: "com.example.b", "alice b")
        let byToken = try http.get("/api/v1/notifications?token=\(alice.hex)")
        XCTAssertEqual(byToken.json?["notifications"]?.arrayValue?.compactMap(alert), ["alice a", "alice b"])
        let byTopic = try http.get("/api/v1/notifications?topic=com.example.a")
        XCTAssertEqual(byTopic.json?["notifications"]?.arrayValue?.compactMap(alert), ["alice a", "bob a"])
        let both = try http.get("/api/v1/notifications?topic=com.example.b&token=\(alice.hex.uppercased())")
        XCTAssertEqual(both.json?["notifications"]?.arrayValue?.compactMap(alert), ["alice b"])
    }

    func testListPagesBySinceAndLimit() throws {
        try sendBinary([(alice, "1"), (alice, "2"), (alice, "3"), (alice, "4")])
        let page = try http.get("/api/v1/notifications?since=1&limit=2")
        XCTAssertEqual(page.status, 200)
        XCTAssertEqual(page.json?["notifications"]?.arrayValue?.compactMap { $0["sequence"]?.intValue }, [2, 3])
        XCTAssertEqual(page.json?["dropped"], 0)
    }

    func testListCountsWhatTheRetentionLimitDropped() throws {
        try fixture.start(["--retention", "2"], for: self)
        try sendBinary([(alice, "1"), (alice, "2"), (alice, "3")])
        XCTAssertTrue(eventually { self.daemon.server.notificationHistory.droppedCount == 1 })
        let list = try http.get("/api/v1/notifications")
        XCTAssertEqual(list.json?["notifications"]?.arrayValue?.compactMap(alert), ["2", "3"])
        XCTAssertEqual(list.json?["dropped"], 1)
    }

    func testThePayloadNestedAsDeepAsTheParserAllowsIsServedFromASmallConnectionStack() throws {
        let depth = JSONValue.maximumNestingDepth - 2
        let nest = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        let text = #"{"aps":{"alert":"deep"},"nest":\#(nest)}"#
        let client = try TLSClient(host: "127.0.0.1", port: daemon.server.gatewayPort)
        defer { client.close() }
        try client.send(BinaryEncoder.enhanced(identifier: 1, token: alice, payload: Array(text.utf8)))
        XCTAssertTrue(eventually { self.daemon.server.notificationHistory.list().count == 1 })
        // The answers nest deeper than the parser reads back, so their text is checked.
        for target in ["/api/v1/notifications", "/api/v1/notifications/1", "/api/v1/notifications/next?timeout=1"] {
            let response = try http.get(target)
            XCTAssertEqual(response.status, 200, target)
            XCTAssertTrue(response.text.contains(#""nest":\#(nest)"#), target)
        }
    }

    func testOneNotificationIsFetchedBySequenceAndAMissingOneIs404() throws {
        try sendBinary([(alice, "first"), (bob, "second")])
        let second = try http.get("/api/v1/notifications/2")
        XCTAssertEqual(second.status, 200)
        XCTAssertEqual(second.json?["sequence"], 2)
        XCTAssertEqual(alert(second.json), "second")
        let missing = try http.get("/api/v1/notifications/99")
        XCTAssertEqual(missing.status, 404)
        XCTAssertEqual(missing.error, "not_found")
        XCTAssertTrue(missing.message.contains("notification 99"), missing.message)
    }

    func testDeletingNotificationsClearsTheQueueAndTheHistory() throws {
        try sendBinary(alice, "gone")
        XCTAssertEqual(try http.delete("/api/v1/notifications").status, 204)
        XCTAssertEqual(daemon.server.notifications.count, 0)
        XCTAssertEqual(try http.get("/api/v1/notifications").json?["notifications"], [])
        XCTAssertEqual(try http.get("/api/v1/notifications/next?timeout=0").status, 408)
    }

    // MARK: - Rejections

    func testRejectionsAreListedFilteredByReasonAndFetchedOneByOne() throws {
        try http.put("/api/v1/devices/strict", #"{"strict":true}"#)
        try sendBinary(alice, "refused")
        let list = try http.get("/api/v1/rejections?reason=Invalid%20token")
        XCTAssertEqual(list.status, 200)
        let rejections = try XCTUnwrap(list.json?["rejections"]?.arrayValue)
        XCTAssertEqual(rejections.count, 1)
        XCTAssertEqual(rejections.first?["token"]?.stringValue, alice.hex)
        XCTAssertEqual(list.json?["dropped"], 0)
        XCTAssertEqual(try http.get("/api/v1/rejections?reason=BadTopic").json?["rejections"], [])
        let one = try http.get("/api/v1/rejections/1")
        XCTAssertEqual(one.json?["reason"], "Invalid token")
        XCTAssertEqual(try http.get("/api/v1/rejections/2").status, 404)
    }

    func testNextRejectionWaitsForARefusalOfItsToken() throws {
        try http.put("/api/v1/devices/strict", #"{"strict":true}"#)
        let target = "/api/v1/rejections/next?timeout=10&token=\(bob.hex)"
        let waiter = inBackground { [http] in try http!.get(target) }
        XCTAssertTrue(eventually { self.daemon.server.rejections.waitingCount == 1 })
        try sendBinary(bob, "refused")
        let response = try waiter.pop(timeout: .seconds(10)).get()
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.json?["token"]?.stringValue, bob.hex)
        XCTAssertEqual(response.json?["status"], 8)
    }

    func testDeletingRejectionsClearsThem() throws {
        try http.put("/api/v1/devices/strict", #"{"strict":true}"#)
        try sendBinary(alice, "refused")
        XCTAssertEqual(try http.delete("/api/v1/rejections").status, 204)
        XCTAssertEqual(try http.get("/api/v1/rejections").json?["rejections"], [])
        XCTAssertEqual(daemon.server.rejections.count, 0)
    }

    // MARK: - Devices

    func testARegisteredDeviceIsListedWithItsTopicAndEnvironment() throws {
        let created = try http.post(
            "/api/v1/devices", #"{"token":"\#(alice.hex)","topic":"com.example.app","environment":"production"}"#)
        XCTAssertEqual(created.status, 201)
        let expected: JSONValue = [
            "token": .string(alice.hex), "topic": "com.example.app", "environment": "production",
            "unregisteredAt": .null,
        ]
        XCTAssertEqual(created.json, expected)
        try http.post("/api/v1/devices", #"{"token":"\#(bob.hex)"}"#)
        let list = try http.get("/api/v1/devices")
        XCTAssertEqual(list.json?["strict"], false)
        XCTAssertEqual(list.json?["devices"]?.arrayValue?.count, 2)
        XCTAssertEqual(list.json?["devices"]?[0], expected)
        XCTAssertEqual(list.json?["devices"]?[1]?["topic"], .null)
        // One device's object is also its phone's: the registry's members, then the model's.
        let one = try XCTUnwrap(http.get("/api/v1/devices/\(alice.hex)").json?.objectValue)
        XCTAssertEqual(JSONValue.object(JSONObject(one.filter { expected[$0.key] != nil })), expected)
        XCTAssertEqual(one["registered"], true)
        XCTAssertEqual(one["settings"]?["online"], true)
        XCTAssertEqual(one["screen"]?["notificationCenter"], [])
    }

    func testADeviceRegisteredForTheOtherEnvironmentIsRefusedOnTheWire() throws {
        try http.post("/api/v1/devices", #"{"token":"\#(alice.hex)","environment":"production"}"#)
        try sendBinary(alice, "wrong environment")
        XCTAssertEqual(daemon.server.rejectionHistory.count, 1)
        XCTAssertEqual(daemon.server.notificationHistory.count, 0)
    }

    func testUnregisteringADeviceRecordsItsTimeAndQueuesAFeedbackTuple() throws {
        try http.post("/api/v1/devices", #"{"token":"\#(alice.hex)"}"#)
        let response = try http.post("/api/v1/devices/\(alice.hex)/unregister", #"{"at":1700000000}"#)
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.json?["unregisteredAt"], 1_700_000_000)
        let feedback = try http.get("/api/v1/feedback")
        XCTAssertEqual(feedback.json, ["tuples": [["token": .string(alice.hex), "timestamp": 1_700_000_000]]])
    }

    func testUnregisteringWithoutABodyMeansNow() throws {
        let before = Int(Date().timeIntervalSince1970)
        let response = try http.post("/api/v1/devices/\(bob.hex)/unregister")
        XCTAssertEqual(response.status, 200)
        let at = try XCTUnwrap(response.json?["unregisteredAt"]?.doubleValue)
        XCTAssertGreaterThanOrEqual(Int(at), before)
        XCTAssertLessThanOrEqual(Int(at), before + 5)
    }

    func testRemovingADeviceForgetsItAndAnUnknownOneIs404() throws {
        try http.post("/api/v1/devices", #"{"token":"\#(alice.hex)"}"#)
        XCTAssertEqual(try http.delete("/api/v1/devices/\(alice.hex)").status, 204)
        XCTAssertEqual(try http.get("/api/v1/devices").json?["devices"], [])
        let again = try http.delete("/api/v1/devices/\(alice.hex)")
        XCTAssertEqual(again.status, 404)
        XCTAssertTrue(again.message.contains(alice.hex), again.message)
        // Its phone is still there to read, no longer registered.
        let phone = try http.get("/api/v1/devices/\(alice.hex)")
        XCTAssertEqual(phone.status, 200)
        XCTAssertEqual(phone.json?["registered"], false)
        XCTAssertEqual(phone.json?["topic"], .null)
    }

    func testStrictModeSetOverTheAPIRefusesUnknownTokensOnTheWire() throws {
        let response = try http.put("/api/v1/devices/strict", #"{"strict":true}"#)
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.json, ["strict": true])
        XCTAssertEqual(try http.get("/api/v1/devices").json?["strict"], true)
        let client = try TLSClient(host: "127.0.0.1", port: daemon.server.gatewayPort)
        defer { client.close() }
        try client.send(BinaryEncoder.enhanced(identifier: 7, token: alice, payload: payload("unknown")))
        let answer = BinaryErrorResponse(bytes: try client.readToEnd())
        XCTAssertEqual(answer, BinaryErrorResponse(status: .invalidToken, identifier: 7))
    }

    // MARK: - Feedback

    func testFeedbackTuplesAddedOverTheAPIArePendingUntilAClientReadsThem() throws {
        let created = try http.post("/api/v1/feedback", #"{"token":"\#(alice.hex)","timestamp":1600000000}"#)
        XCTAssertEqual(created.status, 201)
        XCTAssertEqual(created.json, ["token": .string(alice.hex), "timestamp": 1_600_000_000])
        XCTAssertEqual(try http.get("/api/v1/feedback").json?["tuples"]?.arrayValue?.count, 1)
        XCTAssertEqual(try http.get("/api/v1/feedback").json?["tuples"]?.arrayValue?.count, 1, "listing takes nothing")
        let read = try FeedbackClient.read(host: "127.0.0.1", port: daemon.server.feedbackPort!)
        XCTAssertEqual(read, [FeedbackTuple(timestamp: 1_600_000_000, deviceToken: alice)])
        XCTAssertEqual(try http.get("/api/v1/feedback").json, ["tuples": []])
    }

    func testAFeedbackTupleWithoutATimestampIsStampedNow() throws {
        let before = Int(Date().timeIntervalSince1970)
        let created = try http.post("/api/v1/feedback", #"{"token":"\#(bob.hex)"}"#)
        let timestamp = try XCTUnwrap(created.json?["timestamp"]?.intValue)
        XCTAssertGreaterThanOrEqual(timestamp, before)
        XCTAssertLessThanOrEqual(timestamp, before + 5)
    }

    // MARK: - Faults

    func testARejectFaultAddedOverTheAPIActsOnTheBinaryGateway() throws {
        let created = try http.post("/api/v1/faults", #"{"match":{"token":"\#(alice.hex)"},"action":{"reject":8}}"#)
        XCTAssertEqual(created.status, 201)
        XCTAssertEqual(created.json, ["id": 1])
        let client = try TLSClient(host: "127.0.0.1", port: daemon.server.gatewayPort)
        defer { client.close() }
        try client.send(BinaryEncoder.enhanced(identifier: 42, token: alice, payload: payload("faulted")))
        let answer = BinaryErrorResponse(bytes: try client.readToEnd())
        XCTAssertEqual(answer, BinaryErrorResponse(status: .invalidToken, identifier: 42))
        let rejection = try http.get("/api/v1/rejections/next?timeout=2")
        XCTAssertEqual(rejection.json?["cause"], "fault")
        XCTAssertEqual(try http.get("/api/v1/faults").json?["faults"]?[0]?["hits"], 1)
    }

    func testARespondFaultAnswersHTTP2WithItsReasonAsManyTimesAsAsked() throws {
        let created = try http.post(
            "/api/v1/faults", #"{"match":"every","action":{"respond":"TooManyRequests"},"times":2}"#)
        XCTAssertEqual(created.status, 201)
        XCTAssertEqual(try sendHTTP2(alice, topic: "com.example.app", "one").status, 429)
        XCTAssertEqual(try sendHTTP2(alice, topic: "com.example.app", "two").reason, "TooManyRequests")
        XCTAssertEqual(try sendHTTP2(alice, topic: "com.example.app", "three").status, 200)
    }

    func testAReasonAppleDoesNotDocumentNeedsAStatus() throws {
        let refused = try http.post("/api/v1/faults", #"{"match":"every","action":{"respond":"Teapot"}}"#)
        XCTAssertEqual(refused.status, 400)
        XCTAssertTrue(refused.message.contains("action.respond"), refused.message)
        XCTAssertTrue(refused.message.contains("status"), refused.message)
        let accepted = try http.post("/api/v1/faults", #"{"match":"every","action":{"respond":"Teapot","status":418}}"#)
        XCTAssertEqual(accepted.status, 201)
        let answer = try sendHTTP2(alice, topic: "com.example.app", "tea")
        XCTAssertEqual(answer.status, 418)
        XCTAssertEqual(answer.reason, "Teapot")
    }

    func testFaultsAreListedInThePostedShape() throws {
        let bodies = [
            #"{"match":{"topic":"com.example.app"},"action":{"goAway":"Shutdown","status":503},"times":"always"}"#,
            #"{"match":{"nth":3},"action":"resetStream"}"#,
            #"{"match":"every","action":{"delayMilliseconds":200},"times":4}"#,
            #"{"match":{"token":"\#(bob.hex)"},"action":"closeConnection","times":"once"}"#,
        ]
        for body in bodies {
            XCTAssertEqual(try http.post("/api/v1/faults", body).status, 201, body)
        }
        let faults = try XCTUnwrap(try http.get("/api/v1/faults").json?["faults"]?.arrayValue)
        XCTAssertEqual(faults.map { $0["id"] }, [1, 2, 3, 4])
        XCTAssertEqual(faults[0]["match"], ["topic": "com.example.app"])
        XCTAssertEqual(faults[0]["action"], ["goAway": "Shutdown", "status": 503])
        XCTAssertEqual(faults[0]["times"], "always")
        XCTAssertEqual(faults[0]["remaining"], .null)
        XCTAssertEqual(faults[1]["match"], ["nth": 3])
        XCTAssertEqual(faults[1]["action"], "resetStream")
        XCTAssertEqual(faults[1]["remaining"], 1)
        XCTAssertEqual(faults[2]["action"], ["delayMilliseconds": 200])
        XCTAssertEqual(faults[2]["times"], 4)
        XCTAssertEqual(faults[3]["match"], ["token": .string(bob.hex)])
        XCTAssertEqual(faults[3]["hits"], 0)
        XCTAssertEqual(try http.get("/api/v1/faults/2").json?["action"], "resetStream")
    }

    func testFaultsAreDeletedOneByOneOrAllAtOnce() throws {
        for _ in 0..<3 {
            try http.post("/api/v1/faults", #"{"match":"every","action":"closeConnection"}"#)
        }
        XCTAssertEqual(try http.delete("/api/v1/faults/2").status, 204)
        let ids = try http.get("/api/v1/faults").json?["faults"]?.arrayValue?.compactMap { $0["id"]?.intValue }
        XCTAssertEqual(ids, [1, 3])
        let missing = try http.delete("/api/v1/faults/2")
        XCTAssertEqual(missing.status, 404)
        XCTAssertTrue(missing.message.contains("fault rule 2"), missing.message)
        XCTAssertEqual(try http.delete("/api/v1/faults").status, 204)
        XCTAssertEqual(try http.get("/api/v1/faults").json, ["faults": []])
    }

    // MARK: - Reset

    func testResetForgetsNotificationsRejectionsDevicesFaultsAndFeedback() throws {
        try sendBinary(alice, "kept until reset")
        try http.put("/api/v1/devices/strict", #"{"strict":true}"#)
        try sendBinary(bob, "refused")
        try http.post("/api/v1/devices", #"{"token":"\#(alice.hex)"}"#)
        try http.post("/api/v1/faults", #"{"match":"every","action":"closeConnection"}"#)
        try http.post("/api/v1/feedback", #"{"token":"\#(bob.hex)"}"#)
        let response = try http.post("/api/v1/reset")
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.json, ["status": "reset"])
        XCTAssertEqual(try http.get("/api/v1/notifications").json?["notifications"], [])
        XCTAssertEqual(try http.get("/api/v1/rejections").json?["rejections"], [])
        XCTAssertEqual(try http.get("/api/v1/devices").json, ["strict": false, "devices": [], "phones": []])
        XCTAssertEqual(try http.get("/api/v1/faults").json, ["faults": []])
        XCTAssertEqual(try http.get("/api/v1/feedback").json, ["tuples": []])
        XCTAssertEqual(daemon.server.notifications.count, 0)
    }

    // MARK: - Routing errors

    func testAnUnknownPathIs404InJSON() throws {
        let response = try http.get("/api/v1/nothing")
        XCTAssertEqual(response.status, 404)
        XCTAssertEqual(response.error, "not_found")
        XCTAssertTrue(response.message.contains("/api/v1/nothing"), response.message)
    }

    func testAWrongMethodIs405WithAllow() throws {
        let response = try http.request("PATCH", "/api/v1/faults")
        XCTAssertEqual(response.status, 405)
        XCTAssertEqual(response.error, "method_not_allowed")
        XCTAssertEqual(response.header("Allow"), "GET, POST, DELETE")
        XCTAssertEqual(try http.post("/api/v1/notifications/next").header("Allow"), "GET")
        XCTAssertEqual(try http.get("/api/v1/devices/strict").header("Allow"), "PUT")
    }

    // MARK: - Refused input

    func testInvalidJSONIsRefusedNamingTheByteOffset() throws {
        let response = try http.post("/api/v1/devices", #"{"token": "ab" "topic": "x"}"#)
        XCTAssertEqual(response.status, 400)
        XCTAssertEqual(response.error, "invalid_json")
        XCTAssertTrue(response.message.contains("byte 15"), response.message)
    }

    func testAnUnknownFieldIsRefusedByName() throws {
        let response = try http.post("/api/v1/devices", #"{"token":"\#(alice.hex)","colour":"red"}"#)
        XCTAssertEqual(response.status, 400)
        XCTAssertEqual(response.error, "unknown_field")
        XCTAssertTrue(response.message.contains("'colour'"), response.message)
        let nested = try http.post("/api/v1/faults", #"{"match":{"tokn":"ab"},"action":"resetStream"}"#)
        XCTAssertTrue(nested.message.contains("'match.tokn'"), nested.message)
    }

    func testAWrongTypeIsRefusedNamingTheFieldAndTheExpectedType() throws {
        let response = try http.put("/api/v1/devices/strict", #"{"strict":"yes"}"#)
        XCTAssertEqual(response.status, 400)
        XCTAssertEqual(response.error, "wrong_type")
        XCTAssertEqual(response.message, "field 'strict' must be true or false, not a string")
        let at = try http.post("/api/v1/devices/\(alice.hex)/unregister", #"{"at":"today"}"#)
        XCTAssertTrue(at.message.contains("'at' must be a number"), at.message)
        let notObject = try http.post("/api/v1/feedback", "[1]")
        XCTAssertEqual(notObject.message, "the request body must be a JSON object, not an array")
    }

    func testAMissingFieldIsRefusedByName() throws {
        let response = try http.post("/api/v1/faults", #"{"match":"every"}"#)
        XCTAssertEqual(response.status, 400)
        XCTAssertEqual(response.error, "missing_field")
        XCTAssertTrue(response.message.contains("'action'"), response.message)
    }

    func testABadTokenIsRefusedWithWhatIsWrongWithIt() throws {
        let inBody = try http.post("/api/v1/devices", #"{"token":"fe1g"}"#)
        XCTAssertEqual(inBody.status, 400)
        XCTAssertEqual(inBody.error, "invalid_token")
        XCTAssertTrue(inBody.message.contains("'token'") && inBody.message.contains("'g'"), inBody.message)
        let inPath = try http.delete("/api/v1/devices/abc")
        XCTAssertEqual(inPath.status, 400)
        XCTAssertEqual(inPath.error, "invalid_token")
        XCTAssertTrue(inPath.message.contains("odd number"), inPath.message)
        let inQuery = try http.get("/api/v1/notifications?token=xyz")
        XCTAssertEqual(inQuery.status, 400)
        XCTAssertEqual(inQuery.error, "invalid_token")
        XCTAssertTrue(inQuery.message.contains("'token'"), inQuery.message)
    }

    func testTokensLongerThanAPNsTakesOrEmptyAreRefusedWhereverTheyStand() throws {
        let longest = String(repeating: "ab", count: DeviceToken.maximumByteCount)
        XCTAssertEqual(try http.post("/api/v1/devices", #"{"token":"\#(longest)"}"#).status, 201)
        for hex in [longest + "cd", String(repeating: "ab", count: 2_500), "", "<>"] {
            let refusals = [
                try http.post("/api/v1/devices", #"{"token":"\#(hex)"}"#),
                try http.post("/api/v1/feedback", #"{"token":"\#(hex)"}"#),
                try http.post("/api/v1/faults", #"{"match":{"token":"\#(hex)"},"action":"closeConnection"}"#),
                try http.get("/api/v1/notifications?token=\(hex)"),
                try http.get("/api/v1/rejections/next?timeout=0&token=\(hex)"),
            ] + (hex.isEmpty ? [] : [try http.get("/api/v1/devices/\(hex)")])
            for response in refusals {
                XCTAssertEqual(response.status, 400, "\(hex.count) digits: \(response.text)")
                XCTAssertEqual(response.error, "invalid_token", response.text)
                XCTAssertTrue(response.message.contains("1 to 100 bytes (2 to 200 hex digits)"), response.message)
            }
        }
        XCTAssertEqual(daemon.server.devices.devices.count, 1, "only the 100-byte token was registered")
        XCTAssertTrue(daemon.server.feedback.pendingTuples.isEmpty)
        XCTAssertTrue(daemon.server.faults.rules.isEmpty)
    }

    func testABadStatusReasonOrCountInAFaultIsRefused() throws {
        let cases: [(String, String)] = [
            (#"{"match":"every","action":{"reject":9}}"#, "'action.reject'"),
            (#"{"match":"every","action":{"reject":0}}"#, "'action.reject'"),
            (#"{"match":"every","action":{"goAway":"Nope"}}"#, "'action.goAway'"),
            (#"{"match":"every","action":{"respond":"Teapot","status":200}}"#, "'action.status'"),
            (#"{"match":"every","action":{"reject":8,"status":400}}"#, "'action.status'"),
            (#"{"match":"every","action":{"reject":8},"times":0}"#, "'times'"),
            (#"{"match":"every","action":{"reject":8},"times":"twice"}"#, "'times'"),
            (#"{"match":{"nth":0},"action":{"reject":8}}"#, "'match.nth'"),
            (#"{"match":{"nth":1,"topic":"x"},"action":{"reject":8}}"#, "'match'"),
            (#"{"match":"some","action":{"reject":8}}"#, "'match'"),
            (#"{"match":"every","action":"explode"}"#, "'action'"),
            (#"{"match":"every","action":{"delayMilliseconds":-1}}"#, "'action.delayMilliseconds'"),
        ]
        for (body, named) in cases {
            let response = try http.post("/api/v1/faults", body)
            XCTAssertEqual(response.status, 400, body)
            XCTAssertTrue(response.message.contains(named), "\(body): \(response.message)")
        }
        XCTAssertEqual(try http.get("/api/v1/faults").json, ["faults": []])
    }

    func testABadEnvironmentIsRefused() throws {
        let response = try http.post("/api/v1/devices", #"{"token":"\#(alice.hex)","environment":"staging"}"#)
        XCTAssertEqual(response.status, 400)
        XCTAssertEqual(response.error, "invalid_value")
        XCTAssertTrue(response.message.contains("\"staging\""), response.message)
    }

    func testAnOversizedBodyIsRefusedBeforeItIsRead() throws {
        // Only the head is sent: the answer must come without the 70,000 bytes it announces.
        let head = "POST /api/v1/devices HTTP/1.1\r\nHost: x\r\nContent-Length: 70000\r\n\r\n"
        let response = try HTTPTestClient.parse(try http.exchange(Array(head.utf8), timeout: .seconds(5)))
        XCTAssertEqual(response.status, 400)
        XCTAssertEqual(response.error, "body_too_large")
        XCTAssertTrue(response.message.contains("64 KiB"), response.message)
    }

    func testAChunkedBodyThatOutgrowsTheLimitClosesTheConnection() throws {
        let chunk = [UInt8](repeating: UInt8(ascii: " "), count: 16 * 1024)
        var request = Array("POST /api/v1/devices HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        for _ in 0..<5 {
            request += Array("4000\r\n".utf8) + chunk + Array("\r\n".utf8)
        }
        request += Array("0\r\n\r\n".utf8)
        let answer = try http.exchange(request, timeout: .seconds(5))
        XCTAssertFalse(String(decoding: answer, as: UTF8.self).hasPrefix("HTTP/1.1 2"))
        XCTAssertEqual(try http.get("/api/v1/devices").json?["devices"], [], "nothing was registered")
    }

    func testQueryParametersAreValidated() throws {
        let cases: [(String, String)] = [
            ("/api/v1/notifications?since=abc", "'since'"),
            ("/api/v1/notifications?since=-1", "'since'"),
            ("/api/v1/notifications?limit=0", "'limit'"),
            ("/api/v1/notifications?colour=red", "'colour'"),
            ("/api/v1/notifications?limit=1&limit=2", "twice"),
            ("/api/v1/notifications/next?timeout=61", "'timeout'"),
            ("/api/v1/notifications/next?timeout=1e1", "'timeout'"),
            ("/api/v1/notifications/next?timeout=", "'timeout'"),
            ("/api/v1/rejections?topic=x", "'topic'"),
            ("/api/v1/notifications?topic=%zz", "percent"),
            ("/healthz?verbose=1", "'verbose'"),
        ]
        for (target, named) in cases {
            let response = try http.get(target)
            XCTAssertEqual(response.status, 400, target)
            XCTAssertTrue(response.message.contains(named), "\(target): \(response.message)")
        }
    }

    func testABadSequenceNumberIsRefused() throws {
        let response = try http.get("/api/v1/notifications/abc")
        XCTAssertEqual(response.status, 400)
        XCTAssertTrue(response.message.contains("sequence number"), response.message)
    }

    // MARK: - Robustness

    func testMalformedRequestsLeaveNoRequestStateBehind() throws {
        let garbage = [
            "GARBAGE\r\n\r\n", "GET\r\n\r\n", "GET /healthz HTTP/9.9\r\n\r\n",
            "POST /api/v1/devices HTTP/1.1\r\nHost: x\r\nContent-Length: zz\r\n\r\n",
            "GET /healthz HTTP/1.1\r\nBad Header\r\n\r\n", "\u{0}\u{1}\u{2}\r\n\r\n",
            "GET /" + String(repeating: "a", count: 40_000) + " HTTP/1.1\r\nHost: x\r\n\r\n",
            "POST /api/v1/devices HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{\"tok",
        ]
        for request in garbage {
            // Requests the server still waits to complete end when the client gives up.
            _ = try http.exchange(Array(request.utf8), timeout: .milliseconds(500))
        }
        XCTAssertEqual(try http.get("/healthz").status, 200)
        XCTAssertTrue(eventually { self.api.openRequests == 0 }, "requests still open: \(api.openRequests)")
    }

    func testAHandlerThatWaitsLongerThanTheIdleTimeoutStillAnswers() throws {
        let server = HTTPServer(idleTimeout: 1)
        defer { server.stop() }
        let port = try server.start(host: "127.0.0.1", port: 0) { _ in
            usleep(2_500_000)
            return .json(200, ["waited": true])
        }
        let response = try HTTPTestClient(port: port).get("/", timeout: .seconds(10))
        XCTAssertEqual(response.json, ["waited": true])
    }

    func testTheAPIListensOnIPv6Loopback() throws {
        let api = ControlAPI(daemon: daemon, metrics: Metrics())
        defer { api.stop() }
        let port: Int
        do {
            port = try api.start(host: "::1", port: 0)
        } catch {
            throw XCTSkip("no IPv6 loopback here: \(error)")
        }
        XCTAssertEqual(try HTTPTestClient(host: "::1", port: port).get("/healthz").status, 200)
    }

    func testAnAPIWhoseDaemonIsGoneAnswers503() throws {
        let options = try Options.parse(DaemonFixture.freePorts)
        var gone: Daemon? = try Daemon(options: options, devices: []) { _ in }
        let orphan = ControlAPI(daemon: try XCTUnwrap(gone), metrics: Metrics())
        defer { orphan.stop() }
        let port = try orphan.start(host: "127.0.0.1", port: 0)
        gone = nil
        let response = try HTTPTestClient(port: port).get("/healthz")
        XCTAssertEqual(response.status, 503)
        XCTAssertEqual(response.error, "unavailable")
    }

    func testABusyPortIsReportedWithTheAddress() throws {
        let other = ControlAPI(daemon: daemon, metrics: Metrics())
        defer { other.stop() }
        XCTAssertThrowsError(try other.start(host: "127.0.0.1", port: http.port)) { error in
            XCTAssertTrue("\(error)".contains("127.0.0.1:\(http.port)"), "\(error)")
        }
    }

    // MARK: - Decoding without a server

    func testRequestsDecodeWithoutAServer() throws {
        let command = try ControlCommand(request: HTTPRequest(
            method: "GET", target: "/api/v1/notifications/next?token=\(alice.hex)&topic=com.example%2Eapp&timeout=2.5"))
        guard case .nextNotification(let filter, let timeout) = command else {
            return XCTFail("decoded \(command)")
        }
        XCTAssertEqual(filter, NotificationFilter(token: alice, topic: "com.example.app"))
        XCTAssertEqual(timeout, .milliseconds(2500))
        XCTAssertThrowsError(try ControlCommand(request: HTTPRequest(method: "GET", target: "relative"))) { error in
            XCTAssertEqual((error as? ControlError)?.status, 400)
        }
    }
}
