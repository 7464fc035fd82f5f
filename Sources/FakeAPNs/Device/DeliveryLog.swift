#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What happened to a push on its way to a phone, in the words of Apple's Push Notifications
/// Console (its delivery metrics' categories), plus three of the model's own.
public enum DeliveryStatus: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// APNs accepted it.
    case received = "Received"
    /// It reached the phone at once.
    case deliveredToDevice = "Delivered to Device"
    /// It reached the phone from storage, when the phone came online or the restriction lifted.
    case deliveredFromStorage = "Delivered to Device (From Storage)"
    /// Stored: the phone was offline.
    case storedDeviceOffline = "Stored - Device Offline"
    /// Stored: priority 5 or 1 to a phone under power restrictions, or asleep.
    case storedPowerConsiderations = "Stored - Power Considerations"
    /// Discarded: expired, or `apns-expiration` 0 (or past) with the phone unreachable.
    case discardedExpired = "Discarded - Expired"
    /// Discarded: the user turned the app's notifications off.
    case discardedDisabled = "Discarded - Disabled"
    /// Discarded from storage: notifications were turned off while it was stored.
    case discardedDisabledFromStorage = "Discarded - Disabled (From Storage)"
    /// Discarded: the app is not installed.
    case discardedTokenUnregistered = "Discarded - Token Unregistered"
    /// Discarded from storage: the app was removed while it was stored.
    case discardedTokenUnregisteredFromStorage = "Discarded - Token Unregistered (From Storage)"
    /// The model's own: a newer push for the same app took its storage slot (or the phone's
    /// held background slot).
    case overwritten = "Overwritten"
    /// The model's own: the phone holds or drops it for a budget (background pushes per hour,
    /// Live Activity updates per hour), or for Low Power Mode or Background App Refresh; or
    /// does not deliver a force-quit app's background push (the detail says which).
    case throttled = "Throttled"
    /// The model's own: a Live Activity update the phone ignores (stale timestamp, ended
    /// activity).
    case ignoredLiveActivity = "Ignored (Live Activity)"

    /// Apple's (or the model's) wording.
    public var description: String { rawValue }
}

/// One step of one push's way to one phone.
///
/// ```swift
/// let log = server.device(token).log(apnsID: response.apnsID)
/// XCTAssertEqual(log.map(\.status), [.received, .storedDeviceOffline, .overwritten])
/// ```
public struct DeliveryLogEntry: Sendable, Hashable, CustomStringConvertible {
    /// What happened.
    public let status: DeliveryStatus
    /// When, by the server's clock (``ServerClock``).
    public let at: Date
    /// The phone.
    public let deviceToken: DeviceToken
    /// The push's topic (a broadcast's bundle ID).
    public let topic: String?
    /// The push's `apns-id` (nil for the binary gateway's pushes).
    public let apnsID: String?
    /// The push's `apns-unique-id`, when it was answered one.
    public let uniqueID: String?
    /// The push's place among the server's notifications (``PushNotification/sequenceNumber``).
    public let sequenceNumber: UInt64
    /// A broadcast's channel, for a delivery through a channel.
    public let channelID: String?
    /// Why, in one line, when the status alone does not say ("overwritten by apns-id …",
    /// "timestamp 1700000000 is not after 1700000100").
    public let detail: String?

    /// An entry.
    package init(
        status: DeliveryStatus, at: Date, deviceToken: DeviceToken, topic: String?, apnsID: String?,
        uniqueID: String?, sequenceNumber: UInt64, channelID: String? = nil, detail: String? = nil
    ) {
        self.status = status
        self.at = at
        self.deviceToken = deviceToken
        self.topic = topic
        self.apnsID = apnsID
        self.uniqueID = uniqueID
        self.sequenceNumber = sequenceNumber
        self.channelID = channelID
        self.detail = detail
    }

    /// "#3 Stored - Device Offline (apns-id …)".
    public var description: String {
        var text = "#\(sequenceNumber) \(status)"
        if let apnsID { text += " apns-id \(apnsID)" }
        if let detail { text += ": \(detail)" }
        return text
    }
}

/// A push as it reached a phone.
public struct DeviceDelivery: Sendable, CustomStringConvertible {
    /// The push as the server accepted it (a broadcast's, for a delivery through a channel).
    public let notification: PushNotification
    /// The phone.
    public let deviceToken: DeviceToken
    /// When it reached the phone, by the server's clock.
    public let deliveredAt: Date
    /// Whether it came from storage (the phone was offline, restricted or asleep).
    public let fromStorage: Bool
    /// A broadcast's channel, for a delivery through a channel.
    public let channelID: String?

    /// A delivery.
    package init(
        notification: PushNotification, deviceToken: DeviceToken, deliveredAt: Date, fromStorage: Bool,
        channelID: String? = nil
    ) {
        self.notification = notification
        self.deviceToken = deviceToken
        self.deliveredAt = deliveredAt
        self.fromStorage = fromStorage
        self.channelID = channelID
    }

    public var description: String {
        "\(deviceToken.hex) got #\(notification.sequenceNumber)\(fromStorage ? " from storage" : "")"
    }
}
