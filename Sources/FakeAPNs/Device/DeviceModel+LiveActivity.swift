#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Live Activities: which pushes an activity applies (timestamps, the end, the priority 10
/// budget), what they change, and the states the clock drives.
extension DeviceModel {
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
            let kept = max(1, phone.settings.liveActivityUpdatesPerHour)
            if activity.budgeted.count > kept { activity.budgeted.removeFirst(activity.budgeted.count - kept) }
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
