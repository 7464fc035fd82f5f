import FakeAPNs
import FakeAPNsTestSupport
import Foundation
import XCTest

/// The push lint's rules for the newer push kinds (widgets, controls, push to talk), Live
/// Activity priorities and dismissal dates, payloads that are not JSON, Wallet pass updates and
/// legacy Safari website pushes: each with a push that breaks it and one that does not.
final class PushLintNewerKindsTests: XCTestCase {
    private static let bundle = "com.example.app"
    private static let passType = "pass.com.example.boarding"
    private static let website = "web.com.example.news"

    /// A push as a decoder makes it: HTTP/2 unless `format` says otherwise; a binary push's topic
    /// is its certificate's.
    private func push(
        _ payload: some Sequence<UInt8>, pushType: PushType? = .alert, priority: Priority = .immediately,
        expiration: UInt32? = nil, format: PushNotification.Format = .http2, topic: String = bundle,
        receivedAt: Date = Date()
    ) -> PushNotification {
        let overHTTP2 = format == .http2
        let certificate = overHTTP2 ? nil : ClientCertificateInfo(subject: "CN=Pass Type ID: \(topic)", topic: topic)
        return PushNotification(
            deviceToken: Fixtures.token, payload: Payload(bytes: payload), expiration: expiration, priority: priority,
            format: format, connection: ConnectionInfo(id: 1, peer: "127.0.0.1:9", clientCertificate: certificate),
            receivedAt: receivedAt,
            http2: overHTTP2
                ? PushNotification.HTTP2Fields(
                    apnsID: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", topic: topic, pushType: pushType, collapseID: nil,
                    providerToken: nil)
                : nil)
    }

    private func push(
        _ payload: String, pushType: PushType? = .alert, priority: Priority = .immediately, expiration: UInt32? = nil,
        format: PushNotification.Format = .http2, topic: String = bundle, receivedAt: Date = Date()
    ) -> PushNotification {
        push(
            Array(payload.utf8), pushType: pushType, priority: priority, expiration: expiration, format: format,
            topic: topic, receivedAt: receivedAt)
    }

    private func findings(_ push: PushNotification, app: AppBundle? = nil) -> [LintFinding] {
        PushLint.findings(for: push, app: app)
    }

    private func liveActivity(
        _ payload: String, priority: Priority = .immediately, receivedAt: Date = Date()
    ) -> PushNotification {
        push(
            payload, pushType: .liveactivity, priority: priority, topic: Self.bundle + ".push-type.liveactivity",
            receivedAt: receivedAt)
    }

    func testTheTableHasEachNewRuleWithItsLevel() {
        let expected: [(LintRule, String, LintLevel)] = [
            (.payloadNotJSON, "payload-not-json", .error),
            (.widgetWithoutContentChanged, "widget-without-content-changed", .error),
            (.widgetWithUserInteraction, "widget-with-alert", .warning),
            (.pushToTalkDelivery, "push-to-talk-priority", .warning),
            (.liveActivityLowPriority, "live-activity-priority-1", .warning),
            (.liveActivityDismissalDate, "live-activity-dismissal-date", .warning),
            (.walletPassAlert, "wallet-pass-alert", .warning),
            (.websitePushAlert, "website-push-alert", .error),
            (.websitePushURLArgs, "website-push-url-args", .error),
        ]
        for (rule, id, level) in expected {
            XCTAssertEqual(rule.id, id)
            XCTAssertEqual(rule.level, level, id)
            XCTAssertEqual(LintRule.named(id), rule)
            XCTAssertTrue(rule.source.contains("D"), "\(id) names its evidence grade: \(rule.source)")
        }
    }

    // MARK: - payload-not-json

