/// The push lint's rules, one per way a push that Apple accepts goes wrong on the phone. The
/// facts and their sources are those of the device-delivery notes (Apple's pages, quoted).
extension LintRule {
    /// `apns-push-type: background` at priority 10 (the default): Apple calls it an error, yet
    /// APNs is seen to accept it, so FakeAPNs answers 200 and reports it here.
    public static let backgroundAtPriority10 = LintRule(
        "background-priority-10", level: .error,
        source: "Apple: Sending notification requests to APNs (push types: background); Apple Developer Forums 745345")
    /// A background push whose `aps` holds `alert`, `badge` or `sound`.
    public static let backgroundWithUserInteraction = LintRule(
        "background-with-alert", level: .error, source: "Apple: Pushing background updates to your App")
    /// `content-available: 1` on an `alert` push with nothing to show: seen neither shown nor
    /// waking the app.
    public static let contentAvailableOnAlert = LintRule(
        "content-available-on-alert", level: .warning,
        source: "Apple: Pushing background updates to your App; Apple Developer Forums 745345")
    /// An `aps` that is empty or has no alert, badge or sound, on a push meant to show
    /// something (an `alert` push, or one with no push type and no `content-available`):
    /// accepted, renders nothing.
    public static let rendersNothing = LintRule(
        "renders-nothing", level: .warning,
        source: "Apple: Generating a remote notification; Apple Developer Forums 745345")
    /// A key inside `aps` that Apple does not define: APNs ignores it.
    public static let unknownAPSKey = LintRule(
        "unknown-aps-key", level: .warning, source: "Apple: Generating a remote notification")
    /// `mutable-content: 1` without alert text: the service extension never runs.
    public static let mutableContentWithoutAlert = LintRule(
        "mutable-content-without-alert", level: .warning,
        source: "Apple: Modifying content in newly delivered notifications")
    /// A `category` the app has not registered: shown without buttons.
    public static let unregisteredCategory = LintRule(
        "unregistered-category", level: .warning, source: "Apple: Declaring your actionable notification types")
    /// `time-sensitive` or `critical` (or a critical sound) without the entitlement: seen shown
    /// as `active`.
    public static let interruptionLevelWithoutEntitlement = LintRule(
        "interruption-level-without-entitlement", level: .warning,
        source: "Apple: UNNotificationInterruptionLevel; UNAuthorizationOptions.criticalAlert")
    /// `relevance-score` outside 0...1 on a push that is not a Live Activity's.
    public static let relevanceScoreOutOfRange = LintRule(
        "relevance-score-out-of-range", level: .warning, source: "Apple: Generating a remote notification")
    /// An `apns-expiration` so small it is a number of seconds, read as a date in 1970.
    public static let relativeExpiration = LintRule(
        "relative-expiration", level: .error,
        source: "Apple: Sending notification requests to APNs (apns-expiration); Apple Developer Forums 708937")
    /// Several pushes to an offline device for one app: all but one will be lost. The device
    /// model's rule: it needs the phone's state.
    public static let offlineBurst = LintRule(
        "offline-burst", level: .warning, source: "Apple: Sending notification requests to APNs (stores only one)")
    /// A Live Activity `update` with a stale or missing `timestamp`, or one over 8 hours ahead.
    /// The push lint reports a missing (or not whole) timestamp; the device model, which knows
    /// the activity's last one and the clock, the others.
    public static let liveActivityTimestamp = LintRule(
        "live-activity-timestamp", level: .error,
        source: "Apple: Activity.update(_:alertConfiguration:timestamp:); Starting and updating Live Activities")
    /// A Live Activity `start` without `alert`, `attributes-type` or `attributes`.
    public static let liveActivityStartIncomplete = LintRule(
        "live-activity-start-incomplete", level: .error,
        source: "Apple: Starting and updating Live Activities with ActivityKit push notifications")
    /// A `content-state` over 4 KB encoded: the phone fails the update.
    public static let contentStateTooLarge = LintRule(
        "content-state-too-large", level: .error, source: "Apple: ActivityAttributes.ContentState")
    /// Priority 10 Live Activity updates beyond the hourly budget: the phone throttles them.
    /// The device model's rule: it needs the phone's state.
    public static let liveActivityBudget = LintRule(
        "live-activity-budget", level: .warning,
        source: "Apple: Starting and updating Live Activities (the budget of priority 10 pushes)")
    /// An HTTP/2 device push without `apns-push-type`: required on watchOS; APNs may delay or
    /// drop the push. Binary pushes have no such header, and a broadcast is refused without it.
    public static let missingPushType = LintRule(
        "missing-push-type", level: .warning, source: "Apple: Sending notification requests to APNs (apns-push-type)")
    /// A `sound` the app does not bundle: the phone plays the default sound.
    public static let unknownSound = LintRule(
        "unknown-sound", level: .warning, source: "Apple: UNNotificationSound; Generating a remote notification")

    /// The rule with this identifier, when it is one of ``all``.
    public static func named(_ id: String) -> LintRule? { all.first { $0.id == id } }

    /// Every rule, in the order of the lint list.
    public static let all: [LintRule] = [
        .backgroundAtPriority10, .backgroundWithUserInteraction, .contentAvailableOnAlert, .rendersNothing,
        .unknownAPSKey, .mutableContentWithoutAlert, .unregisteredCategory, .interruptionLevelWithoutEntitlement,
        .relevanceScoreOutOfRange, .relativeExpiration, .offlineBurst, .liveActivityTimestamp,
        .liveActivityStartIncomplete, .contentStateTooLarge, .liveActivityBudget, .missingPushType, .unknownSound,
    ]
}
