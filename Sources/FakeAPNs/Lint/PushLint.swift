/// The push lint: what in one push Apple's servers accept with a 200 but a phone drops, delays
/// or shows otherwise than its sender meant. A pure function of the push and the app's
/// ``AppBundle``; the rules that need the phone's state (a burst to an offline phone, a stale
/// Live Activity timestamp, the Live Activity budget) are the device model's.
///
/// Each finding names the field and what the phone will do, on one line. A payload that is not
/// a JSON object gives no findings: a phone makes nothing of it, and its
/// ``Payload/parseError`` already says what is wrong.
package enum PushLint {
    /// The findings of the request-only rules for `notification`, errors first (then in the
    /// order of ``LintRule/all``); `app` is the bundle of its topic's app, when described.
    package static func findings(for notification: PushNotification, app: AppBundle?) -> [LintFinding] {
        guard notification.payload.parseError == nil, let json = notification.payload.json else { return [] }
        let push = LintedPush(notification, json: json)
        var found: [LintFinding] = []
        found += push.backgroundAtPriority10()
        found += push.backgroundWithUserInteraction()
        found += push.contentAvailableOnAlert()
        found += push.rendersNothing()
        found += push.unknownAPSKeys()
        found += push.mutableContentWithoutAlert()
        found += push.unregisteredCategory(in: app)
        found += push.interruptionLevelWithoutEntitlement(in: app)
        found += push.relevanceScoreOutOfRange()
        found += push.relativeExpiration()
        found += push.liveActivityUpdateWithoutTimestamp()
        found += push.liveActivityStartIncomplete()
        found += push.contentStateTooLarge()
        found += push.missingPushType()
        found += push.unknownSounds(in: app)
        return found.enumerated()
            .sorted { ($0.element.level, $0.offset) < ($1.element.level, $1.offset) }
            .map(\.element)
    }

    /// The longest `content-state`, encoded, that a Live Activity takes (Apple: 4 KB).
    package static let maximumContentStateBytes = 4096
    /// Below this, an `apns-expiration` is a number of seconds sent where a date belongs: as a
    /// date it is before September 2001.
    package static let smallestPlausibleExpiration: UInt32 = 1_000_000_000
}

/// One push as the lint reads it: its headers and its parsed payload.
private struct LintedPush {
    let notification: PushNotification
    /// The payload's `aps` member as sent (nil when absent).
    let apsValue: JSONValue?
    /// The typed `aps` (empty when absent or not a dictionary).
    let aps: APS

    init(_ notification: PushNotification, json: JSONValue) {
        self.notification = notification
        apsValue = json["aps"]
        aps = notification.payload.aps
    }

    /// The `apns-push-type` sent.
    var pushType: PushType? { notification.pushType }

    /// The push type sent, or without one, the type the topic's suffix names (`.voip`,
    /// `.complication`, `.push-type.liveactivity` …): clients older than push types send VoIP
    /// pushes that way.
    var impliedPushType: PushType? {
        if let pushType { return pushType }
        return notification.topic.flatMap(PushType.named(byTopic:))
    }

    /// Whether the phone takes this push for one that shows something: an `alert` push, or one
    /// with no push type (binary, or HTTP/2 without the header, to a topic that names none)
    /// that is not `content-available`.
    var isMeantToShow: Bool {
        if let impliedPushType { return impliedPushType == .alert }
        return !aps.contentAvailable
    }

    /// Whether this is a Live Activity's push.
    var isLiveActivity: Bool { impliedPushType == .liveactivity }

    /// Whether `aps` holds an alert, a badge or a sound the phone can use.
    var showsSomething: Bool { aps.alert != nil || aps.badge != nil || aps.sound != nil }

    /// The keys that make a user interaction (alert, badge, sound) present in `aps`, as sent.
    var userInteractionKeys: [String] { ["alert", "badge", "sound"].filter { aps[$0] != nil } }

    /// The expiry's field name in the protocol that carried the push.
    var expirationField: String {
        switch notification.format {
        case .http2, .broadcast: "apns-expiration"
        case .simple, .enhanced, .frame: "expiry"
        }
    }