    /// Apple: "You must not use a compressed JSON payload". Until this rule a compressed payload
    /// had no finding at all, so `expectNoLintFindings` passed on it.
    func testAPayloadThatIsNotAJSONObjectIsThatErrorAlone() {
        let gzip: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xAB, 0xAE, 0x05, 0x00]
        for notification in [
            push(gzip), push(gzip, format: .enhanced), push("not json", pushType: .background, expiration: 3600),
            push("[1]"), push(#"{"aps":"#),
        ] {
            let found = findings(notification)
            XCTAssertEqual(found.map(\.rule), [.payloadNotJSON], "\(notification)")
            XCTAssertEqual(found.first?.level, .error)
            XCTAssertTrue(found.first?.message.hasPrefix("the payload is not a JSON object (") == true, "\(found)")
            XCTAssertFalse(found.first?.message.contains { $0.isNewline } ?? true)
            XCTAssertEqual(notification.lintFindings.map(\.rule), [.payloadNotJSON], "unjudged pushes too")
        }
        XCTAssertEqual(findings(push(#"{"aps":{"alert":"Hi"}}"#)), [])
    }

    // MARK: - widgets and controls

    func testAWidgetOrControlPushWithoutContentChangedTrueIsAnError() {
        for (type, suffix) in [(PushType.widgets, ".push-type.widgets"), (.controls, ".push-type.controls")] {
            let topic = Self.bundle + suffix
            XCTAssertEqual(findings(push(#"{"aps":{"content-changed":true}}"#, pushType: type, topic: topic)), [])
            for payload in [#"{"aps":{}}"#, #"{"aps":{"content-changed":1}}"#, #"{"aps":{"content-changed":"true"}}"#] {
                let found = findings(push(payload, pushType: type, topic: topic))
                XCTAssertEqual(found.map(\.rule), [.widgetWithoutContentChanged], "\(type) \(payload)")
                XCTAssertTrue(found.first?.message.contains("not true") == true, "\(found)")
            }
            // Named by the topic alone.
            XCTAssertEqual(
                findings(push(#"{"aps":{}}"#, pushType: nil, topic: topic)).map(\.rule),
                [.widgetWithoutContentChanged, .missingPushType])
        }
    }

    func testAWidgetOrControlPushWithAnAlertBadgeOrSoundIsAWarning() {
        let found = findings(
            push(
                #"{"aps":{"content-changed":true,"alert":"Score","sound":"default"}}"#, pushType: .widgets,
                topic: Self.bundle + ".push-type.widgets"))
        XCTAssertEqual(found.map(\.rule), [.widgetWithUserInteraction])
        XCTAssertTrue(found.first?.message.contains("aps.alert, aps.sound") == true, "\(found)")
        XCTAssertEqual(
            findings(
                push(#"{"aps":{"content-changed":true,"badge":2}}"#, pushType: .controls,
                     topic: Self.bundle + ".push-type.controls")).map(\.rule),
            [.widgetWithUserInteraction])
    }

    // MARK: - push to talk

    func testAPushToTalkPushNotAtPriority10WithExpiration0IsAWarning() {
        let topic = Self.bundle + ".voip-ptt"
        XCTAssertEqual(findings(push(#"{"aps":{}}"#, pushType: .pushtotalk, expiration: 0, topic: topic)), [])
        let cases: [(Priority, UInt32?, String)] = [
            (.consideringDevicePower, 0, "apns-priority 5"),
            (.immediately, nil, "no apns-expiration"),
            (.immediately, 1_900_000_000, "apns-expiration 1900000000"),
        ]
        for (priority, expiration, named) in cases {
            let found = findings(
                push(#"{"aps":{}}"#, pushType: .pushtotalk, priority: priority, expiration: expiration, topic: topic))
            XCTAssertEqual(found.map(\.rule), [.pushToTalkDelivery], named)
            XCTAssertTrue(found.first?.message.contains(named) == true, "\(found)")
        }
    }

    // MARK: - Live Activities: priority 1, dismissal date, end timestamp

    func testALiveActivityPushAtPriority1IsAWarning() {
        let update = #"{"aps":{"event":"update","timestamp":1700000000,"content-state":{}}}"#
        XCTAssertEqual(findings(liveActivity(update, priority: .consideringDevicePower)), [])
        XCTAssertEqual(
            findings(liveActivity(update, priority: .prioritizingPowerEfficiency)).map(\.rule),
            [.liveActivityLowPriority])
    }

    func testAnEndsDismissalDateOverFourHoursAfterTheEndIsAWarning() {
        let end = 1_700_000_000
        func ending(dismissal: Int) -> PushNotification {
            liveActivity(
                #"{"aps":{"event":"end","timestamp":\#(end),"dismissal-date":\#(dismissal),"content-state":{}}}"#)
        }
        XCTAssertEqual(findings(ending(dismissal: end + 4 * 3600)), [], "the four-hour window itself")
        XCTAssertEqual(findings(ending(dismissal: end - 60)), [], "in the past: dismissed at once")
        let found = findings(ending(dismissal: end + 4 * 3600 + 1))
        XCTAssertEqual(found.map(\.rule), [.liveActivityDismissalDate])
        XCTAssertTrue(found.first?.message.contains("over 4 hours after the end (1700000000)") == true, "\(found)")
        // Without a timestamp, the end is when the push came (and the missing timestamp is its own finding).
        let received = Date(timeIntervalSince1970: TimeInterval(end))
        let untimed = liveActivity(
            #"{"aps":{"event":"end","dismissal-date":\#(end + 5 * 3600),"content-state":{}}}"#, receivedAt: received)
        XCTAssertEqual(findings(untimed).map(\.rule), [.liveActivityTimestamp, .liveActivityDismissalDate])
    }

    func testAnEndWithoutATimestampIsLikeAnUpdateWithout() {
        let found = findings(liveActivity(#"{"aps":{"event":"end","content-state":{}}}"#))
        XCTAssertEqual(found.map(\.rule), [.liveActivityTimestamp])
        XCTAssertTrue(found.first?.message.hasPrefix("a Live Activity end without aps.timestamp") == true, "\(found)")
        XCTAssertEqual(
            findings(liveActivity(#"{"aps":{"event":"end","timestamp":1.5,"content-state":{}}}"#)).map(\.rule),
            [.liveActivityTimestamp], "not a whole number: that rule's, not live-activity-date's")
        XCTAssertEqual(findings(liveActivity(#"{"aps":{"event":"end","timestamp":1700000000}}"#)), [])
    }

    // MARK: - Wallet pass updates

    /// Grocer's PassbookNotification sends `{"aps":{}}` on the binary interface with the pass
    /// type's certificate; HTTP/2 senders send `{}` or `{"aps":{}}` to the pass type as the topic.
    func testAWalletPassUpdateHasNoFinding() {
        let updates = [
            push(#"{"aps":{}}"#, format: .enhanced, topic: Self.passType),
            push("{}", pushType: nil, topic: Self.passType),
            push(#"{"aps":{}}"#, pushType: nil, topic: Self.passType),
            push(#"{"aps":{}}"#, pushType: .alert, topic: Self.passType),
        ]
        for update in updates {
            XCTAssertEqual(findings(update), [], "\(update)")
            XCTAssertEqual(update.lintFindings, [], "\(update)")
        }
        // The same pushes to an app draw the findings they always did.
        XCTAssertEqual(
            findings(push(#"{"aps":{}}"#, pushType: nil)).map(\.rule), [.rendersNothing, .missingPushType])
    }

    func testAnAlertBadgeOrSoundSentToAPassIsAFinding() {
        let found = findings(push(#"{"aps":{"alert":{"title":"Gate","body":"B12"},"badge":1}}"#, topic: Self.passType))
        XCTAssertEqual(found.map(\.rule), [.walletPassAlert])
        XCTAssertTrue(found.first?.message.contains("changeMessage") == true, "\(found)")
        XCTAssertEqual(
            findings(push(#"{"aps":{"alert":"Gate B12"}}"#, format: .enhanced, topic: Self.passType)).map(\.rule),
            [.walletPassAlert], "on the binary interface, by the certificate's topic")
    }

    // MARK: - Safari website pushes

    func testAWebsitePushAsAppleAndGrocerWriteItHasNoFinding() {
        let grocer =
            #"{"aps":{"alert":{"title":"Flight A998 Now Boarding","body":"Boarding has begun for Flight A998.","#
            + #""action":"View"},"url-args":["boarding","A998"]}}"#
        XCTAssertEqual(findings(push(grocer, format: .enhanced, topic: Self.website)), [])
        XCTAssertEqual(findings(push(grocer, topic: Self.website)), [])
        XCTAssertEqual(
            findings(push(#"{"aps":{"alert":{"title":"T","body":"B"},"url-args":[]}}"#, topic: Self.website)), [],
            "no placeholder, an empty array")
    }

    func testAWebsitePushWithoutATitleAndBodyIsAnError() {
        let cases = [
            (#"{"aps":{"alert":"Boarding","url-args":[]}}"#, "aps.alert.title and aps.alert.body"),
            (#"{"aps":{"alert":{"body":"Boarding"},"url-args":[]}}"#, "aps.alert.title"),
            (#"{"aps":{"alert":{"title":"Flight","body":""},"url-args":[]}}"#, "aps.alert.body"),
        ]
        for (payload, missing) in cases {
            let found = findings(push(payload, topic: Self.website))
            XCTAssertEqual(found.map(\.rule), [.websitePushAlert], payload)
            XCTAssertTrue(found.first?.message.contains("without \(missing);") == true, "\(found)")
        }
    }

    func testAWebsitePushWithoutURLArgsAsStringsIsAnError() {
        let alert = #""alert":{"title":"Flight","body":"Boarding"}"#
        let missing = findings(push(#"{"aps":{\#(alert)}}"#, topic: Self.website))
        XCTAssertEqual(missing.map(\.rule), [.websitePushURLArgs])
        XCTAssertTrue(missing.first?.message.hasPrefix("a Safari website push without aps.url-args") == true)
        let numbers = findings(push(#"{"aps":{\#(alert),"url-args":["boarding",998]}}"#, topic: Self.website))
        XCTAssertEqual(numbers.map(\.rule), [.websitePushURLArgs])
        XCTAssertTrue(numbers.first?.message.contains(#"["boarding",998] is not an array of strings"#) == true)
        XCTAssertEqual(
            findings(push(#"{"aps":{\#(alert)}}"#, topic: Self.bundle)), [], "an app's push needs no url-args")
    }

    /// Apple: "The number of elements in the array must match the number of placeholders in the
    /// urlFormatString value"; "the number of placeholders may be zero, in which case the array
    /// should be empty". Judged only for a website described with its URL format.
    func testURLArgsAreCountedAgainstTheDescribedWebsitesPlaceholders() {
        let site = AppBundle(websiteURLFormat: "https://news.example.com/%@/%@")
        func sending(_ arguments: String) -> PushNotification {
            push(#"{"aps":{"alert":{"title":"T","body":"B"},"url-args":\#(arguments)}}"#, topic: Self.website)
        }
        XCTAssertEqual(findings(sending(#"["sport","42"]"#), app: site), [])
        let short = findings(sending(#"["sport"]"#), app: site)
        XCTAssertEqual(short.map(\.rule), [.websitePushURLArgs])
        XCTAssertTrue(
            short.first?.message.hasPrefix("aps.url-args holds 1 strings, and the website's URL format 2 placeholders")
                == true, "\(short)")
        XCTAssertEqual(findings(sending("[]"), app: AppBundle(websiteURLFormat: "https://news.example.com/")), [])
        XCTAssertEqual(
            findings(sending(#"["x"]"#), app: AppBundle(websiteURLFormat: "https://news.example.com/")).map(\.rule),
            [.websitePushURLArgs], "no placeholder: an empty array")
        XCTAssertEqual(findings(sending(#"["sport"]"#), app: AppBundle()), [], "no URL format described: not counted")
    }

    func testAWebsiteURLFormatOverItsBoundIsRefused() {
        let apps = AppCatalog()
        let long = "https://news.example.com/" + String(repeating: "a", count: AppBundle.maximumURLFormatLength)
        XCTAssertThrowsError(try apps.describe(Self.website, as: AppBundle(websiteURLFormat: long))) { error in
            XCTAssertEqual(
                (error as? AppCatalogError)?.problem,
                "the website URL format is \(long.utf8.count) bytes long; at most 2048 are allowed")
        }
        XCTAssertNil(apps[Self.website])
        let site = AppBundle(websiteURLFormat: "https://news.example.com/%@")
        XCTAssertNoThrow(try apps.describe(Self.website, as: site))
        XCTAssertEqual(apps[Self.website]?.websiteURLFormat, "https://news.example.com/%@")
    }
}
