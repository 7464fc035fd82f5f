#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a delivered push shows: the notification centre (collapse, presentation, sound,
/// actions, interruption level), the badges, and the Live Activities.
extension DeviceModel {
    // MARK: The notification centre

    /// Applies a delivered alert push to the screen: the badge (absolute, 0 clears), and an
    /// entry keyed by its collapse ID when it has alert text.
    func show(_ notification: PushNotification, on phone: PhoneState, at now: Date) {
        let topic = notification.topic ?? ""
        let bundle = AppBundle.bundleID(of: topic)
        let app = phone.settings[app: topic]
        let described = apps?[bundle]
        let aps = notification.payload.aps
        let foreground = app.state == .foreground
        let options = app.foregroundPresentation
        if let badge = aps.badge, !foreground || options.contains(.badge) { phone.screen.badges[bundle] = badge }
        guard let alert = aps.alert else { return }
        let title = alert.title ?? alert.titleLocKey
        let subtitle = alert.subtitle ?? alert.subtitleLocKey
        let body = alert.body ?? alert.locKey
        guard title != nil || subtitle != nil || body != nil else { return }
        if foreground, options.isDisjoint(with: [.banner, .list]) { return }
        var presented = app.authorization != .provisional && (!foreground || options.contains(.banner))
        var sound = (aps.sound ?? alert.sound)?.name
        if let name = sound, name != "default", let sounds = described?.sounds, !sounds.contains(name) {
            sound = "default"
        }
        if app.authorization == .provisional || (foreground && !options.contains(.sound)) { sound = nil }
        var level = aps.interruptionLevel?.rawValue
        if let entitlements = described?.entitlements {
            if level == "time-sensitive", !entitlements.contains(.timeSensitive) { level = "active" }
            if level == "critical", !entitlements.contains(.criticalAlerts) { level = "active" }
        }
        let category = aps.category
        let identifier = notification.collapseID ?? notification.apnsID ?? "#\(notification.sequenceNumber)"
        var replaced: [String] = []
        if let index = phone.screen.notificationCenter.firstIndex(where: { $0.identifier == identifier }) {
            let old = phone.screen.notificationCenter.remove(at: index)
            replaced = old.replaced + [old.apnsID].compactMap { $0 }
            presented = presented && phone.settings.replacementPresentsAgain
        }
        let entry = NotificationCenterEntry(
            identifier: identifier, bundleID: bundle, apnsID: notification.apnsID, title: title, subtitle: subtitle,
            body: body, threadID: aps.threadID, category: category,
            showsActions: category.map { described?.categories?.contains($0) ?? true } ?? false, sound: sound,
            interruptionLevel: level, presented: presented,
            serviceExtensionRan: aps.mutableContent && (alert.title != nil || alert.subtitle != nil || alert.body != nil),
            replaced: replaced, deliveredAt: now)
        phone.screen.notificationCenter.insert(entry, at: 0)
        if phone.screen.notificationCenter.count > PhoneState.Bounds.notificationCenter {
            phone.screen.notificationCenter.removeLast(
                phone.screen.notificationCenter.count - PhoneState.Bounds.notificationCenter)
        }
    }

    // MARK: Live Activities

    /// A Live Activity push the phone applies.
    struct ActivityUpdate {
        /// The activity: its topic for a push to an activity token, its channel for a broadcast.
        var key: String
        var event: String
        var countsTowardBudget: Bool
    }

