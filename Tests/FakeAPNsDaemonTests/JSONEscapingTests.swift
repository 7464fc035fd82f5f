import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs
// Reads internals on purpose: Daemon, EventLog and OutputWriter, a daemon in this process.
@testable import FakeAPNsDaemon

/// Every string the daemon embeds in JSON (fault reasons and descriptions, rejection reasons
/// and details, payload text, topics) comes back exactly, read through the control API and the
/// JSON log with Foundation's parser, which shares no code with the daemon's writer.
final class JSONEscapingTests: XCTestCase {
    /// Quotes, backslashes, control characters, DEL, a line separator and non-ASCII.
    private let awkward = "say \"hi\" C:\\path\\ line\nfeed\ttab nul\u{0} unit\u{1f} del\u{7f} sep\u{2028} é 😀"
    /// What an HTTP/2 header value may hold (no control characters).
    private let awkwardHeader = "com.\"quoted\".back\\slash"

    private let alice: DeviceToken = "fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2"
    private let bob: DeviceToken = "0102030405060708091011121314151617181920212223242526272829303132"
    private let carol: DeviceToken = "a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0"

    private var path = ""
    private var log: EventLog!
    private let fixture = InProcessDaemonFixture()
    private var daemon: Daemon! { fixture.daemon }
    private var http: HTTPTestClient!

