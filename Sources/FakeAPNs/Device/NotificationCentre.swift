#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A phone's notification centre and badges: what a delivered alert push shows (collapse,
/// presentation, sound, actions, interruption level) and the badge it sets.
struct NotificationCentre {
    /// The entries, oldest first (shown newest first).
    private(set) var entries = BoundedQueue<NotificationCenterEntry>(capacity: PhoneState.Bounds.notificationCenter)
    /// The identifiers in the centre: a push with a new one looks for no entry.
    private var identifiers: Set<String> = []
    /// Each app's badge, by bundle ID.
    private(set) var badges: [String: Int] = [:]

    /// Applies a delivered alert push: the badge (absolute, 0 clears), and an entry keyed by
    /// its collapse ID when it has alert text. `app` is what the test described of the app.
    mutating func show(
        _ notification: PushNotification, _ settings: DeviceSettings, app described: AppBundle?, at now: Date
    ) {
        let topic = notification.topic ?? ""
        let bundle = AppBundle.bundleID(of: topic)
        let app = settings[app: topic]
        let aps = notification.payload.aps
        let foreground = app.state == .foreground
        let options = app.foregroundPresentation
        if let badge = aps.badge, !foreground || options.contains(.badge) { badges[bundle] = badge }
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
        if identifiers.contains(identifier), let old = entries.removeFirst(where: { $0.identifier == identifier }) {
            replaced = old.replaced + [old.apnsID].compactMap { $0 }
            presented = presented && settings.replacementPresentsAgain
        }
        let entry = NotificationCenterEntry(
            identifier: identifier, bundleID: bundle, apnsID: notification.apnsID, title: title, subtitle: subtitle,
            body: body, threadID: aps.threadID, category: category,
            showsActions: category.map { described?.categories?.contains($0) ?? true } ?? false, sound: sound,
            interruptionLevel: level, presented: presented,
            serviceExtensionRan: aps.mutableContent && (alert.title != nil || alert.subtitle != nil || alert.body != nil),
            replaced: replaced, deliveredAt: now)
        if entries.count >= PhoneState.Bounds.notificationCenter, let oldest = entries.items.first {
            identifiers.remove(oldest.identifier)
        }
        entries.append(contentsOf: [entry])
        identifiers.insert(identifier)
    }
}
