#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A push reaching the phone, and the background pushes the phone holds: the budgets per
/// hour and per day, Low Power Mode, Background App Refresh, force-quit and launch.
extension DeviceModel {
    /// A push the phone can take now: a Live Activity push goes to its activity, a background
    /// push wakes its app (or is held), any other goes to the screen. `replaying`: a push sent
    /// before the phone was described, played as a phone no test described has it (no budget,
    /// no hold).
    func arrive(
        _ notification: PushNotification, on phone: PhoneState, at now: Date, fromStorage: Bool,
        channelID: String? = nil, replaying: Bool = false
    ) {
        let delivered: DeliveryStatus = fromStorage ? .deliveredFromStorage : .deliveredToDevice
        if notification.pushType == .liveactivity {
            guard let update = admitActivityUpdate(notification, on: phone, at: now, channelID: channelID, replaying: replaying)
            else { return }
            reach(notification, status: delivered, on: phone, at: now, fromStorage: fromStorage, channelID: channelID)
            apply(update, notification, on: phone, at: now)
            return
        }
        if Self.isBackground(notification) {
            let bundle = AppBundle.bundleID(of: notification.topic ?? "")
            if !replaying, let why = holdReason(for: bundle, on: phone, at: now) {
                hold(notification, bundle: bundle, why: why, on: phone, at: now)
                return
            }
            reach(notification, status: delivered, on: phone, at: now, fromStorage: fromStorage, channelID: channelID)
            recordWake(notification, bundle: bundle, on: phone, at: now)
            return
        }
        reach(notification, status: delivered, on: phone, at: now, fromStorage: fromStorage, channelID: channelID)
        show(notification, on: phone, at: now)
    }

    /// Logs the push as delivered and queues it on the phone's deliveries.
    private func reach(
        _ notification: PushNotification, status: DeliveryStatus, on phone: PhoneState, at now: Date,
        fromStorage: Bool, channelID: String?, detail: String? = nil
    ) {
        note(status, notification, on: phone, at: now, channelID: channelID, detail: detail)
        phone.deliveries.append(DeviceDelivery(
            notification: notification, deviceToken: phone.token, deliveredAt: now, fromStorage: fromStorage,
            channelID: channelID))
    }

    /// A background push: `apns-push-type: background`, or `content-available: 1` with no
    /// alert, badge or sound.
    static func isBackground(_ notification: PushNotification) -> Bool {
        if notification.pushType == .background { return true }
        guard notification.pushType == nil || notification.pushType == .alert else { return false }
        let aps = notification.payload.aps
        return aps.contentAvailable && aps.alert == nil && aps.badge == nil && aps.sound == nil
    }

    // MARK: Holding

    /// Why the phone holds a background push for `bundle` now (nil: it delivers it).
    private func holdReason(for bundle: String, on phone: PhoneState, at now: Date) -> (String, byBudget: Bool)? {
        let settings = phone.settings
        if settings[app: bundle].state == .forceQuit { return ("\(bundle) was force-quit", false) }
        if settings.isLowPowerMode { return ("Low Power Mode is on", false) }
        if !settings.backgroundAppRefresh { return ("Background App Refresh is off", false) }
        if settings.isDebuggerAttached { return nil }
        if budgetRefill(for: bundle, on: phone, at: now) != nil {
            return ("over the background budget (\(budgetText(settings)))", true)
        }
        return nil
    }

    private func budgetText(_ settings: DeviceSettings) -> String {
        var text = "\(settings.backgroundPushesPerHour) per hour per app"
        if let perDay = settings.backgroundPushesPerDay { text += ", \(perDay) per day" }
        return text
    }