    override func setUpWithError() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("escaping-\(UUID().uuidString).log").path
        let log = try EventLog(output: try OutputWriter(appendingTo: path), format: .json)
        try fixture.start(onEvent: { log.record($0) }, backPressure: { log.waitForRoom() }, for: self)
        self.log = log
        http = HTTPTestClient(port: daemon.webPort)
    }

    override func tearDown() {
        log?.close()
        try? FileManager.default.removeItem(atPath: path)
    }

    /// `text` as a JSON string literal, written by Foundation.
    private func literal(_ text: String) throws -> String {
        let data = try JSONSerialization.data(withJSONObject: [text], options: [.fragmentsAllowed])
        return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
    }

    /// A JSON body parsed by Foundation; fails the test when it does not parse.
    private func parse(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> [String: Any] {
        do {
            return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any], file: file, line: line)
        } catch {
            XCTFail("does not parse (\(error)): \(String(decoding: bytes, as: UTF8.self))", file: file, line: line)
            return [:]
        }
    }

    private func get(_ target: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let response = try http.get(target)
        XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
        return parse(response.body, file: file, line: line)
    }

    private func sendBinary(_ token: DeviceToken, payload: [UInt8], identifier: UInt32) throws {
        let before = daemon.server.notifications.totalArrived + daemon.server.rejections.totalArrived
        let client = try BinaryProviderClient(host: "127.0.0.1", port: daemon.server.gatewayPort)
        defer { client.close() }
        try client.send(BinaryEncoder.enhanced(identifier: identifier, token: token, payload: payload))
        XCTAssertTrue(eventually {
            self.daemon.server.notifications.totalArrived + self.daemon.server.rejections.totalArrived > before
        })
    }

    private func sendHTTP2(_ token: DeviceToken, topic: String, payload: [UInt8]) throws -> ProviderAPIClient.Response {
        let client = try ProviderAPIClient(host: "127.0.0.1", port: daemon.server.http2Port!)
        defer { client.close() }
        return try client.send(ProviderAPIClient.Request(
            path: "/3/device/\(token.hex)", headers: [("apns-topic", topic), ("apns-push-type", "alert")], body: payload))
    }

    func testAwkwardStringsComeBackExactlyFromTheAPIAndTheLog() throws {
        let quoted = try literal(awkward)
        XCTAssertTrue(quoted.contains(#"\u0000"#), "the JSON the test sends escapes NUL: \(quoted)")

        // Devices and fault rules, read back from their lists.
        XCTAssertEqual(try http.post("/api/v1/devices", #"{"token":"\#(carol.hex)","topic":\#(quoted)}"#).status, 201)
        let devices = try get("/api/v1/devices")["devices"] as? [[String: Any]]
        XCTAssertEqual(devices?.first?["topic"] as? String, awkward)
        XCTAssertEqual(try get("/api/v1/devices/\(carol.hex)")["topic"] as? String, awkward)
        let rules = [
            #"{"match":{"token":"\#(bob.hex)"},"action":{"respond":\#(quoted),"status":500},"times":"always"}"#,
            #"{"match":{"topic":\#(quoted)},"action":{"goAway":\#(quoted),"status":503}}"#,
            #"{"match":{"token":"\#(alice.hex)"},"action":{"goAway":\#(quoted),"status":503}}"#,
        ]
        for rule in rules {
            XCTAssertEqual(try http.post("/api/v1/faults", rule).status, 201, rule)
        }
        let faults = try XCTUnwrap(try get("/api/v1/faults")["faults"] as? [[String: Any]])
        XCTAssertEqual((faults[0]["action"] as? [String: Any])?["respond"] as? String, awkward)
        XCTAssertEqual((faults[1]["match"] as? [String: Any])?["topic"] as? String, awkward)
        XCTAssertEqual((faults[1]["action"] as? [String: Any])?["goAway"] as? String, awkward)
        for fault in faults {
            XCTAssertTrue((fault["description"] as? String)?.contains(awkward) == true, "\(fault)")
        }

        // Notifications: a payload that is text but not JSON, one that is not UTF-8, and JSON
        // whose strings need escapes, each as its sender wrote it.
        let dave: DeviceToken = "d0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9eaebecedeeef"
        try sendBinary(dave, payload: Array(awkward.utf8), identifier: 1)
        try sendBinary(dave, payload: [0xFF, 0xFE, 0x22, 0x5C], identifier: 2)
        let jsonPayload = #"{"aps":{"alert":\#(quoted)},"\#(quoted.dropFirst().dropLast())":1}"#
        try sendBinary(dave, payload: Array(jsonPayload.utf8), identifier: 3)
        let http2 = try sendHTTP2(dave, topic: awkwardHeader, payload: Array(jsonPayload.utf8))
        XCTAssertEqual(http2.status, 200)

        // Refusals whose reason or detail holds the awkward text.
        try sendBinary(bob, payload: Array(#"{"aps":{}}"#.utf8), identifier: 4)
        let respond = try sendHTTP2(bob, topic: "com.example.app", payload: Array(#"{"aps":{}}"#.utf8))
        XCTAssertEqual(respond.status, 500)
        XCTAssertEqual(respond.reason, awkward, "the HTTP/2 answer's reason")
        _ = try? sendHTTP2(alice, topic: "com.example.app", payload: Array(#"{"aps":{}}"#.utf8))

        func checkNotifications(_ notifications: [[String: Any]], _ source: String) {
            XCTAssertEqual(notifications.count, 4, source)
            guard notifications.count == 4 else { return }
            XCTAssertTrue(notifications[0]["payload"] is NSNull, source)
            XCTAssertEqual(notifications[0]["payloadText"] as? String, awkward, source)
            XCTAssertEqual(notifications[1]["payloadBase64"] as? String, "//4iXA==", source)
            for index in 2...3 {
                let payload = notifications[index]["payload"] as? [String: Any]
                XCTAssertEqual((payload?["aps"] as? [String: Any])?["alert"] as? String, awkward, source)
                XCTAssertEqual(payload?[awkward] as? Int, 1, source)
            }
            XCTAssertEqual(notifications[3]["topic"] as? String, awkwardHeader, source)
        }
        func checkRejections(_ rejections: [[String: Any]], _ source: String) {
            XCTAssertEqual(rejections.count, 3, source)
            guard rejections.count == 3 else { return }
            XCTAssertTrue((rejections[0]["detail"] as? String)?.contains(awkward) == true, "\(source): \(rejections[0])")
            for rejection in rejections[1...] {
                XCTAssertEqual(rejection["reason"] as? String, awkward, source)
                XCTAssertTrue((rejection["detail"] as? String)?.contains(awkward) == true, "\(source): \(rejection)")
            }
        }
        XCTAssertTrue(eventually { self.daemon.server.rejections.totalArrived == 3 })
        checkNotifications(try get("/api/v1/notifications")["notifications"] as? [[String: Any]] ?? [], "API")
        checkRejections(try get("/api/v1/rejections")["rejections"] as? [[String: Any]] ?? [], "API")
        let one = try get("/api/v1/notifications/1")
        XCTAssertEqual(one["payloadText"] as? String, awkward)

        daemon.stop()
        XCTAssertNil(log.close())
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        let events = lines.map { parse(Array($0.utf8)) }
        checkNotifications(events.filter { $0["event"] as? String == "notification" }, "log")
        checkRejections(events.filter { $0["event"] as? String == "rejected" }, "log")
    }
}
