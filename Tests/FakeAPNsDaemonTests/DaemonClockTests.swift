import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

/// The daemon's one clock: after `POST /api/v1/clock`, an unregistration or a feedback tuple
/// without a time, the 410 that follows and the text log's lines are stamped on the moved
/// clock. The `fake-apns` executable, driven by curl.
final class DaemonClockTests: XCTestCase {
    /// 2027-01-15 08:00 UTC.
    private static let setTime = 1_800_000_000
    private let alice: DeviceToken = "fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2"
    private let bob: DeviceToken = "0102030405060708091011121314151617181920212223242526272829303132"

    func testUnregisterFeedbackThe410AndTheTextLogReadTheMovedClock() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("fake-apns-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: file) }
        let daemon = try DaemonFixture.started(["--log", "text", "--log-file", file.path], for: self)
        defer { _ = daemon.stop() }
        let web = try daemon.port("web")
        let http2 = try daemon.port("http2")
        func api(_ method: String, _ path: String, _ body: String? = nil) throws -> JSONValue {
            let answer = try curl(port: web, method, path, json: body, maxTime: 20)
            XCTAssertEqual(answer.exit, 0, answer.error)
            XCTAssertLessThan(answer.status, 300, "\(method) \(path): \(answer.body)")
            return try JSONValue(parsing: answer.body)
        }

        XCTAssertEqual(try api("POST", "/api/v1/clock", #"{"set":\#(Self.setTime).5}"#)["manual"], true)
        XCTAssertEqual(try api("POST", "/api/v1/devices/\(alice.hex)/unregister")["unregisteredAt"]?.intValue, Self.setTime)
        XCTAssertEqual(try api("POST", "/api/v1/feedback", #"{"token":"\#(bob.hex)"}"#)["timestamp"]?.intValue, Self.setTime)
        let tuples = try api("GET", "/api/v1/feedback")["tuples"]?.arrayValue ?? []
        XCTAssertEqual(tuples.compactMap { $0["timestamp"]?.intValue }, [Self.setTime, Self.setTime])

        let push = try runTool("/usr/bin/curl", [
            "--silent", "--show-error", "--http2", "--cacert", testCertificatePath("ca.pem"), "--max-time", "20",
            "--header", "apns-topic: com.example.app", "--data", #"{"aps":{"alert":"gone?"}}"#,
            "--write-out", "\n%{http_code}", "https://127.0.0.1:\(http2)/3/device/\(alice.hex)",
        ])
        XCTAssertEqual(push.status, 0, push.error)
        let lines = push.output.split(separator: "\n")
        XCTAssertEqual(lines.last, "410")
        let body = try JSONValue(parsing: String(lines.first ?? ""))
        XCTAssertEqual(body["reason"]?.stringValue, "Unregistered")
        XCTAssertEqual(body["timestamp"]?.intValue, Self.setTime * 1000, "the unregistration's time, on the moved clock")

        let stamp = "2027-01-15T08:00:00.5"
        XCTAssertTrue(eventually(timeout: .seconds(10)) {
            ((try? String(contentsOf: file, encoding: .utf8)) ?? "").contains("\(stamp)00000Z rejected")
        }, (try? String(contentsOf: file, encoding: .utf8)) ?? "")
        XCTAssertEqual(daemon.stop(), 0)
    }
}
