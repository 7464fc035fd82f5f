import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

/// A stored push lives until its `apns-expiration` or for 30 days, whichever comes first. The
/// test moves the server's clock instead of waiting. Sent with python3-h2 and curl.
final class ScenarioExpiryTests: ScenarioTestCase {
    private let day = 24 * 3600

    func testAStoredPushIsDiscardedAtItsExpiration() throws {
        phone.update { $0.isOnline = false }
        let expiration = Int(Scenario.now.timeIntervalSince1970) + 3600
        let push = WirePush.device(Scenario.token, Scenario.alert("Sale ends in an hour"), expiration: expiration)
        XCTAssertEqual(try PythonH2.send(push, to: server).status, 200)

        server.clock.advance(by: .seconds(3599))
        XCTAssertEqual(phone.log(apnsID: push.apnsID!).map(\.status), [.received, .storedDeviceOffline])
        server.clock.advance(by: .seconds(2))
        let log = phone.log(apnsID: push.apnsID!)
        XCTAssertEqual(log.map(\.status), [.received, .storedDeviceOffline, .discardedExpired])
        XCTAssertEqual(log.last?.at.timeIntervalSince1970 ?? 0, Double(expiration), accuracy: 1.5)

        phone.update { $0.isOnline = true }
        XCTAssertTrue(phone.deliveries.isEmpty, "an expired push is not delivered")
    }

    /// Without `apns-expiration`, or with one further away, storage lasts 30 days.
    func testAStoredPushIsDiscardedAfterThirtyDays() throws {
        phone.update { $0.isOnline = false }
        let unset = WirePush.device(Scenario.token, Scenario.alert("No expiration"))
        let far = WirePush.device(
            Scenario.token, Scenario.alert("Sixty days"), topic: "com.example.other",
            expiration: Int(Scenario.now.timeIntervalSince1970) + 60 * day)
        XCTAssertEqual(try Curl.send(unset, to: server).status, 200)
        XCTAssertEqual(try Curl.send(far, to: server).status, 200)

        server.clock.advance(by: .seconds(30 * day - 1))
        XCTAssertEqual(phone.log(apnsID: unset.apnsID!).last?.status, .storedDeviceOffline)
        XCTAssertEqual(phone.log(apnsID: far.apnsID!).last?.status, .storedDeviceOffline)
        server.clock.advance(by: .seconds(2))
        XCTAssertEqual(phone.log(apnsID: unset.apnsID!).map(\.status), [.received, .storedDeviceOffline, .discardedExpired])
        XCTAssertEqual(phone.log(apnsID: far.apnsID!).map(\.status), [.received, .storedDeviceOffline, .discardedExpired])

        phone.update { $0.isOnline = true }
        XCTAssertTrue(phone.deliveries.isEmpty)
    }

    /// The same push, back online a day before its 30 days are up, is delivered from storage.
    func testAStoredPushWithinThirtyDaysIsDelivered() throws {
        phone.update { $0.isOnline = false }
        let push = WirePush.device(Scenario.token, Scenario.alert("Still here"))
        XCTAssertEqual(try Curl.send(push, to: server).status, 200)
        server.clock.advance(by: .seconds(29 * day))
        phone.update { $0.isOnline = true }
        let delivery = try phone.deliveries.pop(timeout: .seconds(5))
        XCTAssertTrue(delivery.fromStorage)
        XCTAssertEqual(delivery.deliveredAt.timeIntervalSince(Scenario.now), Double(29 * day), accuracy: 1)
        XCTAssertEqual(phone.log(apnsID: push.apnsID!).map(\.status), [.received, .storedDeviceOffline, .deliveredFromStorage])
    }
}
