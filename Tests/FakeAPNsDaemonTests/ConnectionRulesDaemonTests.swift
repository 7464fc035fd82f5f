import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads the JSON the daemon and the client print with the engine's parser.
@testable import FakeAPNs

/// The connection rules through the daemon: its flags, and the log line and metric that say a
/// rule ended a connection; the client is python3-h2, which shares no code with the daemon.
final class ConnectionRulesDaemonTests: XCTestCase {
    func testRefusalsEndingAConnectionAreALogLineAndAMetric() throws {
        let daemon = try DaemonFixture.started(
            ["--bad-device-token-limit", "2", "--throttle-after-refusal", "off"], for: self)
        let http2 = try daemon.port("http2")
        let script = repositoryRoot.appendingPathComponent("Tests/Clients/h2_client.py").path
        let run = try runTool("/usr/bin/python3", [
            script, "pipeline", "--port", String(http2), "--ca", testCertificatePath("ca.pem"), "--count", "3",
            "--token", "not-a-token",
        ])
        XCTAssertEqual(run.status, 0, run.error)
        let goAway = try JSONValue(parsing: run.output)["goaway"]
        XCTAssertEqual(goAway?["debug"]?.stringValue, #"{"reason":"BadDeviceToken"}"#, run.output)
        let line = try daemon.next(["connection-rule"])
        XCTAssertEqual(line["rule"]?.stringValue, "ended-after-refusals")
        XCTAssertEqual(line["listener"]?.stringValue, "http2")
        XCTAssertTrue(line["detail"]?.stringValue?.contains("BadDeviceToken") == true, "\(line)")
        let metrics = try curl(port: try daemon.port("web"), "GET", "/metrics")
        XCTAssertTrue(
            metrics.body.contains(#"fakeapns_connection_rules_total{listener="http2",rule="ended-after-refusals"} 1"#),
            metrics.body)
    }

    func testTheRulesFlagsAreRangeChecked() throws {
        for arguments in [
            ["--error-limit", "-1"], ["--error-window", "0"], ["--stream-limit-violation", "reset"],
            ["--bad-certificate-environment", "close"], ["--requests-per-connection", "x"],
            ["--connection-lifetime", "1e300"], ["--throttle-after-refusal", "maybe"],
        ] {
            let result = try runTool(DaemonFixture.executable.path, DaemonFixture.freePorts + arguments)
            XCTAssertEqual(result.status, 64, "\(arguments): \(result.error)")
            XCTAssertTrue(result.error.contains(arguments[0]), "\(arguments): \(result.error)")
        }
    }
}
