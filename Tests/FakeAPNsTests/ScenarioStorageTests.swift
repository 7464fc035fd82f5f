import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

/// A phone that is offline when its pushes come: APNs stores one push per app, the newest in
/// most cases, and gives it to the phone when it comes back; `apns-expiration` 0, or a date in
/// the past, means no storage at all. Sent with curl and python3-h2.
final class ScenarioStorageTests: ScenarioTestCase {
    func testAnOfflinePhoneGetsOnlyTheNewestOfThreePushes() throws {
        phone.update { $0.isOnline = false }
        let pushes = (1...3).map { WirePush.device(Scenario.token, Scenario.alert("Score \($0)")) }
        for push in pushes { XCTAssertEqual(try Curl.send(push, to: server).status, 200, "Apple's 200 stays 200") }
        XCTAssertEqual(phone.log(apnsID: pushes[0].apnsID!).map(\.status), [.received, .storedDeviceOffline, .overwritten])
        XCTAssertEqual(phone.log(apnsID: pushes[1].apnsID!).map(\.status), [.received, .storedDeviceOffline, .overwritten])
        XCTAssertEqual(phone.log(apnsID: pushes[2].apnsID!).map(\.status), [.received, .storedDeviceOffline])
        XCTAssertTrue(phone.deliveries.isEmpty, "nothing reaches an offline phone")

        phone.update { $0.isOnline = true }
        let delivery = try phone.deliveries.pop(timeout: .seconds(5))
        XCTAssertTrue(delivery.fromStorage)
        XCTAssertEqual(delivery.notification.apnsID?.lowercased(), pushes[2].apnsID?.lowercased())
        XCTAssertEqual(delivery.notification.payload.aps.alert?.body, "Score 3")
        XCTAssertTrue(phone.deliveries.isEmpty, "the two older pushes are gone")
        XCTAssertEqual(phone.log(apnsID: pushes[2].apnsID!).last?.status, .deliveredFromStorage)
        XCTAssertEqual(phone.screen.notificationCenter.map(\.body), ["Score 3"])
    }

    /// The seeded mode keeps one push chosen by its seed, not always the newest, and the same
    /// one every run: eight phones, each with its own seed, each sent three pushes offline.
    func testSeededStorageKeepsTheSamePushEveryRun() throws {
        let phones = (1...8).map { DeviceToken(bytes: [UInt8](repeating: UInt8($0), count: 32)) }
        func keptPushes() throws -> [String] {
            for (index, token) in phones.enumerated() {
                server.device(token).update {
                    $0.isOnline = false
                    $0.storage = .seededRandom(UInt64(index + 1))
                }
            }
            let pushes = phones.flatMap { token in
                (1...3).map { WirePush.device(token, Scenario.alert("Push \($0)")) }
            }
            XCTAssertEqual(try PythonH2.send(pushes, to: server).map(\.status), Array(repeating: 200, count: 24))
            return try phones.map { token in
                let phone = server.device(token)
                phone.update { $0.isOnline = true }
                let delivery = try phone.deliveries.pop(timeout: .seconds(5))
                XCTAssertTrue(delivery.fromStorage)
                XCTAssertTrue(phone.deliveries.isEmpty, "one push of three is kept")
                return try XCTUnwrap(delivery.notification.payload.aps.alert?.body)
            }
        }
        let first = try keptPushes()
        server.reset()
        let second = try keptPushes()
        XCTAssertEqual(first, second, "the same seeds keep the same pushes")
        XCTAssertTrue(first.contains { $0 != "Push 3" }, "a seeded choice is not always the newest: \(first)")
    }

    func testExpirationZeroToAnOfflinePhoneIsDiscarded() throws {
        phone.update { $0.isOnline = false }
        let push = WirePush.device(Scenario.token, Scenario.alert("Now or never"), expiration: 0)
        XCTAssertEqual(try Curl.send(push, to: server).status, 200)
        XCTAssertEqual(phone.log(apnsID: push.apnsID!).map(\.status), [.received, .discardedExpired])

        phone.update { $0.isOnline = true }
        XCTAssertTrue(phone.deliveries.isEmpty, "a push sent with expiration 0 is never stored")
        XCTAssertEqual(phone.log(apnsID: push.apnsID!).map(\.status), [.received, .discardedExpired])
    }

    func testExpirationZeroToAnOnlinePhoneIsDelivered() throws {
        let push = WirePush.device(Scenario.token, Scenario.alert("Now or never"), expiration: 0)
        XCTAssertEqual(try PythonH2.send(push, to: server).status, 200)
        XCTAssertFalse(try phone.deliveries.pop(timeout: .seconds(5)).fromStorage)
        XCTAssertEqual(phone.log(apnsID: push.apnsID!).map(\.status), [.received, .deliveredToDevice])
    }

    /// `apns-expiration: 300` meant "five minutes" but is a date in 1970: the push is lost when
    /// the phone is offline, and the lint says why.
    func testARelativeExpirationIsLostOfflineAndLinted() throws {
        phone.update { $0.isOnline = false }
        let push = WirePush.device(Scenario.token, Scenario.alert("In five minutes"), expiration: 300)
        XCTAssertEqual(try Curl.send(push, to: server).status, 200)
        XCTAssertEqual(phone.log(apnsID: push.apnsID!).map(\.status), [.received, .discardedExpired])
        phone.update { $0.isOnline = true }
        XCTAssertTrue(phone.deliveries.isEmpty)

        let notification = try server.notifications.pop(timeout: .seconds(5))
        XCTAssertEqual(notification.expiration, 300)
        let finding = try XCTUnwrap(notification.lintFindings.first { $0.rule == .relativeExpiration })
        XCTAssertEqual(finding.level, .error)
    }

    /// Several pushes for one app to an offline phone: all but one will be lost, and the lint
    /// says so on the pushes after the first.
    func testABurstToAnOfflinePhoneIsLinted() throws {
        phone.update { $0.isOnline = false }
        let pushes = (1...3).map { WirePush.device(Scenario.token, Scenario.alert("Burst \($0)")) }
        XCTAssertEqual(try PythonH2.send(pushes, to: server).map(\.status), [200, 200, 200])
        let notifications = try server.notifications.pop(count: 3, timeout: .seconds(5))
        XCTAssertFalse(notifications[0].lintFindings.contains { $0.rule == .offlineBurst }, "one push alone is kept")
        XCTAssertTrue(notifications[2].lintFindings.contains { $0.rule == .offlineBurst }, "\(notifications[2].lintFindings)")
    }
}
