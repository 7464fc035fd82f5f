import FakeAPNs
import FakeAPNsTestSupport
import XCTest

/// The push lint's request-only rules, each with a push that breaks it and one that does not.
/// The pushes are built by hand (the rule is a pure function of the push and the app); the
/// wire tests beside these send them with curl.
final class PushLintTests: XCTestCase {
    private static let bundle = "com.example.app"

    /// A push as a decoder makes it: HTTP/2 unless `format` says otherwise.
    private func push(
        _ payload: String, pushType: PushType? = .alert, priority: Priority = .immediately, expiration: UInt32? = nil,
        format: PushNotification.Format = .http2, topic: String = bundle
    ) -> PushNotification {
        let overHTTP2 = format == .http2 || format == .broadcast
        return PushNotification(
            deviceToken: format == .broadcast ? DeviceToken(bytes: []) : Fixtures.token, payload: Payload(payload),
            expiration: expiration, priority: priority, format: format,
            connection: ConnectionInfo(id: 1, peer: "127.0.0.1:9"),
            http2: overHTTP2
                ? PushNotification.HTTP2Fields(
                    apnsID: "e621e1f8-c36c-495a-93fc-0c247a3e6e5f", topic: topic, pushType: pushType, collapseID: nil,
                    providerToken: nil)
                : nil)
    }

    private func findings(_ push: PushNotification, app: AppBundle? = nil) -> [LintFinding] {
        PushLint.findings(for: push, app: app)
    }

    private func rules(_ push: PushNotification, app: AppBundle? = nil) -> [String] {
        findings(push, app: app).map(\.rule.id)
    }

    private func liveActivity(_ payload: String, priority: Priority = .immediately) -> PushNotification {
        push(payload, pushType: .liveactivity, priority: priority, topic: Self.bundle + ".push-type.liveactivity")
    }

    // MARK: - The whole

