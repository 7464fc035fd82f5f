import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

/// `apns-priority`: 10 goes at once; 5 waits for the phone's power considerations (held under
/// power restrictions until the system sends a burst); 1 never wakes a sleeping phone. Sent
/// with curl and python3-h2.
final class ScenarioPriorityTests: ScenarioTestCase {
    func testPriorityFiveIsHeldUnderPowerRestrictionsUntilABurst() throws {
        phone.update { $0.isPowerRestricted = true }
        let deferred = WirePush.device(Scenario.token, Scenario.alert("Weekly digest"), priority: 5)
        let urgent = WirePush.device(Scenario.token, Scenario.alert("Your driver is here"), priority: 10)
        XCTAssertEqual(try Curl.send(deferred, to: server).status, 200)
        XCTAssertEqual(try Curl.send(urgent, to: server).status, 200)

        let first = try phone.deliveries.pop(timeout: .seconds(5))
        XCTAssertEqual(first.notification.apnsID?.lowercased(), urgent.apnsID?.lowercased(), "priority 10 goes at once")
        XCTAssertFalse(first.fromStorage)
        XCTAssertTrue(phone.deliveries.isEmpty, "priority 5 waits")
        XCTAssertEqual(phone.log(apnsID: deferred.apnsID!).map(\.status), [.received, .storedPowerConsiderations])

        phone.releaseBursts()
        let held = try phone.deliveries.pop(timeout: .seconds(5))
        XCTAssertEqual(held.notification.apnsID?.lowercased(), deferred.apnsID?.lowercased())
        XCTAssertTrue(held.fromStorage)
        XCTAssertEqual(
            phone.log(apnsID: deferred.apnsID!).map(\.status),
            [.received, .storedPowerConsiderations, .deliveredFromStorage])
    }

    func testPriorityFiveIsDeliveredWhenTheRestrictionLifts() throws {
        phone.update { $0.isPowerRestricted = true }
        let deferred = WirePush.device(Scenario.token, Scenario.alert("Weekly digest"), priority: 5)
        XCTAssertEqual(try PythonH2.send(deferred, to: server).status, 200)
        XCTAssertTrue(phone.deliveries.isEmpty)
        phone.update { $0.isPowerRestricted = false }
        XCTAssertTrue(try phone.deliveries.pop(timeout: .seconds(5)).fromStorage)
    }

    func testPriorityOneIsHeldWhileThePhoneSleeps() throws {
        phone.update { $0.isAwake = false }
        let quiet = WirePush.device(Scenario.token, Scenario.alert("New episode"), priority: 1)
        XCTAssertEqual(try PythonH2.send(quiet, to: server).status, 200)
        XCTAssertTrue(phone.deliveries.isEmpty, "priority 1 never wakes the phone")
        XCTAssertEqual(phone.log(apnsID: quiet.apnsID!).map(\.status), [.received, .storedPowerConsiderations])

        phone.update { $0.isAwake = true }
        let delivery = try phone.deliveries.pop(timeout: .seconds(5))
        XCTAssertEqual(delivery.notification.apnsID?.lowercased(), quiet.apnsID?.lowercased())
        XCTAssertTrue(delivery.fromStorage)
        XCTAssertEqual(phone.log(apnsID: quiet.apnsID!).last?.status, .deliveredFromStorage)
    }
}
