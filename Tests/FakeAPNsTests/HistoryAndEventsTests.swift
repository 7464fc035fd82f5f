import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: Intake and TLSClient, to race resets against arrivals.
@testable import FakeAPNs

/// Retention, history, reset, and the event observer.
final class HistoryAndEventsTests: XCTestCase {
    private let fixture = ServerFixture()

    private func send(_ server: FakeAPNsServer, _ identifiers: ClosedRange<Int>) throws {
        let client = try server.connectClient()
        try client.send(identifiers.flatMap {
            BinaryEncoder.enhanced(identifier: UInt32($0), token: Fixtures.token, payload: Fixtures.payload($0))
        })
    }

    func testHistoryKeepsWhatWasPoppedAndListsWithFilters() throws {
        try withFakeAPNs { server in
            try send(server, 1...5)
            _ = try server.notifications.pop(count: 5, timeout: .seconds(5))
            XCTAssertEqual(server.notificationHistory.count, 5)
            XCTAssertEqual(server.notificationHistory.list(since: 3).map(\.identifier), [4, 5])
            XCTAssertEqual(server.notificationHistory.list(limit: 2).map(\.identifier), [1, 2])
            XCTAssertEqual(server.notificationHistory.list { $0.identifier % 2 == 0 }.map(\.identifier), [2, 4])
            XCTAssertEqual(server.notificationHistory.item(3)?.identifier, 3)
            XCTAssertNil(server.notificationHistory.item(6))
        }
    }

    func testRetentionDropsTheOldestAndCountsThem() throws {
        try withFakeAPNs(configuration: .init(retention: 3)) { server in
            try send(server, 1...5)
            XCTAssertTrue(eventually { server.notifications.totalArrived == 5 })
            XCTAssertEqual(server.notifications.snapshot().map(\.identifier), [3, 4, 5])
            XCTAssertEqual(server.notifications.droppedCount, 2)
            XCTAssertEqual(server.notificationHistory.list().map(\.identifier), [3, 4, 5])
            XCTAssertEqual(server.notificationHistory.droppedCount, 2)
            XCTAssertNil(server.notificationHistory.item(1))
        }
    }

    func testResetRestoresTheStartingState() throws {
        try withFakeAPNs(configuration: .init(strictDeviceRegistry: false)) { server in
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
    }

    func testEventsTellConnectionsAcceptancesRefusalsAndFeedbackReads() throws {
        let events = Locked<[String]>([])
        let server = try fixture.start(.init(onEvent: { event in
            let name = switch event {
            case .connectionOpened(_, let listener): "opened \(listener)"
            case .connectionClosed(_, let listener): "closed \(listener)"
            case .connectionRule(_, let listener, let rule): "rule \(listener): \(rule.name)"
            case .handshakeFailed(_, let listener, _): "handshake failed \(listener)"
            case .connectionRefused(_, let listener, let reason): "refused \(listener): \(reason)"
            case .accepted(let batch): "accepted \(batch.map(\.sequenceNumber))"
            case .rejected(let rejection): "rejected \(rejection.identifier)"
            case .feedbackRead(let tuples, _): "feedback \(tuples.count)"
            case .channelCreated(let channel): "channel created \(channel.bundleID)"
            case .channelDeleted(let channel): "channel deleted \(channel.bundleID)"
            case .deviceLog(let entries): "device log \(entries.count)"
            }
            events.withLock { $0.append(name) }
        }), for: self)
        let client = try server.connectClient()
        try client.send(BinaryEncoder.enhanced(identifier: 1, token: Fixtures.token, payload: Fixtures.alert)
            + BinaryEncoder.enhanced(identifier: 2, token: Fixtures.token, payload: []))
        _ = try client.readToEnd()
        XCTAssertEqual(try FeedbackClient.read(host: "127.0.0.1", port: server.feedbackPort!), [])
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

    /// A reset while a sender hands batches over: every batch is numbered, recorded, announced
    /// and queued wholly before the reset (and forgotten) or wholly after it (and kept), so the
    /// queue and the history hold the same items, whose numbers run on without a gap from the
    /// first batch after the last reset, and every number was announced once, in order.
    func testAResetDuringArrivalsLeavesEveryBatchWhollyBeforeOrAfterIt() throws {
        let announced = Locked<[UInt64]>([])
        let intake = Intake(
            retention: nil,
            announceAccepted: { batch in announced.withLock { $0.append(contentsOf: batch.map(\.sequenceNumber)) } })
        let notification = PushNotification(
            deviceToken: Fixtures.token, payload: Payload(bytes: Fixtures.alert), format: .enhanced,
            connection: ConnectionInfo(id: 1, peer: "127.0.0.1:9"))
        let batches = 2_000
        let batchSize = 7
        let done = Locked(false)
        let sender = try OSThread(name: "intake-sender") {
            for _ in 0..<batches {
                var batch = Array(repeating: notification, count: batchSize)
                intake.append(notifications: &batch)
            }
            done.withLock { $0 = true }
        }
        XCTAssertTrue(eventually { announced.withLock { !$0.isEmpty } })
        while !done.withLock({ $0 }) { intake.reset() }
        sender.join()
        let total = UInt64(batches * batchSize)
        XCTAssertEqual(announced.withLock { $0 }, Array(1...total), "each number announced once, in order")
        let queued = intake.notifications.mailbox.snapshot().map(\.sequenceNumber)
        XCTAssertEqual(intake.notifications.history.list().map(\.sequenceNumber), queued, "queue and history agree")
        XCTAssertEqual(queued.count % batchSize, 0, "no batch was cut by a reset")
        if let first = queued.first {
            XCTAssertEqual(first % UInt64(batchSize), 1, "the kept items start at a batch")
            XCTAssertEqual(queued, Array(first...total), "numbers run on without a gap")
        }
        intake.reset()
        var one = [notification]
        intake.append(notifications: &one)
        XCTAssertEqual(try intake.notifications.mailbox.pop(timeout: .seconds(5)).sequenceNumber, total + 1, "numbering goes on")
        XCTAssertEqual(intake.notifications.history.list().map(\.sequenceNumber), [total + 1])
    }
}