    func testAWellFormedPushOfEachKindHasNoFindings() {
        let app = AppBundle(categories: ["ORDER"], sounds: ["chime.caf"], entitlements: [.timeSensitive])
        let clean = [
            push(
                #"{"aps":{"alert":{"title":"Order","body":"Shipped"},"badge":1,"sound":"chime.caf","category":"ORDER","#
                    + #""mutable-content":1,"interruption-level":"time-sensitive","relevance-score":0.5},"id":7}"#,
                expiration: 1_900_000_000),
            push(#"{"aps":{"content-available":1},"sync":true}"#, pushType: .background, priority: .consideringDevicePower),
            push(#"{"aps":{"badge":0}}"#),
            push(#"{"aps":{"alert":"Hi"}}"#, format: .enhanced),
            push(#"{"aps":{"content-available":1}}"#, format: .frame),
            push(#"{"aps":{},"caller":"Ann"}"#, pushType: .voip, topic: Self.bundle + ".voip"),
            liveActivity(#"{"aps":{"event":"update","timestamp":1700000000,"content-state":{"score":"2-1"},"relevance-score":75}}"#),
            liveActivity(
                #"{"aps":{"event":"start","timestamp":1700000000,"content-state":{},"attributes-type":"Match","#
                    + #""attributes":{"home":"A"},"alert":{"title":"Kick-off","body":"Now","sound":"chime.caf"}}}"#),
        ]
        for notification in clean {
            XCTAssertEqual(findings(notification, app: app), [], "\(notification)")
        }
    }

    func testFindingsListErrorsFirstThenInTheRulesOrder() {
        let notification = push(
            #"{"aps":{"content-available":1,"sound":"default","orderID":7}}"#, pushType: .background,
            expiration: 3600)
        XCTAssertEqual(
            rules(notification),
            ["background-priority-10", "background-with-alert", "relative-expiration", "unknown-aps-key"])
        XCTAssertEqual(findings(notification).map(\.level), [.error, .error, .error, .warning])
    }

    /// Only `payload-not-json`: the other rules would judge an `aps` the payload does not have.
    func testPayloadsThatAreNotAJSONObjectGiveOnlyThatFinding() {
        for payload in ["not json", "[1]", #"{"aps":"#, ""] {
            XCTAssertEqual(rules(push(payload, pushType: .background, expiration: 3600)), ["payload-not-json"], payload)
            XCTAssertEqual(rules(push(payload, format: .simple)), ["payload-not-json"], payload)
        }
    }

    func testMessagesAreOneLineAndNameWhatWasSentWhateverItHolds() {
        let app = AppBundle(categories: [], sounds: [])
        let notification = push(#"{"aps":{"alert":"Hi","a\nb":1,"category":"x\r\ny","sound":"\u2028\n"}}"#)
        let found = findings(notification, app: app)
        XCTAssertEqual(found.map(\.rule.id), ["unknown-aps-key", "unregistered-category", "unknown-sound"])
        guard found.count == 3 else { return }
        for finding in found {
            XCTAssertFalse(finding.message.contains { $0.isNewline }, finding.message)
        }
        XCTAssertTrue(found[0].message.contains(#""a\nb""#), found[0].message)
        XCTAssertTrue(found[2].message.contains(#""\u2028\n""#), found[2].message)
        let long = push(#"{"aps":{"alert":"Hi","\#(String(repeating: "k", count: 500))":1}}"#)
        XCTAssertLessThan(findings(long).first?.message.count ?? 0, 200)
    }

    func testANotificationsFindingsAreTheRequestsAloneUnlessJudgedOnArrival() {
        let notification = push(#"{"aps":{"alert":"Hi","sound":"bell.caf"}}"#, pushType: nil)
        XCTAssertEqual(notification.lintFindings.map(\.rule), [.missingPushType])
    }

    func testANotificationsFindingsListTheDeviceModelsWithTheRequestsErrorsFirst() {
        var notification = push(#"{"aps":{"alert":"Hi"}}"#, pushType: nil)
        notification.deviceLintFindings = [LintFinding(.offlineBurst, "burst"), LintFinding(.liveActivityBudget, "budget")]
        XCTAssertEqual(notification.lintFindings.map(\.rule), [.missingPushType, .offlineBurst, .liveActivityBudget])
        XCTAssertTrue(notification.isLintJudged, "the device model judged it")
        notification.judgedLintFindings = [LintFinding(.relativeExpiration, "judged")]
        XCTAssertEqual(
            notification.lintFindingsIfJudged?.map(\.rule), [.relativeExpiration, .offlineBurst, .liveActivityBudget])
        notification.judgedLintFindings = nil
        notification.deviceLintFindings = []
        XCTAssertNil(notification.lintFindingsIfJudged)
    }

    func testAnAppsBundleIsFoundByTheTopicOfEachOfItsPushTypes() {
        let apps = AppCatalog()
        apps[Self.bundle] = AppBundle(sounds: ["chime.caf"])
        let suffixes = PushType.known.compactMap(\.topicSuffix)
        XCTAssertEqual(suffixes.count, 10)
        for suffix in suffixes {
            XCTAssertEqual(apps[Self.bundle + suffix]?.sounds, ["chime.caf"], "topic \(Self.bundle + suffix)")
        }
        XCTAssertNil(apps["com.example.other.voip"])
        XCTAssertNil(apps["com.example.app.voip.extra"], "a suffix counts at the end only")
    }

    func testEveryRuleHasAStableIDAndASource() {
        XCTAssertEqual(LintRule.all.count, 32)
        XCTAssertEqual(Set(LintRule.all.map(\.id)).count, 32)
        XCTAssertTrue(LintRule.all.allSatisfy { !$0.source.isEmpty })
        XCTAssertEqual(LintRule.named("background-priority-10"), .backgroundAtPriority10)
        XCTAssertNil(LintRule.named("no-such-rule"))
    }

    // MARK: - 1 background-priority-10

    func testBackgroundPushAtPriority10IsAnError() {
        let found = findings(push(#"{"aps":{"content-available":1}}"#, pushType: .background))
        XCTAssertEqual(found.map(\.rule), [.backgroundAtPriority10])
        XCTAssertEqual(found.first?.level, .error)
        XCTAssertTrue(found.first?.message.hasPrefix("apns-priority 10 on a background push") == true)
    }

    func testBackgroundPushAtPriority5OrAlertAt10IsNotBackgroundAtPriority10() {
        let lowPriority = push(#"{"aps":{"content-available":1}}"#, pushType: .background, priority: .consideringDevicePower)
        XCTAssertFalse(rules(lowPriority).contains("background-priority-10"))
        XCTAssertFalse(rules(push(#"{"aps":{"alert":"Hi"}}"#)).contains("background-priority-10"))
    }

    // MARK: - 2 background-with-alert

    func testBackgroundPushWithAlertBadgeOrSoundIsAnError() {
        let notification = push(
            #"{"aps":{"content-available":1,"alert":"Hi","badge":2}}"#, pushType: .background,
            priority: .consideringDevicePower)
        let found = findings(notification)
        XCTAssertEqual(found.map(\.rule), [.backgroundWithUserInteraction])
        XCTAssertTrue(found.first?.message.contains("aps.alert, aps.badge") == true, "\(found)")
        let withSound = push(#"{"aps":{"sound":"default"}}"#, pushType: .background, priority: .consideringDevicePower)
        XCTAssertEqual(rules(withSound), ["background-with-alert"])
    }

    func testAlertPushWithAlertBadgeAndSoundIsNotBackgroundWithAlert() {
        XCTAssertFalse(rules(push(#"{"aps":{"alert":"Hi","badge":2,"sound":"default"}}"#)).contains("background-with-alert"))
        let binary = push(#"{"aps":{"content-available":1,"alert":"Hi"}}"#, format: .enhanced)
        XCTAssertEqual(rules(binary), [], "a binary push has no push type: content-available with an alert is allowed")
    }

    // MARK: - 3 content-available-on-alert

    func testContentAvailableOnAnAlertPushWithNothingToShowIsAWarning() {
        let found = findings(push(#"{"aps":{"content-available":1}}"#))
        XCTAssertEqual(found.map(\.rule), [.contentAvailableOnAlert], "and not also renders-nothing")
        XCTAssertEqual(found.first?.level, .warning)
    }

    func testContentAvailableOnAnAlertPushThatShowsSomethingIsNotContentAvailableOnAlert() {
        XCTAssertEqual(rules(push(#"{"aps":{"content-available":1,"alert":"Hi"}}"#)), [])
        XCTAssertEqual(rules(push(#"{"aps":{"content-available":1,"badge":3}}"#)), [])
    }

    // MARK: - 4 renders-nothing

    func testAlertOrBinaryPushWithNoAlertBadgeOrSoundRendersNothing() {
        let cases: [(PushNotification, String)] = [
            (push(#"{"aps":{}}"#), "aps is empty"),
            (push(#"{"id":7}"#), "the payload has no aps"),
            (push(#"{"aps":{"category":"ORDER","thread-id":"t"}}"#), "aps has no alert, badge or sound"),
            (push(#"{"aps":{"badge":"1"}}"#), "aps has no alert, badge or sound"),
            (push(#"{"aps":"Hello"}"#), "aps is a string, not a dictionary"),
            (push(#"{"aps":{}}"#, format: .enhanced), "aps is empty"),
            (push(#"{"aps":{"thread-id":"t"}}"#, pushType: nil), "aps has no alert, badge or sound"),
        ]
        for (notification, start) in cases {
            let found = findings(notification).filter { $0.rule == .rendersNothing }
            XCTAssertEqual(found.count, 1, "\(notification)")
            XCTAssertTrue(found.first?.message.hasPrefix(start) == true, "\(found)")
            XCTAssertTrue(found.first?.message.contains("the phone shows nothing") == true, "\(found)")
        }
    }

    func testPushTypesThatShowNothingByDesignDoNotRenderNothing() {
        let quiet: [(PushType, String)] = [
            (.background, ""), (.voip, ".voip"), (.liveactivity, ".push-type.liveactivity"),
            (.location, ".location-query"), (.complication, ".complication"), (.fileprovider, ".pushkit.fileprovider"),
            (.mdm, ""), (.pushtotalk, ".voip-ptt"), (.widgets, ".push-type.widgets"), (.controls, ".push-type.controls"),
        ]
        for (pushType, suffix) in quiet {
            let notification = push(#"{"aps":{}}"#, pushType: pushType, priority: .consideringDevicePower, topic: Self.bundle + suffix)
            XCTAssertFalse(rules(notification).contains("renders-nothing"), "\(pushType)")
        }
        XCTAssertFalse(rules(push(#"{"aps":{"content-available":1}}"#, format: .frame)).contains("renders-nothing"))
        XCTAssertFalse(rules(push(#"{"aps":{"badge":0}}"#)).contains("renders-nothing"))
        XCTAssertFalse(rules(push(#"{"aps":{"sound":{"critical":1,"name":"a.caf"}}}"#)).contains("renders-nothing"))
    }

    // MARK: - 5 unknown-aps-key

    func testAKeyInsideAPSThatAppleDoesNotDefineIsAWarningEachNamed() {
        let found = findings(push(#"{"aps":{"alert":"Hi","orderID":7,"Badge":1}}"#))
        XCTAssertEqual(found.map(\.rule), [.unknownAPSKey, .unknownAPSKey])
        guard found.count == 2 else { return }
        XCTAssertTrue(found[0].message.hasPrefix(#"aps key "orderID" is not one Apple defines"#), found[0].message)
        XCTAssertTrue(found[1].message.hasPrefix(#"aps key "Badge""#), found[1].message)
    }

    func testAppleDefinedKeysLiveActivityOnesIncludedAndCustomKeysBesideAPSAreNotUnknown() {
        let everything = APS.documentedKeys.map { #""\#($0)":1"# }.joined(separator: ",")
        XCTAssertFalse(rules(push(#"{"aps":{\#(everything)},"orderID":7}"#)).contains("unknown-aps-key"))
        let live = liveActivity(
            #"{"aps":{"event":"start","timestamp":1,"content-state":{},"stale-date":2,"dismissal-date":3,"#
                + #""relevance-score":9,"attributes-type":"A","attributes":{},"alert":{"title":"T"},"#
                + #""input-push-token":1,"input-push-channel":"c"}}"#)
        XCTAssertEqual(rules(live), [])
    }

    // MARK: - 6 mutable-content-without-alert

    func testMutableContentWithoutAlertTextIsAWarning() {
        for payload in [
            #"{"aps":{"mutable-content":1,"badge":1}}"#, #"{"aps":{"mutable-content":1,"alert":{"launch-image":"a"}}}"#,
            #"{"aps":{"mutable-content":1,"alert":{"title":""},"sound":"default"}}"#,
        ] {
            let found = findings(push(payload)).filter { $0.rule == .mutableContentWithoutAlert }
            XCTAssertEqual(found.count, 1, payload)
            XCTAssertTrue(found.first?.message.contains("never runs the notification service extension") == true)
        }
    }

    func testMutableContentWithATitleSubtitleBodyOrLocalizedTextIsNotWithoutAlert() {
        for alert in [
            #""Hi""#, #"{"title":"T"}"#, #"{"subtitle":"S"}"#, #"{"body":"B"}"#, #"{"loc-key":"K"}"#,
            #"{"title-loc-key":"K"}"#, #"{"title":{"loc-key":"K"}}"#,
        ] {
            XCTAssertEqual(rules(push(#"{"aps":{"mutable-content":1,"alert":\#(alert)}}"#)), [], alert)
        }
        XCTAssertEqual(rules(push(#"{"aps":{"mutable-content":0,"badge":1}}"#)), [])
    }

    // MARK: - 7 unregistered-category

    func testACategoryTheDescribedAppDoesNotRegisterIsAWarning() {
        let found = findings(push(#"{"aps":{"alert":"Hi","category":"CHAT"}}"#), app: AppBundle(categories: ["ORDER"]))
        XCTAssertEqual(found.map(\.rule), [.unregisteredCategory])
        XCTAssertEqual(
            found.first?.message,
            #"category "CHAT" is not one the app registers; the phone shows the notification without its actions"#)
    }

    func testARegisteredCategoryOrAnUndescribedAppIsNotUnregisteredCategory() {
        let notification = push(#"{"aps":{"alert":"Hi","category":"ORDER"}}"#)
        XCTAssertEqual(rules(notification, app: AppBundle(categories: ["ORDER"])), [])
        let other = push(#"{"aps":{"alert":"Hi","category":"CHAT"}}"#)
        XCTAssertEqual(rules(other), [])
        XCTAssertEqual(rules(other, app: AppBundle(sounds: ["a.caf"])), [], "categories not described")
    }

    // MARK: - 8 interruption-level-without-entitlement

    func testTimeSensitiveOrCriticalWithoutTheEntitlementIsAWarning() {
        let app = AppBundle(entitlements: [])
        let timeSensitive = findings(push(#"{"aps":{"alert":"Hi","interruption-level":"time-sensitive"}}"#), app: app)
        XCTAssertEqual(timeSensitive.map(\.rule), [.interruptionLevelWithoutEntitlement])
        XCTAssertEqual(
            timeSensitive.first?.message,
            #"interruption-level "time-sensitive" without the app's time-sensitive entitlement; the phone presents it"#
                + " as active")
        let critical = push(#"{"aps":{"alert":"Hi","interruption-level":"critical"}}"#)
        XCTAssertEqual(rules(critical, app: AppBundle(entitlements: [.timeSensitive])), ["interruption-level-without-entitlement"])
    }

    func testACriticalSoundWithoutTheCriticalAlertsEntitlementIsAWarning() {
        let app = AppBundle(entitlements: [.timeSensitive])
        let found = findings(push(#"{"aps":{"alert":"Hi","sound":{"critical":1,"name":"default","volume":1}}}"#), app: app)
        XCTAssertEqual(found.map(\.rule), [.interruptionLevelWithoutEntitlement])
        XCTAssertTrue(found.first?.message.hasPrefix("sound critical 1 without the app's critical-alerts entitlement") == true)
        let both = push(#"{"aps":{"alert":"Hi","interruption-level":"critical","sound":{"critical":1,"name":"default"}}}"#)
        XCTAssertEqual(findings(both, app: app).count, 1, "one finding for one critical alert")
        let entitled = AppBundle(entitlements: [.criticalAlerts])
        XCTAssertEqual(rules(push(#"{"aps":{"alert":"Hi","sound":{"critical":1,"name":"default"}}}"#), app: entitled), [])
        XCTAssertEqual(rules(push(#"{"aps":{"alert":"Hi","sound":{"critical":0,"name":"default"}}}"#), app: app), [])
    }

    func testAnEntitledPassiveOrUndescribedLevelIsNotWithoutEntitlement() {
        let entitled = AppBundle(entitlements: [.timeSensitive, .criticalAlerts])
        for level in ["time-sensitive", "critical"] {
            let notification = push(#"{"aps":{"alert":"Hi","interruption-level":"\#(level)"}}"#)
            XCTAssertEqual(rules(notification, app: entitled), [], level)
            XCTAssertEqual(rules(notification), [], "\(level), app not described")
            XCTAssertEqual(rules(notification, app: AppBundle(categories: [])), [], "\(level), entitlements not described")
        }
        XCTAssertEqual(rules(push(#"{"aps":{"alert":"Hi","interruption-level":"passive"}}"#), app: AppBundle(entitlements: [])), [])
    }

    // MARK: - 9 relevance-score-out-of-range

    func testARelevanceScoreOutside0To1IsAWarning() {
        for score in ["1.5", "-0.1", "75"] {
            let found = findings(push(#"{"aps":{"alert":"Hi","relevance-score":\#(score)}}"#))
            XCTAssertEqual(found.map(\.rule), [.relevanceScoreOutOfRange], score)
            XCTAssertTrue(found.first?.message.hasPrefix("relevance-score \(score) is outside 0 to 1") == true, "\(found)")
        }
    }

    func testARelevanceScoreIn0To1OrOnALiveActivityIsNotOutOfRange() {
        for score in ["0", "1", "0.25", "1.0"] {
            XCTAssertEqual(rules(push(#"{"aps":{"alert":"Hi","relevance-score":\#(score)}}"#)), [], score)
        }
        let live = liveActivity(#"{"aps":{"event":"update","timestamp":1,"content-state":{},"relevance-score":75}}"#)
        XCTAssertEqual(rules(live), [])
    }

    // MARK: - 10 relative-expiration

    func testAnExpirationBelow10To9IsASecondsCountReadAsA1970Date() {
        let found = findings(push(#"{"aps":{"alert":"Hi"}}"#, expiration: 3600))
        XCTAssertEqual(found.map(\.rule), [.relativeExpiration])
        XCTAssertEqual(found.first?.level, .error)
        XCTAssertTrue(found.first?.message.hasPrefix("apns-expiration 3600 is a date 3600 seconds after 1 January 1970") == true)
        XCTAssertTrue(found.first?.message.contains("a phone that is offline never gets it") == true)
        let binary = findings(push(#"{"aps":{"alert":"Hi"}}"#, expiration: 999_999_999, format: .enhanced))
        XCTAssertTrue(binary.first?.message.hasPrefix("expiry 999999999 ") == true, "\(binary)")
    }

    func testAnExpirationOf0OrARealDateIsNotRelative() {
        for expiration: UInt32? in [nil, 0, 1_000_000_000, 1_900_000_000] {
            XCTAssertEqual(rules(push(#"{"aps":{"alert":"Hi"}}"#, expiration: expiration)), [], "\(expiration as Any)")
        }
    }

    // MARK: - 12 live-activity-timestamp (the request's part)

    func testALiveActivityUpdateWithoutAWholeTimestampIsAnError() {
        let missing = findings(liveActivity(#"{"aps":{"event":"update","content-state":{}}}"#))
        XCTAssertEqual(missing.map(\.rule), [.liveActivityTimestamp])
        XCTAssertTrue(missing.first?.message.hasPrefix("a Live Activity update without aps.timestamp") == true)
        let text = findings(liveActivity(#"{"aps":{"event":"update","timestamp":"1700000000","content-state":{}}}"#))
        XCTAssertEqual(text.map(\.rule), [.liveActivityTimestamp])
        XCTAssertTrue(text.first?.message.hasPrefix(#"aps.timestamp "1700000000" is not a whole number"#) == true)
    }

    /// An `end` is ordered against the updates like one (its missing timestamp:
    /// `PushLintNewerKindsTests`); a `start` is not.
    func testATimestampedUpdateOrAnotherEventIsNotMissingItsTimestamp() {
        XCTAssertEqual(rules(liveActivity(#"{"aps":{"event":"update","timestamp":1,"content-state":{}}}"#)), [])
        XCTAssertEqual(rules(liveActivity(#"{"aps":{"event":"end","timestamp":1,"content-state":{}}}"#)), [])
        XCTAssertFalse(rules(push(#"{"aps":{"alert":"Hi","event":"update"}}"#)).contains("live-activity-timestamp"))
    }

    // MARK: - 13 live-activity-start-incomplete

    func testALiveActivityStartWithoutAlertAttributesTypeOrAttributesIsAnError() {
        let found = findings(liveActivity(#"{"aps":{"event":"start","timestamp":1,"content-state":{},"attributes":{}}}"#))
        XCTAssertEqual(found.map(\.rule), [.liveActivityStartIncomplete])
        XCTAssertEqual(
            found.first?.message,
            "a Live Activity start without aps.alert, aps.attributes-type; the phone does not start the activity")
    }

    func testACompleteStartOrAnUpdateIsNotAnIncompleteStart() {
        let complete = liveActivity(
            #"{"aps":{"event":"start","timestamp":1,"content-state":{},"attributes-type":"A","attributes":{},"alert":"Go"}}"#)
        XCTAssertEqual(rules(complete), [])
        XCTAssertEqual(rules(liveActivity(#"{"aps":{"event":"update","timestamp":1,"content-state":{}}}"#)), [])
    }

    // MARK: - 14 content-state-too-large

    func testAContentStateOver4096BytesEncodedIsAnError() {
        let big = String(repeating: "x", count: 4090)
        let found = findings(
            liveActivity(#"{"aps":{"event":"update","timestamp":1,"content-state":{"text":"\#(big)"}}}"#))
        XCTAssertEqual(found.map(\.rule), [.contentStateTooLarge])
        XCTAssertEqual(
            found.first?.message, "aps.content-state is 4101 bytes encoded, over 4096; the phone fails the update")
    }

    func testAContentStateOf4096BytesEncodedIsNotTooLarge() {
        // {"text":"…"}: 11 bytes around the text; spaces sent are not encoded.
        let fits = String(repeating: "x", count: 4085)
        let notification = liveActivity(
            #"{"aps":{"event":"update","timestamp":1,"content-state":{ "text" : "\#(fits)" }}}"#)
        XCTAssertEqual(rules(notification), [])
    }

    // MARK: - 16 missing-push-type

    func testAnHTTP2DevicePushWithoutAPushTypeIsAWarning() {
        let found = findings(push(#"{"aps":{"alert":"Hi"}}"#, pushType: nil))
        XCTAssertEqual(found.map(\.rule), [.missingPushType])
        XCTAssertTrue(found.first?.message.hasPrefix("no apns-push-type;") == true)
    }

    func testWithoutAPushTypeTheTopicsSuffixSaysWhatKindOfPushItIs() {
        let voip = push(#"{"aps":{}}"#, pushType: nil, topic: Self.bundle + ".voip")
        XCTAssertEqual(rules(voip), ["missing-push-type"], "a VoIP push shows nothing by design")
        let live = push(#"{"aps":{"event":"update","content-state":{}}}"#, pushType: nil, topic: Self.bundle + ".push-type.liveactivity")
        XCTAssertEqual(rules(live), ["live-activity-timestamp", "missing-push-type"])
        XCTAssertEqual(rules(push(#"{"aps":{}}"#, pushType: nil)), ["renders-nothing", "missing-push-type"])
    }

    func testABinaryPushABroadcastOrATypedPushIsNotMissingItsPushType() {
        XCTAssertEqual(rules(push(#"{"aps":{"alert":"Hi"}}"#, pushType: nil, format: .frame)), [])
        XCTAssertEqual(rules(push(#"{"aps":{"alert":"Hi"}}"#, pushType: nil, format: .simple)), [])
        let broadcast = push(
            #"{"aps":{"event":"update","timestamp":1,"content-state":{}}}"#, pushType: .liveactivity, format: .broadcast)
        XCTAssertEqual(rules(broadcast), [])
        XCTAssertEqual(rules(push(#"{"aps":{"alert":"Hi"}}"#)), [])
    }

    // MARK: - 17 unknown-sound

    func testASoundTheDescribedAppDoesNotBundleIsAWarning() {
        let app = AppBundle(sounds: ["chime.caf"])
        let plain = findings(push(#"{"aps":{"alert":"Hi","sound":"bell.caf"}}"#), app: app)
        XCTAssertEqual(plain.map(\.rule), [.unknownSound])
        XCTAssertEqual(
            plain.first?.message, #"sound "bell.caf" is not in the app's bundle; the phone plays the default sound"#)
        let critical = push(#"{"aps":{"alert":"Hi","sound":{"critical":1,"name":"siren.caf","volume":1}}}"#)
        XCTAssertEqual(rules(critical, app: app), ["unknown-sound"])
        let live = findings(
            liveActivity(#"{"aps":{"event":"update","timestamp":1,"content-state":{},"alert":{"title":"T","sound":"x.caf"}}}"#),
            app: app)
        XCTAssertEqual(live.map(\.rule), [.unknownSound])
        XCTAssertTrue(live.first?.message.hasPrefix(#"alert sound "x.caf""#) == true, "\(live)")
    }

    func testABundledOrDefaultSoundOrAnUndescribedAppIsNotUnknown() {
        let app = AppBundle(sounds: ["chime.caf"])
        for sound in [#""chime.caf""#, #""default""#, #"{"critical":1,"name":"chime.caf"}"#] {
            XCTAssertEqual(rules(push(#"{"aps":{"alert":"Hi","sound":\#(sound)}}"#), app: app), [], sound)
        }
        XCTAssertEqual(rules(push(#"{"aps":{"alert":"Hi","sound":"bell.caf"}}"#)), [])
        XCTAssertEqual(
            rules(push(#"{"aps":{"alert":"Hi","sound":"bell.caf"}}"#), app: AppBundle(categories: [])), [],
            "sounds not described")
    }

    // MARK: - 18 live-activity-date

    func testALiveActivityDateThatIsNotAWholeSecondFrom1970To9999IsAnError() {
        let found = findings(
            liveActivity(
                #"{"aps":{"event":"end","timestamp":1700000000,"content-state":{},"stale-date":-5,"#
                    + #""dismissal-date":253402300800}}"#))
        XCTAssertEqual(found.map(\.rule), [.liveActivityDate, .liveActivityDate])
        XCTAssertEqual(
            found.first?.message,
            "aps.stale-date -5 is not a whole number of seconds from 1970 to the end of year 9999; the phone ignores"
                + " the push")
        XCTAssertTrue(found.last?.message.hasPrefix("aps.dismissal-date 253402300800 ") == true, "\(found)")
        let fraction = findings(liveActivity(#"{"aps":{"event":"update","timestamp":1700000000.5,"content-state":{}}}"#))
        XCTAssertEqual(fraction.map(\.rule), [.liveActivityTimestamp], "the update's timestamp rule says it once")
        let text = findings(
            liveActivity(
                #"{"aps":{"event":"start","timestamp":"soon","content-state":{},"attributes-type":"A","#
                    + #""attributes":{},"alert":{"title":"T","body":"B"}}}"#))
        XCTAssertEqual(text.map(\.rule), [.liveActivityDate])
        XCTAssertTrue(text.first?.message.hasPrefix(#"aps.timestamp "soon" "#) == true, "\(text)")
    }

    func testWholeLiveActivityDatesInRangeOrOnAnotherPushAreNotLiveActivityDates() {
        let dates = #""timestamp":0,"stale-date":1.767e9,"dismissal-date":253402300799"#
        XCTAssertEqual(rules(liveActivity(#"{"aps":{"event":"update","content-state":{},\#(dates)}}"#)), [])
        XCTAssertEqual(rules(push(#"{"aps":{"alert":"Hi","stale-date":-1}}"#)), [], "not a Live Activity's push")
    }

    // MARK: - The rule table

    func testEachRuleStaticIsItsTableEntryInTheTablesOrder() {
        let statics: [LintRule] = [
            .backgroundAtPriority10, .backgroundWithUserInteraction, .contentAvailableOnAlert, .rendersNothing,
            .unknownAPSKey, .mutableContentWithoutAlert, .unregisteredCategory, .interruptionLevelWithoutEntitlement,
            .relevanceScoreOutOfRange, .relativeExpiration, .offlineBurst, .liveActivityTimestamp,
            .liveActivityStartIncomplete, .contentStateTooLarge, .liveActivityBudget, .missingPushType, .unknownSound,
            .liveActivityDate, .payloadNotJSON, .widgetWithoutContentChanged, .widgetWithUserInteraction,
            .pushToTalkDelivery, .liveActivityLowPriority, .liveActivityDismissalDate, .walletPassAlert,
            .websitePushAlert, .websitePushURLArgs,
            // Live Activities the phone drops.
            .liveActivityEvent, .liveActivityContentMismatch, .liveActivityUnixDate, .liveActivityStartEmptyAlert,
            .liveActivityUnknownChannel,
        ]
        XCTAssertEqual(statics, LintRule.all)
        XCTAssertEqual(
            LintRuleDefinition.all.filter { $0.check == nil }.map(\.rule),
            [.offlineBurst, .liveActivityBudget, .liveActivityUnknownChannel],
            "the device model's rules have no request check")
        for definition in LintRuleDefinition.all {
            XCTAssertFalse(definition.doc.contains("|") || definition.doc.contains("\n"), definition.swiftName)
            XCTAssertEqual(definition.check == nil, definition.doc.contains("judged by the device model"), definition.swiftName)
        }
    }

    /// The rule table of the PushLint article is the rule table's rows: a new rule shows there,
    /// in its place, with its identifier, Swift name, level, text and source.
    func testThePushLintArticlesRuleTableIsTheRuleTable() throws {
        let article = repositoryRoot.appendingPathComponent("Sources/FakeAPNs/FakeAPNs.docc/PushLint.md")
        let text = try String(contentsOf: article, encoding: .utf8)
        let rows = text.split(separator: "\n").map(String.init).filter { line in
            line.hasPrefix("| ") && line.dropFirst(2).first?.isNumber == true
        }
        let expected = LintRuleDefinition.all.enumerated().map { $0.element.docRow(number: $0.offset + 1) }
        XCTAssertEqual(rows, expected, "the rows the table makes:\n" + expected.joined(separator: "\n"))
    }
}
