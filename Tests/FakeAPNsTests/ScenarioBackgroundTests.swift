import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

/// Background pushes (`content-available: 1`, priority 5): a few an hour wake the app; past
/// the budget the phone holds the newest and discards the older, force-quit discards the held
/// one, launching the app delivers it, and the next hour's budget releases it. Low Power Mode
/// holds them too. Sent with python3-h2 and curl.
final class ScenarioBackgroundTests: ScenarioTestCase {
    private func background() -> WirePush {
        WirePush.device(Scenario.token, Scenario.background, pushType: "background", priority: 5)
    }

    /// The apps' wakes, by `apns-id` in lower case.
    private var wokenBy: [String] { phone.screen.wakes.compactMap { $0.apnsID?.lowercased() } }

    /// Sends four background pushes: the first three wake the app, the fourth is held.
    private func exhaustTheHourlyBudget() throws -> [WirePush] {
        let pushes = (1...4).map { _ in background() }
        XCTAssertEqual(try PythonH2.send(pushes, to: server).map(\.status), [200, 200, 200, 200])
        XCTAssertEqual(wokenBy, pushes.prefix(3).map { $0.apnsID!.lowercased() }, "three an hour (the default)")
        XCTAssertEqual(phone.log(apnsID: pushes[3].apnsID!).map(\.status), [.received, .throttled])
        return pushes
    }

    func testTheFourthInAnHourIsHeldAndTheNextHourReleasesIt() throws {
        let pushes = try exhaustTheHourlyBudget()
        XCTAssertEqual(try phone.deliveries.pop(count: 3, timeout: .seconds(5)).count, 3)
        XCTAssertTrue(phone.deliveries.isEmpty, "the fourth is held")

        server.clock.advance(by: .seconds(3601))
        XCTAssertEqual(wokenBy.last, pushes[3].apnsID!.lowercased(), "the next hour's budget releases it")
        XCTAssertEqual(wokenBy.count, 4)
        XCTAssertEqual(try phone.deliveries.pop(timeout: .seconds(5)).notification.apnsID?.lowercased(), pushes[3].apnsID?.lowercased())
    }

    func testANewerBackgroundPushOverwritesTheHeldOne() throws {
        let pushes = try exhaustTheHourlyBudget()
        let newer = background()
        XCTAssertEqual(try Curl.send(newer, to: server).status, 200)
        XCTAssertEqual(phone.log(apnsID: pushes[3].apnsID!).map(\.status), [.received, .throttled, .overwritten])

        server.clock.advance(by: .seconds(3601))
        XCTAssertEqual(wokenBy.count, 4, "only the newest held push wakes the app")
        XCTAssertEqual(wokenBy.last, newer.apnsID!.lowercased())
    }

    func testForceQuitDiscardsTheHeldPush() throws {
        let pushes = try exhaustTheHourlyBudget()
        phone.forceQuit(Scenario.bundle)
        phone.launchApp(Scenario.bundle)
        server.clock.advance(by: .seconds(3601))
        XCTAssertEqual(wokenBy.count, 3, "the held push went with the force-quit")
        XCTAssertFalse(phone.log(apnsID: pushes[3].apnsID!).contains { $0.status == .deliveredToDevice || $0.status == .deliveredFromStorage })
    }

    func testAForceQuitAppIsNotWokenByBackgroundPushes() throws {
        phone.forceQuit(Scenario.bundle)
        let push = background()
        XCTAssertEqual(try Curl.send(push, to: server).status, 200)
        XCTAssertEqual(phone.log(apnsID: push.apnsID!).first?.status, .received)
        XCTAssertEqual(wokenBy, [])
        XCTAssertTrue(phone.deliveries.isEmpty)
    }

    func testLaunchingTheAppDeliversTheHeldPushAtOnce() throws {
        let pushes = try exhaustTheHourlyBudget()
        phone.launchApp(Scenario.bundle)
        XCTAssertEqual(wokenBy.count, 4, "launching delivers the held push without waiting for the hour")
        XCTAssertEqual(wokenBy.last, pushes[3].apnsID!.lowercased())
    }

    func testLowPowerModeHoldsBackgroundPushes() throws {
        phone.update { $0.isLowPowerMode = true }
        let push = background()
        XCTAssertEqual(try PythonH2.send(push, to: server).status, 200)
        XCTAssertEqual(wokenBy, [], "held, not delivered")
        XCTAssertEqual(phone.log(apnsID: push.apnsID!).map(\.status), [.received, .throttled])

        phone.update { $0.isLowPowerMode = false }
        XCTAssertEqual(wokenBy, [push.apnsID!.lowercased()], "held, not dropped")
    }

    /// Apple calls priority 10 on a background push an error, yet the fake answers 200 as
    /// Apple's servers were seen to; the lint reports it at error level.
    func testABackgroundPushAtPriorityTenIsAcceptedWithAnErrorFinding() throws {
        let push = WirePush.device(Scenario.token, Scenario.background, pushType: "background", priority: 10)
        let answer = try Curl.send(push, to: server)
        XCTAssertEqual(answer.status, 200)
        XCTAssertNil(answer.reason)
        let notification = try server.notifications.pop(timeout: .seconds(5))
        let finding = try XCTUnwrap(notification.lintFindings.first { $0.rule == .backgroundAtPriority10 })
        XCTAssertEqual(finding.level, .error)
        XCTAssertEqual(finding.rule.id, "background-priority-10")
    }
}
