import FakeAPNsTestSupport
import Foundation
import XCTest
@testable import FakeAPNs

/// Background pushes: the budgets, the held push, Low Power Mode, Background App Refresh,
/// force-quit, launch and the debugger.
final class DeviceModelBackgroundTests: DeviceModelTestCase {
    func testBackgroundPushesWakeTheAppWithinTheHourlyBudgetAndTheNewestIsHeld() throws {
        XCTAssertEqual(phone.settings.backgroundPushesPerHour, 3)
        let sent = try (0..<5).map { _ in try sendBackground() }
        XCTAssertEqual(phone.screen.wakes.map(\.apnsID), Array(sent.prefix(3)))
        XCTAssertEqual(statuses(sent[3]), [.received, .throttled, .overwritten])
        XCTAssertEqual(statuses(sent[4]), [.received, .throttled])
        XCTAssertTrue(phone.log(apnsID: sent[4]).last?.detail?.contains("3 per hour") == true)

        server.clock.advance(by: .seconds(3500))
        XCTAssertEqual(phone.screen.wakes.count, 3, "the budget refills an hour after the first wake")
        server.clock.advance(by: .seconds(200))
        XCTAssertEqual(statuses(sent[4]), [.received, .throttled, .deliveredToDevice])
        XCTAssertEqual(phone.screen.wakes.map(\.apnsID), Array(sent.prefix(3)) + [sent[4]])
    }

    func testADailyBudgetCountsEveryApp() throws {
        phone.update { $0.backgroundPushesPerDay = 2; $0.backgroundPushesPerHour = 10 }
        try sendBackground()
        try sendBackground(topic: "com.example.other")
        let third = try sendBackground(topic: "com.example.third")
        XCTAssertEqual(statuses(third), [.received, .throttled])
        XCTAssertTrue(phone.log(apnsID: third).last?.detail?.contains("2 per day") == true)
    }

    func testLowPowerModeAndBackgroundAppRefreshHoldUntilLifted() throws {
        phone.update { $0.isLowPowerMode = true }
        let held = try sendBackground()
        XCTAssertEqual(statuses(held), [.received, .throttled])
        XCTAssertTrue(phone.log(apnsID: held).last?.detail?.contains("Low Power Mode") == true)
        phone.update { $0.isLowPowerMode = false; $0.backgroundAppRefresh = false }
        XCTAssertEqual(statuses(held), [.received, .throttled], "Background App Refresh off holds it still")
        phone.update { $0.backgroundAppRefresh = true }
        XCTAssertEqual(statuses(held), [.received, .throttled, .deliveredToDevice])
        XCTAssertEqual(phone.screen.wakes.map(\.apnsID), [held])
    }

    func testForceQuitDiscardsTheHeldPushAndLaunchingDeliversIt() throws {
        phone.update { $0.isLowPowerMode = true }
        let discarded = try sendBackground()
        phone.forceQuit(Self.topic)
        XCTAssertEqual(phone.log(apnsID: discarded).last?.detail, "discarded: \(Self.topic) was force-quit")
        phone.update { $0.isLowPowerMode = false }
        let ignored = try sendBackground()
        XCTAssertEqual(statuses(ignored), [.received, .throttled])
        XCTAssertEqual(phone.screen.wakes, [])

        phone.launchApp(Self.topic)
        XCTAssertEqual(phone.settings[app: Self.topic].state, .background)
        phone.update { $0.isLowPowerMode = true }
        let launched = try sendBackground()
        phone.launchApp(Self.topic)
        XCTAssertEqual(statuses(launched), [.received, .throttled, .deliveredToDevice])
        XCTAssertEqual(phone.screen.wakes.map(\.apnsID), [launched])
    }

    func testADebuggerLiftsTheBudget() throws {
        phone.update { $0.backgroundPushesPerHour = 1; $0.isDebuggerAttached = true }
        for _ in 0..<3 { try sendBackground() }
        XCTAssertEqual(phone.screen.wakes.count, 3)
    }

    func testContentAvailableAloneIsABackgroundPush() throws {
        let silent = try send(#"{"aps":{"content-available":1}}"#, pushType: nil)
        XCTAssertEqual(phone.screen.wakes.map(\.apnsID), [silent])
        XCTAssertEqual(phone.screen.notificationCenter, [])
    }
}
