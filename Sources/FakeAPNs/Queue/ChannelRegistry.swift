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
/// so that clients inventing bundles cannot make the server hold more. A channel takes any
/// number of subscribers: subscribing costs the same at 100,000 as at 10, and the list is read
/// page by page (``subscribers(of:after:limit:)``). Deliveries are the server's intake's: they
/// are numbered, recorded and queued with its notifications and rejections, and a reset
/// forgets channels and deliveries at once.
public final class ChannelRegistry: @unchecked Sendable {
    /// How long a policy-1 channel keeps its latest message for devices that subscribe later.
    public static let storedMessageLifetime: TimeInterval = 8 * 60 * 60

    /// Every delivery of a broadcast to a subscribed device, in order, waiting to be popped.
    public var deliveries: Mailbox<BroadcastDelivery> { deliveryLane.mailbox }
    /// Every delivery, popped or not, up to the server's retention: what the daemon lists.
    public var deliveryHistory: History<BroadcastDelivery> { deliveryLane.history }
    /// The environment every channel of this registry belongs to.
    public let environment: PushEnvironment
    /// The most channels one bundle may have (Apple: 10,000); lowered by tests.
    package var maximumChannelsPerBundle: Int {
        get { lock.withLock { perBundleLimit } }
        set { lock.withLock { perBundleLimit = newValue } }
    }
    /// The most channels of all bundles together.
    package static let maximumChannels = 100_000
    /// The most subscribers one page of ``subscribers(of:after:limit:)`` holds.
    public static let maximumPageSize = 1000

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
    /// The server's intake lock: deliveries are numbered and queued by the intake, in the
    /// order the registry makes them, and a reset forgets channels and deliveries at once.
    private let lock: ConditionLock
    /// Where deliveries go, inside `lock`.
    private let deliveryLane: Intake.Lane<BroadcastDelivery>
    // Protected by `lock`:
    private var perBundleLimit = 10_000
    private var enabledBundles: Set<String>?
    private let initialEnabledBundles: Set<String>?
    private var channels: [String: Entry] = [:]
    private var idsByBundle: [String: [String]] = [:]
    private var issued: UInt64 = 0
    private let idKey: UInt64

    private struct Entry {
        let channel: Channel
        var subscribers = SubscriberSet()
        /// The latest broadcast of a policy-1 channel, with the instant it stops being kept.
        var stored: (notification: PushNotification, until: Date)?
    }

