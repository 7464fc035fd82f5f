#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The broadcast channels of one server, in its environment, with the devices subscribed to
/// each and what each broadcast delivered to them.
///
/// Providers create and delete channels through the channel management API; a test may do the
/// same here, and subscribes devices, which Apple leaves to the devices themselves.
///
/// ```swift
/// let channel = try server.channels.create(bundleID: "com.example.app", storagePolicy: .noStorage)
/// try server.channels.subscribe(phone, to: channel.id)
/// // … the provider under test broadcasts to channel.id …
/// let delivery = try server.channels.deliveries.pop(timeout: .seconds(2))
/// XCTAssertEqual(delivery.deviceToken, phone)
/// ```
///
/// Bounded as Apple bounds it: at most 10,000 channels per bundle, and at most 100,000 in all,
/// so that clients inventing bundles cannot make the server hold more.
public final class ChannelRegistry: @unchecked Sendable {
    /// How long a policy-1 channel keeps its latest message for devices that subscribe later.
    public static let storedMessageLifetime: TimeInterval = 8 * 60 * 60

    /// Every delivery of a broadcast to a subscribed device, in order, waiting to be popped.
    public let deliveries: Mailbox<BroadcastDelivery>
    /// Every delivery, popped or not, up to the server's retention: what the daemon lists.
    public let deliveryHistory: History<BroadcastDelivery>
    /// The environment every channel of this registry belongs to.
    public let environment: PushEnvironment
    /// The most channels one bundle may have (Apple: 10,000); lowered by tests.
    package var maximumChannelsPerBundle: Int {
        get { lock.withLock { perBundleLimit } }
        set { lock.withLock { perBundleLimit = newValue } }
    }
    /// The most channels of all bundles together.
    package static let maximumChannels = 100_000

    /// The bundles whose broadcast capability is enabled, as it is in an app's identifier on
    /// Apple's developer site; nil (the default) enables every bundle. Channel management and
    /// broadcast requests for any other bundle are answered 400 `FeatureNotEnabled`. A reset
    /// restores the value the registry was made with (``FakeAPNsServer/Configuration/broadcastBundleIDs``).
    public var broadcastBundleIDs: Set<String>? {
        get { lock.withLock { enabledBundles } }
        set { lock.withLock { enabledBundles = newValue } }
    }

    /// Whether `bundleID` may use channels and broadcasts (see ``broadcastBundleIDs``).
    package func isBroadcastEnabled(for bundleID: String) -> Bool {
        lock.withLock { enabledBundles?.contains(bundleID) ?? true }
    }

    private let clock: @Sendable () -> Date
    private let onChange: (@Sendable (Channel, _ created: Bool) -> Void)?
    private let lock = ConditionLock()
    // Protected by `lock`:
    private var perBundleLimit = 10_000
    private var enabledBundles: Set<String>?
    private let initialEnabledBundles: Set<String>?
    private var channels: [String: Entry] = [:]
    private var idsByBundle: [String: [String]] = [:]
    private var issued: UInt64 = 0
    private let idKey: UInt64
    private var lastDelivery: UInt64 = 0

    private struct Entry {
        let channel: Channel
        var subscribers: [DeviceToken] = []
        /// The latest broadcast of a policy-1 channel, with the instant it stops being kept.
        var stored: (notification: PushNotification, until: Date)?
    }

    /// A registry for `environment`; `clock` dates channels and judges stored messages' age;
    /// `onChange` hears each channel created (true) or deleted (false), outside the lock;
    /// `broadcastBundleIDs` as the property of that name.
    package init(
        environment: PushEnvironment, retention: Int?, clock: @escaping @Sendable () -> Date,
        broadcastBundleIDs: Set<String>? = nil, onChange: (@Sendable (Channel, _ created: Bool) -> Void)?
    ) {
        self.environment = environment
        enabledBundles = broadcastBundleIDs
        initialEnabledBundles = broadcastBundleIDs
        self.clock = clock
        self.onChange = onChange
        deliveries = Mailbox(noun: "broadcast delivery", capacity: retention)
        deliveryHistory = History(capacity: retention)
        var random = SystemRandomNumberGenerator()
        idKey = random.next()
    }

