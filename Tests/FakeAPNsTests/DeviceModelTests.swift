import FakeAPNsTestSupport
import Foundation
import XCTest
@testable import FakeAPNs

/// What every device model test needs: a server, an HTTP/2 client, a phone, and sends that
/// check the 200 and give the `apns-id`.
class DeviceModelTestCase: XCTestCase {
    let fixture = ServerFixture()
    var server: FakeAPNsServer { fixture.server }
    private var openClient: ProviderAPIClient?
    static let token = DeviceToken(bytes: [UInt8](repeating: 0xA1, count: 32))
    static let otherToken = DeviceToken(bytes: [UInt8](repeating: 0xB2, count: 32))
    static let topic = "com.example.app"
    static let activityTopic = "com.example.app.push-type.liveactivity"
    var phone: Phone { server.device(Self.token) }

    /// The configuration each test starts with.
    var configuration: FakeAPNsServer.Configuration { .init() }

    override func setUpWithError() throws {
        try fixture.start(configuration, for: self)
    }

    override func tearDown() {
        openClient?.close()
        openClient = nil
        super.tearDown()
    }

    var client: ProviderAPIClient {
        get throws {
            if let openClient { return openClient }
            let made = try fixture.http2Client()
            openClient = made
            return made
        }
    }

    /// Sends a push, asserts Apple's 200 and returns its `apns-id`.
    @discardableResult
    func send(
        _ json: String, to token: DeviceToken = token, topic: String = topic, pushType: PushType? = .alert,
        priority: Int? = nil, expiration: Int? = nil, collapseID: String? = nil, file: StaticString = #filePath,
        line: UInt = #line
    ) throws -> String {
        let response = try client.send(.init(
            token: token, payload: Array(json.utf8), topic: topic, pushType: pushType, priority: priority,
            expiration: expiration, collapseID: collapseID))
        XCTAssertEqual(response.status, 200, "\(String(decoding: response.body, as: UTF8.self))", file: file, line: line)
        return try XCTUnwrap(response.apnsID, file: file, line: line)
    }

    /// A background push.
    @discardableResult
    func sendBackground(topic: String = topic, to token: DeviceToken = token) throws -> String {
        try send(#"{"aps":{"content-available":1}}"#, to: token, topic: topic, pushType: .background, priority: 5)
    }

    /// The statuses of the push with `apnsID` on `phone`, in order.
    func statuses(_ apnsID: String, on phone: Phone? = nil) -> [DeliveryStatus] {
        (phone ?? self.phone).log(apnsID: apnsID).map(\.status)
    }

    /// The lint findings recorded on the accepted push with `apnsID`.
    func findings(_ apnsID: String) -> [String] {
        server.notificationHistory.list().first { $0.apnsID == apnsID }?.lintFindings.map(\.rule.id) ?? []
    }

    /// Now, in UNIX seconds, by the server's clock.
    var now: Int { Int(server.clock.currentDate.timeIntervalSince1970) }
}

/// A phone no test described, phones described late, the log's bounds and announcements, reset.
final class DeviceModelTests: DeviceModelTestCase {
    private let events = Locked<[DeliveryLogEntry]>([])

    override var configuration: FakeAPNsServer.Configuration {
        var configuration = FakeAPNsServer.Configuration()
        configuration.deviceLogLimit = 6
        let events = events
        configuration.onEvent = { event in
            if case .deviceLog(let entries) = event { events.withLock { $0 += entries } }
        }
        return configuration
    }