    /// A registry for `environment`, guarded by the intake's `lock`, handing its deliveries to
    /// `deliveries`; `clock` dates channels and judges stored messages' age; `onChange` hears
    /// each channel created (true) or deleted (false), outside the lock; `broadcastBundleIDs`
    /// as the property of that name.
    init(
        environment: PushEnvironment, lock: ConditionLock, deliveries: Intake.Lane<BroadcastDelivery>,
        clock: @escaping @Sendable () -> Date, broadcastBundleIDs: Set<String>? = nil,
        onChange: (@Sendable (Channel, _ created: Bool) -> Void)?
    ) {
        self.environment = environment
        self.lock = lock
        deliveryLane = deliveries
        enabledBundles = broadcastBundleIDs
        initialEnabledBundles = broadcastBundleIDs
        self.clock = clock
        self.onChange = onChange
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
        lock.withLock { deliveryLane.lastSequenceNumber }
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
    /// (``BroadcastDelivery/isStoredMessage``). Costs the same however many devices the
    /// channel has.
    ///
    /// - Throws: ``ChannelRegistryError/unknownChannel(_:)``.
    public func subscribe(_ token: DeviceToken, to channelID: String) throws(ChannelRegistryError) {
        try subscribe(CollectionOfOne(token), to: channelID)
    }

    /// Subscribes devices to a channel, in order, in one step: as ``subscribe(_:to:)`` for
    /// each, for a test (or the daemon's `--devices`) that subscribes many at once.
    ///
    /// - Throws: ``ChannelRegistryError/unknownChannel(_:)``.
    public func subscribe(_ tokens: some Sequence<DeviceToken>, to channelID: String) throws(ChannelRegistryError) {
        // Stored messages are queued inside the lock, so that their order is their numbers'
        // order, and a broadcast racing the subscription reaches the device after them.
        let known: Bool = lock.withLock {
            guard var entry = channels.removeValue(forKey: channelID) else { return false }
            defer { channels[channelID] = entry }
            let now = clock()
            let stored = entry.stored.flatMap { now < $0.until ? $0.notification : nil }
            var made: [BroadcastDelivery] = []
            for token in tokens where entry.subscribers.insert(token) {
                guard let stored else { continue }
                made.append(BroadcastDelivery(
                    deviceToken: token, channelID: channelID, notification: stored, isStoredMessage: true,
                    deliveredAt: now))
            }
            deliveryLane.take(&made)
            return true
        }
        guard known else { throw .unknownChannel(channelID) }
    }

    /// Subscribes a device to a channel with the intake's lock already held (a push-started
    /// Live Activity's `input-push-channel`, played by the device model inside the lock); a
    /// stored message is not delivered. False when the channel does not exist.
    package func unlockedSubscribe(_ token: DeviceToken, to channelID: String) -> Bool {
        guard channels[channelID] != nil else { return false }
        _ = channels[channelID]?.subscribers.insert(token)
        return true
    }

    /// Ends a device's subscription to a channel; false when it had none (or the channel does
    /// not exist).
    @discardableResult
    public func unsubscribe(_ token: DeviceToken, from channelID: String) -> Bool {
        lock.withLock { channels[channelID]?.subscribers.remove(token) ?? false }
    }

    /// Whether a device is subscribed to a channel.
    public func isSubscribed(_ token: DeviceToken, to channelID: String) -> Bool {
        lock.withLock { channels[channelID]?.subscribers.contains(token) ?? false }
    }

    /// How many devices are subscribed to a channel (0 when it does not exist).
    public func subscriberCount(of channelID: String) -> Int {
        lock.withLock { channels[channelID]?.subscribers.count ?? 0 }
    }

    /// Every device subscribed to a channel, in order of subscription. For a channel with many
    /// subscribers, read it page by page with ``subscribers(of:after:limit:)``.
    public func subscribers(of channelID: String) -> [DeviceToken] {
        lock.withLock { channels[channelID]?.subscribers.tokens ?? [] }
    }

    /// One page of a channel's subscribers, in order of subscription: at most `limit` (up to
    /// ``maximumPageSize``) of those after `cursor` (nil: from the first). Follow
    /// ``SubscriberPage/next`` until it is nil to read each subscriber once, even while devices
    /// subscribe and unsubscribe (a device subscribed meanwhile comes last, one unsubscribed
    /// meanwhile may be missing). Nil when the channel does not exist.
    public func subscribers(of channelID: String, after cursor: SubscriberPage.Cursor?, limit: Int) -> SubscriberPage? {
        let limit = min(max(limit, 1), Self.maximumPageSize)
        return lock.withLock { channels[channelID]?.subscribers.page(after: cursor?.position ?? 0, limit: limit) }
    }

    /// Inside the intake's lock: an accepted broadcast's deliveries to every device subscribed
    /// to its channel now, appended to `made`; keeps it as the channel's stored message when the
    /// channel's policy says so: until 8 hours from now, or its expiration when sooner; an
    /// expiration of 0 means "store nothing".
    func unlockedDeliveries(of notification: PushNotification, into made: inout [BroadcastDelivery]) {
        guard let channelID = notification.channelID, var entry = channels.removeValue(forKey: channelID) else { return }
        defer { channels[channelID] = entry }
        let now = clock()
        if entry.channel.storagePolicy == .mostRecentMessage, notification.expiration != 0 {
            var until = now.addingTimeInterval(Self.storedMessageLifetime)
            if let expiry = notification.expirationDate, expiry < until { until = expiry }
            entry.stored = (notification, until)
        }
        made.reserveCapacity(made.count + entry.subscribers.count)
        entry.subscribers.forEachSubscriber { token in
            made.append(BroadcastDelivery(
                deviceToken: token, channelID: channelID, notification: notification, isStoredMessage: false,
                deliveredAt: now))
        }
    }

    /// Inside the intake's lock: forgets every channel, subscription and stored message, and
    /// enables the bundles the registry was made with again. Ids given before are still never
    /// given again.
    func unlockedReset() {
        enabledBundles = initialEnabledBundles
        channels = [:]
        idsByBundle = [:]
    }
}

/// One page of a channel's subscribers (``ChannelRegistry/subscribers(of:after:limit:)``).
public struct SubscriberPage: Sendable, Equatable {
    /// Where a page ends, to ask for the next one.
    public struct Cursor: Sendable, Hashable {
        /// The subscription number of the last device of the page.
        public let position: UInt64

