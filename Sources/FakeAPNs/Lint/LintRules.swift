/// One of the push lint's rules, everything about it in one place: its identifier, level and
/// source (the ``LintRule``), its Swift name, the line the rule table of the push lint's
/// article shows, and its check. ``LintRuleDefinition/all`` is the table: ``LintRule/all``,
/// ``PushLint`` and the article's rows all come from it, so a new rule is one entry there, its
/// `LintRule` static, and its row (a test holds the article to the table).
package struct LintRuleDefinition: Sendable {
    /// A request-only rule's check: one message per finding (each names the field and what the
    /// phone will do, on one line).
    package typealias Check = @Sendable (PushFacts) -> [String]

    /// The rule: its identifier, level and source.
    package let rule: LintRule
    /// The name of its `LintRule` static, such as `relativeExpiration`.
    package let swiftName: String
    /// When it fires and what the phone does then, as the article's rule table says it.
    package let doc: String
    /// Its check; nil for a rule the device model judges, which needs the phone's state.
    package let check: Check?

    private init(
        _ swiftName: String, _ id: String, _ level: LintLevel, source: String, doc: String, check: Check?
    ) {
        rule = LintRule(id, level: level, source: source)
        self.swiftName = swiftName
        self.doc = doc
        self.check = check
    }

    /// The findings of this rule in `push` (none for a device-model rule).
    package func findings(in push: PushFacts) -> [LintFinding] {
        (check?(push) ?? []).map { LintFinding(rule, $0) }
    }

    /// The rule's row in the article's rule table, numbered from 1 in the order of ``all``.
    package func docRow(number: Int) -> String {
        "| \(number) | `\(rule.id)` | ``LintRule/\(swiftName)`` | \(rule.level) | \(doc) | \(rule.source) |"
    }

    /// The definition of the rule whose static is named `swiftName`.
    package static func named(swiftName: String) -> LintRuleDefinition? {
        all.first { $0.swiftName == swiftName }
    }

    /// The Live Activity events the phone orders by their `timestamp`, which they must carry.
    package static let orderedEvents: Set<String> = ["update", "end"]
    /// The longest `content-state`, encoded, that a Live Activity takes (Apple: 4 KB).
    package static let maximumContentStateBytes = 4096
    /// How long after its end a Live Activity may stay on the screen, in seconds: Apple's
    /// "four-hour window" for a `dismissal-date`.
    package static let liveActivityDismissalWindow: Int64 = 4 * 3600
    /// Below this, an `apns-expiration` is a number of seconds sent where a date belongs: as a
    /// date it is before September 2001.
    package static let smallestPlausibleExpiration: UInt32 = 1_000_000_000

    /// Every rule, in the order of the lint list of the device-delivery notes (its numbers are
    /// the article's), the rules after it appended.
    package static let all: [LintRuleDefinition] = [
        LintRuleDefinition(
            "backgroundAtPriority10", "background-priority-10", .error,
            source: "Apple: Sending notification requests to APNs (push types: background); Apple Developer Forums 745345",
            doc: "`apns-push-type: background` at priority 10 (the default); what the phone does is undefined: Apple"
                + " calls it an error (always use 5), one report shows it accepted and the app woken"
        ) { push in
            guard push.notification.pushType == .background, push.notification.priority == .immediately else { return [] }
            return [
                "apns-priority 10 on a background push, which Apple calls an error (use 5); what the phone does with it"
                    + " is undefined"
            ]
        },
        LintRuleDefinition(
            "backgroundWithUserInteraction", "background-with-alert", .error,
            source: "Apple: Pushing background updates to your App",
            doc: "a background push whose `aps` holds `alert`, `badge` or `sound`; the phone may neither show it nor"
                + " wake the app: a background `aps` must hold only `content-available`"
        ) { push in
            let keys = ["alert", "badge", "sound"].filter { push.aps[$0] != nil }
            guard push.notification.pushType == .background, !keys.isEmpty else { return [] }
            let named = keys.map { "aps.\($0)" }.joined(separator: ", ")
            return [
                "a background push carries \(named), but must hold only content-available; the phone may neither"
                    + " show it nor wake the app (send an alert push)"
            ]
        },
        LintRuleDefinition(
            "contentAvailableOnAlert", "content-available-on-alert", .warning,
            source: "Apple: Pushing background updates to your App; Apple Developer Forums 745345",
            doc: "`content-available: 1` on an `alert` push with no alert text, badge or sound; the phone neither"
                + " shows it nor wakes the app"
        ) { push in
            guard push.notification.pushType == .alert, push.aps.contentAvailable, !push.showsSomething else { return [] }
            return [
                "content-available 1 on an alert push with no alert, badge or sound; the phone neither shows it nor"
                    + " wakes the app (send it as apns-push-type background at priority 5)"
            ]
        },
        LintRuleDefinition(
            "rendersNothing", "renders-nothing", .warning,
            source: "Apple: Generating a remote notification; Apple Developer Forums 745345",
            doc: "no `aps`, an empty one, or one with no alert text, badge or sound (an empty string is none), on an"
                + " `alert` push, or one with no push type (binary, or HTTP/2 without the header to a topic whose"
                + " suffix names none, such as `.voip`) and no `content-available`; the phone shows nothing, plays"
                + " nothing, sets no badge"
        ) { push in
            guard push.isMeantToShow, !push.showsSomething else { return [] }
            // content-available on an alert push is the more precise finding.
            if push.notification.pushType == .alert, push.aps.contentAvailable { return [] }
            let what: String
            switch push.apsValue {
            case nil: what = "the payload has no aps"
            case .object(let object) where object.isEmpty: what = "aps is empty"
            case .object: what = "aps has no alert, badge or sound the phone can use"
            case .some(let value): what = "aps is \(value.kindDescription), not a dictionary"
            }
            return ["\(what); the phone shows nothing, plays no sound and sets no badge"]
        },
        LintRuleDefinition(
            "unknownAPSKey", "unknown-aps-key", .warning,
            source: "Apple: Generating a remote notification",
            doc: "a key inside `aps` Apple does not define (``APS/documentedKeys``, Live Activity keys included); the"
                + " phone ignores it: custom data goes beside `aps`"
        ) { push in
            push.aps.raw.keys.filter { !APS.documentedKeys.contains($0) }.map { key in
                "aps key \(quoted(key)) is not one Apple defines; the phone ignores it (custom data goes beside aps)"
            }
        },
        LintRuleDefinition(
            "mutableContentWithoutAlert", "mutable-content-without-alert", .warning,
            source: "Apple: Modifying content in newly delivered notifications",
            doc: "`mutable-content: 1` without an alert title, subtitle or body (a localization key counts); the"
                + " phone never runs the notification service extension"
        ) { push in
            guard push.aps.mutableContent, !push.hasAlertText else { return [] }
            return [
                "mutable-content 1 without an alert title, subtitle or body; the phone never runs the notification"
                    + " service extension"
            ]
        },
        LintRuleDefinition(
            "unregisteredCategory", "unregistered-category", .warning,
            source: "Apple: Declaring your actionable notification types",
            doc: "a `category` the described app does not register; the phone shows the notification without its"
                + " actions"
        ) { push in
            guard let categories = push.app?.categories, let category = push.aps.category,
                !categories.contains(category)
            else { return [] }
            return [
                "category \(quoted(category)) is not one the app registers; the phone shows the notification without"
                    + " its actions"
            ]
        },
        LintRuleDefinition(
            "interruptionLevelWithoutEntitlement", "interruption-level-without-entitlement", .warning,
            source: "Apple: UNNotificationInterruptionLevel; UNAuthorizationOptions.criticalAlert",
            doc: "`time-sensitive` or `critical` without the described app's entitlement, or a `sound` dictionary"
                + " with `critical: 1` without the critical-alerts one; the phone presents it as `active`, with an"
                + " ordinary sound (observed)"
        ) { push in
            guard let entitlements = push.app?.entitlements else { return [] }
            let sent = push.aps.interruptionLevel
            if let sent, sent != .active, push.interruptionLevel == APS.InterruptionLevel.active.rawValue {
                let needed: AppBundle.Entitlement = sent == .critical ? .criticalAlerts : .timeSensitive
                return [
                    "interruption-level \(quoted(sent.rawValue)) without the app's \(needed.rawValue) entitlement;"
                        + " the phone presents it as active"
                ]
            }
            // A critical sound is a critical alert too, whatever the interruption level says.
            let criticalSound = push.aps.sound?.critical == true || push.aps.alert?.sound?.critical == true
            guard criticalSound, sent != .critical, !entitlements.contains(.criticalAlerts) else { return [] }
            return [
                "sound critical 1 without the app's critical-alerts entitlement; the phone plays an ordinary sound,"
                    + " which the mute switch silences"
            ]
        },
        LintRuleDefinition(
            "relevanceScoreOutOfRange", "relevance-score-out-of-range", .warning,
            source: "Apple: Generating a remote notification",
            doc: "`relevance-score` outside 0 to 1, except on a Live Activity push; the phone ranks it in the"
                + " notification summary in a way nobody defined"
        ) { push in
            guard !push.isLiveActivity, let score = push.aps.relevanceScore, !(0...1).contains(score),
                let sent = push.aps["relevance-score"]
            else { return [] }
            return [
                "relevance-score \(shown(sent)) is outside 0 to 1 (only Live Activities take any number); how"
                    + " the phone ranks it in the notification summary is undefined"
            ]
        },
        LintRuleDefinition(
            "relativeExpiration", "relative-expiration", .error,
            source: "Apple: Sending notification requests to APNs (apns-expiration); Apple Developer Forums 708937",
            doc: "an expiration (`apns-expiration`, or the binary expiry) other than 0 and below 1,000,000,000: a"
                + " number of seconds read as a date in 1970; the push is already expired, so it is never stored,"
                + " and a phone offline when it is sent never gets it"
        ) { push in
            let notification = push.notification
            guard let expiration = notification.expiration, expiration != 0,
                expiration < LintRuleDefinition.smallestPlausibleExpiration
            else { return [] }
            let field =
                switch notification.format {
                case .http2, .broadcast: "apns-expiration"
                case .simple, .enhanced, .frame: "expiry"
                }
            return [
                "\(field) \(expiration) is a date \(expiration) seconds after 1 January 1970, long past, not a time"
                    + " from now; the push is not stored, so a phone that is offline never gets it"
            ]
        },
        LintRuleDefinition(
            "offlineBurst", "offline-burst", .warning,
            source: "Apple: Sending notification requests to APNs (stores only one)",
            doc: "several pushes for one app while the phone is offline (judged by the device model); the phone gets"
                + " one of them: APNs stores one push per app",
            check: nil),
        LintRuleDefinition(
            "liveActivityTimestamp", "live-activity-timestamp", .error,
            source: "Apple: Activity.update(_:alertConfiguration:timestamp:); Starting and updating Live Activities",
            doc: "a Live Activity `update` or `end` without a whole-number `timestamp`; the device model adds one"
                + " older than the last, or over 8 hours ahead; the phone cannot order it and may ignore it"
        ) { push in
            guard push.isLiveActivity, let event = push.aps.event, LintRuleDefinition.orderedEvents.contains(event),
                push.aps.timestamp == nil
            else { return [] }
            let what =
                push.aps["timestamp"].map { "aps.timestamp \(shown($0)) is not a whole number of seconds" }
                ?? "a Live Activity \(event) without aps.timestamp"
            return ["\(what); the phone cannot order it against earlier updates and may ignore it"]
        },
        LintRuleDefinition(
            "liveActivityStartIncomplete", "live-activity-start-incomplete", .error,
            source: "Apple: Starting and updating Live Activities with ActivityKit push notifications",
            doc: "a Live Activity `start` without `alert`, `attributes-type` or `attributes`; the phone does not"
                + " start the activity"
        ) { push in
            guard push.isLiveActivity, push.aps.event == "start" else { return [] }
            let missing = ["alert", "attributes-type", "attributes"].filter { push.aps[$0] == nil }
            guard !missing.isEmpty else { return [] }
            let named = missing.map { "aps.\($0)" }.joined(separator: ", ")
            return ["a Live Activity start without \(named); the phone does not start the activity"]
        },
        LintRuleDefinition(
            "contentStateTooLarge", "content-state-too-large", .error,
            source: "Apple: ActivityAttributes.ContentState",
            doc: "a Live Activity `content-state` over 4096 bytes as compact JSON; the phone fails the update"
        ) { push in
            guard push.isLiveActivity, let state = push.aps.contentState else { return [] }
            let size = state.serialized().utf8.count
            let limit = LintRuleDefinition.maximumContentStateBytes
            guard size > limit else { return [] }
            return ["aps.content-state is \(size) bytes encoded, over \(limit); the phone fails the update"]
        },
        LintRuleDefinition(
            "liveActivityBudget", "live-activity-budget", .warning,
            source: "Apple: Starting and updating Live Activities (the budget of priority 10 pushes)",
            doc: "priority 10 Live Activity updates over the hourly budget (judged by the device model); the phone"
                + " throttles them",
            check: nil),
        LintRuleDefinition(
            "missingPushType", "missing-push-type", .warning,
            source: "Apple: Sending notification requests to APNs (apns-push-type)",
            doc: "an HTTP/2 device push without `apns-push-type` (binary pushes have no such header; a broadcast is"
                + " refused without one; a Wallet pass update needs none); the phone may get it late or not at all; a"
                + " watch never does"
        ) { push in
            guard push.notification.format == .http2, push.notification.pushType == nil, !push.isWalletPassUpdate
            else { return [] }
            return ["no apns-push-type; APNs may deliver the push late or drop it, and a watch never gets it"]
        },
        LintRuleDefinition(
            "unknownSound", "unknown-sound", .warning,
            source: "Apple: UNNotificationSound; Generating a remote notification",
            doc: "a `sound` (a name, a dictionary's `name`, or a Live Activity alert's `sound`) other than `default`"
                + " that the described app does not bundle; the phone plays the default sound"
        ) { push in
            guard let sounds = push.app?.sounds else { return [] }
            return [("sound", push.aps.sound), ("alert sound", push.aps.alert?.sound)].compactMap { field, sound in
                guard let name = sound?.name, !name.isEmpty, name != "default", !sounds.contains(name) else {
                    return nil
                }
                return "\(field) \(quoted(name)) is not in the app's bundle; the phone plays the default sound"
            }
        },
        LintRuleDefinition(
            "liveActivityDate", "live-activity-date", .error,
            source: "Apple: Starting and updating Live Activities with ActivityKit push notifications (UNIX timestamps)",
            doc: "a Live Activity `timestamp`, `stale-date` or `dismissal-date` that is not a whole number of seconds"
                + " from 1970 to the end of year 9999 (a missing or non-number update `timestamp` is"
                + " `live-activity-timestamp`); the phone ignores the push"
        ) { push in
            push.invalidLiveActivityDates.compactMap { date in
                // A non-whole update timestamp is live-activity-timestamp's finding.
                if date.field == "timestamp", push.aps.event.map(LintRuleDefinition.orderedEvents.contains) == true,
                    push.aps.timestamp == nil
                {
                    return nil
                }
                return "aps.\(date.field) \(shown(date.value)) is not a whole number of seconds from 1970 to the end"
                    + " of year 9999; the phone ignores the push"
            }
        },

        // MARK: Newer push kinds, Wallet passes and Safari website pushes (issue 33, items 5 and 17)

        LintRuleDefinition(
            "payloadNotJSON", "payload-not-json", .error,
            source: "Apple: Sending notification requests to APNs (\"You must not use a compressed JSON payload\"), D",
            doc: "a payload that is not a JSON object (compressed, or text, or JSON of another kind); APNs may accept"
                + " it, the phone cannot read it, and no other rule can judge it"
        ) { push in
            let payload = push.notification.payload
            guard let error = payload.parseError else { return [] }
            // Wallet's own form of a pass update may be empty.
            if push.isWalletPassUpdate, payload.count == 0 { return [] }
            return [
                "the payload is not a JSON object (\(clipped(oneLine(error.message)))); the phone cannot read it:"
                    + " a payload is uncompressed JSON"
            ]
        },
        LintRuleDefinition(
            "widgetWithoutContentChanged", "widget-without-content-changed", .error,
            source: "Apple: Updating widgets with WidgetKit push notifications; Updating controls with push"
                + " notifications (payload `content-changed: true`), D",
            doc: "a `widgets` or `controls` push (sent or named by the topic) whose `aps` lacks `content-changed: true`"
                + " (the JSON literal); the phone does not reload the widget or control"
        ) { push in
            guard let type = push.impliedPushType, type == .widgets || type == .controls, !push.aps.contentChanged
            else { return [] }
            let sent = push.aps["content-changed"].map { "aps.content-changed is \(shown($0))" }
                ?? "no aps.content-changed"
            return ["a \(type) push with \(sent), not true; the phone does not reload the \(type.reloadedThing)"]
        },
        LintRuleDefinition(
            "widgetWithUserInteraction", "widget-with-alert", .warning,
            source: "Apple: Updating widgets with WidgetKit push notifications; Updating controls with push"
                + " notifications (the payload holds `content-changed` only), D",
            doc: "a `widgets` or `controls` push whose `aps` holds `alert`, `badge` or `sound`; the phone reloads the"
                + " widget or control and shows, plays and sets none of them"
        ) { push in
            guard let type = push.impliedPushType, type == .widgets || type == .controls else { return [] }
            let keys = ["alert", "badge", "sound"].filter { push.aps[$0] != nil }
            guard !keys.isEmpty else { return [] }
            let named = keys.map { "aps.\($0)" }.joined(separator: ", ")
            return [
                "a \(type) push carries \(named); the phone reloads the \(type.reloadedThing) and shows, plays or"
                    + " sets none of it (send an alert push for that)"
            ]
        },
        LintRuleDefinition(
            "pushToTalkDelivery", "push-to-talk-priority", .warning,
            source: "Apple: Push to Talk (WWDC22 notes: `apns-priority` 10, `apns-expiration` 0), D; every public"
                + " client hard-codes both, M",
            doc: "a `pushtotalk` push (sent or named by the `.voip-ptt` topic) not at priority 10, or with an"
                + " `apns-expiration` other than 0; the phone gets the talk late, or after it is over"
        ) { push in
            guard push.impliedPushType == .pushtotalk else { return [] }
            let notification = push.notification
            var wrong: [String] = []
            if notification.priority != .immediately { wrong.append("apns-priority \(notification.priority)") }
            if notification.expiration != 0 {
                wrong.append(notification.expiration.map { "apns-expiration \($0)" } ?? "no apns-expiration")
            }
            guard !wrong.isEmpty else { return [] }
            return [
                "a push-to-talk push with \(wrong.joined(separator: " and ")); send it at priority 10 with"
                    + " expiration 0, or the phone may get it late, or stored, after the talk is over"
            ]
        },
        LintRuleDefinition(
            "liveActivityLowPriority", "live-activity-priority-1", .warning,
            source: "Apple: Starting and updating Live Activities with ActivityKit push notifications"
                + " (`apns-priority` 5 or 10), D",
            doc: "a Live Activity push at priority 1, which Apple does not list for Live Activities; when the phone"
                + " shows the update is not defined (send 5, or 10 within the budget)"
        ) { push in
            guard push.isLiveActivity, push.notification.priority == .prioritizingPowerEfficiency else { return [] }
            return [
                "apns-priority 1 on a Live Activity push: Apple takes 5 or 10; when the phone shows the update is not"
                    + " defined (send 5)"
            ]
        },
        LintRuleDefinition(
            "liveActivityDismissalDate", "live-activity-dismissal-date", .warning,
            source: "Apple: Starting and updating Live Activities with ActivityKit push notifications"
                + " (`dismissal-date` \"within a four-hour window\"), D",
            doc: "a Live Activity `end` whose `dismissal-date` is more than 4 hours after the end (its `timestamp`,"
                + " else when it was received); the phone removes the activity by then anyway"
        ) { push in
            guard push.isLiveActivity, push.aps.event == "end", let dismissal = push.liveActivityDismissalDate
            else { return [] }
            let end = push.liveActivityTimestamp ?? UnixTime(clamping: push.notification.receivedAt)
            let window = LintRuleDefinition.liveActivityDismissalWindow
            guard dismissal.seconds - end.seconds > window else { return [] }
            let hours = (dismissal.seconds - end.seconds) / 3600
            return [
                "aps.dismissal-date \(dismissal) is over \(hours) hours after the end (\(end)); the phone removes an"
                    + " ended Live Activity within 4 hours of its end whatever the date says"
            ]
        },
        LintRuleDefinition(
            "walletPassAlert", "wallet-pass-alert", .warning,
            source: "Apple: Wallet Developer Guide, Updating a Pass, D; Apple Developer Forums 767640 (an Apple"
                + " engineer: an alert is not the way, a field's `changeMessage` is), D",
            doc: "a push to a pass type identifier (`pass.…`) whose `aps` holds `alert`, `badge` or `sound`; Wallet"
                + " shows none of them: the phone asks the pass's web service for the changed passes, and a changed"
                + " field's `changeMessage` is what the user sees"
        ) { push in
            guard push.isWalletPassUpdate else { return [] }
            let keys = ["alert", "badge", "sound"].filter { push.aps[$0] != nil }
            guard !keys.isEmpty else { return [] }
            let named = keys.map { "aps.\($0)" }.joined(separator: ", ")
            return [
                "a Wallet pass update carries \(named); Wallet shows none of it: the phone fetches the changed"
                    + " passes, and a changed field's changeMessage is what it shows"
            ]
        },
        LintRuleDefinition(
            "websitePushAlert", "website-push-alert", .error,
            source: "Apple: Notification Programming Guide for Websites, Pushing Notifications (`alert` with `title`"
                + " and `body`), D; Grocer's SafariNotification, M",
            doc: "a Safari website push (topic `web.…`) whose `alert` is not a dictionary with a `title` and a `body`"
                + " (an optional `action` labels the button); Safari has no notification to show"
        ) { push in
            guard push.isWebsitePush else { return [] }
            let alert = push.aps.alert
            let missing = ["title", "body"].filter { key in
                guard case .object = alert?.raw, let text = alert?[key]?.stringValue else { return true }
                return text.isEmpty
            }
            guard !missing.isEmpty else { return [] }
            let named = missing.map { "aps.alert.\($0)" }.joined(separator: " and ")
            return [
                "a Safari website push without \(named); Safari shows a website's notification by its title and body"
            ]
        },
        LintRuleDefinition(
            "websitePushURLArgs", "website-push-url-args", .error,
            source: "Apple: Notification Programming Guide for Websites, Pushing Notifications (`url-args` is"
                + " required), D; Grocer's SafariNotification, M",
            doc: "a Safari website push without `url-args`, with one that is not an array of strings, or, for a"
                + " website described with its URL format (``AppBundle/websiteURLFormat``), with another number of"
                + " strings than the format has `%@` placeholders; Safari cannot fill the URL, so a click opens no page"
        ) { push in
            guard push.isWebsitePush else { return [] }
            guard let arguments = push.aps.urlArgs else {
                let what = push.aps["url-args"].map { "aps.url-args \(shown($0)) is not an array of strings" }
                    ?? "a Safari website push without aps.url-args"
                return ["\(what); Safari cannot fill the website's URL format (send [] when it has no placeholder)"]
            }
            guard let placeholders = push.app?.websiteURLArgumentCount, placeholders != arguments.count else {
                return []
            }
            return [
                "aps.url-args holds \(arguments.count) strings, and the website's URL format \(placeholders)"
                    + " placeholders; Safari cannot fill the URL the notification opens"
            ]
        },
        // MARK: Live Activities the phone drops: event, declared types, start options
        LintRuleDefinition(
            "liveActivityEvent", "live-activity-event", .error,
            source: "Apple: Starting and updating Live Activities with ActivityKit push notifications (event);"
                + " parse-community/node-apn PR #133",
            doc: "a Live Activity push without `event`, or with one other than `start`, `update` or `end` (node-apn"
                + " once sent `events`); the phone ignores the push"
        ) { push in
            guard let problem = push.liveActivity?.eventProblem else { return [] }
            return ["\(problem); the phone ignores the push"]
        },
        LintRuleDefinition(
            "liveActivityContentMismatch", "live-activity-content-mismatch", .error,
            source: "Apple: Starting and updating Live Activities with ActivityKit push notifications (default"
                + " decoding strategies); istornz/flutter_live_activities #118; home-assistant/iOS PR #4856",
            doc: "a Live Activity push whose `content-state` (or a start's `attributes`) does not decode as the"
                + " described app declares its type (a field missing or of another JSON type), or a start whose"
                + " `attributes-type` the app does not declare; the phone ignores the push"
        ) { push in
            guard let activity = push.liveActivity else { return [] }
            var found = activity.undeclaredType.map { name in
                [
                    "aps.attributes-type \(quoted(name)) is not a type the app declares; the phone does not start the"
                        + " activity"
                ]
            } ?? []
            found += activity.problems.compactMap { problem in
                guard case .mismatch = problem else { return nil }
                return problem.message
            }
            return found
        },
        LintRuleDefinition(
            "liveActivityUnixDate", "live-activity-unix-date", .error,
            source: "Apple: Starting and updating Live Activities with ActivityKit push notifications (default"
                + " decoding strategies); home-assistant/iOS PR #4677",
            doc: "a `Date` field of a declared Live Activity type holding a Unix time: read as seconds since 1970 it"
                + " lies within a year of the server's clock, so read as the phone reads it (seconds since 2001) it"
                + " lies 31 years ahead; the phone ignores the push"
        ) { push in
            push.liveActivity?.problems.compactMap { problem in
                guard case .unixDate = problem else { return nil }
                return problem.message
            } ?? []
        },
        LintRuleDefinition(
            "liveActivityStartEmptyAlert", "live-activity-start-empty-alert", .warning,
            source: "swift-server-community/APNSwift #232 (observed)",
            doc: "a Live Activity `start` whose `alert` has no title, body or localization key (an empty string is"
                + " none); the start was seen to show nothing"
        ) { push in
            guard push.liveActivity?.event == "start", push.aps.alert != nil, !push.hasAlertText else { return [] }
            return ["a Live Activity start whose aps.alert has no title or body; the phone was seen to show nothing"]
        },
        LintRuleDefinition(
            "liveActivityUnknownChannel", "live-activity-unknown-channel", .error,
            source: "Apple: Starting and updating Live Activities with ActivityKit push notifications"
                + " (input-push-channel)",
            doc: "a Live Activity `start` whose `input-push-channel` names no channel the server knows (judged by the"
                + " device model); the activity gets no broadcast updates",
            check: nil),
    ]
}

