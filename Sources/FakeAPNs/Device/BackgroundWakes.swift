#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A phone's background pushes: the app wakes they cause, judged against the budgets per hour
/// and per day, and the one push per app the phone holds while a budget, Low Power Mode,
/// Background App Refresh or a force-quit keeps it from waking the app.
struct BackgroundWakes {
    /// The held background push of each app, by bundle ID.
    private(set) var held: [String: HeldPush] = [:]
    /// Background wakes within the last day, oldest first: what the budgets are judged by.
    private var recent: [AppWake] = []
    /// The wakes the screen lists, oldest first, at most `shownLimit`.
    private(set) var shown: [AppWake] = []
    let shownLimit: Int

    init(shownLimit: Int) { self.shownLimit = max(1, shownLimit) }

    /// Why the phone holds a background push for `bundle` now (nil: it wakes the app).
    func holdReason(for bundle: String, _ settings: DeviceSettings, at now: Date) -> (String, byBudget: Bool)? {
        if settings[app: bundle].state == .forceQuit { return ("\(bundle) was force-quit", false) }
        if settings.isLowPowerMode { return ("Low Power Mode is on", false) }
        if !settings.backgroundAppRefresh { return ("Background App Refresh is off", false) }
        if settings.isDebuggerAttached { return nil }
        if isOverBudget(bundle, settings, at: now) {
            var text = "\(settings.backgroundPushesPerHour) per hour per app"
            if let perDay = settings.backgroundPushesPerDay { text += ", \(perDay) per day" }
            return ("over the background budget (\(text))", true)
        }
        return nil
    }

    /// Holds a background push (a force-quit app's is not delivered instead): the app's held
    /// one is overwritten.
    mutating func hold(
        _ facts: PushFacts, bundle: String, why: (String, byBudget: Bool), _ settings: DeviceSettings,
        at now: Date, steps: inout PhoneSteps
    ) {
        let notification = facts.notification
        if settings[app: bundle].state == .forceQuit {
            steps.note(.throttled, notification, at: now, detail: "not delivered: \(why.0)")
            return
        }
        steps.note(.throttled, notification, at: now, detail: "held: \(why.0)")
        if let old = held[bundle] {
            steps.note(
                .overwritten, old.notification, at: now, detail: "overwritten by \(DeviceModel.name(of: notification))")
        }
        held[bundle] = HeldPush(facts: facts, reason: why.0, byBudget: why.byBudget)
    }

    /// Takes the app's held push (the app was launched, or its budget refilled).
    mutating func release(_ bundle: String) -> HeldPush? { held.removeValue(forKey: bundle) }

    /// After a change of the phone: a force-quit app's held push is discarded, the others are
    /// returned to deliver when nothing holds them any more.
    mutating func settle(_ settings: DeviceSettings, at now: Date, steps: inout PhoneSteps) -> [HeldPush] {
        var released: [HeldPush] = []
        for (bundle, push) in held.sorted(by: { $0.key < $1.key }) {
            if settings[app: bundle].state == .forceQuit {
                held[bundle] = nil
                steps.note(.throttled, push.notification, at: now, detail: "discarded: \(bundle) was force-quit")
            } else if let why = holdReason(for: bundle, settings, at: now) {
                held[bundle]?.reason = why.0
                held[bundle]?.byBudget = why.byBudget
            } else {
                held[bundle] = nil
                released.append(push)
            }
        }
        return released
    }

    /// The app woke for a push.
    mutating func recordWake(_ wake: AppWake) {
        shown.append(wake)
        if shown.count > shownLimit { shown.removeFirst(shown.count - shownLimit) }
        recent.append(wake)
        let dayAgo = wake.at.addingTimeInterval(-24 * 3600)
        if let kept = recent.firstIndex(where: { $0.at > dayAgo }) { recent.removeFirst(kept) }
        if recent.count > PhoneState.Bounds.wakesJudged {
            recent.removeFirst(recent.count - PhoneState.Bounds.wakesJudged)
        }
    }

    /// The next held push a budget refill releases, and when.
    func nextRefill(_ settings: DeviceSettings) -> (at: Date, bundle: String)? {
        var next: (at: Date, bundle: String)?
        for (bundle, push) in held where push.byBudget {
            guard let refill = refill(for: bundle, settings), next == nil || refill < next!.at else { continue }
            next = (refill, bundle)
        }
        return next
    }

    /// Whether the budgets keep `bundle` from waking at `now`.
    func isOverBudget(_ bundle: String, _ settings: DeviceSettings, at now: Date) -> Bool {
        if settings.backgroundPushesPerHour <= 0 { return true }
        if let perDay = settings.backgroundPushesPerDay, perDay <= 0 { return true }
        guard let refill = refill(for: bundle, settings) else { return false }
        return refill > now
    }

    /// When the budgets let `bundle` wake again, judged by the wakes remembered: nil when a
    /// budget is 0 (never) or when no budget is spent.
    private func refill(for bundle: String, _ settings: DeviceSettings) -> Date? {
        let perHour = settings.backgroundPushesPerHour
        guard perHour > 0 else { return nil }
        var refill: Date?
        func later(_ date: Date) { refill = max(refill ?? date, date) }
        let appWakes = recent.filter { $0.bundleID == bundle }
        if appWakes.count >= perHour { later(appWakes[appWakes.count - perHour].at.addingTimeInterval(3600)) }
        if let perDay = settings.backgroundPushesPerDay {
            guard perDay > 0 else { return nil }
            if recent.count >= perDay { later(recent[recent.count - perDay].at.addingTimeInterval(24 * 3600)) }
        }
        return refill
    }
}

/// A background push the phone holds for its app.
struct HeldPush {
    /// What the phone makes of it, read when it came.
    var facts: PushFacts
    var notification: PushNotification { facts.notification }
    /// Why, in one line.
    var reason: String
    /// Whether only a budget holds it (it is released when the budget refills).
    var byBudget: Bool
}
