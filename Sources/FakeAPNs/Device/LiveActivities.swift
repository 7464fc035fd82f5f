#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A phone's Live Activities: which pushes an activity applies (timestamps, the end, the
/// priority 10 budget), what they change, and the states the clock drives (stale at its
/// `stale-date`, ended 8 hours after it started, dismissed).
struct LiveActivities {
    /// The activities, by key: "topic <topic>" for a push to an activity token, "channel <id>"
    /// for a broadcast.
    private(set) var activities: [String: ActivityState] = [:]
    private var made: UInt64 = 0

    /// How far ahead of the phone's clock a `timestamp` may be.
    static let timestampLead: TimeInterval = 8 * 3600

    /// What the screen shows, oldest first.
    var shown: [LiveActivity] { activities.values.sorted { $0.made < $1.made }.map(\.shown) }

    /// A Live Activity push the phone applies.
    struct Update {
        var key: String
        var bundleID: String
        var event: String
        var countsTowardBudget: Bool
        /// Its dates, each within ``UnixTime/range``.
        var timestamp: UnixTime?
        var stale: UnixTime?
        var dismissal: UnixTime?
        /// A start's `attributes-type`.
        var attributesType: String? = nil
        /// A start's `input-push-token: 1`: the phone mints the activity a push token.
        var mintsToken = false
        /// A start's `input-push-channel`: the activity subscribes to the channel.
        var joinsChannel: String? = nil

        /// What the delivery log says of a start's options.
        var startDetail: String? {
            var parts: [String] = []
            if mintsToken { parts.append("input-push-token: the phone mints the activity a new push token") }
            if let joinsChannel {
                let shown = joinsChannel.count > 64 ? String(joinsChannel.prefix(64)) + "…" : joinsChannel
                parts.append("input-push-channel \(shown): the activity subscribes to the channel")
            }
            return parts.isEmpty ? nil : parts.joined(separator: "; ")
        }
    }