    /// Holds a background push (a force-quit app's is discarded instead): the app's held one
    /// is overwritten.
    private func hold(
        _ notification: PushNotification, bundle: String, why: (String, byBudget: Bool), on phone: PhoneState,
        at now: Date
    ) {
        if phone.settings[app: bundle].state == .forceQuit {
            note(.throttled, notification, on: phone, at: now, detail: "not delivered: \(why.0)")
            return
        }
        note(.throttled, notification, on: phone, at: now, detail: "held: \(why.0)")
        if let old = phone.held[bundle] {
            note(.overwritten, old.notification, on: phone, at: now, detail: "overwritten by \(Self.name(of: notification))")
        }
        phone.held[bundle] = HeldPush(notification: notification, reason: why.0, byBudget: why.byBudget)
    }

    /// After a change of the phone: a force-quit app's held push is discarded, the others are
    /// delivered when nothing holds them any more.
    func settleHeld(_ phone: PhoneState, at now: Date) {
        for (bundle, held) in phone.held.sorted(by: { $0.key < $1.key }) {
            if phone.settings[app: bundle].state == .forceQuit {
                phone.held[bundle] = nil
                note(.throttled, held.notification, on: phone, at: now, detail: "discarded: \(bundle) was force-quit")
            } else if let why = holdReason(for: bundle, on: phone, at: now) {
                phone.held[bundle]?.reason = why.0
                phone.held[bundle]?.byBudget = why.byBudget
            } else {
                phone.held[bundle] = nil
                wake(held.notification, on: phone, at: now, detail: "released: nothing holds it any more")
            }
        }
    }

    /// Delivers a held background push and wakes its app.
    func wake(_ notification: PushNotification, on phone: PhoneState, at now: Date, detail: String) {
        reach(notification, status: .deliveredToDevice, on: phone, at: now, fromStorage: false, channelID: nil, detail: detail)
        recordWake(notification, bundle: AppBundle.bundleID(of: notification.topic ?? ""), on: phone, at: now)
    }

    private func recordWake(_ notification: PushNotification, bundle: String, on phone: PhoneState, at now: Date) {
        let wake = AppWake(bundleID: bundle, apnsID: notification.apnsID, at: now)
        phone.screen.wakes.append(wake)
        if phone.screen.wakes.count > logLimit { phone.screen.wakes.removeFirst(phone.screen.wakes.count - logLimit) }
        phone.recentWakes.append(wake)
        let dayAgo = now.addingTimeInterval(-24 * 3600)
        if let kept = phone.recentWakes.firstIndex(where: { $0.at > dayAgo }) {
            phone.recentWakes.removeFirst(kept)
        }
        if phone.recentWakes.count > PhoneState.Bounds.wakesJudged {
            phone.recentWakes.removeFirst(phone.recentWakes.count - PhoneState.Bounds.wakesJudged)
        }
    }

    /// When the budgets let `bundle` wake again (`distantFuture`: a budget of 0), when they do
    /// not let it at `now` (nil: they do; without `now`, judged at that instant).
    func budgetRefill(for bundle: String, on phone: PhoneState, at now: Date? = nil) -> Date? {
        let settings = phone.settings
        var refill: Date?
        func later(_ date: Date) { refill = max(refill ?? date, date) }
        let perHour = settings.backgroundPushesPerHour
        let hourAgo = now?.addingTimeInterval(-3600) ?? .distantPast
        let dayAgo = now?.addingTimeInterval(-24 * 3600) ?? .distantPast
        let lastHour = phone.recentWakes.filter { $0.bundleID == bundle && $0.at > hourAgo }
        if perHour <= 0 {
            later(.distantFuture)
        } else if lastHour.count >= perHour {
            later(lastHour[lastHour.count - perHour].at.addingTimeInterval(3600))
        }
        if let perDay = settings.backgroundPushesPerDay {
            let lastDay = phone.recentWakes.filter { $0.at > dayAgo }
            if perDay <= 0 {
                later(.distantFuture)
            } else if lastDay.count >= perDay {
                later(lastDay[lastDay.count - perDay].at.addingTimeInterval(24 * 3600))
            }
        }
        guard let refill else { return nil }
        if let now, refill <= now { return nil }
        return refill
    }
}