/// The push lint's rules, one per way a push that Apple accepts goes wrong on the phone. The
/// facts and their sources are those of the device-delivery notes (Apple's pages, quoted);
/// each rule is defined in the rule table, ``all`` lists them in its order.
extension LintRule {
    /// `apns-push-type: background` at priority 10 (the default): Apple calls it an error, yet
    /// APNs is seen to accept it, so FakeAPNs answers 200 and reports it here.
    public static let backgroundAtPriority10 = defined("backgroundAtPriority10")
    /// A background push whose `aps` holds `alert`, `badge` or `sound`.
    public static let backgroundWithUserInteraction = defined("backgroundWithUserInteraction")
    /// `content-available: 1` on an `alert` push with nothing to show: seen neither shown nor
    /// waking the app.
    public static let contentAvailableOnAlert = defined("contentAvailableOnAlert")
    /// An `aps` that is empty or has no alert text, badge or sound, on a push meant to show
    /// something (an `alert` push, or one with no push type and no `content-available`):
    /// accepted, renders nothing.
    public static let rendersNothing = defined("rendersNothing")
    /// A key inside `aps` that Apple does not define: APNs ignores it.
    public static let unknownAPSKey = defined("unknownAPSKey")
    /// `mutable-content: 1` without alert text: the service extension never runs.
    public static let mutableContentWithoutAlert = defined("mutableContentWithoutAlert")
    /// A `category` the app has not registered: shown without buttons.
    public static let unregisteredCategory = defined("unregisteredCategory")
    /// `time-sensitive` or `critical` (or a critical sound) without the entitlement: seen shown
    /// as `active`.
    public static let interruptionLevelWithoutEntitlement = defined("interruptionLevelWithoutEntitlement")
    /// `relevance-score` outside 0...1 on a push that is not a Live Activity's.
    public static let relevanceScoreOutOfRange = defined("relevanceScoreOutOfRange")
    /// An `apns-expiration` so small it is a number of seconds, read as a date in 1970.
    public static let relativeExpiration = defined("relativeExpiration")
    /// Several pushes to an offline device for one app: all but one will be lost. The device
    /// model's rule: it needs the phone's state.
    public static let offlineBurst = defined("offlineBurst")
    /// A Live Activity `update` with a stale or missing `timestamp`, or one over 8 hours ahead.
    /// The push lint reports a missing (or not whole) timestamp; the device model, which knows
    /// the activity's last one and the clock, the others.
    public static let liveActivityTimestamp = defined("liveActivityTimestamp")
    /// A Live Activity `start` without `alert`, `attributes-type` or `attributes`.
    public static let liveActivityStartIncomplete = defined("liveActivityStartIncomplete")
    /// A `content-state` over 4 KB encoded: the phone fails the update.
    public static let contentStateTooLarge = defined("contentStateTooLarge")
    /// Priority 10 Live Activity updates beyond the hourly budget: the phone throttles them.
    /// The device model's rule: it needs the phone's state.
    public static let liveActivityBudget = defined("liveActivityBudget")
    /// An HTTP/2 device push without `apns-push-type`: required on watchOS; APNs may delay or
    /// drop the push. Binary pushes have no such header, and a broadcast is refused without it.
    public static let missingPushType = defined("missingPushType")
    /// A `sound` the app does not bundle: the phone plays the default sound.
    public static let unknownSound = defined("unknownSound")
    /// A Live Activity `timestamp`, `stale-date` or `dismissal-date` that is not a whole number
    /// of seconds from 1970 to the end of year 9999: the phone ignores the push.
    public static let liveActivityDate = defined("liveActivityDate")
    /// A payload that is not a JSON object (compressed, say): the phone cannot read it.
    public static let payloadNotJSON = defined("payloadNotJSON")
    /// A `widgets` or `controls` push without `content-changed: true`: nothing reloads.
    public static let widgetWithoutContentChanged = defined("widgetWithoutContentChanged")
    /// A `widgets` or `controls` push with `alert`, `badge` or `sound`: none is shown.
    public static let widgetWithUserInteraction = defined("widgetWithUserInteraction")
    /// A `pushtotalk` push not at priority 10 with `apns-expiration` 0.
    public static let pushToTalkDelivery = defined("pushToTalkDelivery")
    /// A Live Activity push at priority 1.
    public static let liveActivityLowPriority = defined("liveActivityLowPriority")
    /// A Live Activity `end` whose `dismissal-date` is over 4 hours after the end.
    public static let liveActivityDismissalDate = defined("liveActivityDismissalDate")
    /// An alert, badge or sound sent to a Wallet pass: Wallet shows none of it.
    public static let walletPassAlert = defined("walletPassAlert")
    /// A Safari website push without an `alert` with `title` and `body`.
    public static let websitePushAlert = defined("websitePushAlert")
    /// A Safari website push without `url-args` as an array of strings.
    public static let websitePushURLArgs = defined("websitePushURLArgs")

