import FakeAPNs
import FakeAPNsTestSupport
import XCTest

/// What a phone makes of a push, read once for the lint and the device model alike.
final class PushFactsTests: XCTestCase {
    private static let bundle = "com.example.app"

    private func facts(
        _ payload: String, pushType: PushType? = .alert, format: PushNotification.Format = .http2,
        topic: String = bundle, app: AppBundle? = nil
    ) -> PushFacts {
        let notification = PushNotification(
            deviceToken: Fixtures.token, payload: Payload(payload), format: format,
            connection: ConnectionInfo(id: 1, peer: "127.0.0.1:9"),
            http2: format == .http2
                ? PushNotification.HTTP2Fields(
                    apnsID: "e621e1f8-c36c-495a-93fc-0c247a3e6e5f", topic: topic, pushType: pushType, collapseID: nil,
                    providerToken: nil)
                : nil)
        return PushFacts(notification, app: app)
    }

    func testThePushTypeIsTheSentOneElseTheTopicsSuffix() {
        XCTAssertEqual(facts(#"{"aps":{}}"#, pushType: .background).impliedPushType, .background)
        XCTAssertEqual(facts(#"{"aps":{}}"#, pushType: nil, topic: Self.bundle + ".voip").impliedPushType, .voip)
        XCTAssertNil(facts(#"{"aps":{}}"#, pushType: nil).impliedPushType)
        let live = facts(#"{"aps":{}}"#, pushType: nil, topic: Self.bundle + ".push-type.liveactivity")
        XCTAssertTrue(live.isLiveActivity)
        XCTAssertFalse(live.isMeantToShow)
    }

    func testABackgroundPushIsTheHeadersOrAContentAvailableOneWithNothingToShow() {
        XCTAssertTrue(facts(#"{"aps":{"alert":"Hi"}}"#, pushType: .background).isBackground)
        XCTAssertTrue(facts(#"{"aps":{"content-available":1}}"#).isBackground)
        XCTAssertTrue(facts(#"{"aps":{"content-available":1}}"#, format: .enhanced).isBackground)
        XCTAssertFalse(facts(#"{"aps":{"content-available":1,"badge":1}}"#).isBackground)
        XCTAssertFalse(facts(#"{"aps":{"content-available":1}}"#, pushType: .voip).isBackground)
        XCTAssertFalse(
            facts(#"{"aps":{"content-available":1}}"#, pushType: nil, topic: Self.bundle + ".voip").isBackground,
            "the topic says it is a VoIP push")
        XCTAssertFalse(facts(#"{"aps":{"content-available":1}}"#, format: .enhanced).isMeantToShow)
        XCTAssertTrue(facts(#"{"aps":{}}"#, format: .enhanced).isMeantToShow)
    }

    func testAlertTextIsTheTextElseTheLocalizationKeyAndAnEmptyStringIsNone() {
        let full = facts(
            #"{"aps":{"alert":{"title":"T","subtitle-loc-key":"SUB","body":{"loc-key":"BODY","loc-args":[]}}}}"#)
        XCTAssertEqual(full.alertTitle, "T")
        XCTAssertEqual(full.alertSubtitle, "SUB")
        XCTAssertEqual(full.alertBody, "BODY")
        XCTAssertTrue(full.hasAlertText)
        XCTAssertEqual(facts(#"{"aps":{"alert":"Hi"}}"#).alertBody, "Hi")
        let empty = facts(#"{"aps":{"alert":{"title":"","subtitle":"","body":"","loc-key":"K"}}}"#)
        XCTAssertNil(empty.alertTitle)
        XCTAssertNil(empty.alertSubtitle)
        XCTAssertEqual(empty.alertBody, "K", "an empty body is none, so the key is shown")
        let nothing = facts(#"{"aps":{"alert":"","sound":""}}"#)
        XCTAssertFalse(nothing.hasAlertText)
        XCTAssertNil(nothing.sound)
        XCTAssertFalse(nothing.showsSomething)
        XCTAssertEqual(PushLint.findings(for: nothing).map(\.rule), [.rendersNothing])
        XCTAssertTrue(facts(#"{"aps":{"badge":0}}"#).showsSomething)
    }

    func testTheSoundIsTheOneThePhonePlays() {
        let app = AppBundle(sounds: ["chime.caf"])
        XCTAssertEqual(facts(#"{"aps":{"alert":"Hi","sound":"chime.caf"}}"#, app: app).sound, "chime.caf")
        XCTAssertEqual(facts(#"{"aps":{"alert":"Hi","sound":"bell.caf"}}"#, app: app).sound, "default")
        XCTAssertEqual(facts(#"{"aps":{"alert":"Hi","sound":"bell.caf"}}"#).sound, "bell.caf", "sounds not described")
        XCTAssertEqual(facts(#"{"aps":{"alert":{"body":"Hi","sound":"bell.caf"}}}"#, app: app).sound, "default")
        XCTAssertEqual(
            facts(#"{"aps":{"alert":"Hi","sound":{"critical":1,"name":"chime.caf"}}}"#, app: app).sound, "chime.caf")
        XCTAssertNil(facts(#"{"aps":{"alert":"Hi"}}"#, app: app).sound)
    }

    func testTheInterruptionLevelIsActiveWithoutTheEntitlement() {
        let entitled = AppBundle(entitlements: [.timeSensitive])
        let unentitled = AppBundle(entitlements: [])
        let timeSensitive = #"{"aps":{"alert":"Hi","interruption-level":"time-sensitive"}}"#
        let critical = #"{"aps":{"alert":"Hi","interruption-level":"critical"}}"#
        XCTAssertEqual(facts(timeSensitive, app: entitled).interruptionLevel, "time-sensitive")
        XCTAssertEqual(facts(timeSensitive, app: unentitled).interruptionLevel, "active")
        XCTAssertEqual(facts(critical, app: entitled).interruptionLevel, "active")
        XCTAssertEqual(facts(critical).interruptionLevel, "critical", "entitlements not described")
        XCTAssertEqual(facts(#"{"aps":{"alert":"Hi","interruption-level":"passive"}}"#, app: unentitled).interruptionLevel, "passive")
        XCTAssertNil(facts(#"{"aps":{"alert":"Hi","interruption-level":""}}"#, app: unentitled).interruptionLevel)
    }

    func testLiveActivityDatesOutsideTheRangeAreNamed() {
        let live = facts(
            #"{"aps":{"event":"update","timestamp":1.5,"stale-date":253402300799,"dismissal-date":null}}"#,
            pushType: .liveactivity)
        XCTAssertEqual(live.invalidLiveActivityDates.map(\.field), ["timestamp", "dismissal-date"])
        XCTAssertEqual(PushFacts.unixTime(.double(1.767e9))?.seconds, 1_767_000_000)
        XCTAssertNil(PushFacts.unixTime(.int(-1)))
        XCTAssertNil(PushFacts.unixTime(.string("1")))
    }
}