    /// Judges a Live Activity push: ignored when its activity ended, when its `timestamp` is
    /// not after the last one applied or more than 8 hours ahead; dropped over the priority 10
    /// budget. Nil (and logged) when it is not applied.
    func admitActivityUpdate(
        _ notification: PushNotification, on phone: PhoneState, at now: Date, channelID: String?, replaying: Bool
    ) -> ActivityUpdate? {
        let key = channelID.map { "channel \($0)" } ?? "topic \(notification.topic ?? "")"
        let aps = notification.payload.aps
        let event = aps.event ?? "update"
        let update = ActivityUpdate(
            key: key, event: event,
            countsTowardBudget: channelID == nil && notification.priority.rawValue >= 10 && event != "start")
        if replaying { return update }
        let activity = phone.activities[key]
        func ignore(_ detail: String) -> ActivityUpdate? {
            note(.ignoredLiveActivity, notification, on: phone, at: now, channelID: channelID, detail: detail)
            return nil
        }
        if let activity, activity.shown.state == .ended || activity.shown.state == .dismissed {
            return ignore("the activity ended")
        }
        if let timestamp = aps.timestamp {
            let date = Date(timeIntervalSince1970: TimeInterval(timestamp))
            if date > now.addingTimeInterval(8 * 3600) {
                find(.liveActivityTimestamp, "timestamp \(timestamp) is more than 8 hours ahead of the phone's clock")
                return ignore("timestamp \(timestamp) is more than 8 hours ahead")
            }
            if event == "update", let last = activity?.shown.timestamp, date <= last {
                let lastSeconds = Int(last.timeIntervalSince1970)
                find(.liveActivityTimestamp, "timestamp \(timestamp) is not after the last applied, \(lastSeconds)")
                return ignore("timestamp \(timestamp) is not after \(lastSeconds)")
            }
        }
        let settings = phone.settings
        if update.countsTowardBudget, !settings.frequentLiveActivityUpdates, let activity {
            let hourAgo = now.addingTimeInterval(-3600)
            if activity.budgeted.filter({ $0 > hourAgo }).count >= settings.liveActivityUpdatesPerHour {
                let budget = settings.liveActivityUpdatesPerHour
                find(.liveActivityBudget, "over the budget of \(budget) priority 10 updates per hour; use priority 5 for updates that can wait")
                note(.throttled, notification, on: phone, at: now, channelID: channelID,
                    detail: "dropped: over \(budget) priority 10 updates per hour")
                return nil
            }
        }
        return update
    }

    /// Applies an admitted Live Activity push: `start` makes the activity, `update` changes
    /// it (making it when the app started it on the phone), `end` ends it.
    func apply(_ update: ActivityUpdate, _ notification: PushNotification, on phone: PhoneState, at now: Date) {
        let aps = notification.payload.aps
        var activity = phone.activities[update.key] ?? makeActivity(update, notification, on: phone, at: now)
        if update.event == "start" { activity = makeActivity(update, notification, on: phone, at: now) }
        if let state = aps.contentState { activity.shown.contentState = state.serialized(sortedKeys: true) }
        if let timestamp = aps.timestamp { activity.shown.timestamp = Date(timeIntervalSince1970: TimeInterval(timestamp)) }
        if let stale = aps.staleDate { activity.shown.staleDate = Date(timeIntervalSince1970: TimeInterval(stale)) }
        if let dismissal = aps.dismissalDate {
            activity.shown.dismissalDate = Date(timeIntervalSince1970: TimeInterval(dismissal))
        }
        if update.countsTowardBudget {
            let hourAgo = now.addingTimeInterval(-3600)
            activity.budgeted.removeAll { $0 <= hourAgo }
            activity.budgeted.append(now)
        }
        if activity.shown.state == .stale { activity.shown.state = .active }
        if update.event == "end" {
            activity.shown.state = .ended
            activity.endedAt = now
        }
        phone.activities[update.key] = activity
        // A stale date or dismissal date already past applies at once.
        if let due = nextDue(on: phone), due.at <= now { unlockedAdvance(to: now) }
    }

    private func makeActivity(
        _ update: ActivityUpdate, _ notification: PushNotification, on phone: PhoneState, at now: Date
    ) -> ActivityState {
        if phone.activities[update.key] == nil, phone.activities.count >= PhoneState.Bounds.liveActivities,
            let oldest = phone.activities.min(by: { $0.value.made < $1.value.made })
        {
            phone.activities[oldest.key] = nil
        }
        phone.activitiesMade += 1
        let shownKey = notification.channelID ?? phone.token.hex
        let bundle = AppBundle.bundleID(of: notification.topic ?? "")
        return ActivityState(
            shown: LiveActivity(key: shownKey, bundleID: bundle, state: .active), made: phone.activitiesMade,
            startedAt: now)
    }

    /// A clock-driven transition: stale at its `stale-date`, ended 8 hours after it started,
    /// dismissed at its dismissal date.
    func transition(_ key: String, to state: LiveActivity.State, on phone: PhoneState, at date: Date) {
        guard var activity = phone.activities[key] else { return }
        activity.shown.state = state
        if state == .ended { activity.endedAt = date }
        phone.activities[key] = activity
    }
}
