import FakeAPNsTestSupport
import Foundation
import XCTest
@testable import FakeAPNs

/// Retention, history, reset, and the event observer.
final class HistoryAndEventsTests: XCTestCase {
    private func send(_ server: FakeAPNsServer, _ identifiers: ClosedRange<Int>) throws {
        let client = try server.connectClient()
        try client.send(identifiers.flatMap {
            BinaryEncoder.enhanced(identifier: UInt32($0), token: Fixtures.token, payload: Fixtures.payload($0))
        })
    }

    func testHistoryKeepsWhatWasPoppedAndListsWithFilters() throws {
        let server = try FakeAPNsServer.started()
        defer { server.stop() }
        try send(server, 1...5)
        _ = try server.notifications.pop(count: 5, timeout: .seconds(5))
        XCTAssertEqual(server.notificationHistory.count, 5)
        XCTAssertEqual(server.notificationHistory.list(since: 3).map(\.identifier), [4, 5])
        XCTAssertEqual(server.notificationHistory.list(limit: 2).map(\.identifier), [1, 2])
        XCTAssertEqual(server.notificationHistory.list { $0.identifier % 2 == 0 }.map(\.identifier), [2, 4])
        XCTAssertEqual(server.notificationHistory.item(3)?.identifier, 3)
        XCTAssertNil(server.notificationHistory.item(6))
    }

    func testRetentionDropsTheOldestAndCountsThem() throws {
        let server = try FakeAPNsServer.started(configuration: .init(retention: 3))
        defer { server.stop() }
        try send(server, 1...5)
        XCTAssertTrue(eventually { server.notifications.totalArrived == 5 })
        XCTAssertEqual(server.notifications.snapshot().map(\.identifier), [3, 4, 5])
        XCTAssertEqual(server.notifications.droppedCount, 2)
        XCTAssertEqual(server.notificationHistory.list().map(\.identifier), [3, 4, 5])
        XCTAssertEqual(server.notificationHistory.droppedCount, 2)
        XCTAssertNil(server.notificationHistory.item(1))
    }

    func testResetRestoresTheStartingState() throws {
        let server = try FakeAPNsServer.started(configuration: .init(strictDeviceRegistry: false))
        defer { server.stop() }
        try send(server, 1...2)
        XCTAssertTrue(eventually { server.notifications.count == 2 })
        server.faults.add(FaultRule(match: .every, action: .reject(.shutdown)))
        server.devices.isStrict = true
        server.devices.unregister(Fixtures.otherToken)
        server.reset()
        XCTAssertEqual(server.notifications.count, 0)
        XCTAssertEqual(server.notificationHistory.count, 0)
        XCTAssertTrue(server.faults.rules.isEmpty)
        XCTAssertTrue(server.devices.devices.isEmpty)
        XCTAssertFalse(server.devices.isStrict)
        XCTAssertEqual(server.feedback.pendingTuples, [])
        try send(server, 3...3)
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).sequenceNumber, 3, "sequence numbers go on")
    }

    func testEventsTellConnectionsAcceptancesRefusalsAndFeedbackReads() throws {
        let events = Guarded<[String]>([])
        let server = try FakeAPNsServer.started(configuration: .init(onEvent: { event in
            let name = switch event {
            case .connectionOpened(_, let listener): "opened \(listener)"
            case .connectionClosed(_, let listener): "closed \(listener)"
            case .handshakeFailed(_, let listener, _): "handshake failed \(listener)"
            case .connectionRefused(_, let listener, let reason): "refused \(listener): \(reason)"
            case .accepted(let batch): "accepted \(batch.map(\.sequenceNumber))"
            case .rejected(let rejection): "rejected \(rejection.identifier)"
            case .feedbackRead(let tuples, _): "feedback \(tuples.count)"
            }
            events.withLock { $0.append(name) }
        }))
        defer { server.stop() }
        let client = try server.connectClient()
        try client.send(BinaryEncoder.enhanced(identifier: 1, token: Fixtures.token, payload: Fixtures.alert)
            + BinaryEncoder.enhanced(identifier: 2, token: Fixtures.token, payload: []))
        _ = try client.readToEnd()
        XCTAssertEqual(try FeedbackClient.read(host: "127.0.0.1", port: server.feedbackPort), [])
        let raw = try RawConnection(port: server.gatewayPort)
        raw.send(Array("GET / HTTP/1.1\r\n\r\n".utf8))
        XCTAssertTrue(raw.waitForClose(timeout: .seconds(5)))
        XCTAssertTrue(eventually { events.withLock { $0.count } >= 8 })
        let seen = events.withLock { $0 }
        for expected in ["opened gateway", "accepted [1]", "rejected 2", "closed gateway", "opened feedback",
                         "feedback 0", "closed feedback", "handshake failed gateway"] {
            XCTAssertTrue(seen.contains(expected), "\(expected) in \(seen)")
        }
    }
}