    // MARK: - The rules, in the order of the lint list

    func backgroundAtPriority10() -> [LintFinding] {
        guard pushType == .background, notification.priority == .immediately else { return [] }
        return [
            LintFinding(
                .backgroundAtPriority10,
                "apns-priority 10 on a background push, which Apple calls an error (use 5); what the phone does with it"
                    + " is undefined")
        ]
    }

    func backgroundWithUserInteraction() -> [LintFinding] {
        let keys = userInteractionKeys
        guard pushType == .background, !keys.isEmpty else { return [] }
        let named = keys.map { "aps.\($0)" }.joined(separator: ", ")
        return [
            LintFinding(
                .backgroundWithUserInteraction,
                "a background push carries \(named), but must hold only content-available; the phone may neither"
                    + " show it nor wake the app (send an alert push)")
        ]
    }

    func contentAvailableOnAlert() -> [LintFinding] {
        guard pushType == .alert, aps.contentAvailable, !showsSomething else { return [] }
        return [
            LintFinding(
                .contentAvailableOnAlert,
                "content-available 1 on an alert push with no alert, badge or sound; the phone neither shows it nor"
                    + " wakes the app (send it as apns-push-type background at priority 5)")
        ]
    }

    func rendersNothing() -> [LintFinding] {
        guard isMeantToShow, !showsSomething else { return [] }
        // content-available on an alert push is the more precise finding.
        if pushType == .alert, aps.contentAvailable { return [] }
        let what: String
        switch apsValue {
        case nil: what = "the payload has no aps"
        case .object(let object) where object.isEmpty: what = "aps is empty"
        case .object: what = "aps has no alert, badge or sound the phone can use"
        case .some(let value): what = "aps is \(value.kindDescription), not a dictionary"
        }
        return [LintFinding(.rendersNothing, "\(what); the phone shows nothing, plays no sound and sets no badge")]
    }

    func unknownAPSKeys() -> [LintFinding] {
        aps.raw.keys.filter { !APS.documentedKeys.contains($0) }.map { key in
            LintFinding(
                .unknownAPSKey,
                "aps key \(quoted(key)) is not one Apple defines; the phone ignores it (custom data goes beside aps)")
        }
    }

    func mutableContentWithoutAlert() -> [LintFinding] {
        guard aps.mutableContent, !hasAlertText else { return [] }
        return [
            LintFinding(
                .mutableContentWithoutAlert,
                "mutable-content 1 without an alert title, subtitle or body; the phone never runs the notification"
                    + " service extension")
        ]
    }

    /// Whether the alert has a title, subtitle or body (a localization key counts: the phone
    /// shows its text).
    private var hasAlertText: Bool {
        guard let alert = aps.alert else { return false }
        if alert.isPlainString { return alert.body?.isEmpty == false }
        let texts = ["title", "subtitle", "body", "title-loc-key", "subtitle-loc-key", "loc-key"]
        return texts.contains { key in
            switch alert[key] {
            case .string(let text): !text.isEmpty
            case .object: true
            default: false
            }
        }
    }

    func unregisteredCategory(in app: AppBundle?) -> [LintFinding] {
        guard let categories = app?.categories, let category = aps.category, !categories.contains(category) else {
            return []
        }
        return [
            LintFinding(
                .unregisteredCategory,
                "category \(quoted(category)) is not one the app registers; the phone shows the notification without"
                    + " its actions")
        ]
    }

    func interruptionLevelWithoutEntitlement(in app: AppBundle?) -> [LintFinding] {
        guard let entitlements = app?.entitlements else { return [] }
        let level = aps.interruptionLevel
        let needed: AppBundle.Entitlement? =
            switch level {
            case .timeSensitive: .timeSensitive
            case .critical: .criticalAlerts
            default: nil
            }
        if let level, let needed, !entitlements.contains(needed) {
            return [
                LintFinding(
                    .interruptionLevelWithoutEntitlement,
                    "interruption-level \(quoted(level.rawValue)) without the app's \(needed.rawValue) entitlement;"
                        + " the phone presents it as active")
            ]
        }
        // A critical sound is a critical alert too, whatever the interruption level says.
        let criticalSound = aps.sound?.critical == true || aps.alert?.sound?.critical == true
        guard criticalSound, level != .critical, !entitlements.contains(.criticalAlerts) else { return [] }
        return [
            LintFinding(
                .interruptionLevelWithoutEntitlement,
                "sound critical 1 without the app's critical-alerts entitlement; the phone plays an ordinary sound,"
                    + " which the mute switch silences")
        ]
    }

