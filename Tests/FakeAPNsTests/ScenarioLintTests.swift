import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

/// The push lint on pushes curl sends: each is answered Apple's 200, and each carries the
/// finding that says what the phone will do with it instead of what its sender meant.
final class ScenarioLintTests: ScenarioTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        server.apps[Scenario.bundle] = AppBundle(categories: ["ORDER"], sounds: ["chime.caf"], entitlements: [])
    }

    /// Sends `push` with curl and returns the notification the server recorded for it.
    private func sent(_ push: WirePush, file: StaticString = #filePath, line: UInt = #line) throws -> PushNotification {
        XCTAssertEqual(try Curl.send(push, to: server, file: file, line: line).status, 200, "Apple's 200", file: file, line: line)
        let notification = try server.notifications.pop(timeout: .seconds(5))
        XCTAssertEqual(notification.apnsID?.lowercased(), push.apnsID?.lowercased(), file: file, line: line)
        return notification
    }

    private func push(_ body: String, pushType: String? = "alert", priority: Int? = nil, topic: String = Scenario.bundle)
        -> WirePush
    {
        WirePush.device(Scenario.token, body, topic: topic, pushType: pushType, priority: priority)
    }

    func testEachRuleIsFoundInTheCurlSentPushThatBreaksIt() throws {
        let cases: [(LintRule, WirePush)] = [
            (.backgroundWithUserInteraction, push(#"{"aps":{"content-available":1,"badge":3}}"#, pushType: "background", priority: 5)),
            (.contentAvailableOnAlert, push(#"{"aps":{"content-available":1}}"#)),
            (.rendersNothing, push(#"{"aps":{}}"#)),
            (.unknownAPSKey, push(#"{"aps":{"alert":"Hi","colour":"red"}}"#)),
            (.mutableContentWithoutAlert, push(#"{"aps":{"mutable-content":1,"badge":1}}"#)),
            (.unregisteredCategory, push(#"{"aps":{"alert":"Hi","category":"PROMO"}}"#)),
            (.interruptionLevelWithoutEntitlement, push(#"{"aps":{"alert":"Hi","interruption-level":"time-sensitive"}}"#)),
            (.relevanceScoreOutOfRange, push(#"{"aps":{"alert":"Hi","relevance-score":2}}"#)),
            (.missingPushType, push(Scenario.alert("Hi"), pushType: nil)),
            (.unknownSound, push(#"{"aps":{"alert":"Hi","sound":"boom.caf"}}"#)),
            (.liveActivityStartIncomplete, push(
                #"{"aps":{"event":"start","timestamp":1800000000,"content-state":{"score":"0-0"}}}"#,
                pushType: "liveactivity", topic: Scenario.liveActivityTopic)),
            (.liveActivityTimestamp, push(
                #"{"aps":{"event":"update","content-state":{"score":"1-0"}}}"#,
                pushType: "liveactivity", topic: Scenario.liveActivityTopic)),
        ]
        for (rule, wire) in cases {
            guard let findings = try? sent(wire).lintFindings else {
                XCTFail("\(rule): the server recorded no notification for \(wire.body)")
                continue
            }
            guard let finding = findings.first(where: { $0.rule == rule }) else {
                XCTFail("\(rule) in \(wire.body): found \(findings)")
                continue
            }
            XCTAssertEqual(finding.level, rule.level)
            XCTAssertFalse(finding.message.isEmpty, "\(rule): a message says what the phone does")
        }
    }

    func testAPushThatBreaksNoRuleHasNoFinding() throws {
        let clean = push(#"{"aps":{"alert":{"title":"Order shipped","body":"Arrives Friday"},"sound":"chime.caf","category":"ORDER"}}"#)
        XCTAssertEqual(try sent(clean).lintFindings, [])
    }

    /// In strict mode an error-level finding (here a relative `apns-expiration`) is also a
    /// refusal on the rejections queue; the client still got Apple's 200.
    func testStrictLintRecordsAnErrorFindingAsARefusal() throws {
        var configuration = FakeAPNsServer.Configuration()
        configuration.lint = .strict
        try fixture.restart(configuration)
        let wire = WirePush.device(Scenario.token, Scenario.alert("In five minutes"), expiration: 300)
        XCTAssertEqual(try sent(wire).lintFindings.map(\.rule), [.relativeExpiration])
        let rejection = try server.rejections.pop(timeout: .seconds(5))
        XCTAssertEqual(rejection.cause, .lint)
        XCTAssertEqual(rejection.reason, "relative-expiration")
    }
}