    // Live Activities the phone drops.
    /// A Live Activity push without `event`, or with an unknown one: the phone ignores it.
    public static let liveActivityEvent = defined("liveActivityEvent")
    /// A Live Activity `content-state` or `attributes` that does not decode as the app declares
    /// its type, or a start naming a type the app does not declare: the phone ignores it.
    public static let liveActivityContentMismatch = defined("liveActivityContentMismatch")
    /// A declared `Date` field holding a Unix time, which the phone reads 31 years late.
    public static let liveActivityUnixDate = defined("liveActivityUnixDate")
    /// A Live Activity start whose alert has no text.
    public static let liveActivityStartEmptyAlert = defined("liveActivityStartEmptyAlert")
    /// A Live Activity start whose `input-push-channel` names no known channel. The device
    /// model's rule: it needs the server's channels.
    public static let liveActivityUnknownChannel = defined("liveActivityUnknownChannel")

    /// The rule with this identifier, when it is one of ``all``.
    public static func named(_ id: String) -> LintRule? { all.first { $0.id == id } }

    /// Every rule, in the order of the lint list.
    public static let all: [LintRule] = LintRuleDefinition.all.map(\.rule)

    /// The rule of the table's entry for the static `swiftName`.
    private static func defined(_ swiftName: String) -> LintRule {
        guard let definition = LintRuleDefinition.named(swiftName: swiftName) else {
            preconditionFailure("no rule \(swiftName) in the push lint's rule table")
        }
        return definition.rule
    }
}

extension PushType {
    /// What a `widgets` or `controls` push reloads, for a finding's message.
    fileprivate var reloadedThing: String { self == .controls ? "control" : "widget" }
}

/// `text` as a JSON string, on one line whatever was sent, past 64 characters cut.
private func quoted(_ text: String) -> String {
    oneLine(JSONValue.string(clipped(text)).serialized())
}

/// `value` as compact JSON, on one line, past 64 characters cut.
private func shown(_ value: JSONValue) -> String {
    clipped(oneLine(value.serialized()))
}

/// `text` past 64 characters cut, with an ellipsis.
private func clipped(_ text: String) -> String {
    text.count > 64 ? String(text.prefix(64)) + "…" : text
}

/// JSON text with the line breaks JSON leaves as they are (U+0085, U+2028, U+2029) escaped;
/// it escapes the others.
private func oneLine(_ json: String) -> String {
    var text = ""
    for scalar in json.unicodeScalars {
        switch scalar {
        case "\u{85}": text += "\\u0085"
        case "\u{2028}": text += "\\u2028"
        case "\u{2029}": text += "\\u2029"
        default: text.unicodeScalars.append(scalar)
        }
    }
    return text
}