    /// Judges a Live Activity push: ignored when it has no `event` the phone knows, when one of
    /// its dates is no date a phone can use, when its `content-state` or `attributes` do not
    /// decode as its app declares the type (the request's type, or the one the test started the
    /// activity with), when its activity ended, when its `timestamp` is not after the last one
    /// applied or more than 8 hours ahead; dropped over the priority 10 budget. Nil (and logged)
    /// when it is not applied. `replaying`: a push sent before a test described the phone,
    /// applied as a phone no test described has it.
    func admit(
        _ facts: PushFacts, channelID: String?, _ settings: DeviceSettings, at now: Date, replaying: Bool,
        steps: inout PhoneSteps
    ) -> Update? {
        let notification = facts.notification
        func ignore(_ detail: String) -> Update? {
            steps.note(.ignoredLiveActivity, notification, at: now, channelID: channelID, detail: detail)
            return nil
        }
        guard let activityFacts = facts.liveActivity, let event = activityFacts.event else {
            return ignore((facts.liveActivity?.eventProblem ?? "aps.event is missing") + "; the phone ignores it")
        }
        if let unusable = facts.invalidLiveActivityDates.first {
            let text = unusable.value.serialized()
            let shown = text.count > 32 ? String(text.prefix(32)) + "…" : text
            return ignore("\(unusable.field) \(shown) is no date a phone can use")
        }
        if let name = activityFacts.undeclaredType {
            return ignore("attributes-type \(Self.clipped(name)) is not a type the app declares")
        }
        if let problem = activityFacts.problems.first { return ignore(Self.undecodable(problem)) }
        guard let bundle = facts.bundleID else { return ignore("for no app: the push names no topic") }
        let key = channelID.map { "channel \($0)" } ?? "topic \(notification.topic ?? bundle)"
        var update = Update(
            key: key, bundleID: bundle, event: event,
            countsTowardBudget: channelID == nil && notification.priority.rawValue >= 10 && event != "start",
            timestamp: facts.liveActivityTimestamp, stale: facts.liveActivityStaleDate,
            dismissal: facts.liveActivityDismissalDate)
        if event == "start", channelID == nil {
            update.attributesType = facts.aps.attributesType
            update.mintsToken = facts.aps.inputPushToken == 1
            update.joinsChannel = facts.aps.inputPushChannel
        }
        if replaying { return update }
        let activity = activities[key]
        if let activity, activity.shown.state == .ended || activity.shown.state == .dismissed {
            return ignore("the activity ended")
        }
        // An activity the test started with a type the request alone could not name.
        if event != "start", let name = activity?.attributesType, name != activityFacts.typeName,
            let type = facts.app?.liveActivityTypes?[name]
        {
            let problems = LiveActivityFacts.problems(
                in: facts.aps, event: event, type: type, now: notification.receivedAt)
            if let problem = problems.first {
                for found in problems {
                    let rule: LintRule =
                        if case .unixDate = found { .liveActivityUnixDate } else { .liveActivityContentMismatch }
                    steps.find(rule, found.message + " (type \(Self.clipped(name)), as the activity was started)")
                }
                return ignore(Self.undecodable(problem))
            }
        }
        if let timestamp = update.timestamp {
            if timestamp.date > now.addingTimeInterval(Self.timestampLead) {
                steps.find(
                    .liveActivityTimestamp, "timestamp \(timestamp) is more than 8 hours ahead of the phone's clock")
                return ignore("timestamp \(timestamp) is more than 8 hours ahead")
            }
            if event == "update", let last = activity?.timestamp, timestamp <= last {
                steps.find(.liveActivityTimestamp, "timestamp \(timestamp) is not after the last applied, \(last)")
                return ignore("timestamp \(timestamp) is not after \(last)")
            }
        }
        if update.countsTowardBudget, !settings.frequentLiveActivityUpdates, let activity {
            let budget = settings.liveActivityUpdatesPerHour
            let hourAgo = now.addingTimeInterval(-3600)
            if activity.budgeted.filter({ $0 > hourAgo }).count >= budget {
                steps.find(
                    .liveActivityBudget,
                    "over the budget of \(budget) priority 10 updates per hour; "
                        + "use priority 5 for updates that can wait")
                steps.note(
                    .throttled, notification, at: now, channelID: channelID,
                    detail: "dropped: over \(budget) priority 10 updates per hour")
                return nil
            }
        }
        return update
    }

    /// The log's detail for a push the phone cannot decode.
    private static func undecodable(_ problem: LiveActivityProblem) -> String {
        switch problem {
        case .mismatch(let field, let what): "\(field) \(what): the phone cannot decode it"
        case .unixDate(let field, _): "\(field) is a Unix time: the phone reads it 31 years late"
        }
    }

    /// `text`, past 64 characters cut.
    private static func clipped(_ text: String) -> String {
        text.count > 64 ? String(text.prefix(64)) + "…" : text
    }

    /// Applies an admitted Live Activity push: `start` makes the activity, `update` changes
    /// it (making it when the app started it on the phone), `end` ends it.
    mutating func apply(
        _ update: Update, _ notification: PushNotification, token: DeviceToken, _ settings: DeviceSettings,
        at now: Date
    ) {
        var activity = activities[update.key] ?? make(update, notification, token: token, at: now)
        if update.event == "start" {
            activity = make(update, notification, token: token, at: now)
            activity.attributesType = update.attributesType
        }
        if let state = notification.payload.aps.contentState {
            activity.shown.contentState = state.serialized(sortedKeys: true)
        }
        if let timestamp = update.timestamp {
            activity.timestamp = timestamp
            activity.shown.timestamp = timestamp.date
        }
        if let stale = update.stale { activity.shown.staleDate = stale.date }
        if let dismissal = update.dismissal { activity.shown.dismissalDate = dismissal.date }
        if update.countsTowardBudget {
            let hourAgo = now.addingTimeInterval(-3600)
            activity.budgeted.removeAll { $0 <= hourAgo }
            activity.budgeted.append(now)
            let kept = max(1, min(settings.liveActivityUpdatesPerHour, PhoneState.Bounds.wakesJudged))
            if activity.budgeted.count > kept { activity.budgeted.removeFirst(activity.budgeted.count - kept) }
        }
        if activity.shown.state == .stale { activity.shown.state = .active }
        if update.event == "end" {
            activity.shown.state = .ended
            activity.endedAt = now
        }
        activities[update.key] = activity
    }

