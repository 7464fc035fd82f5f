#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What playing something on one phone did: the delivery log's new entries, the pushes that
/// reached the phone and the findings on the push being played. Each part of a phone adds to
/// the steps it is handed, and the model applies them once, at the end: to the phone's log
/// and deliveries, the announcement, and the push's device findings.
struct PhoneSteps {
    let token: DeviceToken
    private(set) var entries: [DeliveryLogEntry] = []
    private(set) var deliveries: [DeviceDelivery] = []
    /// Findings on the push the intake's stage is playing (the model keeps them only then:
    /// a stored, held or replayed push was judged when it came).
    private(set) var findings: [LintFinding] = []
    /// The broadcast channels a push-started Live Activity subscribes to (`input-push-channel`).
    private(set) var channelsJoined: [String] = []
    /// The topics whose activity on this phone's token was dismissed, with when: the device
    /// registry answers the token's pushes to them `ExpiredToken` from then on.
    private(set) var activitiesDismissed: [(topic: String, at: Date)] = []

    init(token: DeviceToken) { self.token = token }

    /// A log entry for `notification`.
    mutating func note(
        _ status: DeliveryStatus, _ notification: PushNotification, at date: Date, channelID: String? = nil,
        detail: String? = nil
    ) {
        entries.append(
            DeliveryLogEntry(
                status: status, at: date, deviceToken: token, topic: notification.topic, apnsID: notification.apnsID,
                uniqueID: notification.uniqueID, sequenceNumber: notification.sequenceNumber,
                channelID: channelID ?? notification.channelID, detail: detail))
    }

    /// The push reached the phone: logged with `status` and queued for the test.
    mutating func deliver(
        _ notification: PushNotification, status: DeliveryStatus, at date: Date, fromStorage: Bool,
        channelID: String?, detail: String? = nil
    ) {
        note(status, notification, at: date, channelID: channelID, detail: detail)
        deliveries.append(
            DeviceDelivery(
                notification: notification, deviceToken: token, deliveredAt: date, fromStorage: fromStorage,
                channelID: channelID))
    }

    /// A Live Activity subscribes the phone to a channel.
    mutating func join(channel: String) { channelsJoined.append(channel) }

    /// The activity of `topic` on this phone's token left the screen at `date`.
    mutating func dismissed(topic: String, at date: Date) { activitiesDismissed.append((topic, date)) }

    /// A finding on the push being played.
    mutating func find(_ rule: LintRule, _ message: String) {
        findings.append(LintFinding(rule, message))
    }

    /// The deliveries, each carrying its push's device findings, so that a delivery popped
    /// from the phone says what the record says: the push numbered `judging` (the one the
    /// stage played) gets `findings`, any other the findings `recorded` for it when it came.
    func deliveries(
        judging sequenceNumber: UInt64?, with findings: [LintFinding], recorded: (UInt64) -> [LintFinding]
    ) -> [DeviceDelivery] {
        deliveries.map { delivery in
            guard delivery.channelID == nil, delivery.notification.deviceLintFindings.isEmpty else { return delivery }
            let number = delivery.notification.sequenceNumber
            let found = number == sequenceNumber ? findings : recorded(number)
            guard !found.isEmpty else { return delivery }
            var notification = delivery.notification
            notification.deviceLintFindings = found
            return DeviceDelivery(
                notification: notification, deviceToken: delivery.deviceToken, deliveredAt: delivery.deliveredAt,
                fromStorage: delivery.fromStorage, channelID: delivery.channelID)
        }
    }
}
