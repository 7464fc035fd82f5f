import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

/// The delivery log in the Push Notifications Console's words: a push to an app whose
/// notifications are off is "Discarded - Disabled", to an app that is gone "Discarded - Token
/// Unregistered", both answered 200. A sandbox push's answer carries `apns-unique-id`, the key
/// to its log; a production push's does not. Sent with curl and python3-h2.
final class ScenarioDeliveryLogTests: ScenarioTestCase {
    func testNotificationsTurnedOffAreDiscardedDisabled() throws {
        phone.update { $0[app: Scenario.bundle].authorization = .denied }
        let push = WirePush.device(Scenario.token, Scenario.alert("Flash sale"))
        XCTAssertEqual(try Curl.send(push, to: server).status, 200)
        XCTAssertEqual(phone.log(apnsID: push.apnsID!).map(\.status), [.received, .discardedDisabled])
        XCTAssertTrue(phone.deliveries.isEmpty)
        XCTAssertEqual(phone.screen.notificationCenter.count, 0)
    }

    func testAnUninstalledAppIsDiscardedTokenUnregistered() throws {
        phone.update { $0[app: Scenario.bundle].isInstalled = false }
        let push = WirePush.device(Scenario.token, Scenario.alert("We miss you"))
        let answer = try PythonH2.send(push, to: server)
        XCTAssertEqual(answer.status, 200, "Apple answers 200 for a while after an uninstall")
        XCTAssertEqual(phone.log(apnsID: push.apnsID!).map(\.status), [.received, .discardedTokenUnregistered])
        XCTAssertTrue(phone.deliveries.isEmpty)
    }

    func testAnUninstallReportedAfterADelayIsAnswered200AndDiscardedThen410() throws {
        server.devices.unregister(Scenario.token, at: server.clock.currentDate, reportedAfter: .seconds(6 * 3600))
        let early = WirePush.device(Scenario.token, Scenario.alert("Still there?"))
        XCTAssertEqual(try Curl.send(early, to: server).status, 200, "APNs answers 200 until it reports the uninstall")
        XCTAssertEqual(phone.log(apnsID: early.apnsID!).map(\.status), [.received, .discardedTokenUnregistered])
        server.clock.advance(by: .seconds(6 * 3600))
        let late = WirePush.device(Scenario.token, Scenario.alert("Hello?"))
        let answer = try PythonH2.send(late, to: server)
        XCTAssertEqual(answer.status, 410)
        XCTAssertEqual(phone.log(apnsID: late.apnsID!), [], "a refused push never reaches the phone")
        XCTAssertTrue(phone.deliveries.isEmpty)
    }

    func testASandboxPushIsAnsweredAUniqueIDThatFindsItsLog() throws {
        phone.update { $0.isOnline = false }
        let push = WirePush.device(Scenario.token, Scenario.alert("Your code is 381204"))
        let answer = try Curl.send(push, to: server)
        XCTAssertEqual(answer.status, 200)
        let uniqueID = try XCTUnwrap(answer.apnsUniqueID, "sandbox answers carry apns-unique-id")
        phone.update { $0.isOnline = true }

        let expected: [DeliveryStatus] = [.received, .storedDeviceOffline, .deliveredFromStorage]
        XCTAssertEqual(server.deliveryLog(uniqueID: uniqueID).map(\.status), expected)
        XCTAssertEqual(phone.log(uniqueID: uniqueID).map(\.status), expected)
        XCTAssertTrue(server.deliveryLog(uniqueID: uniqueID).allSatisfy {
            $0.apnsID?.lowercased() == push.apnsID?.lowercased() && $0.deviceToken == Scenario.token
        })
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).uniqueID, uniqueID)
    }

    func testAProductionPushHasNoUniqueID() throws {
        try fixture.restart(.init(environment: .production))
        let push = WirePush.device(Scenario.token, Scenario.alert("Your code is 381204"))
        let answer = try Curl.send(push, to: server)
        XCTAssertEqual(answer.status, 200)
        XCTAssertNotNil(answer.apnsID)
        XCTAssertNil(answer.apnsUniqueID, "Apple sends apns-unique-id in development only")
        let log = phone.log(apnsID: push.apnsID!)
        XCTAssertEqual(log.map(\.status), [.received, .deliveredToDevice])
        XCTAssertTrue(log.allSatisfy { $0.uniqueID == nil })
    }
}
