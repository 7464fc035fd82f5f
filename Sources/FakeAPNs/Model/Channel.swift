#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A broadcast channel: what a provider creates through the channel management API to send one
/// Live Activity update to every device subscribed to it.
///
/// ```swift
/// let channel = try server.channels.create(bundleID: "com.example.app", storagePolicy: .mostRecentMessage)
/// try server.channels.subscribe(token, to: channel.id)
/// ```
public struct Channel: Sendable, Hashable {
    /// The channel id, base64 of 16 bytes, as `apns-channel-id` carries it.
    public let id: String
    /// The app the channel belongs to.
    public let bundleID: String
    /// The environment the channel exists in: a sandbox channel is unknown in production.
    public let environment: PushEnvironment
    /// Whether the channel keeps its latest message for devices that subscribe later.
    public let storagePolicy: StoragePolicy
    /// When the channel was created, by the server's clock.
    public let createdAt: Date

    /// A channel, as the registry makes it.
    package init(id: String, bundleID: String, environment: PushEnvironment, storagePolicy: StoragePolicy, createdAt: Date) {
        self.id = id
        self.bundleID = bundleID
        self.environment = environment
        self.storagePolicy = storagePolicy
        self.createdAt = createdAt
    }

    /// Whether `id` could be a channel id: base64 (padded) of at least one byte. Apple warns
    /// not to assume a size; a kilobyte is more than any id.
    package static func isWellFormedID(_ id: String) -> Bool {
        guard !id.isEmpty, id.utf8.count <= 1024, let data = Data(base64Encoded: id) else { return false }
        // Canonical base64 only, as Apple gives ids: Foundation also takes some strings that
        // are not base64 at all ("====").
        return !data.isEmpty && data.base64EncodedString() == id
    }

    /// `message-storage-policy`: fixed when the channel is created.
    public enum StoragePolicy: Int, Sendable, Hashable, CaseIterable {
        /// 0: nothing is stored; a broadcast reaches the devices subscribed when it is sent.
        case noStorage = 0
        /// 1: the most recent message is stored, for at most 8 hours, for devices that
        /// subscribe later.
        case mostRecentMessage = 1
    }
}

/// What a request to the channel management or broadcast API asks for, as a refusal of one
/// records it (``Rejection/channelOperation``).
public enum ChannelOperation: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// `POST /1/apps/<bundle>/channels`.
    case create
    /// `GET /1/apps/<bundle>/channels` with `apns-channel-id`.
    case read
    /// `DELETE /1/apps/<bundle>/channels` with `apns-channel-id`.
    case delete
    /// `GET /1/apps/<bundle>/all-channels`.
    case list
    /// `POST /4/broadcasts/apps/<bundle>`.
    case broadcast

    /// The operation's name, as the daemon's JSON writes it.
    public var description: String { rawValue }
}

/// One broadcast as one subscribed device received it: what Apple gives a provider no way to
/// see, and what a test asserts ("the three phones following match 42 got the score").
public struct BroadcastDelivery: Sendable {
    /// The device that received it.
    public let deviceToken: DeviceToken
    /// The channel it came through.
    public let channelID: String
    /// The broadcast, as queued on the server's notifications (`format == .broadcast`).
    public let notification: PushNotification
    /// True when the device got the channel's stored message because it subscribed after the
    /// broadcast was sent (storage policy 1, message under 8 hours old).
    public let isStoredMessage: Bool
    /// When the delivery happened, by the server's clock.
    public let deliveredAt: Date
    /// Its place in the order of deliveries at this server, from 1.
    public package(set) var sequenceNumber: UInt64

    /// A delivery, as the registry makes it; the intake numbers it.
    package init(
        deviceToken: DeviceToken, channelID: String, notification: PushNotification, isStoredMessage: Bool,
        deliveredAt: Date, sequenceNumber: UInt64 = 0
    ) {
        self.deviceToken = deviceToken
        self.channelID = channelID
        self.notification = notification
        self.isStoredMessage = isStoredMessage
        self.deliveredAt = deliveredAt
        self.sequenceNumber = sequenceNumber
    }
}
