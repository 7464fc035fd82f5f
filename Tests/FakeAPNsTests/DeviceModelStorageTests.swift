import FakeAPNsTestSupport
import Foundation
import XCTest
@testable import FakeAPNs

/// Store-and-forward, expiry, priorities, disabled and uninstalled apps.
final class DeviceModelStorageTests: DeviceModelTestCase {
    func testAnOfflinePhoneStoresOnePushPerTopicAndDeliversTheNewestOnReturn() throws {
        phone.update { $0.isOnline = false }
        let older = try send(#"{"aps":{"alert":"older"}}"#)
        let newer = try send(#"{"aps":{"alert":"newer"}}"#)
        let other = try send(#"{"aps":{"alert":"other app"}}"#, topic: "com.example.other")
        XCTAssertEqual(statuses(older), [.received, .storedDeviceOffline, .overwritten])
        XCTAssertTrue(phone.log(apnsID: older).last?.detail?.contains(newer) == true)
        XCTAssertTrue(findings(newer).contains("offline-burst"), "\(findings(newer))")
        XCTAssertFalse(findings(older).contains("offline-burst"))
        XCTAssertFalse(findings(other).contains("offline-burst"))
        XCTAssertThrowsError(try phone.deliveries.pop(timeout: .milliseconds(50)), "nothing reached the phone")

        phone.update { $0.isOnline = true }
        XCTAssertEqual(statuses(newer), [.received, .storedDeviceOffline, .deliveredFromStorage])
        XCTAssertEqual(statuses(other), [.received, .storedDeviceOffline, .deliveredFromStorage])
        let deliveries = try phone.deliveries.pop(count: 2, timeout: .seconds(2))
        XCTAssertEqual(deliveries.map(\.notification.apnsID), [newer, other])
        XCTAssertTrue(deliveries.allSatisfy(\.fromStorage))
        XCTAssertEqual(phone.screen.notificationCenter.map(\.body), ["other app", "newer"])
    }

    func testTheSeededStorageChoiceIsTheSameForTheSameSeed() throws {
        func kept(seed: UInt64, token: DeviceToken) throws -> Int {
            let phone = server.device(token)
            phone.update { $0.isOnline = false; $0.storage = .seededRandom(seed) }
            let sent = try (0..<5).map { try send(#"{"aps":{"alert":"n\#($0)"}}"#, to: token) }
            phone.update { $0.isOnline = true }
            let delivered = try phone.deliveries.pop(timeout: .seconds(2)).notification.apnsID
            return try XCTUnwrap(sent.firstIndex { $0 == delivered })
        }
        var choices: [Int] = []
        for seed in UInt64(0)..<6 {
            let first = try kept(seed: seed, token: DeviceToken(bytes: [UInt8](repeating: UInt8(seed + 1), count: 32)))
            let again = try kept(seed: seed, token: DeviceToken(bytes: [UInt8](repeating: UInt8(seed + 0x40), count: 32)))
            XCTAssertEqual(first, again, "seed \(seed)")
            choices.append(first)
        }
        XCTAssertTrue(choices.contains { $0 != 4 }, "the seeded choice does not always keep the newest: \(choices)")
    }

    func testAStoredPushExpiresAfter30DaysOrItsExpirationWhicheverComesFirst() throws {
        phone.update { $0.isOnline = false }
        let started = ContinuousClock.now
        let month = try send(#"{"aps":{"alert":"a month"}}"#)
        let hour = try send(#"{"aps":{"alert":"an hour"}}"#, topic: "com.example.other", expiration: now + 3600)
        server.clock.advance(by: .seconds(3600 + 5))
        XCTAssertEqual(statuses(hour), [.received, .storedDeviceOffline, .discardedExpired])
        server.clock.advance(by: .seconds(30 * 24 * 3600 - 3600 - 120))
        XCTAssertEqual(statuses(month), [.received, .storedDeviceOffline], "29 days and 23 hours on")
        server.clock.advance(by: .seconds(240))
        XCTAssertEqual(statuses(month), [.received, .storedDeviceOffline, .discardedExpired])
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(5), "30 days in no time")
        let expired = try XCTUnwrap(phone.log(apnsID: month).last)
        let accepted = try XCTUnwrap(phone.log(apnsID: month).first)
        XCTAssertEqual(expired.at.timeIntervalSince(accepted.at), 30 * 24 * 3600, accuracy: 1, "stamped at its due instant")
        phone.update { $0.isOnline = true }
        XCTAssertThrowsError(try phone.deliveries.pop(timeout: .milliseconds(50)))
    }

    func testExpirationZeroOrPastIsOneAttemptStoredOnlyForTheGrace() throws {
        let online = try send(#"{"aps":{"alert":"now"}}"#, expiration: 0)
        XCTAssertEqual(statuses(online), [.received, .deliveredToDevice])
        phone.update { $0.isOnline = false }
        let zero = try send(#"{"aps":{"alert":"zero"}}"#, expiration: 0)
        let relative = try send(#"{"aps":{"alert":"relative"}}"#, topic: "com.example.other", expiration: 300)
        XCTAssertEqual(statuses(zero), [.received, .discardedExpired])
        XCTAssertEqual(statuses(relative), [.received, .discardedExpired], "a date in 1970 is past")

        phone.update { $0.expirationGrace = .seconds(60) }
        let graced = try send(#"{"aps":{"alert":"graced"}}"#, expiration: 0)
        let late = try send(#"{"aps":{"alert":"late"}}"#, topic: "com.example.other", expiration: 0)
        XCTAssertEqual(statuses(graced), [.received, .storedDeviceOffline])
        server.clock.advance(by: .seconds(30))
        phone.update { $0.isOnline = true }
        XCTAssertEqual(statuses(graced), [.received, .storedDeviceOffline, .deliveredFromStorage])
        XCTAssertEqual(statuses(late), [.received, .storedDeviceOffline, .deliveredFromStorage])
        phone.update { $0.isOnline = false }
        let lost = try send(#"{"aps":{"alert":"lost"}}"#, expiration: 0)
        server.clock.advance(by: .seconds(61))
        XCTAssertEqual(statuses(lost), [.received, .storedDeviceOffline, .discardedExpired])
    }

    func testPriorityFiveWaitsForPowerAndPriorityOneForWaking() throws {
        phone.update { $0.isPowerRestricted = true }
        let urgent = try send(#"{"aps":{"alert":"urgent"}}"#, priority: 10)
        let normal = try send(#"{"aps":{"alert":"normal"}}"#, priority: 5)
        XCTAssertEqual(statuses(urgent), [.received, .deliveredToDevice])
        XCTAssertEqual(statuses(normal), [.received, .storedPowerConsiderations])
        phone.releaseBursts()
        XCTAssertEqual(statuses(normal), [.received, .storedPowerConsiderations, .deliveredFromStorage])

        let lifted = try send(#"{"aps":{"alert":"lifted"}}"#, priority: 5)
        phone.update { $0.isPowerRestricted = false }
        XCTAssertEqual(statuses(lifted), [.received, .storedPowerConsiderations, .deliveredFromStorage])

        phone.update { $0.isAwake = false }
        let asleep = try send(#"{"aps":{"alert":"asleep"}}"#, priority: 1)
        let five = try send(#"{"aps":{"alert":"five"}}"#, topic: "com.example.other", priority: 5)
        XCTAssertEqual(statuses(asleep), [.received, .storedPowerConsiderations])
        XCTAssertEqual(statuses(five), [.received, .deliveredToDevice], "only priority 1 waits for waking")
        phone.update { $0.isAwake = true }
        XCTAssertEqual(statuses(asleep), [.received, .storedPowerConsiderations, .deliveredFromStorage])
    }

    func testDisabledAndUninstalledAppsDiscardTheirPushes() throws {
        phone.update { $0[app: Self.topic].authorization = .denied }
        let disabled = try send(#"{"aps":{"alert":"off"}}"#)
        XCTAssertEqual(statuses(disabled), [.received, .discardedDisabled])
        phone.update { $0[app: Self.topic].authorization = .authorized; $0.isOnline = false }
        let stored = try send(#"{"aps":{"alert":"stored"}}"#)
        phone.update { $0[app: Self.topic].authorization = .denied }
        XCTAssertEqual(statuses(stored), [.received, .storedDeviceOffline, .discardedDisabledFromStorage])

        phone.update { $0[app: Self.topic].authorization = .authorized; $0[app: Self.topic].isInstalled = false }
        let removed = try send(#"{"aps":{"alert":"removed"}}"#)
        XCTAssertEqual(statuses(removed), [.received, .discardedTokenUnregistered])
        phone.update { $0[app: Self.topic].isInstalled = true }
        let kept = try send(#"{"aps":{"alert":"kept"}}"#)
        phone.update { $0[app: Self.topic].isInstalled = false }
        XCTAssertEqual(statuses(kept), [.received, .storedDeviceOffline, .discardedTokenUnregisteredFromStorage])
    }

    func testAPhoneStoresPushesForAtMost256Topics() throws {
        phone.update { $0.isOnline = false }
        let sent = try (0...256).map { try send(#"{"aps":{"alert":"x"}}"#, topic: "com.example.app\($0)") }
        XCTAssertEqual(statuses(sent[0]), [.received, .storedDeviceOffline, .overwritten])
        XCTAssertTrue(phone.log(apnsID: sent[0]).last?.detail?.contains("at most 256") == true)
        XCTAssertEqual(statuses(sent[1]), [.received, .storedDeviceOffline])
        phone.update { $0.isOnline = true }
        XCTAssertEqual(try phone.deliveries.pop(count: 256, timeout: .seconds(5)).count, 256)
    }
}