    /// The app starts an activity on the phone (`Activity.request`), for pushes to `topic`'s
    /// activity token; `attributesType` names the type its pushes decode with (nil: the app's
    /// only declared type, if it declares one). A running activity of the topic is replaced.
    mutating func startInApp(
        topic: String, bundleID: String, attributesType: String?, token: DeviceToken, at now: Date
    ) {
        let update = Update(key: "topic \(topic)", bundleID: bundleID, event: "start", countsTowardBudget: false)
        var activity = make(update, key: token.hex, at: now)
        activity.attributesType = attributesType
        activities[update.key] = activity
    }

    private mutating func make(
        _ update: Update, _ notification: PushNotification, token: DeviceToken, at now: Date
    ) -> ActivityState {
        make(update, key: notification.channelID ?? token.hex, at: now)
    }

    private mutating func make(_ update: Update, key: String, at now: Date) -> ActivityState {
        if activities[update.key] == nil, activities.count >= PhoneState.Bounds.liveActivities,
            let oldest = activities.min(by: { $0.value.made < $1.value.made })
        {
            activities[oldest.key] = nil
        }
        made += 1
        return ActivityState(
            shown: LiveActivity(key: key, bundleID: update.bundleID, state: .active),
            made: made, startedAt: now)
    }

    /// The next clock-driven transition.
    var nextTransition: (at: Date, key: String, state: LiveActivity.State)? {
        var next: (at: Date, key: String, state: LiveActivity.State)?
        func consider(_ date: Date?, _ key: String, _ state: LiveActivity.State) {
            guard let date, next == nil || date < next!.at else { return }
            next = (date, key, state)
        }
        for (key, activity) in activities {
            switch activity.shown.state {
            case .active:
                consider(activity.shown.staleDate.flatMap { $0 < activity.endsAt ? $0 : nil }, key, .stale)
                consider(activity.endsAt, key, .ended)
            case .stale:
                consider(activity.endsAt, key, .ended)
            case .ended:
                consider(activity.dismissesAt, key, .dismissed)
            case .dismissed:
                break
            }
        }
        return next
    }

    /// A clock-driven transition at its instant. Returns the topic of an activity token's
    /// activity that it dismisses: APNs answers that token's pushes `ExpiredToken` from then on.
    mutating func transition(_ key: String, to state: LiveActivity.State, at date: Date) -> String? {
        guard var activity = activities[key] else { return nil }
        activity.shown.state = state
        if state == .ended { activity.endedAt = date }
        activities[key] = activity
        guard state == .dismissed, key.hasPrefix("topic ") else { return nil }
        return String(key.dropFirst("topic ".count))
    }
}

/// A Live Activity and what its clock-driven transitions need.
struct ActivityState {
    var shown: LiveActivity
    let made: UInt64
    var startedAt: Date
    var endedAt: Date?
    /// The `timestamp` of the last update applied.
    var timestamp: UnixTime?
    /// The attributes type it was started with (a push-to-start's `attributes-type`, or the
    /// type the test named starting it in the app).
    var attributesType: String?
    /// When its priority 10 updates were applied, within the last hour.
    var budgeted: [Date] = []

    /// When the system ends it: 8 hours after it started.
    var endsAt: Date { startedAt.addingTimeInterval(8 * 3600) }

    /// When it leaves the Lock Screen: the `dismissal-date`, else 4 hours after it ended, and
    /// at the latest 12 hours after it started.
    var dismissesAt: Date? {
        guard let endedAt else { return nil }
        let latest = startedAt.addingTimeInterval(12 * 3600)
        let chosen = shown.dismissalDate ?? endedAt.addingTimeInterval(4 * 3600)
        return min(chosen, latest)
    }
}
