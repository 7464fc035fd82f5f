import FakeAPNsTestSupport
import Foundation
import XCTest
@testable import FakeAPNs

/// Live Activity pushes and broadcasts: timestamps, the priority 10 budget, the states the
/// clock drives, channels' storage.
final class DeviceModelLiveActivityTests: DeviceModelTestCase {
    override var configuration: FakeAPNsServer.Configuration {
        var configuration = FakeAPNsServer.Configuration()
        configuration.lint = .strict
        return configuration
    }

    @discardableResult
    private func sendActivity(
        _ event: String, timestamp: Int, state: String = #"{"score":"0-0"}"#, extra: String = "", priority: Int = 10,
        to token: DeviceToken = token
    ) throws -> String {
        var aps = #""event":"\#(event)","timestamp":\#(timestamp),"content-state":\#(state)"#
        if event == "start" {
            aps += #","attributes-type":"Match","attributes":{},"alert":{"title":"Kick-off"}"#
        }
        return try send(
            #"{"aps":{\#(aps)\#(extra)}}"#, to: token, topic: Self.activityTopic, pushType: .liveactivity,
            priority: priority)
    }

    func testUpdatesApplyInTimestampOrderAndStaleOrFarFutureOnesAreIgnored() throws {
        XCTAssertEqual(phone.screen.liveActivities, [], "a phone described before its pushes")
        let start = now - 60
        try sendActivity("start", timestamp: start)
        let applied = try sendActivity("update", timestamp: start + 30, state: #"{"score":"1-0"}"#)
        let stale = try sendActivity("update", timestamp: start + 10, state: #"{"score":"9-9"}"#)
        let ahead = try sendActivity("update", timestamp: now + 9 * 3600, state: #"{"score":"8-8"}"#)
        XCTAssertEqual(statuses(applied), [.received, .deliveredToDevice])
        XCTAssertEqual(statuses(stale), [.received, .ignoredLiveActivity])
        XCTAssertEqual(statuses(ahead), [.received, .ignoredLiveActivity])
        XCTAssertTrue(findings(stale).contains("live-activity-timestamp"), "\(findings(stale))")
        XCTAssertTrue(findings(ahead).contains("live-activity-timestamp"), "\(findings(ahead))")
        XCTAssertFalse(findings(applied).contains("live-activity-timestamp"))
        let refusals = server.rejectionHistory.list().filter { $0.reason == "live-activity-timestamp" }
        XCTAssertTrue(refusals.contains { $0.apnsID == stale }, "strict mode records the error-level finding")

        let activity = try XCTUnwrap(phone.screen.liveActivities.first)
        XCTAssertEqual(activity.key, Self.token.hex)
        XCTAssertEqual(activity.bundleID, Self.topic)
        XCTAssertEqual(activity.contentState, #"{"score":"1-0"}"#)
        XCTAssertEqual(activity.state, .active)

        try sendActivity("end", timestamp: start + 40)
        let after = try sendActivity("update", timestamp: start + 50)
        XCTAssertEqual(statuses(after), [.received, .ignoredLiveActivity])
        XCTAssertEqual(phone.log(apnsID: after).last?.detail, "the activity ended")
        XCTAssertEqual(phone.screen.liveActivities.first?.state, .ended)
    }

    func testPriority10UpdatesHaveAnHourlyBudgetAndPriority5DoesNot() throws {
        phone.update { $0.liveActivityUpdatesPerHour = 2 }
        let base = now - 100
        try sendActivity("start", timestamp: base)
        try sendActivity("update", timestamp: base + 1)
        try sendActivity("update", timestamp: base + 2)
        let over = try sendActivity("update", timestamp: base + 3)
        XCTAssertEqual(statuses(over), [.received, .throttled])
        XCTAssertTrue(findings(over).contains("live-activity-budget"), "\(findings(over))")
        let quiet = try sendActivity("update", timestamp: base + 4, priority: 5)
        XCTAssertEqual(statuses(quiet), [.received, .deliveredToDevice])

        phone.update { $0.frequentLiveActivityUpdates = true }
        let frequent = try sendActivity("update", timestamp: base + 5)
        XCTAssertEqual(statuses(frequent), [.received, .deliveredToDevice])
        phone.update { $0.frequentLiveActivityUpdates = false }
        server.clock.advance(by: .seconds(3601))
        let refilled = try sendActivity("update", timestamp: now)
        XCTAssertEqual(statuses(refilled), [.received, .deliveredToDevice])
    }

    func testTheClockMakesAnActivityStaleThenEndsAndDismissesIt() throws {
        XCTAssertEqual(phone.screen.liveActivities, [])
        let start = now
        try sendActivity("start", timestamp: start, extra: #","stale-date":\#(start + 600)"#)
        server.clock.advance(by: .seconds(601))
        XCTAssertEqual(phone.screen.liveActivities.first?.state, .stale)
        try sendActivity("update", timestamp: now, extra: #","stale-date":\#(now + 3600)"#)
        XCTAssertEqual(phone.screen.liveActivities.first?.state, .active, "an update with a later stale date")
        server.clock.advance(by: .seconds(8 * 3600))
        XCTAssertEqual(phone.screen.liveActivities.first?.state, .ended, "8 hours after it started")
        server.clock.advance(by: .seconds(4 * 3600))
        XCTAssertEqual(phone.screen.liveActivities.first?.state, .dismissed, "4 hours after it ended")

        let other = DeviceToken(bytes: [UInt8](repeating: 0xC3, count: 32))
        XCTAssertEqual(server.device(other).log, [])
        try sendActivity("start", timestamp: now, to: other)
        try sendActivity("end", timestamp: now, extra: #","dismissal-date":\#(now + 60)"#, to: other)
        XCTAssertEqual(server.device(other).screen.liveActivities.first?.state, .ended)
        server.clock.advance(by: .seconds(61))
        XCTAssertEqual(server.device(other).screen.liveActivities.first?.state, .dismissed)
    }

    func testABroadcastReachesOnlinePhonesAndIsStoredForOfflineOnesByTheChannelsPolicy() throws {
        let stored = try server.channels.create(bundleID: Self.topic, storagePolicy: .mostRecentMessage)
        let unstored = try server.channels.create(bundleID: Self.topic, storagePolicy: .noStorage)
        let away = server.device(Self.otherToken)
        away.update { $0.isOnline = false }
        XCTAssertEqual(phone.log, [])
        for channel in [stored, unstored] {
            try server.channels.subscribe([Self.token, Self.otherToken], to: channel.id)
        }
        let payload = Array(#"{"aps":{"event":"update","timestamp":\#(now),"content-state":{"score":"3-1"}}}"#.utf8)
        let response = try client.send(.broadcast(
            bundleID: Self.topic, channelID: stored.id, payload: payload, expiration: now + 3600))
        XCTAssertEqual(response.status, 200)
        let uniqueID = try XCTUnwrap(response.header("apns-unique-id"))
        XCTAssertEqual(phone.log.map(\.status), [.received, .deliveredToDevice])
        XCTAssertEqual(phone.log.last?.channelID, stored.id)
        XCTAssertEqual(phone.screen.liveActivities.map(\.key), [stored.id])
        XCTAssertEqual(phone.screen.liveActivities.first?.contentState, #"{"score":"3-1"}"#)
        XCTAssertEqual(away.log.map(\.status), [.received, .storedDeviceOffline])
        XCTAssertEqual(server.deliveryLog(uniqueID: uniqueID).count, 4, "one unique id, two phones")

        let dropped = try client.send(.broadcast(bundleID: Self.topic, channelID: unstored.id, payload: payload, expiration: 0))
        XCTAssertEqual(dropped.status, 200)
        XCTAssertEqual(away.log.last?.status, .discardedExpired)
        XCTAssertEqual(away.log.last?.detail, "the channel stores no message")

        away.update { $0.isOnline = true }
        XCTAssertEqual(away.log.last?.status, .deliveredFromStorage)
        let delivery = try away.deliveries.pop(timeout: .seconds(2))
        XCTAssertEqual(delivery.channelID, stored.id)
        XCTAssertTrue(delivery.fromStorage)
    }

    func testAStoredBroadcastExpiresAfter8Hours() throws {
        let channel = try server.channels.create(bundleID: Self.topic, storagePolicy: .mostRecentMessage)
        phone.update { $0.isOnline = false }
        try server.channels.subscribe(Self.token, to: channel.id)
        let payload = Array(#"{"aps":{"event":"update","timestamp":\#(now),"content-state":{}}}"#.utf8)
        let response = try client.send(.broadcast(
            bundleID: Self.topic, channelID: channel.id, payload: payload, expiration: now + 24 * 3600))
        XCTAssertEqual(response.status, 200)
        server.clock.advance(by: .seconds(8 * 3600 + 1))
        XCTAssertEqual(phone.log.map(\.status), [.received, .storedDeviceOffline, .discardedExpired])
    }
}
