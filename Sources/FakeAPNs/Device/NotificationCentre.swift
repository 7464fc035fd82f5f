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
    /// its collapse ID when it has alert text. Its text, sound and interruption level are
    /// read as the push lint reads them (``PushFacts``).
    mutating func show(_ facts: PushFacts, app: AppSettings, _ settings: DeviceSettings, at now: Date) {
        let notification = facts.notification
        let bundle = facts.bundleID
        let aps = facts.aps
        let foreground = app.state == .foreground
        let options = app.foregroundPresentation
        if let bundle, let badge = aps.badge, !foreground || options.contains(.badge) { badges[bundle] = badge }
        guard facts.hasAlertText else { return }
        if foreground, options.isDisjoint(with: [.banner, .list]) { return }
        var presented = app.authorization != .provisional && (!foreground || options.contains(.banner))
        var sound = facts.sound
        if app.authorization == .provisional || (foreground && !options.contains(.sound)) { sound = nil }
        let category = aps.category
        let identifier = notification.collapseID ?? notification.apnsID ?? "#\(notification.sequenceNumber)"
        var replaced: [String] = []
        if identifiers.contains(identifier), let old = entries.removeFirst(where: { $0.identifier == identifier }) {
            replaced = old.replaced + [old.apnsID].compactMap { $0 }
            presented = presented && settings.replacementPresentsAgain
        }
        let entry = NotificationCenterEntry(
            identifier: identifier, bundleID: bundle, apnsID: notification.apnsID, title: facts.alertTitle,
            subtitle: facts.alertSubtitle, body: facts.alertBody, threadID: aps.threadID, category: category,
            showsActions: category.map { facts.app?.categories?.contains($0) ?? true } ?? false, sound: sound,
            interruptionLevel: facts.interruptionLevel, presented: presented,
            serviceExtensionRan: aps.mutableContent && facts.hasAlertText,
            replaced: replaced, deliveredAt: now)
        if entries.count >= PhoneState.Bounds.notificationCenter, let oldest = entries.items.first {
            identifiers.remove(oldest.identifier)
        }
        entries.append(contentsOf: [entry])
        identifiers.insert(identifier)
    }
}
