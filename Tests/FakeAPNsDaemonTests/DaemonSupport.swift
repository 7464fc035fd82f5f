import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs
// Reads internals on purpose: Daemon, ControlAPI and Options, for InProcessDaemonFixture.
@testable import FakeAPNsDaemon

/// A daemon in this test process (a ``Daemon``, not the executable: for tests that read its
/// state), every listener on a free port and then `arguments`, started, with a control API of
/// its own on a free port beside the daemon's and an HTTP client of that API. Both stop when
/// the test ends; `start` again replaces them. Tests of the executable use ``DaemonFixture``.
///
/// Unchecked: XCTest runs a test, its `setUp` and its teardown blocks one after another.
final class InProcessDaemonFixture: @unchecked Sendable {
    private(set) var daemon: Daemon!
    private(set) var api: ControlAPI!
    private(set) var http: HTTPTestClient!
    private var stopsWithTest = false

    /// Starts a daemon with `arguments` (after the free ports) and `channels` for `test`, its
    /// events recorded by the metrics the API reports and passed to `onEvent`, and a control
    /// API serving `maximumConnections` at once; a daemon already running is stopped first.
    func start(
        _ arguments: [String] = [], channels: [DevicesFile.Channel] = [],
        maximumConnections: Int = ControlLimits.defaultMaximumConnections,
        onEvent: (@Sendable (ServerEvent) -> Void)? = nil, backPressure: (@Sendable () -> Void)? = nil,
        for test: XCTestCase
    ) throws {
        if !stopsWithTest {
            stopsWithTest = true
            test.addTeardownBlock { self.stop() }
        }
        stop()
        let options = try Options.parse(DaemonFixture.freePorts + arguments)
        let metrics = Metrics()
        let daemon = try Daemon(
            options: options, devices: [], channels: channels,
            onEvent: { event in
                metrics.record(event)
                onEvent?(event)
            }, backPressure: backPressure)
        try daemon.start(metrics: metrics)
        self.daemon = daemon
        api = ControlAPI(daemon: daemon, metrics: metrics, maximumConnections: maximumConnections)
        http = HTTPTestClient(port: try api.start(host: "127.0.0.1", port: 0))
    }

    /// Stops the API, then the daemon.
    func stop() {
        api?.stop()
        daemon?.stop()
        api = nil
        daemon = nil
        http = nil
    }
}

/// One control API request by curl, a client independent of this code: curl's exit status, the
/// HTTP status (0 when no answer came), the body, and what curl wrote to standard error.
/// `maxTime` bounds curl's wait for the answer.
func curl(
    port: Int, _ method: String, _ path: String, json body: String? = nil, maxTime: Int? = nil
) throws -> (exit: Int32, status: Int, body: String, error: String) {
    var arguments = ["--silent", "--show-error", "--request", method, "--write-out", "\n%{http_code}"]
    if let body { arguments += ["--header", "content-type: application/json", "--data", body] }
    if let maxTime { arguments += ["--max-time", String(maxTime)] }
    let result = try runTool("/usr/bin/curl", arguments + ["http://127.0.0.1:\(port)\(path)"])
    let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false)
    return (result.status, Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"), result.error)
}