    func relevanceScoreOutOfRange() -> [LintFinding] {
        guard !isLiveActivity, let score = aps.relevanceScore, !(0...1).contains(score),
            let sent = aps["relevance-score"]
        else { return [] }
        return [
            LintFinding(
                .relevanceScoreOutOfRange,
                "relevance-score \(shown(sent)) is outside 0 to 1 (only Live Activities take any number); how"
                    + " the phone ranks it in the notification summary is undefined")
        ]
    }

    func relativeExpiration() -> [LintFinding] {
        guard let expiration = notification.expiration, expiration != 0,
            expiration < PushLint.smallestPlausibleExpiration
        else { return [] }
        return [
            LintFinding(
                .relativeExpiration,
                "\(expirationField) \(expiration) is a date \(expiration) seconds after 1 January 1970, long past, not"
                    + " a time from now; the push is not stored, so a phone that is offline never gets it")
        ]
    }

    func liveActivityUpdateWithoutTimestamp() -> [LintFinding] {
        guard isLiveActivity, aps.event == "update", aps.timestamp == nil else { return [] }
        let what =
            aps["timestamp"].map { "aps.timestamp \(shown($0)) is not a whole number of seconds" }
            ?? "a Live Activity update without aps.timestamp"
        return [
            LintFinding(
                .liveActivityTimestamp,
                "\(what); the phone cannot order it against earlier updates and may ignore it")
        ]
    }

    func liveActivityStartIncomplete() -> [LintFinding] {
        guard isLiveActivity, aps.event == "start" else { return [] }
        let missing = ["alert", "attributes-type", "attributes"].filter { aps[$0] == nil }
        guard !missing.isEmpty else { return [] }
        let named = missing.map { "aps.\($0)" }.joined(separator: ", ")
        return [
            LintFinding(
                .liveActivityStartIncomplete,
                "a Live Activity start without \(named); the phone does not start the activity")
        ]
    }

    func contentStateTooLarge() -> [LintFinding] {
        guard isLiveActivity, let state = aps.contentState else { return [] }
        let size = state.serialized().utf8.count
        guard size > PushLint.maximumContentStateBytes else { return [] }
        return [
            LintFinding(
                .contentStateTooLarge,
                "aps.content-state is \(size) bytes encoded, over \(PushLint.maximumContentStateBytes); the phone"
                    + " fails the update")
        ]
    }

    func missingPushType() -> [LintFinding] {
        guard notification.format == .http2, pushType == nil else { return [] }
        return [
            LintFinding(
                .missingPushType,
                "no apns-push-type; APNs may deliver the push late or drop it, and a watch never gets it")
        ]
    }

    func unknownSounds(in app: AppBundle?) -> [LintFinding] {
        guard let sounds = app?.sounds else { return [] }
        var found: [LintFinding] = []
        for (field, sound) in [("sound", aps.sound), ("alert sound", aps.alert?.sound)] {
            guard let name = sound?.name, name != "default", !sounds.contains(name) else { continue }
            found.append(
                LintFinding(
                    .unknownSound,
                    "\(field) \(quoted(name)) is not in the app's bundle; the phone plays the default sound"))
        }
        return found
    }
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

extension PushNotification {
    /// What the push lint found in this push, errors first: judged as it arrived when its
    /// app or phone was described (or strict lint was on), else from the request alone.
    public var lintFindings: [LintFinding] {
        (judgedLintFindings ?? PushLint.findings(for: self, app: nil)) + deviceLintFindings
    }
}
