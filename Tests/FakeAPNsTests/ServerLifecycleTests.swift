import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: TLSClient and its stream, to hold connections across a stop.
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
        try withFakeAPNs(configuration: .init(host: "::1")) { server in
            let client = try server.connectClient()
            try client.send(BinaryEncoder.enhanced(identifier: 6, token: Fixtures.token, payload: Fixtures.alert))
            let notification = try server.notifications.pop(timeout: .seconds(5))
            XCTAssertEqual(notification.identifier, 6)
            XCTAssertTrue(notification.connection.peer.hasPrefix("[::1]:"), notification.connection.peer)
        }
    }

    func testBindingAnAddressInUseFailsWithAClearError() throws {
        try withFakeAPNs { first in
            let second = FakeAPNsServer(configuration: .init(gatewayPort: first.gatewayPort))
            XCTAssertThrowsError(try second.start()) { error in
                XCTAssertTrue("\(error)".contains("Address already in use"), "\(error)")
            }
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
        try withFakeAPNs(configuration: .init(gatewayPort: port)) { again in
            XCTAssertEqual(again.gatewayPort, port)
        }
    }

    func testStopBeforeStartIsHarmlessAndStartingTwiceIsAnError() throws {
        let never = FakeAPNsServer()
        never.stop()
        try withFakeAPNs { server in
            XCTAssertThrowsError(try server.start())
        }
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
        XCTAssertEqual(try stalled.readToEnd(), [8, 10, 0, 0, 0, 0], "status 10, nothing accepted")
        XCTAssertEqual(server.notifications.count, 0, "a frame cut by the stop is not queued")
    }

    func testStopDecodesEverythingReceivedThenAnswersStatus10WithTheLastAcceptedIdentifier() throws {
        let server = try FakeAPNsServer.started()
        let client = try server.connectClient()
        let frames = (1...500).flatMap { BinaryEncoder.enhanced(identifier: UInt32($0), token: Fixtures.token, payload: Fixtures.payload($0)) }
        try client.send(frames)
        // Every byte has left the client (and, on loopback, reached the server's socket).
        XCTAssertTrue(eventually { unsentBytes(client.stream.socket) == 0 })
        server.stop()
        XCTAssertEqual(try client.readToEnd(), [8, 10, 0, 0, 0x01, 0xF4], "status 10 naming identifier 500")
        XCTAssertEqual(try server.notifications.pop(count: 500, timeout: .zero).map(\.identifier), (1...500).map(UInt32.init))
    }

    func testStopTellsAnIdleConnectionTheLastIdentifierItAccepted() throws {
        let server = try FakeAPNsServer.started()
        let client = try server.connectClient()
        for identifier: UInt32 in [7, 3, 9] {
            try client.send(BinaryEncoder.enhanced(identifier: identifier, token: Fixtures.token, payload: Fixtures.alert))
        }
        XCTAssertEqual(try server.notifications.pop(count: 3, timeout: .seconds(5)).count, 3)
        server.stop()
        XCTAssertEqual(try client.readToEnd(), [8, 10, 0, 0, 0, 9])
    }

    func testStopDuringAFaultDelayAnswersStatus10AndDropsTheDelayedNotification() throws {
        let server = try FakeAPNsServer.started()
        server.faults.add(FaultRule(match: .nth(2), action: .delay(.seconds(30))))
        let client = try server.connectClient()
        try client.send(BinaryEncoder.enhanced(identifier: 1, token: Fixtures.token, payload: Fixtures.alert)
            + BinaryEncoder.enhanced(identifier: 2, token: Fixtures.token, payload: Fixtures.alert))
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).identifier, 1)
        server.stop()
        XCTAssertEqual(try client.readToEnd(), [8, 10, 0, 0, 0, 1], "status 10: resend after identifier 1")
        XCTAssertEqual(server.notifications.count, 0)
        let rejection = try server.rejections.pop(timeout: .zero)
        XCTAssertEqual(rejection.answer, .status(.shutdown))
        XCTAssertEqual(rejection.connectionClosed, true)
    }

    func testStopWhileAClientFloodsEndsInTimeAndTheIdentifierMarksExactlyWhatWasQueued() throws {
        let server = try FakeAPNsServer.started()
        let client = try server.connectClient(readTimeout: .seconds(5))
        var next: UInt32 = 1
        func sendSome() throws {
            let frames = (next..<next + 200).flatMap { BinaryEncoder.enhanced(identifier: $0, token: Fixtures.token, payload: Fixtures.alert) }
            next += 200
            try client.send(frames)
        }
        for _ in 0..<20 { try sendSome() }
        // Those 4,000 are in the server's socket before the stop, so they were received.
        XCTAssertTrue(eventually { unsentBytes(client.stream.socket) == 0 })
        let stopped = inBackground("stop") { ContinuousClock().measure { server.stop() } }
        // Keep sending until the server has answered (or stopped listening to us).
        var answer: [UInt8] = []
        while answer.count < 6 {
            var descriptor = pollfd(fd: client.stream.socket, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, 0) > 0 {
                answer = try client.readToEnd()
                break
            }
            do { try sendSome() } catch { answer = (try? client.readToEnd()) ?? []; break }
        }
        XCTAssertLessThan(try stopped.pop(timeout: .seconds(10)).get(), .seconds(2), "stop() took too long")
        XCTAssertEqual(Array(answer.prefix(2)), [8, 10], "status 10")
        let last = answer.count >= 6 ? answer[2..<6].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } : 0
        let queued = server.notifications.removeAll().map(\.identifier)
        XCTAssertGreaterThanOrEqual(last, 4000, "everything sent before the stop was accepted")
        XCTAssertEqual(queued, Array(1...last), "queued: exactly the notifications up to the identifier")
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
