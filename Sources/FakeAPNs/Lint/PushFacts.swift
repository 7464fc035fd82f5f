/// What a phone makes of one push, read once from its headers, its payload and its app's
/// bundle: what the push lint judges and what the device model plays, so that the two never
/// read a push two ways.
///
/// One rule for text: an empty string is no text. A `"title":""` is no title, an `"alert":""`
/// shows nothing, a `"sound":""` plays nothing.
///
/// ```swift
/// let facts = PushFacts(notification, app: server.apps[notification.topic ?? ""])
/// facts.isBackground      // false
/// facts.alertBody         // "Shipped"
/// facts.sound             // "default": the app does not bundle "chime.caf"
/// ```
package struct PushFacts: Sendable {
    /// The push.
    package let notification: PushNotification
    /// The bundle ID of the app it is for (``bundleID(of:)``); nil: no app.
    package let bundleID: String?
    /// The bundle of its topic's app, when described.
    package let app: AppBundle?
    /// The payload's `aps` member as sent (nil when absent or the payload is not JSON).
    package let apsValue: JSONValue?
    /// The typed `aps` (empty when absent or not a dictionary).
    package let aps: APS

    /// The `apns-push-type` sent, or without one, the type the topic's suffix names (`.voip`,
    /// `.complication`, `.push-type.liveactivity` …): clients older than push types send VoIP
    /// pushes that way.
    package let impliedPushType: PushType?
    /// Whether the phone takes it for a background push: `apns-push-type: background`, or no
    /// push type (sent or named by the topic) or `alert` with `content-available: 1` and no
    /// `alert`, `badge` or `sound` in `aps`.
    package let isBackground: Bool
    /// Whether the phone takes it for a push that shows something: an `alert` push, or one
    /// with no push type (binary, or HTTP/2 without the header, to a topic that names none)
    /// that is not `content-available`; never a Wallet pass update.
    package let isMeantToShow: Bool
    /// Whether it is a Live Activity's push (`liveactivity`, sent or named by the topic).
    package let isLiveActivity: Bool
    /// Whether it is a Wallet pass update: its topic (or, on the binary interface, its
    /// certificate's) is a pass type identifier, `pass.…`. Wallet shows nothing for it: the
    /// phone asks the pass's web service which passes changed, and a changed field's
    /// `changeMessage` is what the user sees.
    package let isWalletPassUpdate: Bool
    /// Whether it is a legacy Safari website push: its topic (or its certificate's) is a
    /// website push ID, `web.…`.
    package let isWebsitePush: Bool

    /// The alert's title as the phone shows it: `title` (or, in a Live Activity's alert, its
    /// `loc-key`), else `title-loc-key`; nil when none is non-empty text.
    package let alertTitle: String?
    /// The alert's subtitle as the phone shows it: `subtitle`, else `subtitle-loc-key`.
    package let alertSubtitle: String?
    /// The alert's body as the phone shows it: the alert itself when a string, `body`, else
    /// `loc-key`.
    package let alertBody: String?
    /// Whether the alert has a title, subtitle or body (a localization key counts: the phone
    /// shows its text).
    package let hasAlertText: Bool
    /// Whether `aps` holds alert text, a badge or a sound the phone can use.
    package let showsSomething: Bool
    /// The sound the phone plays: `aps.sound`'s name, else the alert's (where Live Activity
    /// alerts put it); `"default"` when the app's described sounds do not include it.
    package let sound: String?
    /// The interruption level as the phone presents it: `interruption-level` as sent, but
    /// `"active"` for `time-sensitive` or `critical` when the app is described without the
    /// entitlement.
    package let interruptionLevel: String?
    /// The Live Activity dates (`timestamp`, `stale-date`, `dismissal-date`) a Live Activity
    /// push carries that are not a whole number of seconds within ``UnixTime/range``: the
    /// phone ignores such a push. In the order of that list.
    package let invalidLiveActivityDates: [LiveActivityDate]
    /// The Live Activity `timestamp` as a date, when it is one (whatever the push type).
    package let liveActivityTimestamp: UnixTime?
    /// The Live Activity `stale-date` as a date, when it is one.
    package let liveActivityStaleDate: UnixTime?
    /// The Live Activity `dismissal-date` as a date, when it is one.
    package let liveActivityDismissalDate: UnixTime?
    /// A Live Activity push's event, type and what decoding it found; nil for other pushes.
    package let liveActivity: LiveActivityFacts?

    /// A Live Activity date field as sent.
    package struct LiveActivityDate: Sendable, Hashable {
        /// The `aps` key: `timestamp`, `stale-date` or `dismissal-date`.
        package let field: String
        /// Its value as sent.
        package let value: JSONValue
    }

    /// How a Wallet pass type identifier begins (Apple: Wallet Developer Guide, Updating a Pass).
    package static let passTypeIdentifierPrefix = "pass."
    /// How a Safari website push ID begins (Apple: Notification Programming Guide for Websites).
    package static let websitePushIDPrefix = "web."

    /// The `aps` keys of a Live Activity's dates.
    package static let liveActivityDateFields = ["timestamp", "stale-date", "dismissal-date"]

    /// The facts of `notification`, sent to its app as `apps` describe it (``bundleID(of:)``).
    package init(_ notification: PushNotification, in apps: AppCatalog?) {
        self.init(notification, app: Self.bundleID(of: notification).flatMap { apps?[$0] })
    }

    /// The facts of `notification`, sent to the app `app` describes (nil: not described).
    package init(_ notification: PushNotification, app: AppBundle?) {
        self.notification = notification
        bundleID = Self.bundleID(of: notification)
        self.app = app
        let payload = notification.payload
        let json = payload.parseError == nil ? payload.json : nil
        apsValue = json?["aps"]
        let aps = payload.aps
        self.aps = aps

        let sentType = notification.pushType
        let impliedPushType = sentType ?? notification.topic.flatMap(PushType.named(byTopic:))
        self.impliedPushType = impliedPushType
        isBackground =
            impliedPushType == .background
            || ((impliedPushType == nil || impliedPushType == .alert) && aps.contentAvailable && aps.alert == nil
                && aps.badge == nil && aps.sound == nil)
        let topic = notification.topic ?? notification.connection.clientCertificate?.topic
        isWalletPassUpdate = topic?.hasPrefix(Self.passTypeIdentifierPrefix) == true
        isWebsitePush = topic?.hasPrefix(Self.websitePushIDPrefix) == true
        isMeantToShow = !isWalletPassUpdate && (impliedPushType.map { $0 == .alert } ?? !aps.contentAvailable)
        isLiveActivity = impliedPushType == .liveactivity

        let alert = aps.alert
        alertTitle = Self.text(alert?.titleValue) ?? Self.text(alert?["title-loc-key"])
        alertSubtitle = Self.text(alert?.subtitleValue) ?? Self.text(alert?["subtitle-loc-key"])
        alertBody = Self.text(alert?.bodyValue) ?? Self.text(alert?["loc-key"])
        hasAlertText = alertTitle != nil || alertSubtitle != nil || alertBody != nil

        var sound = Self.nonEmpty((aps.sound ?? alert?.sound)?.name)
        if let name = sound, name != "default", let sounds = app?.sounds, !sounds.contains(name) { sound = "default" }
        self.sound = sound
        showsSomething = hasAlertText || aps.badge != nil || sound != nil

        var level = Self.nonEmpty(aps.interruptionLevel?.rawValue)
        let needed: AppBundle.Entitlement? =
            switch level {
            case APS.InterruptionLevel.timeSensitive.rawValue: .timeSensitive
            case APS.InterruptionLevel.critical.rawValue: .criticalAlerts
            default: nil
            }
        if let needed, let entitlements = app?.entitlements, !entitlements.contains(needed) {
            level = APS.InterruptionLevel.active.rawValue
        }
        interruptionLevel = level

        liveActivityTimestamp = aps["timestamp"].flatMap(Self.unixTime)
        liveActivityStaleDate = aps["stale-date"].flatMap(Self.unixTime)
        liveActivityDismissalDate = aps["dismissal-date"].flatMap(Self.unixTime)
        invalidLiveActivityDates =
            impliedPushType == .liveactivity
            ? Self.liveActivityDateFields.compactMap { field in
                guard let value = aps[field], Self.unixTime(value) == nil else { return nil }
                return LiveActivityDate(field: field, value: value)
            }
            : []
        liveActivity =
            impliedPushType == .liveactivity ? LiveActivityFacts(aps: aps, app: app, now: notification.receivedAt) : nil
    }

    /// The bundle ID of the app a push is for: its topic's without a `.push-type.*` or other
    /// push type suffix, else the topic of the client certificate it came with (a binary push
    /// carries none of its own); nil when neither names one, as a push with no `apns-topic` on
    /// a server without authentication: such a push is for no app, never for one named "".
    package static func bundleID(of notification: PushNotification) -> String? {
        guard let topic = notification.topic ?? notification.connection.clientCertificate?.topic else { return nil }
        let bundle = AppBundle.bundleID(of: topic)
        return bundle.isEmpty ? nil : bundle
    }

    /// `value` as a date: a whole number of seconds within ``UnixTime/range`` (a JSON number
    /// written `1.767e9` is one); nil for anything else.
    package static func unixTime(_ value: JSONValue) -> UnixTime? {
        switch value {
        case .int(let seconds): UnixTime(seconds: seconds)
        case .double(let seconds): UnixTime(exactly: seconds)
        default: nil
        }
    }

    /// The text an alert member shows: a non-empty string, or a Live Activity's
    /// `{"loc-key": …}` dictionary's non-empty key.
    private static func text(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let text): nonEmpty(text)
        case .object(let object): nonEmpty(object["loc-key"]?.stringValue)
        default: nil
        }
    }

    private static func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text
    }
}
