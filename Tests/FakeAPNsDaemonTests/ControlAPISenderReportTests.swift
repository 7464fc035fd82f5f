import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs
// Reads internals on purpose: Daemon, a daemon in this process.
@testable import FakeAPNsDaemon

/// `GET /api/v1/sender-report`: the sender audit's findings as JSON, filtered by `?sender=`,
/// forgotten by a reset. Control calls by curl, pushes by `curl --http2`, both clients
/// independent of this code.
final class ControlAPISenderReportTests: XCTestCase {
    private let fixture = InProcessDaemonFixture()
    private var daemon: Daemon! { fixture.daemon }
    private let token: DeviceToken = "fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2"

    override func setUpWithError() throws {
        try fixture.start(for: self)
    }

    @discardableResult
    private func control(
        _ method: String, _ path: String, _ body: String? = nil
    ) throws -> (status: Int, json: JSONValue) {
        let answer = try curl(port: fixture.http.port, method, path, json: body, maxTime: 20)
        XCTAssertEqual(answer.exit, 0, answer.error)
        return (answer.status, (try? JSONValue(parsing: answer.body)) ?? .null)
    }

    /// A push by curl over HTTP/2, one connection; the HTTP status.
    private func push(_ payload: String) throws -> Int {
        let result = try runTool("/usr/bin/curl", [
            "--silent", "--show-error", "--http2", "--cacert", testCertificatePath("ca.pem"), "--max-time", "20",
            "--output", "/dev/null", "--write-out", "%{http_code}", "--header", "apns-topic: com.example.app",
            "--data", payload, "https://127.0.0.1:\(daemon.server.http2Port!)/3/device/\(token.hex)",
        ])
        XCTAssertEqual(result.status, 0, result.error)
        return Int(result.output) ?? 0
    }

    func testACleanSenderHasAnEmptyReport() throws {
        XCTAssertEqual(try push(#"{"aps":{"alert":"Hello"}}"#), 200)
        let report = try control("GET", "/api/v1/sender-report")
        XCTAssertEqual(report.status, 200)
        XCTAssertEqual(report.json["findings"], .array([]))
        XCTAssertEqual(report.json["unrecorded"], 0)
    }

    func testPushesAfter410AreReportedFilteredAndReset() throws {
        XCTAssertEqual(try control("POST", "/api/v1/devices/\(token.hex)/unregister", "{}").status, 200)
        XCTAssertEqual(try push(#"{"aps":{"alert":"one"}}"#), 410)
        XCTAssertEqual(try push(#"{"aps":{"alert":"two"}}"#), 410)
        let report = try control("GET", "/api/v1/sender-report")
        XCTAssertEqual(report.status, 200)
        let findings = try XCTUnwrap(report.json["findings"]?.arrayValue)
        XCTAssertEqual(findings.count, 1, "\(report.json)")
        let finding = findings[0]
        XCTAssertEqual(finding["rule"], "push-after-unregistered")
        XCTAssertEqual(finding["level"], "error")
        XCTAssertEqual(finding["count"], 1)
        XCTAssertEqual(finding["sender"], "address:127.0.0.1")
        XCTAssertEqual(finding["source"]?.stringValue, SenderAuditRule.pushAfterUnregistered.source)
        let example = try XCTUnwrap(finding["examples"]?.arrayValue?.first)
        XCTAssertEqual(example["token"]?.stringValue, token.hex)
        XCTAssertNotNil(example["apnsID"]?.stringValue)
        XCTAssertNotNil(example["time"]?.stringValue)
        XCTAssertNotNil(example["connection"]?.intValue)

        let mine = try control("GET", "/api/v1/sender-report?sender=address:127.0.0.1")
        XCTAssertEqual(mine.json["findings"]?.arrayValue?.count, 1)
        let others = try control("GET", "/api/v1/sender-report?sender=token%3AABCDE12345")
        XCTAssertEqual(others.json["findings"], .array([]), "another CI job's findings are not this one's")

        XCTAssertEqual(try control("POST", "/api/v1/reset").status, 200)
        XCTAssertEqual(try control("GET", "/api/v1/sender-report").json["findings"], .array([]))
    }

    func testTheEndpointsMistakes() throws {
        XCTAssertEqual(try control("POST", "/api/v1/sender-report").status, 405)
        XCTAssertEqual(try control("GET", "/api/v1/sender-report?rule=x").status, 400)
        XCTAssertEqual(try control("GET", "/api/v1/sender-report?sender=").status, 400)
    }
}