    /// Creates a channel of `bundleID` with a new id, never one given before, even to a channel
    /// since deleted.
    ///
    /// - Throws: ``ChannelRegistryError/limitReached(bundleID:limit:)`` when the bundle has
    ///   the most channels allowed (the API answers `CannotCreateChannelConfig`).
    @discardableResult
    public func create(bundleID: String, storagePolicy: Channel.StoragePolicy) throws(ChannelRegistryError) -> Channel {
        try create(bundleID: bundleID, storagePolicy: storagePolicy, fixedID: nil)
    }

    /// Creates a channel of `bundleID` with the id `id`, which Apple never lets a provider
    /// choose: a fake-only ability, for a provider under test configured beforehand with a
    /// known channel id. The channel counts toward the limits as any other.
    ///
    /// - Throws: ``ChannelRegistryError/invalidChannelID(_:)`` when `id` is not base64 of at
    ///   least one byte, ``ChannelRegistryError/channelIDInUse(_:)`` when a channel has it, and
    ///   ``ChannelRegistryError/limitReached(bundleID:limit:)``.
    @discardableResult
    public func create(
        bundleID: String, storagePolicy: Channel.StoragePolicy, id: String
    ) throws(ChannelRegistryError) -> Channel {
        guard Channel.isWellFormedID(id) else { throw .invalidChannelID(id) }
        return try create(bundleID: bundleID, storagePolicy: storagePolicy, fixedID: id)
    }

    private func create(
        bundleID: String, storagePolicy: Channel.StoragePolicy, fixedID: String?
    ) throws(ChannelRegistryError) -> Channel {
        let made: Result<Channel, ChannelRegistryError> = lock.withLock {
            if let fixedID, channels[fixedID] != nil { return .failure(.channelIDInUse(fixedID)) }
            let count = idsByBundle[bundleID]?.count ?? 0
            guard count < perBundleLimit else { return .failure(.limitReached(bundleID: bundleID, limit: perBundleLimit)) }
            guard channels.count < Self.maximumChannels else {
                return .failure(.limitReached(bundleID: bundleID, limit: Self.maximumChannels))
            }
            let id = fixedID ?? newID()
            let channel = Channel(
                id: id, bundleID: bundleID, environment: environment, storagePolicy: storagePolicy, createdAt: clock())
            channels[channel.id] = Entry(channel: channel)
            idsByBundle[bundleID, default: []].append(channel.id)
            return .success(channel)
        }
        let channel = try made.get()
        onChange?(channel, true)
        return channel
    }

