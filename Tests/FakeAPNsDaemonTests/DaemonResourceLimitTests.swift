import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

#if canImport(Glibc)
import Glibc
#endif

/// `fake-apns` run with descriptor and thread limits far below what a flood of idle TCP
/// connections asks for: it refuses what it cannot serve, keeps running, and serves every
/// protocol once the flood is gone.
final class DaemonResourceLimitTests: XCTestCase {
    /// The daemon (or `executable`) run by `launcher`, with 20 s to print its start line.
    private func started(launcher: [String], executable: URL = DaemonFixture.executable) throws -> DaemonFixture {
        try DaemonFixture.started(launcher: launcher, executable: executable, startTimeout: .seconds(20), for: self)
    }

    /// The control API's answer to GET `path`: status (0 when none came within 5 s) and body.
    private func get(_ web: Int, _ path: String) throws -> (status: Int, body: String) {
        let result = try curl(port: web, "GET", path, maxTime: 5)
        return (result.status, result.body)
    }

    /// A notification over the binary gateway and one over HTTP/2 are accepted.
    private func expectServesBothProtocols(_ started: DaemonFixture) throws {
        let client = try BinaryProviderClient(host: "127.0.0.1", port: try started.port("gateway"))
        try client.send(BinaryEncoder.enhanced(identifier: 77, token: Fixtures.token, payload: Fixtures.alert))
        let binary = try started.next(timeout: .seconds(20))
        XCTAssertEqual(binary["event"]?.stringValue, "notification")
        XCTAssertEqual(binary["identifier"]?.intValue, 77)
        let http2 = try ProviderAPIClient(host: "127.0.0.1", port: try started.port("http2"))
        XCTAssertEqual(try http2.send(.push()).status, 200)
        XCTAssertEqual(try started.next(timeout: .seconds(20))["format"]?.stringValue, "http2")
    }

    func testWithFewDescriptorsAFloodIsRefusedWhileHealthzAnswersAndEveryProtocolServesAfterwards() throws {
        let started = try started(launcher: ["/usr/bin/prlimit", "--nofile=128:128", "--"])
        let daemon = started
        let web = try started.port("web")
        var flood: [RawConnection] = []
        for listener in ["gateway", "http2"] {
            let port = try started.port(listener)
            flood += try (0..<150).map { _ in try RawConnection(port: port) }
            let health = try get(web, "/healthz")
            XCTAssertEqual(health.status, 200, "/healthz while \(flood.count) connections are held: \(health.body)")
        }
        let refused = try daemon.next(["connection-refused"], timeout: .seconds(20))
        XCTAssertEqual(refused["cause"]?.stringValue, "descriptor-share", "the gateway's flood meets the others' share first: \(refused)")
        XCTAssertNotNil(refused["peer"]?.stringValue)
        XCTAssertGreaterThanOrEqual(
            closedConnections(flood.map(\.socket), count: 150).count, 150,
            "the connections beyond the limit are closed, not left waiting")
        let metrics = try get(web, "/metrics")
        XCTAssertEqual(metrics.status, 200)
        XCTAssertTrue(
            metrics.body.contains(#"fakeapns_connections_refused_total{listener="gateway",reason="descriptor-share"} "#),
            metrics.body)
        XCTAssertTrue(daemon.process.isRunning)

        flood.removeAll()
        try expectServesBothProtocols(started)
        XCTAssertEqual(try get(web, "/healthz").status, 200)
        XCTAssertEqual(daemon.stop(), 0, daemon.standardError)
    }

    /// Under a tight descriptor limit, a flood of idle connections on the gateway takes no more
    /// than what leaves every other listener its share: HTTP/2 pushes are still answered while
    /// the flood holds.
    func testOneListenersFloodLeavesTheOthersTheirShareOfDescriptors() throws {
        let started = try started(launcher: ["/usr/bin/prlimit", "--nofile=1024:1024", "--"])
        let daemon = started
        let gateway = try started.port("gateway")
        let flood = try (0..<1100).map { _ in try RawConnection(port: gateway) }
        let refused = try daemon.next(["connection-refused"], timeout: .seconds(20))
        XCTAssertEqual(refused["listener"]?.stringValue, "gateway")
        XCTAssertEqual(refused["cause"]?.stringValue, "descriptor-share", "\(refused)")
        XCTAssertGreaterThanOrEqual(closedConnections(flood.map(\.socket), count: 300).count, 300, "the gateway's excess is closed")
        let http2 = try ProviderAPIClient(host: "127.0.0.1", port: try started.port("http2"))
        for identifier in 0..<3 {
            let answer = try http2.send(.push())
            XCTAssertEqual(answer.status, 200, "push \(identifier) while the gateway holds its flood: \(answer)")
            XCTAssertEqual(try daemon.next(timeout: .seconds(20))["format"]?.stringValue, "http2")
        }
        XCTAssertEqual(try FeedbackClient.read(host: "127.0.0.1", port: try started.port("feedback")), [])
        withExtendedLifetime(flood) {}
        XCTAssertEqual(daemon.stop(), 0, daemon.standardError)
    }

    func testWithFewThreadsAFloodIsRefusedAndEveryProtocolServesAfterwards() throws {
        // The kernel does not apply RLIMIT_NPROC to root, so the daemon runs as a user of its
        // own (a uid no other process uses, so its threads are the only ones counted).
        try XCTSkipUnless(getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
                          "needs root and setpriv to run the daemon as another user")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fake-apns-nproc-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let executable = folder.appendingPathComponent("fake-apns")
        try FileManager.default.copyItem(at: DaemonFixture.executable, to: executable)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path)
        let user = 40_000 + Int(getpid()) % 20_000
        let started = try started(
            launcher: [
                "/usr/bin/setpriv", "--reuid=\(user)", "--regid=\(user)", "--clear-groups", "--inh-caps=-all",
                "/usr/bin/prlimit", "--nproc=60", "--",
            ], executable: executable)
        let daemon = started
        var flood: [RawConnection] = []
        for listener in ["gateway", "http2"] {
            let port = try started.port(listener)
            flood += try (0..<100).map { _ in try RawConnection(port: port) }
        }
        let refused = try daemon.next(["connection-refused"], timeout: .seconds(20))
        XCTAssertEqual(refused["cause"]?.stringValue, "no-thread", "\(refused)")
        XCTAssertEqual(refused["reason"]?.stringValue, "no thread for the connection: Resource temporarily unavailable")
        XCTAssertTrue(daemon.process.isRunning)

        flood.removeAll()
        let web = try started.port("web")
        XCTAssertTrue(eventually(timeout: .seconds(30)) { (try? get(web, "/healthz").status) == 200 })
        try expectServesBothProtocols(started)
        XCTAssertEqual(daemon.stop(), 0, daemon.standardError)
    }
}
