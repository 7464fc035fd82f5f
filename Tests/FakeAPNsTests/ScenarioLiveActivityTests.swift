import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

/// Live Activity pushes: an update whose `timestamp` is not after the last one applied is
/// ignored, so is anything after the activity ended; priority 10 updates spend an hourly
/// budget (15 by default) and priority 5 ones do not. Sent with curl and python3-h2.
final class ScenarioLiveActivityTests: ScenarioTestCase {
    private let t0 = Int(Scenario.now.timeIntervalSince1970)

    private func liveActivity(_ aps: String, priority: Int = 10) -> WirePush {
        WirePush.device(
            Scenario.token, #"{"aps":{\#(aps)}}"#, topic: Scenario.liveActivityTopic, pushType: "liveactivity",
            priority: priority)
    }

    /// Starts a match activity (at priority 5, so the start spends no budget) showing 0-0.
    private func start() -> WirePush {
        liveActivity(
            #""event":"start","timestamp":\#(t0),"content-state":{"score":"0-0"},"attributes-type":"MatchAttributes","#
                + #""attributes":{"home":"Lyon","away":"Nantes"},"alert":{"title":"Kick-off","body":"Lyon v Nantes"}"#,
            priority: 5)
    }

    private func update(_ score: String, at offset: Int, priority: Int = 10) -> WirePush {
        liveActivity(#""event":"update","timestamp":\#(t0 + offset),"content-state":{"score":"\#(score)"}"#, priority: priority)
    }

    /// The score the activity shows now.
    private func shownScore(file: StaticString = #filePath, line: UInt = #line) throws -> String? {
        let activity = try XCTUnwrap(phone.screen.liveActivities.first, "no Live Activity on the screen", file: file, line: line)
        guard let state = activity.contentState else { return nil }
        return try JSONValue(parsing: state)["score"]?.stringValue
    }

    func testAnUpdateWithAStaleTimestampIsIgnored() throws {
        let late = update("1-0", at: 60)
        let stale = update("0-1", at: 30)
        for push in [start(), late, stale] { XCTAssertEqual(try Curl.send(push, to: server).status, 200) }
        XCTAssertEqual(try shownScore(), "1-0", "the update stamped earlier is not shown")
        XCTAssertEqual(phone.log(apnsID: stale.apnsID!).map(\.status), [.received, .ignoredLiveActivity])
        XCTAssertEqual(phone.screen.liveActivities.first?.timestamp, Date(timeIntervalSince1970: Double(t0 + 60)))
    }

    func testAnUpdateAfterTheEndIsIgnored() throws {
        let end = liveActivity(#""event":"end","timestamp":\#(t0 + 90),"content-state":{"score":"2-1"}"#)
        let after = update("3-1", at: 120)
        XCTAssertEqual(try PythonH2.send([start(), update("1-0", at: 30), end, after], to: server).map(\.status), [200, 200, 200, 200])
        let activity = try XCTUnwrap(phone.screen.liveActivities.first)
        XCTAssertEqual(activity.state, .ended)
        XCTAssertEqual(try shownScore(), "2-1", "the final score stays")
        XCTAssertEqual(phone.log(apnsID: after.apnsID!).map(\.status), [.received, .ignoredLiveActivity])
    }

    /// Fifteen priority 10 updates in an hour are applied; the sixteenth is throttled. Priority
    /// 5 updates do not count: one after the sixteenth is applied.
    func testThePriorityTenBudgetThrottlesTheSixteenthUpdateOfTheHour() throws {
        let updates = (1...16).map { update("\($0)-0", at: $0) }
        let quiet = update("16-1", at: 17, priority: 5)
        let answers = try PythonH2.send([start()] + updates + [quiet], to: server)
        XCTAssertEqual(answers.map(\.status), Array(repeating: 200, count: 18), "Apple's 200 stays 200")

        for push in updates.prefix(15) {
            XCTAssertFalse(phone.log(apnsID: push.apnsID!).contains { $0.status == .throttled })
        }
        XCTAssertEqual(phone.log(apnsID: updates[15].apnsID!).map(\.status), [.received, .throttled])
        XCTAssertEqual(phone.log(apnsID: quiet.apnsID!).last?.status, .deliveredToDevice, "priority 5 is not counted")
        XCTAssertEqual(try shownScore(), "16-1")
    }

    /// The budget is per rolling hour: an hour later, priority 10 updates are applied again.
    func testTheBudgetRefillsAnHourLater() throws {
        let updates = (1...16).map { update("\($0)-0", at: $0) }
        XCTAssertEqual(try PythonH2.send([start()] + updates, to: server).count, 17)
        XCTAssertEqual(try shownScore(), "15-0")
        server.clock.advance(by: .seconds(3601))
        let later = update("16-2", at: 3601)
        XCTAssertEqual(try Curl.send(later, to: server).status, 200)
        XCTAssertEqual(try shownScore(), "16-2")
    }
}
