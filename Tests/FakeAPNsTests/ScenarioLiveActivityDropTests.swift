import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

/// Live Activity pushes a phone drops after APNs answered 200: a `content-state` that does
/// not decode as the app declares it, a Unix time in a `Date`, no `event`; and the 410
/// `ExpiredToken` for an activity dismissed. Sent with curl and python3-h2.
final class ScenarioLiveActivityDropTests: ScenarioTestCase {
    private let t0 = Int(Scenario.now.timeIntervalSince1970)
    /// Two hours ahead, as the phone reads a `Date`: seconds since 2001.
    private var eta: Int { t0 + 7200 - 978_307_200 }

    override func setUpWithError() throws {
        try super.setUpWithError()
        server.apps[Scenario.bundle] = AppBundle(liveActivityTypes: [
            "DeliveryAttributes": LiveActivityType(
                attributes: ["orderID": .string], contentState: ["status": .string, "eta": .date]),
            "MatchAttributes": LiveActivityType(contentState: ["score": .string]),
        ])
    }

    private func liveActivity(_ aps: String) -> WirePush {
        WirePush.device(
            Scenario.token, #"{"aps":{\#(aps)}}"#, topic: Scenario.liveActivityTopic, pushType: "liveactivity",
            priority: 10)
    }

    private func start() -> WirePush {
        liveActivity(
            #""event":"start","timestamp":\#(t0),"attributes-type":"DeliveryAttributes","#
                + #""attributes":{"orderID":"A7"},"content-state":{"status":"cooking","eta":\#(eta)},"#
                + #""alert":{"title":"Order A7","body":"Cooking"}"#)
    }

    private func update(_ state: String, at offset: Int) -> WirePush {
        liveActivity(#""event":"update","timestamp":\#(t0 + offset),"content-state":\#(state)"#)
    }

    private func findings(_ push: WirePush) -> [LintFinding] {
        server.notificationHistory.list().first { $0.apnsID == push.apnsID }?.lintFindings ?? []
    }

    private func shownStatus() throws -> String? {
        let activity = try XCTUnwrap(phone.screen.liveActivities.first, "no Live Activity on the screen")
        return try activity.contentState.flatMap { try JSONValue(parsing: $0)["status"]?.stringValue }
    }

    func testAContentStateThatDoesNotDecodeIsAnsweredTwoHundredAndIgnored() throws {
        let mistyped = update(#"{"status":2,"eta":\#(eta)}"#, at: 10)
        let answers = try PythonH2.send([start(), mistyped], to: server)
        XCTAssertEqual(answers.map(\.status), [200, 200], "Apple answers 200")
        XCTAssertEqual(try shownStatus(), "cooking", "nothing of the mistyped update on the screen")
        let log = phone.log(apnsID: mistyped.apnsID!)
        XCTAssertEqual(log.map(\.status), [.received, .ignoredLiveActivity])
        XCTAssertEqual(
            log.last?.detail, "aps.content-state.status is a number, declared string: the phone cannot decode it")
        let found = findings(mistyped)
        XCTAssertEqual(found.map(\.rule), [.liveActivityContentMismatch])
        XCTAssertEqual(found.first?.level, .error)
        XCTAssertTrue(found.first?.message.contains("aps.content-state.status") ?? false)
    }

    func testAUnixTimeInADateIsIgnoredWithAFindingNamingTheField() throws {
        XCTAssertEqual(try Curl.send(start(), to: server).status, 200)
        let unix = update(#"{"status":"on its way","eta":\#(t0 + 600)}"#, at: 10)
        XCTAssertEqual(try Curl.send(unix, to: server).status, 200)
        XCTAssertEqual(phone.log(apnsID: unix.apnsID!).map(\.status), [.received, .ignoredLiveActivity])
        XCTAssertEqual(findings(unix).map(\.rule), [.liveActivityUnixDate])
        let message = findings(unix).first?.message ?? ""
        XCTAssertTrue(message.hasPrefix("aps.content-state.eta \(t0 + 600) is a Unix time"), message)
        XCTAssertEqual(try shownStatus(), "cooking")
    }

    func testAPushWithoutAnEventIsIgnored() throws {
        XCTAssertEqual(try Curl.send(start(), to: server).status, 200)
        let misspelt = liveActivity(
            #""events":"update","timestamp":\#(t0 + 10),"content-state":{"status":"x","eta":1}"#)
        XCTAssertEqual(try Curl.send(misspelt, to: server).status, 200)
        XCTAssertEqual(phone.log(apnsID: misspelt.apnsID!).map(\.status), [.received, .ignoredLiveActivity])
        XCTAssertEqual(phone.log(apnsID: misspelt.apnsID!).last?.detail, "aps.event is missing; the phone ignores it")
        XCTAssertTrue(findings(misspelt).map(\.rule).contains(.liveActivityEvent))
        XCTAssertEqual(try shownStatus(), "cooking")
    }

    /// The app declares two types, so only the type the test started the activity with says
    /// how its updates decode: the device model judges them.
    func testAnActivityStartedInTheAppDecodesItsUpdatesWithTheTypeItWasStartedWith() throws {
        phone.startLiveActivity(Scenario.bundle, attributesType: "MatchAttributes")
        XCTAssertEqual(phone.screen.liveActivities.map(\.state), [.active])
        let good = liveActivity(#""event":"update","timestamp":\#(t0 + 10),"content-state":{"score":"1-0"}"#)
        let bad = liveActivity(#""event":"update","timestamp":\#(t0 + 20),"content-state":{"score":1}"#)
        XCTAssertEqual(try PythonH2.send([good, bad], to: server).map(\.status), [200, 200])
        XCTAssertEqual(phone.log(apnsID: good.apnsID!).map(\.status), [.received, .deliveredToDevice])
        XCTAssertEqual(phone.log(apnsID: bad.apnsID!).map(\.status), [.received, .ignoredLiveActivity])
        XCTAssertEqual(findings(good), [])
        XCTAssertEqual(findings(bad).map(\.rule), [.liveActivityContentMismatch])
        XCTAssertTrue(findings(bad).first?.message.contains("MatchAttributes") ?? false)
        XCTAssertEqual(phone.screen.liveActivities.first?.contentState, #"{"score":"1-0"}"#)
    }

    func testAnUpdateAfterTheActivityWasDismissedIsAnsweredExpiredToken() throws {
        let end = liveActivity(
            #""event":"end","timestamp":\#(t0 + 60),"content-state":{"status":"delivered","eta":\#(eta)},"#
                + #""dismissal-date":\#(t0 + 120)"#)
        XCTAssertEqual(try PythonH2.send([start(), end], to: server).map(\.status), [200, 200])
        let ended = update(#"{"status":"late","eta":\#(eta)}"#, at: 90)
        XCTAssertEqual(try Curl.send(ended, to: server).status, 200, "ended, still on the Lock Screen: 200, ignored")
        XCTAssertEqual(phone.log(apnsID: ended.apnsID!).last?.status, .ignoredLiveActivity)

        server.clock.advance(by: .seconds(121))
        XCTAssertEqual(phone.screen.liveActivities.first?.state, .dismissed)
        let dismissedAt = Scenario.now.addingTimeInterval(120)
        XCTAssertEqual(
            server.devices.activityTokenExpiry(Scenario.token, topic: Scenario.liveActivityTopic), dismissedAt)
        let late = update(#"{"status":"late","eta":\#(eta)}"#, at: 130)
        let answer = try Curl.send(late, to: server)
        XCTAssertEqual(answer.status, 410)
        XCTAssertEqual(answer.reason, "ExpiredToken")
        XCTAssertEqual(answer.timestamp, Int(dismissedAt.timeIntervalSince1970) * 1000, "Apple's 410 timestamp")
        XCTAssertEqual(try PythonH2.send(late, to: server).reason, "ExpiredToken")
        let refusal = try XCTUnwrap(server.rejectionHistory.list().last)
        XCTAssertEqual(refusal.reason, "ExpiredToken")
        XCTAssertEqual(refusal.cause, .registry)

        let alert = WirePush.device(Scenario.token, Scenario.alert("Hi"), topic: "com.example.other")
        XCTAssertEqual(try Curl.send(alert, to: server).status, 200, "the mark is for the activity's topic only")
        server.devices.register(Scenario.token)
        XCTAssertEqual(try Curl.send(late, to: server).status, 200, "registering the token again clears the mark")
    }

    func testAStartSubscribesToAKnownInputChannelAndRecordsAnInputToken() throws {
        let channel = try server.channels.create(bundleID: Scenario.bundle, storagePolicy: .noStorage)
        let joins = liveActivity(
            #""event":"start","timestamp":\#(t0),"attributes-type":"MatchAttributes","attributes":{},"#
                + #""content-state":{"score":"0-0"},"alert":{"title":"Kick-off"},"#
                + #""input-push-channel":"\#(channel.id)""#)
        XCTAssertEqual(try Curl.send(joins, to: server).status, 200)
        XCTAssertTrue(server.channels.isSubscribed(Scenario.token, to: channel.id))
        XCTAssertEqual(
            phone.log(apnsID: joins.apnsID!).last?.detail,
            "input-push-channel \(channel.id): the activity subscribes to the channel")

        let unknown = liveActivity(
            #""event":"start","timestamp":\#(t0 + 1),"attributes-type":"MatchAttributes","attributes":{},"#
                + #""content-state":{"score":"0-0"},"alert":{"title":"Kick-off"},"input-push-channel":"bm9uZQ==","#
                + #""input-push-token":1"#)
        XCTAssertEqual(try Curl.send(unknown, to: server).status, 200)
        XCTAssertEqual(findings(unknown).map(\.rule), [.liveActivityUnknownChannel])
        XCTAssertEqual(
            phone.log(apnsID: unknown.apnsID!).last?.detail,
            "input-push-token: the phone mints the activity a new push token; input-push-channel bm9uZQ==: the"
                + " activity subscribes to the channel")
    }
}
