import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

/// What the notification centre shows once pushes are applied: a push with the same
/// `apns-collapse-id` replaces the entry, and a badge is an absolute number that 0 clears.
/// Sent with curl and python3-h2.
final class ScenarioCollapseTests: ScenarioTestCase {
    func testTheSameCollapseIDReplacesTheEntry() throws {
        let first = WirePush.device(Scenario.token, Scenario.alert("1-0"), collapseID: "match-42")
        let second = WirePush.device(Scenario.token, Scenario.alert("2-0"), collapseID: "match-42")
        let other = WirePush.device(Scenario.token, Scenario.alert("Kick-off at 8"))
        for push in [first, second, other] { XCTAssertEqual(try Curl.send(push, to: server).status, 200) }
        XCTAssertEqual(try phone.deliveries.pop(count: 3, timeout: .seconds(5)).count, 3, "all three reach the phone")

        let center = phone.screen.notificationCenter
        XCTAssertEqual(center.map(\.body), ["Kick-off at 8", "2-0"], "newest first, one entry per identifier")
        let match = try XCTUnwrap(center.first { $0.identifier == "match-42" })
        XCTAssertEqual(match.apnsID?.lowercased(), second.apnsID?.lowercased())
        XCTAssertEqual(match.replaced.map { $0.lowercased() }, [first.apnsID!.lowercased()])
        XCTAssertEqual(center.first?.replaced, [])
    }

    /// A later push with the collapse ID moves the entry back to the top.
    func testAReplacementMovesTheEntryToTheTop() throws {
        let pushes = [
            WirePush.device(Scenario.token, Scenario.alert("Order packed"), collapseID: "order-981"),
            WirePush.device(Scenario.token, Scenario.alert("New arrivals")),
            WirePush.device(Scenario.token, Scenario.alert("Order shipped"), collapseID: "order-981"),
        ]
        XCTAssertEqual(try PythonH2.send(pushes, to: server).map(\.status), [200, 200, 200])
        XCTAssertEqual(phone.screen.notificationCenter.map(\.body), ["Order shipped", "New arrivals"])
    }

    /// `badge` is the number to show, never added to the one shown; 0 removes it. A badge-only
    /// push adds nothing to the notification centre.
    func testTheBadgeIsAbsoluteAndZeroClearsIt() throws {
        let badge = { (count: Int) in WirePush.device(Scenario.token, #"{"aps":{"badge":\#(count)}}"#) }
        XCTAssertEqual(try PythonH2.send([badge(5), badge(2)], to: server).map(\.status), [200, 200])
        XCTAssertEqual(phone.screen.badges[Scenario.bundle], 2, "2 replaces 5; it is not added")
        XCTAssertEqual(phone.screen.notificationCenter.count, 0, "a badge-only push shows no entry")

        XCTAssertEqual(try PythonH2.send(badge(0), to: server).status, 200)
        XCTAssertEqual(phone.screen.badges[Scenario.bundle] ?? 0, 0, "0 clears the badge")
        XCTAssertEqual(phone.log.filter { $0.status == .deliveredToDevice }.count, 3)
    }
}