    /// Inside the lock: an id never given before.
    private func newID() -> String {
        issued += 1
        // The first half, a count under a fixed random mask, is never the same twice; the
        // second half is random, so ids look as Apple's do and cannot be guessed.
        var random = SystemRandomNumberGenerator()
        var bytes = [UInt8]()
        bytes.reserveCapacity(16)
        for word in [issued ^ idKey, random.next()] {
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
        return Data(bytes).base64EncodedString()
    }

    /// The channel with this id, if it exists.
    public func channel(id: String) -> Channel? {
        lock.withLock { channels[id]?.channel }
    }

    /// The channels of `bundleID`, oldest first.
    public func list(bundleID: String) -> [Channel] {
        lock.withLock { (idsByBundle[bundleID] ?? []).compactMap { channels[$0]?.channel } }
    }

    /// Every channel: bundle by bundle in the order of their names, each bundle's oldest first.
    public func list() -> [Channel] {
        lock.withLock {
            idsByBundle.keys.sorted().flatMap { bundle in idsByBundle[bundle]!.compactMap { channels[$0]?.channel } }
        }
    }

    /// How many channels exist, of every bundle.
    public var count: Int {
        lock.withLock { channels.count }
    }

    /// How many deliveries were ever made, resets included: the last delivery's number.
    public var deliveryCount: UInt64 {
        lock.withLock { lastDelivery }
    }

    /// Deletes a channel, its subscriptions and its stored message; false when it did not exist.
    @discardableResult
    public func delete(id: String) -> Bool {
        let removed: Channel? = lock.withLock {
            guard let entry = channels.removeValue(forKey: id) else { return nil }
            let bundle = entry.channel.bundleID
            idsByBundle[bundle]?.removeAll { $0 == id }
            if idsByBundle[bundle]?.isEmpty == true { idsByBundle[bundle] = nil }
            return entry.channel
        }
        guard let removed else { return false }
        onChange?(removed, false)
        return true
    }

    /// Subscribes a device to a channel; a device already subscribed stays subscribed once. A
    /// policy-1 channel holding a message under 8 hours old delivers it to the device now
    /// (``BroadcastDelivery/isStoredMessage``).
    ///
    /// - Throws: ``ChannelRegistryError/unknownChannel(_:)``.
    public func subscribe(_ token: DeviceToken, to channelID: String) throws(ChannelRegistryError) {
        // Deliveries are queued inside the lock, so that their order is their numbers' order.
        let known: Bool = lock.withLock {
            guard var entry = channels[channelID] else { return false }
            guard !entry.subscribers.contains(token) else { return true }
            entry.subscribers.append(token)
            channels[channelID] = entry
            let now = clock()
            guard let stored = entry.stored, now < stored.until else { return true }
            lastDelivery += 1
            let delivery = BroadcastDelivery(
                deviceToken: token, channelID: channelID, notification: stored.notification, isStoredMessage: true,
                deliveredAt: now, sequenceNumber: lastDelivery)
            deliveryHistory.append(contentsOf: [delivery])
            deliveries.append(delivery)
            return true
        }
        guard known else { throw .unknownChannel(channelID) }
    }

    /// Ends a device's subscription to a channel, if it had one.
    public func unsubscribe(_ token: DeviceToken, from channelID: String) {
        lock.withLock { channels[channelID]?.subscribers.removeAll { $0 == token } }
    }

    /// The devices subscribed to a channel, in order of subscription.
    public func subscribers(of channelID: String) -> [DeviceToken] {
        lock.withLock { channels[channelID]?.subscribers ?? [] }
    }

    /// Delivers an accepted broadcast to every device subscribed to its channel now, and keeps
    /// it as the channel's stored message when the channel's policy says so: until 8 hours
    /// from now, or its expiration when sooner; an expiration of 0 means "store nothing".
    package func deliver(_ notification: PushNotification) {
        guard let channelID = notification.channelID else { return }
        lock.withLock {
            guard var entry = channels[channelID] else { return }
            let now = clock()
            if entry.channel.storagePolicy == .mostRecentMessage, notification.expiration != 0 {
                var until = now.addingTimeInterval(Self.storedMessageLifetime)
                if let expiry = notification.expirationDate, expiry < until { until = expiry }
                entry.stored = (notification, until)
                channels[channelID] = entry
            }
            let made = entry.subscribers.map { token in
                lastDelivery += 1
                return BroadcastDelivery(
                    deviceToken: token, channelID: channelID, notification: notification, isStoredMessage: false,
                    deliveredAt: now, sequenceNumber: lastDelivery)
            }
            deliveryHistory.append(contentsOf: made)
            deliveries.append(contentsOf: made)
        }
    }

    /// Forgets every channel, subscription, stored message and delivery, and enables the bundles
    /// it was made with again. Ids given before are still never given again.
    package func reset() {
        lock.withLock {
            enabledBundles = initialEnabledBundles
            channels = [:]
            idsByBundle = [:]
            deliveries.removeAll()
            deliveryHistory.removeAll()
        }
    }
}

extension BroadcastDelivery: Sequenced {}

/// Why the channel registry refused a request.
public enum ChannelRegistryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The bundle has the most channels allowed, or the server does.
    case limitReached(bundleID: String, limit: Int)
    /// No channel has this id.
    case unknownChannel(String)
    /// A fixed id (``ChannelRegistry/create(bundleID:storagePolicy:id:)``) that is not base64
    /// of at least one byte.
    case invalidChannelID(String)
    /// A fixed id that a channel already has.
    case channelIDInUse(String)

    /// What went wrong, in words.
    public var description: String {
        switch self {
        case .limitReached(let bundleID, let limit): "\(bundleID) cannot have another channel: the limit is \(limit)"
        case .unknownChannel(let id): "no channel has the id \(id)"
        case .invalidChannelID(let id):
            "\(JSONValue.quoted(String(id.prefix(64)))) is not a channel id: base64 (padded) of 1 to 768 bytes"
        case .channelIDInUse(let id): "a channel already has the id \(id)"
        }
    }
}