    func testAPhoneNoTestDescribedGetsEveryPushAtOnceAndIsCaughtUpOnceWhenDescribed() throws {
        let first = try send(#"{"aps":{"alert":"one","badge":1}}"#)
        let second = try send(#"{"aps":{"alert":"two","badge":2}}"#)
        XCTAssertEqual(server.describedDevices, [], "sending describes no phone")
        XCTAssertEqual(events.withLock { $0 }, [], "nothing is played for a phone no test described")

        XCTAssertEqual(statuses(first), [.received, .deliveredToDevice])
        XCTAssertEqual(statuses(second), [.received, .deliveredToDevice])
        XCTAssertEqual(server.describedDevices, [Self.token])
        XCTAssertEqual(phone.log.count, 4, "read twice, played once")
        XCTAssertEqual(phone.screen.notificationCenter.map(\.body), ["two", "one"])
        XCTAssertEqual(phone.screen.badges, [Self.topic: 2])
        XCTAssertEqual(try phone.deliveries.pop(count: 2, timeout: .seconds(2)).map(\.notification.apnsID), [first, second])

        let third = try send(#"{"aps":{"alert":"three"}}"#)
        XCTAssertEqual(statuses(third), [.received, .deliveredToDevice], "the stage plays it once, not the replay")
        XCTAssertEqual(phone.log.count, 6)
        let received = try phone.deliveries.pop(timeout: .seconds(2))
        XCTAssertEqual(received.notification.apnsID, third)
        XCTAssertFalse(received.fromStorage)
    }

    func testTheLogKeepsTheLastEntriesEachAnnouncedInOrderAndFoundByUniqueID() throws {
        phone.update { $0.isOnline = false }
        var sent: [String] = []
        for index in 0..<4 { sent.append(try send(#"{"aps":{"alert":"n\#(index)"}}"#)) }
        let log = phone.log
        XCTAssertEqual(log.count, 6, "the limit is 6")
        XCTAssertEqual(log.last?.apnsID, sent[2])
        XCTAssertEqual(log.last?.status, .overwritten)
        XCTAssertTrue(log.last?.detail?.contains(sent[3]) == true, "\(String(describing: log.last))")
        XCTAssertEqual(events.withLock { Array($0.suffix(6)) }, log, "every entry announced, in order")
        XCTAssertEqual(events.withLock { $0.count }, 4 * 3 - 1)

        let notification = try XCTUnwrap(server.notificationHistory.list().last)
        let uniqueID = try XCTUnwrap(notification.uniqueID)
        XCTAssertEqual(server.deliveryLog(uniqueID: uniqueID).map(\.status), [.received, .storedDeviceOffline])
        XCTAssertEqual(phone.log(uniqueID: uniqueID).count, 2)
    }

    func testResetForgetsEveryPhone() throws {
        phone.update { $0.isOnline = false }
        try send(#"{"aps":{"alert":"stored"}}"#)
        XCTAssertEqual(phone.log.count, 2)
        server.reset()
        XCTAssertEqual(server.describedDevices, [])
        XCTAssertEqual(phone.log, [], "the history is gone, and the phone with it")
        XCTAssertTrue(phone.settings.isOnline, "the defaults again")
        let after = try send(#"{"aps":{"alert":"after"}}"#)
        XCTAssertEqual(statuses(after), [.received, .deliveredToDevice])
    }
}

/// The model on the real clock (here a clock the test turns without telling the model), and
/// the binary gateway's pushes.
final class DeviceModelClockTests: DeviceModelTestCase {
    private let wallClock = Locked<Date>(Date())

    override var configuration: FakeAPNsServer.Configuration {
        var configuration = FakeAPNsServer.Configuration()
        let wallClock = wallClock
        configuration.clock = { wallClock.withLock { $0 } }
        return configuration
    }

    func testWithTheRealClockTheModelCatchesUpWhenItIsRead() throws {
        phone.update { $0.isOnline = false }
        let stored = try send(#"{"aps":{"alert":"stored"}}"#)
        XCTAssertFalse(server.clock.isManual)
        wallClock.withLock { $0 += 31 * 24 * 3600 }
        XCTAssertEqual(statuses(stored), [.received, .storedDeviceOffline, .discardedExpired])
        let entries = phone.log(apnsID: stored)
        XCTAssertEqual(entries[2].at.timeIntervalSince(entries[0].at), 30 * 24 * 3600, accuracy: 1)
    }

    func testTheBinaryGatewaysPushesShareOneSlot() throws {
        phone.update { $0.isOnline = false }
        let sender = try fixture.binaryClient()
        let expiration = UInt32(now + 3600)
        for identifier in UInt32(1)...2 {
            try sender.send(BinaryEncoder.enhanced(
                identifier: identifier, expiration: expiration, token: Self.token,
                payload: Array(#"{"aps":{"alert":"binary \#(identifier)"}}"#.utf8)))
        }
        let sent = try server.notifications.pop(count: 2, timeout: .seconds(5))
        let first = phone.log.filter { $0.sequenceNumber == sent[0].sequenceNumber }.map(\.status)
        XCTAssertEqual(first, [.received, .storedDeviceOffline, .overwritten])
        phone.update { $0.isOnline = true }
        let delivered = try phone.deliveries.pop(timeout: .seconds(2))
        XCTAssertEqual(delivered.notification.identifier, 2)
        XCTAssertEqual(phone.screen.notificationCenter.map(\.identifier), ["#\(sent[1].sequenceNumber)"])
    }
}
