import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: Socket and TLSClient, raw connections to the API and the gateway.
@testable import FakeAPNs
// Reads internals on purpose: Daemon and ControlAPI, to count the API's connections.
@testable import FakeAPNsDaemon

#if canImport(Glibc)
import Glibc
#endif

/// How many clients the control API serves at once, and what those beyond get: a daemon in
/// this process, its API on a free port, raw sockets for the crowd.
final class ControlAPICapacityTests: XCTestCase {
    private let fixture = InProcessDaemonFixture()
    private var daemon: Daemon! { fixture.daemon }
    private var api: ControlAPI! { fixture.api }
    private var http: HTTPTestClient! { fixture.http }
    private var sockets: [Int32] = []

    override func tearDown() {
        sockets.forEach { close($0) }
        sockets = []
    }

    /// A connection to the API that has sent nothing yet.
    private func connect() throws -> Int32 {
        let socket = try Socket.connect(host: "127.0.0.1", port: http.port)
        sockets.append(socket)
        return socket
    }

    /// Closes a connection of `connect()`, once: the descriptor may be the server's next.
    private func disconnect(_ socket: Int32) {
        sockets.removeAll { $0 == socket }
        close(socket)
    }

    /// A connection that sent `GET target` and waits for the answer.
    private func connect(sending target: String) throws -> Int32 {
        let socket = try connect()
        let request = Array("GET \(target) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".utf8)
        XCTAssertEqual(request.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) },
                       request.count)
        return socket
    }

    /// The answer on `socket`, read to the end.
    private func response(on socket: Int32, timeout: Int = 10) throws -> HTTPTestClient.Response {
        var value = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        return try HTTPTestClient.parse(HTTPTestClient.readToEnd(socket))
    }

    /// Room for `count` more descriptors in this process, or a skip.
    private func needDescriptors(_ count: Int) throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        let wanted = rlim_t(count)
        if limit.rlim_cur < wanted {
            guard limit.rlim_max >= wanted else { throw XCTSkip("RLIMIT_NOFILE allows \(limit.rlim_max) descriptors") }
            limit.rlim_cur = wanted
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
    }

    func testFiveHundredWaitsBesideFiveHundredIdleConnectionsLeaveHealthMetricsAndResetAnswering() throws {
        // Both ends of 1,000 connections, and room for the tests beside.
        try needDescriptors(4096)
        try fixture.start(for: self)
        let waiters = try (0..<500).map { _ in try connect(sending: "/api/v1/notifications/next?timeout=60") }
        for _ in 0..<500 { _ = try connect() }
        XCTAssertTrue(eventually(timeout: .seconds(30)) { self.daemon.server.notifications.waitingCount == 500 },
                      "\(daemon.server.notifications.waitingCount) of 500 are waiting")

        for (method, target) in [("GET", "/healthz"), ("GET", "/metrics"), ("POST", "/api/v1/reset")] {
            let started = ContinuousClock.now
            let answer = try http.request(method, target, timeout: .seconds(5))
            XCTAssertEqual(answer.status, 200, "\(method) \(target): \(answer.text)")
            XCTAssertLessThan(ContinuousClock.now - started, .seconds(1), "\(method) \(target)")
        }

        // 300 notifications reach 300 waiters, one each; stopping answers the other 200.
        let client = try TLSClient(host: "127.0.0.1", port: daemon.server.gatewayPort)
        defer { client.close() }
        for identifier in 1...300 {
            try client.send(BinaryEncoder.enhanced(
                identifier: UInt32(identifier), token: "fe15a27d", payload: Array(#"{"aps":{"alert":"\#(identifier)"}}"#.utf8)))
        }
        XCTAssertTrue(eventually(timeout: .seconds(30)) { self.daemon.server.notifications.waitingCount == 200 },
                      "\(daemon.server.notifications.waitingCount) still waiting")
        api.stop()
        var alerts: Set<String> = []
        var statuses: [Int: Int] = [:]
        for waiter in waiters {
            let answer = try response(on: waiter)
            statuses[answer.status, default: 0] += 1
            if let alert = answer.json?["payload"]?["aps"]?["alert"]?.stringValue { alerts.insert(alert) }
        }
        XCTAssertEqual(statuses, [200: 300, 503: 200])
        XCTAssertEqual(alerts.count, 300, "each notification went to one waiter")
    }

    func testConnectionsBeyondTheLimitGetOneAnswerAndAWaitThereIsRefused503AtOnce() throws {
        try fixture.start(maximumConnections: 4, for: self)
        XCTAssertEqual(api.servedConnectionLimit, 4)
        for _ in 0..<4 { _ = try connect() }
        XCTAssertTrue(eventually { self.api.openConnections == 4 })

        let started = ContinuousClock.now
        let wait = try response(on: try connect(sending: "/api/v1/notifications/next?timeout=30"))
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(5), "refused at once, not after the wait")
        XCTAssertEqual(wait.status, 503)
        XCTAssertEqual(wait.error, "unavailable")
        XCTAssertTrue(wait.message.contains("--web-max-connections"), wait.message)

        let health = try response(on: try connect(sending: "/healthz"))
        XCTAssertEqual(health.status, 200)
        XCTAssertEqual(health.header("Connection")?.lowercased(), "close")
        XCTAssertEqual(daemon.server.notifications.waitingCount, 0)
    }

    func testClientsBeyondEveryAcceptedConnectionWaitToBeAcceptedAndAreThenAnswered() throws {
        try fixture.start(maximumConnections: 4, for: self)
        // The served four, and the 64 accepted beyond them, all silent.
        let held = try (0..<68).map { _ in try connect() }
        XCTAssertTrue(eventually { self.api.openConnections == 68 })
        let late = try connect(sending: "/healthz")
        XCTAssertFalse(eventually(timeout: .milliseconds(300)) { self.api.openConnections > 68 }, "not accepted yet")
        disconnect(held[0])
        let answer = try response(on: late)
        XCTAssertEqual(answer.status, 200, answer.text)
    }
}
