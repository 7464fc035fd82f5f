import FakeAPNsTestSupport
import Foundation
import XCTest

@testable import FakeAPNs

/// What a delivered push shows: collapse, badges, presentation, the app's bundle.
final class DeviceModelScreenTests: DeviceModelTestCase {
    func testTheSameCollapseIDReplacesTheEntryAndMovesItToTheTop() throws {
        let first = try send(#"{"aps":{"alert":"1-0"}}"#, collapseID: "score")
        try send(#"{"aps":{"alert":"news"}}"#)
        let second = try send(#"{"aps":{"alert":"2-0"}}"#, collapseID: "score")
        var center = phone.screen.notificationCenter
        XCTAssertEqual(center.map(\.body), ["2-0", "news"])
        XCTAssertEqual(center.first?.identifier, "score")
        XCTAssertEqual(center.first?.apnsID, second)
        XCTAssertEqual(center.first?.replaced, [first])
        XCTAssertEqual(center.first?.presented, true, "a replacement presents again by default")

        phone.update { $0.replacementPresentsAgain = false }
        let third = try send(#"{"aps":{"alert":"3-0"}}"#, collapseID: "score")
        center = phone.screen.notificationCenter
        XCTAssertEqual(center.first?.replaced, [first, second])
        XCTAssertEqual(center.first?.apnsID, third)
        XCTAssertEqual(center.first?.presented, false)
        XCTAssertEqual(center.count, 2)
    }

    func testTheBadgeIsAbsoluteAndABadgeOnlyPushAddsNoEntry() throws {
        try send(#"{"aps":{"badge":5}}"#)
        try send(#"{"aps":{"badge":2}}"#)
        XCTAssertEqual(phone.screen.badges, [Self.topic: 2])
        XCTAssertEqual(phone.screen.notificationCenter, [])
        try send(#"{"aps":{"badge":0}}"#)
        XCTAssertEqual(phone.screen.badges, [Self.topic: 0])
    }

    func testProvisionalIsQuietAndAForegroundAppShowsWhatItAsks() throws {
        phone.update { $0[app: Self.topic].authorization = .provisional }
        try send(#"{"aps":{"alert":"quiet","sound":"default"}}"#)
        var entry = try XCTUnwrap(phone.screen.notificationCenter.first)
        XCTAssertFalse(entry.presented)
        XCTAssertNil(entry.sound)

        phone.update {
            $0[app: Self.topic] = AppSettings()
            $0[app: Self.topic].state = .foreground
        }
        try send(#"{"aps":{"alert":"unseen","badge":9}}"#)
        XCTAssertEqual(phone.screen.notificationCenter.count, 1, "a foreground app that asks for nothing shows nothing")
        XCTAssertNil(phone.screen.badges[Self.topic])

        phone.update { $0[app: Self.topic].foregroundPresentation = [.list, .badge] }
        try send(#"{"aps":{"alert":"listed","badge":3,"sound":"default"}}"#)
        entry = try XCTUnwrap(phone.screen.notificationCenter.first)
        XCTAssertEqual(entry.body, "listed")
        XCTAssertFalse(entry.presented)
        XCTAssertNil(entry.sound)
        XCTAssertEqual(phone.screen.badges[Self.topic], 3)
    }

    func testTheAppsBundleDecidesActionsSoundsAndInterruptionLevels() throws {
        try send(#"{"aps":{"alert":"any","category":"ANY","sound":"any.caf","interruption-level":"time-sensitive"}}"#)
        var entry = try XCTUnwrap(phone.screen.notificationCenter.first)
        XCTAssertTrue(entry.showsActions, "an app not described shows the actions it is sent")
        XCTAssertEqual(entry.sound, "any.caf")
        XCTAssertEqual(entry.interruptionLevel, "time-sensitive")

        server.apps[Self.topic] = AppBundle(categories: ["ORDER"], sounds: ["chime.caf"], entitlements: [])
        try send(#"{"aps":{"alert":"known","category":"ORDER","sound":"chime.caf"}}"#)
        entry = try XCTUnwrap(phone.screen.notificationCenter.first)
        XCTAssertTrue(entry.showsActions)
        XCTAssertEqual(entry.sound, "chime.caf")
        let body =
            #"{"aps":{"alert":"unknown","category":"OTHER","sound":{"name":"x.caf"},"interruption-level":"critical"}}"#
        try send(body)
        entry = try XCTUnwrap(phone.screen.notificationCenter.first)
        XCTAssertFalse(entry.showsActions)
        XCTAssertEqual(entry.sound, "default")
        XCTAssertEqual(entry.interruptionLevel, "active", "no entitlement: a normal notification")
    }

    func testTheServiceExtensionRunsOnlyForMutableContentWithAlertText() throws {
        try send(#"{"aps":{"alert":{"title":"Hi"},"mutable-content":1}}"#)
        XCTAssertEqual(phone.screen.notificationCenter.first?.serviceExtensionRan, true)
        try send(#"{"aps":{"alert":{"title":"Plain"}}}"#)
        XCTAssertEqual(phone.screen.notificationCenter.first?.serviceExtensionRan, false)
        try send(#"{"aps":{"alert":{"launch-image":"a.png"},"mutable-content":1,"badge":1}}"#)
        XCTAssertEqual(phone.screen.notificationCenter.count, 2, "no alert text: no entry, no extension")
    }

    func testTheNotificationCenterKeepsAtMost1000Entries() throws {
        phone.update { $0.isOnline = true }
        for index in 0...1000 { try send(#"{"aps":{"alert":"n\#(index)"}}"#) }
        let center = phone.screen.notificationCenter
        XCTAssertEqual(center.count, 1000)
        XCTAssertEqual(center.first?.body, "n1000")
        XCTAssertEqual(center.last?.body, "n1")
    }

    /// A push with no `apns-topic`, which a server without authentication accepts, is shown for
    /// no app: no badge, and no app filed under an empty bundle ID.
    func testAPushWithNoTopicIsShownForNoAppAndSetsNoBadge() throws {
        let response = try client.send(
            .init(token: Self.token, payload: Array(#"{"aps":{"alert":"no topic","badge":3}}"#.utf8), pushType: .alert))
        XCTAssertEqual(response.status, 200)
        let apnsID = try XCTUnwrap(response.apnsID)
        XCTAssertEqual(statuses(apnsID), [.received, .deliveredToDevice])
        let screen = phone.screen
        XCTAssertEqual(screen.notificationCenter.map(\.body), ["no topic"])
        XCTAssertNil(screen.notificationCenter.first?.bundleID)
        XCTAssertEqual(screen.badges, [:], "a badge belongs to an app's icon")
        XCTAssertEqual(phone.settings.apps, [:], "no app named \"\" was made")
    }

    /// A background push with no topic wakes no app and spends no app's budget.
    func testABackgroundPushWithNoTopicWakesNoApp() throws {
        for _ in 0..<5 {
            let response = try client.send(
                .init(token: Self.token, payload: Array(#"{"aps":{"content-available":1}}"#.utf8), pushType: .background, priority: 5))
            XCTAssertEqual(response.status, 200)
        }
        XCTAssertEqual(phone.log.filter { $0.status == .deliveredToDevice }.count, 5)
        XCTAssertEqual(phone.screen.wakes, [])
    }
}
