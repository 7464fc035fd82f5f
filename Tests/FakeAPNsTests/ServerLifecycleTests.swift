import Foundation
import XCTest
@testable import FakeAPNs

/// Starting and stopping: ports, addresses, threads, and repeated use in one process.
final class ServerLifecycleTests: XCTestCase {
    func testBoundPortIsReadableRightAfterStart() throws {
        let server = FakeAPNsServer()
        XCTAssertEqual(server.gatewayPort, 0)
        try server.start()
        defer { server.stop() }
        XCTAssertGreaterThan(server.gatewayPort, 0)
        let client = try server.connectClient()
        try client.send(BinaryEncoder.frame(token: Fixtures.token, payload: Fixtures.alert, identifier: 1))
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).identifier, 1)
    }

    func testSeveralServersRunSideBySideWithSeparateQueues() throws {
        let servers = try (0..<4).map { _ in try FakeAPNsServer.started() }
        defer { servers.forEach { $0.stop() } }
        XCTAssertEqual(Set(servers.map(\.gatewayPort)).count, 4)
        for (index, server) in servers.enumerated() {
            let client = try server.connectClient()
            try client.send(BinaryEncoder.enhanced(identifier: UInt32(index), token: Fixtures.token, payload: Fixtures.alert))
        }
        for (index, server) in servers.enumerated() {
            XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).identifier, UInt32(index))
            XCTAssertEqual(server.notifications.count, 0)
        }
    }

    func testListensOnIPv6Loopback() throws {
        let server = try FakeAPNsServer.started(configuration: .init(host: "::1"))
        defer { server.stop() }
        let client = try server.connectClient()
        try client.send(BinaryEncoder.enhanced(identifier: 6, token: Fixtures.token, payload: Fixtures.alert))
        let notification = try server.notifications.pop(timeout: .seconds(5))
        XCTAssertEqual(notification.identifier, 6)
        XCTAssertTrue(notification.connection.peer.hasPrefix("[::1]:"), notification.connection.peer)
    }

    func testBindingAnAddressInUseFailsWithAClearError() throws {
        let first = try FakeAPNsServer.started()
        defer { first.stop() }
        let second = FakeAPNsServer(configuration: .init(gatewayPort: first.gatewayPort))
        XCTAssertThrowsError(try second.start()) { error in
            XCTAssertTrue("\(error)".contains("Address already in use"), "\(error)")
        }
    }

    func testStopIsSafeTwiceAndFreesThePortAtOnce() throws {
        let server = try FakeAPNsServer.started()
        let port = server.gatewayPort
        let client = try server.connectClient()
        try client.send(BinaryEncoder.enhanced(identifier: 1, token: Fixtures.token, payload: Fixtures.alert))
        _ = try server.notifications.pop(timeout: .seconds(5))
        server.stop()
        server.stop()
        XCTAssertEqual(server.openConnectionCount, 0)
        let again = try FakeAPNsServer.started(configuration: .init(gatewayPort: port))
        defer { again.stop() }
        XCTAssertEqual(again.gatewayPort, port)
    }

    func testStopBeforeStartIsHarmlessAndStartingTwiceIsAnError() throws {
        let never = FakeAPNsServer()
        never.stop()
        let server = try FakeAPNsServer.started()
        defer { server.stop() }
        XCTAssertThrowsError(try server.start())
    }

    func testStopClosesEveryConnectionEvenStalledOnes() throws {
        let server = try FakeAPNsServer.started()
        let silent = try RawConnection(port: server.gatewayPort)
        let stalled = try server.connectClient()
        try stalled.send(Array(BinaryEncoder.enhanced(identifier: 1, token: Fixtures.token, payload: Fixtures.alert).prefix(10)))
        XCTAssertTrue(eventually { server.openConnectionCount == 2 })
        server.stop()
        XCTAssertEqual(server.openConnectionCount, 0)
        XCTAssertTrue(silent.waitForClose(timeout: .seconds(2)))
        XCTAssertEqual(try stalled.readToEnd(), [])
        XCTAssertEqual(server.notifications.count, 0, "a frame cut by the stop is not queued")
    }

    func testNotificationsStayPoppableAfterStop() throws {
        let server = try FakeAPNsServer.started()
        let client = try server.connectClient()
        try client.send(BinaryEncoder.enhanced(identifier: 5, token: Fixtures.token, payload: Fixtures.alert))
        XCTAssertTrue(eventually { server.notifications.count == 1 })
        server.stop()
        XCTAssertEqual(try server.notifications.pop(timeout: .zero).identifier, 5)
    }

    func testStartAndStopInALoopLeavesNoThreadOrDescriptorBehind() throws {
        // Warm up whatever the process creates once (Dispatch threads, OpenSSL tables).
        try cycle()
        let threads = currentThreadCount()
        let descriptors = openDescriptorCount()
        for _ in 0..<40 {
            try cycle()
        }
        // Not above where they started: threads of earlier tests (Dispatch workers) may end
        // meanwhile, but none of the servers' may stay.
        XCTAssertTrue(
            eventually { currentThreadCount() <= threads },
            "threads after 40 start/stop cycles: \(currentThreadCount()), before: \(threads)")
        XCTAssertTrue(
            eventually { openDescriptorCount() <= descriptors },
            "descriptors after 40 start/stop cycles: \(openDescriptorCount()), before: \(descriptors)")
    }

    private func cycle() throws {
        let server = try FakeAPNsServer.started()
        let client = try server.connectClient()
        let idle = try RawConnection(port: server.gatewayPort)
        try client.send(BinaryEncoder.enhanced(identifier: 1, token: Fixtures.token, payload: Fixtures.alert))
        _ = try server.notifications.pop(timeout: .seconds(5))
        server.stop()
        client.close()
        withExtendedLifetime(idle) {}
    }
}