        /// A cursor from its `position`, as a client gave it back.
        public init(position: UInt64) {
            self.position = position
        }
    }

    /// The devices of the page, in order of subscription.
    public let subscribers: [DeviceToken]
    /// Where to read the next page from; nil when this page is the last.
    public let next: Cursor?
}

/// A channel's subscribers, in order of subscription: subscribing, unsubscribing and asking
/// whether a device is subscribed cost the same whatever the count, a page is found by binary
/// search, and nothing is scanned or copied but what is read.
struct SubscriberSet {
    /// Each subscriber's subscription number, ever rising.
    private var numbers: [DeviceToken: UInt64] = [:]
    /// The subscriptions in order of their numbers; nil where a device unsubscribed, until
    /// the holes are half of it and it is compacted.
    private var order: [(number: UInt64, token: DeviceToken?)] = []
    private var holes = 0
    private var lastNumber: UInt64 = 0

    var count: Int { numbers.count }

    func contains(_ token: DeviceToken) -> Bool { numbers[token] != nil }

    /// Adds a device at the end; false when it was subscribed.
    mutating func insert(_ token: DeviceToken) -> Bool {
        guard numbers[token] == nil else { return false }
        lastNumber += 1
        numbers[token] = lastNumber
        order.append((lastNumber, token))
        return true
    }

    /// Removes a device; false when it was not subscribed.
    mutating func remove(_ token: DeviceToken) -> Bool {
        guard let number = numbers.removeValue(forKey: token) else { return false }
        order[firstIndex(after: number - 1)].token = nil
        holes += 1
        if holes > 64 && holes * 2 > order.count {
            order.removeAll { $0.token == nil }
            holes = 0
        }
        return true
    }

    /// Every subscriber, in order.
    var tokens: [DeviceToken] {
        var tokens: [DeviceToken] = []
        tokens.reserveCapacity(count)
        forEachSubscriber { tokens.append($0) }
        return tokens
    }

    func forEachSubscriber(_ body: (DeviceToken) -> Void) {
        for entry in order { if let token = entry.token { body(token) } }
    }

    /// At most `limit` subscribers numbered above `position`, and the cursor after them when
    /// more follow.
    func page(after position: UInt64, limit: Int) -> SubscriberPage {
        var page: [DeviceToken] = []
        var index = firstIndex(after: position)
        var last = position
        while index < order.endIndex && page.count < limit {
            if let token = order[index].token {
                page.append(token)
                last = order[index].number
            }
            index += 1
        }
        while index < order.endIndex && order[index].token == nil { index += 1 }
        return SubscriberPage(subscribers: page, next: index < order.endIndex ? .init(position: last) : nil)
    }

    /// The index of the first subscription numbered above `number` (binary search).
    private func firstIndex(after number: UInt64) -> Int {
        order.sortedIndex(past: { $0.number > number })
    }
}

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
