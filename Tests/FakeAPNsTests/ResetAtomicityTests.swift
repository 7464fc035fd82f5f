import FakeAPNsTestSupport
import XCTest

@testable import FakeAPNs

/// `FakeAPNsServer.reset()` is one step: a thread handing notifications, refusals and
/// broadcasts to the server while another resets it never leaves part of a reset behind.
final class ResetAtomicityTests: XCTestCase {
    private let fixture = ServerFixture()
    private static let channelID = "bWF0Y2gtNDI="
    private static let phone: DeviceToken = "0102030405060708091011121314151617181920212223242526272829303132"

    override func setUpWithError() throws {
        try fixture.start(for: self)
    }

    /// Round after round, a sender hands the intake items in a fixed order (a notification, a
    /// refusal, then a broadcast to a channel it creates and subscribes a device to just
    /// before) while another thread resets the server until the sender is done. What is left
    /// must be what one instant would leave: every item after some point in the order and none
    /// before it, in every queue and history alike (a reset of the notifications before the
    /// refusals, or of the deliveries after the notifications, would keep an item while
    /// forgetting an older one); each kept broadcast whose predecessor is kept (so its channel
    /// was made after the reset) has its delivery; every queue holds what its history holds;
    /// and the numbers of what is kept run on without a gap, above every number forgotten.
    func testAResetDuringArrivalsLeavesEveryQueueAsOfOneInstant() throws {
        let server = fixture.server
        let intake = server.intake
        let connection = ConnectionInfo(id: 1, peer: "127.0.0.1:9")
        let itemsPerRound = 90
        for round in 0..<300 {
            server.reset()
            let before = (
                notifications: intake.notifications.history.lastSequenceNumber,
                rejections: intake.rejections.history.lastSequenceNumber)
            let sent = Locked(0)
            let done = Locked(false)
            let sender = try OSThread(name: "reset-sender") {
                for index in 0..<itemsPerRound {
                    switch index % 3 {
                    case 0:
                        intake.append(notifications: [PushNotification(
                            deviceToken: Self.phone, payload: Payload(bytes: Fixtures.alert), identifier: UInt32(index),
                            format: .enhanced, connection: connection)])
                    case 1:
                        intake.append(Rejection(
                            detail: String(index), cause: .malformed, responseSent: true, connectionClosed: false,
                            connection: connection))
                    default:
                        _ = try? server.channels.create(
                            bundleID: "com.example.app", storagePolicy: .noStorage, id: Self.channelID)
                        try? server.channels.subscribe(Self.phone, to: Self.channelID)
                        var batch = [PushNotification(
                            deviceToken: DeviceToken(bytes: []), payload: Payload(bytes: Fixtures.alert),
                            identifier: UInt32(index), format: .broadcast, connection: connection,
                            http2: PushNotification.HTTP2Fields(
                                apnsID: "A0000000-0000-4000-8000-000000000000", topic: "com.example.app",
                                pushType: .liveactivity, collapseID: nil, providerToken: nil, channelID: Self.channelID))]
                        intake.append(notifications: &batch, broadcasts: true)
                    }
                    sent.withLock { $0 = index + 1 }
                }
                done.withLock { $0 = true }
            }
            // Resets start once the sender is under way, and go on until it is done.
            XCTAssertTrue(eventually { sent.withLock { $0 } > round % 40 || done.withLock { $0 } })
            repeat { server.reset() } while !done.withLock { $0 }
            sender.join()

            let notifications = server.notificationHistory.list()
            let rejections = server.rejectionHistory.list()
            let deliveries = server.channels.deliveryHistory.list()
            let kept = (notifications.map { Int($0.identifier) } + rejections.map { Int($0.detail)! }).sorted()
            if let first = kept.first {
                XCTAssertEqual(kept, Array(first..<itemsPerRound), "round \(round): kept items are a suffix of the order")
            }
            let broadcasts = Dictionary(
                uniqueKeysWithValues: notifications.filter { $0.format == .broadcast }.map { ($0.sequenceNumber, $0) })
            for delivery in deliveries {
                XCTAssertNotNil(
                    broadcasts[delivery.notification.sequenceNumber], "round \(round): a delivery outlived its broadcast")
            }
            for broadcast in broadcasts.values where kept.contains(Int(broadcast.identifier) - 1) {
                let made = deliveries.filter { $0.notification.sequenceNumber == broadcast.sequenceNumber }
                XCTAssertEqual(made.map(\.deviceToken), [Self.phone], "round \(round): a kept broadcast lost its delivery")
            }
            XCTAssertEqual(server.notifications.snapshot().map(\.sequenceNumber), notifications.map(\.sequenceNumber))
            XCTAssertEqual(server.rejections.snapshot().map(\.sequenceNumber), rejections.map(\.sequenceNumber))
            XCTAssertEqual(server.channels.deliveries.snapshot().map(\.sequenceNumber), deliveries.map(\.sequenceNumber))
            for (numbers, floor) in [
                (notifications.map(\.sequenceNumber), before.notifications),
                (rejections.map(\.sequenceNumber), before.rejections),
            ] {
                guard let first = numbers.first else { continue }
                XCTAssertGreaterThan(first, floor, "round \(round): an old number after the reset")
                XCTAssertEqual(numbers, Array(first..<first + UInt64(numbers.count)), "round \(round): a gap in the numbers")
            }
        }
    }

    /// A thread popping while another resets never pops an item a reset forgot: every
    /// notification popped after a reset returned was sent after it, and numbers only rise.
    func testAPopAfterAResetNeverGetsAnItemFromBeforeIt() throws {
        let server = fixture.server
        let intake = server.intake
        let connection = ConnectionInfo(id: 1, peer: "127.0.0.1:9")
        // The sender stamps each notification with the number of resets done when it sent it.
        let resets = Locked(0)
        let done = Locked(false)
        let sender = try OSThread(name: "reset-sender") {
            for _ in 0..<20_000 {
                resets.withLock { count in
                    intake.append(notifications: [PushNotification(
                        deviceToken: Self.phone, payload: Payload(bytes: Fixtures.alert), identifier: UInt32(count),
                        format: .enhanced, connection: connection)])
                }
            }
            done.withLock { $0 = true }
        }
        let resetter = try OSThread(name: "resetter") {
            while !done.withLock({ $0 }) {
                resets.withLock { count in
                    server.reset()
                    count += 1
                }
            }
        }
        var popped = 0
        var lastNumber: UInt64 = 0
        while !done.withLock({ $0 }) || server.notifications.count > 0 {
            // The resets done before the pop: what it pops was sent after the last of them.
            let resetsBefore = resets.withLock { $0 }
            guard let notification = try? server.notifications.pop(timeout: .milliseconds(50)) else { continue }
            XCTAssertGreaterThan(notification.sequenceNumber, lastNumber, "numbers only rise")
            lastNumber = notification.sequenceNumber
            XCTAssertLessThanOrEqual(resetsBefore, Int(notification.identifier), "popped an item a finished reset forgot")
            popped += 1
        }
        sender.join()
        resetter.join()
        XCTAssertGreaterThan(popped, 0)
    }
}
