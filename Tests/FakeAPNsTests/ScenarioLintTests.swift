import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

/// The push lint on pushes curl sends: each is answered Apple's 200, and each carries the
/// finding that says what the phone will do with it instead of what its sender meant.
final class ScenarioLintTests: XCTestCase {
    private let fixture = ServerFixture()
    private var server: FakeAPNsServer { fixture.server }

    override func setUpWithError() throws {
        try fixture.start(for: self)
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
            (.backgroundAtPriority10, push(Scenario.background, pushType: "background", priority: 10)),
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
            let findings = try sent(wire).lintFindings
            let finding = findings.first { $0.rule == rule }
            XCTAssertNotNil(finding, "\(rule) in \(wire.body): found \(findings)")
            XCTAssertEqual(finding?.level, rule.level)
            XCTAssertFalse(finding?.message.isEmpty ?? true)
        }
    }

    func testAPushThatBreaksNoRuleHasNoFinding() throws {
        let clean = push(#"{"aps":{"alert":{"title":"Order shipped","body":"Arrives Friday"},"sound":"chime.caf","category":"ORDER"}}"#)
        XCTAssertEqual(try sent(clean).lintFindings, [])
    }

    /// In strict mode an error-level finding is also a refusal on the rejections queue; the
    /// client still got Apple's 200.
    func testStrictLintRecordsAnErrorFindingAsARefusal() throws {
        var configuration = FakeAPNsServer.Configuration()
        configuration.lint = .strict
        try fixture.restart(configuration)
        let wire = push(Scenario.background, pushType: "background", priority: 10)
        XCTAssertEqual(try sent(wire).lintFindings.map(\.rule), [.backgroundAtPriority10])
        let rejection = try server.rejections.pop(timeout: .seconds(5))
        XCTAssertEqual(rejection.cause, .lint)
        XCTAssertEqual(rejection.reason, "background-priority-10")
    }
}
