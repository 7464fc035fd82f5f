import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

/// The push kinds beside an app's own, sent by clients the project did not write: a Wallet pass
/// update as pass servers send it, a Safari website push as Apple's guide and Grocer write it,
/// widget pushes and a payload that is not JSON; and the `apns-id` APNs makes, in capitals.
final class ScenarioNewerPushKindsTests: ScenarioTestCase {
    private static let passType = "pass.com.example.boarding"
    private static let website = "web.com.example.news"

    /// Sends `push` with curl and returns the notification the server recorded for it.
    private func sent(_ push: WirePush, file: StaticString = #filePath, line: UInt = #line) throws -> PushNotification {
        let answer = try Curl.send(push, to: server, file: file, line: line)
        XCTAssertEqual(answer.status, 200, "Apple's 200", file: file, line: line)
        return try server.notifications.pop(timeout: .seconds(5))
    }

    /// A Wallet pass update as pass servers send it (`{"aps":{}}` to the pass type identifier,
    /// no push type): no finding, nothing on the screen, and the phone's log says it asks the
    /// pass's web service for the changed passes.
    func testAWalletPassUpdateHasNoFindingAndThePhoneAsksTheWebService() throws {
        let update = WirePush.device(Scenario.token, #"{"aps":{}}"#, topic: Self.passType, pushType: nil)
        let notification = try sent(update)
        XCTAssertEqual(notification.lintFindings, [], "no renders-nothing, no missing-push-type")
        let log = phone.log(apnsID: update.apnsID!)
        XCTAssertEqual(log.map(\.status), [.received, .deliveredToDevice])
        let detail = try XCTUnwrap(log.last?.detail)
        XCTAssertTrue(detail.hasPrefix("Wallet pass update: the phone asks the passes' web service"), detail)
        XCTAssertTrue(detail.contains("/registrations/\(Self.passType)"), detail)
        XCTAssertEqual(phone.screen.notificationCenter.count, 0, "Wallet shows no notification for it")
        XCTAssertEqual(try phone.deliveries.pop(timeout: .seconds(5)).notification.apnsID, update.apnsID)
    }

    /// Some pass servers send their update as a background push: Wallet takes it all the same,
    /// and no app wakes.
    func testABackgroundPushToAPassIsAWalletUpdateNotAnAppWake() throws {
        let update = WirePush.device(
            Scenario.token, #"{"aps":{"content-available":1}}"#, topic: Self.passType, pushType: "background",
            priority: 5)
        XCTAssertEqual(try sent(update).lintFindings, [])
        let log = phone.log(apnsID: update.apnsID!)
        XCTAssertEqual(log.map(\.status), [.received, .deliveredToDevice])
        XCTAssertTrue(log.last?.detail?.hasPrefix("Wallet pass update") == true, "\(log)")
        XCTAssertEqual(phone.screen.wakes, [], "no app woke")
    }

    /// python3-h2 sends the other form pass servers use, `{}`, in strict mode: nothing is refused.
    func testAnEmptyObjectToAPassIsNoRefusalEvenInStrictMode() throws {
        var configuration = FakeAPNsServer.Configuration()
        configuration.lint = .strict
        try fixture.restart(configuration)
        let answer = try PythonH2.send(
            WirePush.device(Scenario.token, "{}", topic: Self.passType, pushType: nil), to: server)
        XCTAssertEqual(answer.status, 200)
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).lintFindings, [])
        XCTAssertTrue(server.rejections.isEmpty, "no error-level finding became a refusal")
    }

    func testAnAlertSentToAPassIsAFinding() throws {
        let alert = WirePush.device(
            Scenario.token, #"{"aps":{"alert":{"title":"Gate change","body":"B12"}}}"#, topic: Self.passType)
        XCTAssertEqual(try sent(alert).lintFindings.map(\.rule), [.walletPassAlert])
    }

    func testASafariWebsitePushIsCheckedAgainstAppleSForm() throws {
        let boarding =
            #"{"aps":{"alert":{"title":"Flight A998 Now Boarding","body":"Boarding has begun for Flight A998.","#
            + #""action":"View"},"url-args":["boarding","A998"]}}"#
        XCTAssertEqual(try sent(WirePush.device(Scenario.token, boarding, topic: Self.website)).lintFindings, [])
        let bare = WirePush.device(Scenario.token, Scenario.alert("Boarding"), topic: Self.website)
        XCTAssertEqual(try sent(bare).lintFindings.map(\.rule), [.websitePushAlert, .websitePushURLArgs])
    }

    func testWidgetPushesAndAPayloadThatIsNotJSONAreFound() throws {
        let widgets = Scenario.bundle + ".push-type.widgets"
        let reload = WirePush.device(
            Scenario.token, #"{"aps":{"content-changed":true}}"#, topic: widgets, pushType: "widgets")
        XCTAssertEqual(try sent(reload).lintFindings, [])
        let stale = WirePush.device(Scenario.token, #"{"aps":{"alert":"Score"}}"#, topic: widgets, pushType: "widgets")
        XCTAssertEqual(
            try sent(stale).lintFindings.map(\.rule), [.widgetWithoutContentChanged, .widgetWithUserInteraction])
        // A gzip body, base64-encoded by a sender that meant to save bytes.
        let compressed = WirePush.device(Scenario.token, "H4sIAAAAAAAAA6tWSizILypRsgJSAFPjLx4OAAAA")
        let findings = try sent(compressed).lintFindings
        XCTAssertEqual(findings.map(\.rule), [.payloadNotJSON])
        XCTAssertEqual(findings.first?.level, .error)
    }

    /// A push sent without `apns-id` is answered one in capitals, as APNs makes them, and
    /// recorded with it; the sandbox's `apns-unique-id` stays lowercase, as Apple's is.
    func testTheApnsIDAPushIsGivenIsUpperCaseOnTheWire() throws {
        var push = WirePush.device(Scenario.token, Scenario.alert("No id"))
        push.headers.removeAll { $0.0 == "apns-id" }
        let answer = try Curl.send(push, to: server)
        XCTAssertEqual(answer.status, 200)
        let apnsID = try XCTUnwrap(answer.apnsID)
        XCTAssertNotNil(UUID(uuidString: apnsID), apnsID)
        XCTAssertEqual(apnsID, apnsID.uppercased(), "capitals, as APNs makes them")
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).apnsID, apnsID)
        let uniqueID = try XCTUnwrap(answer.apnsUniqueID, "the sandbox answers apns-unique-id")
        XCTAssertEqual(uniqueID, uniqueID.lowercased())
        XCTAssertEqual(phone.log(uniqueID: uniqueID).first?.apnsID, apnsID)
        let sentID = "e621e1f8-c36c-495a-93fc-0c247a3e6e5f"
        let echoed = try Curl.send(
            WirePush.device(Scenario.token, Scenario.alert("Own id"), apnsID: sentID), to: server)
        XCTAssertEqual(echoed.apnsID, sentID, "a client's id is echoed as sent")
    }
}
