#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a delivered push shows: the notification centre (collapse, presentation, sound,
/// actions, interruption level) and the badges.
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
}
