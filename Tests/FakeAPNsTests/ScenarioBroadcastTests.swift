import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

/// A broadcast to a channel reaches an offline subscribed phone as the channel's storage
/// policy says: policy 1 keeps the most recent message and delivers it when the phone comes
/// back; policy 0 keeps nothing. Sent with curl and python3-h2.
final class ScenarioBroadcastTests: ScenarioTestCase {
    private let update = #"{"aps":{"event":"update","timestamp":1800000000,"content-state":{"score":"2-1"}}}"#

    func testPolicyOneIsStoredForAnOfflinePhoneAndDeliveredOnItsReturn() throws {
        let channel = try server.channels.create(bundleID: Scenario.bundle, storagePolicy: .mostRecentMessage)
        try server.channels.subscribe(Scenario.token, to: channel.id)
        phone.update { $0.isOnline = false }

        let answer = try Curl.send(WirePush.broadcast(channel.id, update), to: server)
        XCTAssertEqual(answer.status, 200)
        let uniqueID = try XCTUnwrap(answer.apnsUniqueID, "a broadcast is always answered an apns-unique-id")
        XCTAssertEqual(phone.log(uniqueID: uniqueID).map(\.status), [.received, .storedDeviceOffline])
        XCTAssertEqual(phone.log(uniqueID: uniqueID).last?.channelID, channel.id)
        XCTAssertTrue(phone.deliveries.isEmpty)

        phone.update { $0.isOnline = true }
        let delivery = try phone.deliveries.pop(timeout: .seconds(5))
        XCTAssertTrue(delivery.fromStorage)
        XCTAssertEqual(delivery.channelID, channel.id)
        XCTAssertEqual(delivery.notification.uniqueID, uniqueID)
        XCTAssertEqual(phone.log(uniqueID: uniqueID).last?.status, .deliveredFromStorage)
    }

    func testPolicyZeroIsDroppedForAnOfflinePhone() throws {
        let channel = try server.channels.create(bundleID: Scenario.bundle, storagePolicy: .noStorage)
        try server.channels.subscribe(Scenario.token, to: channel.id)
        phone.update { $0.isOnline = false }

        let answer = try PythonH2.send(WirePush.broadcast(channel.id, update, expiration: 0), to: server)
        XCTAssertEqual(answer.status, 200)
        let uniqueID = try XCTUnwrap(answer.apnsUniqueID)
        let log = phone.log(uniqueID: uniqueID)
        XCTAssertEqual(log.first?.status, .received, "the phone's log has the broadcast")
        XCTAssertFalse(log.contains { $0.status == .storedDeviceOffline }, "policy 0 stores nothing: \(log)")

        phone.update { $0.isOnline = true }
        XCTAssertTrue(phone.deliveries.isEmpty, "nothing comes back with the phone")
        XCTAssertFalse(phone.log(uniqueID: uniqueID).contains { $0.status == .deliveredFromStorage })
    }

    /// An online subscriber gets the broadcast at once, whatever the policy.
    func testAnOnlinePhoneGetsTheBroadcastAtOnce() throws {
        let channel = try server.channels.create(bundleID: Scenario.bundle, storagePolicy: .noStorage)
        try server.channels.subscribe(Scenario.token, to: channel.id)
        let answer = try Curl.send(WirePush.broadcast(channel.id, update), to: server)
        XCTAssertEqual(answer.status, 200)
        let delivery = try phone.deliveries.pop(timeout: .seconds(5))
        XCTAssertFalse(delivery.fromStorage)
        XCTAssertEqual(delivery.channelID, channel.id)
        XCTAssertEqual(server.deliveryLog(uniqueID: try XCTUnwrap(answer.apnsUniqueID)).map(\.status), [.received, .deliveredToDevice])
    }
}
