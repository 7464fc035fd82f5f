#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A phone's store-and-forward slots: one push per topic while the phone cannot take it, one
/// message per broadcast channel while it is offline, each until it expires.
struct StoredPushes {
    /// Apple's storage time-to-live when `apns-expiration` is omitted or later.
    static let lifetime: TimeInterval = 30 * 24 * 3600

    /// Stored pushes, one per topic (nil: the binary gateway's pushes, which have none).
    private(set) var slots: [String?: StoredPush] = [:]
    /// Stored broadcast messages, one per channel.
    private(set) var channelSlots: [String: StoredPush] = [:]
    /// The generator of the seeded storage choice, made when the first choice is due.
    private var generator: StorageGenerator?

    var isEmpty: Bool { slots.isEmpty && channelSlots.isEmpty }

    /// When a stored push expires: its `apns-expiration`, or 30 days after it was accepted,
    /// whichever comes first.
    static func expiry(of notification: PushNotification, acceptedAt: Date) -> Date {
        let limit = UnixTime.clamped(acceptedAt, adding: lifetime)
        guard let date = notification.expirationDate else { return limit }
        return min(date, limit)
    }

    /// A new storage choice forgets the generator of the old one.
    mutating func choiceChanged() { generator = nil }

    /// Stores a push in its topic's slot: a push already there is overwritten (the newest
    /// wins, or the seeded generator chooses), and the newer push gets the `offlineBurst`
    /// finding.
    mutating func store(
        _ facts: PushFacts, reason: DeliveryStatus, until: Date, choice: DeviceSettings.StorageChoice,
        at now: Date, steps: inout PhoneSteps
    ) {
        let notification = facts.notification
        let key = notification.topic
        steps.note(reason, notification, at: now)
        guard var old = slots[key] else {
            makeRoom(forChannel: false, at: now, steps: &steps)
            slots[key] = StoredPush(facts: facts, reason: reason, expiresAt: until)
            return
        }
        steps.find(
            .offlineBurst,
            "the phone already stores \(DeviceModel.name(of: old.notification)) for \(key ?? "this app"); "
                + "it keeps one push per app")
        old.offered += 1
        var keepNew = true
        if case .seededRandom(let seed) = choice {
            if generator == nil { generator = StorageGenerator(seed: seed) }
            keepNew = generator!.next() % UInt64(old.offered) == 0
        }
        if keepNew {
            steps.note(
                .overwritten, old.notification, at: now, detail: "overwritten by \(DeviceModel.name(of: notification))")
            slots[key] = StoredPush(facts: facts, reason: reason, expiresAt: until, offered: old.offered)
        } else {
            steps.note(
                .overwritten, notification, at: now,
                detail: "the seeded storage choice kept \(DeviceModel.name(of: old.notification))")
            slots[key] = old
        }
    }

    /// Stores a broadcast's message in its channel's slot, overwriting the one there.
    mutating func store(_ facts: PushFacts, channel: String, until: Date, at now: Date, steps: inout PhoneSteps) {
        let notification = facts.notification
        if let old = channelSlots[channel] {
            steps.note(
                .overwritten, old.notification, at: now, channelID: channel,
                detail: "overwritten by \(DeviceModel.name(of: notification))")
        } else {
            makeRoom(forChannel: true, at: now, steps: &steps)
        }
        channelSlots[channel] = StoredPush(
            facts: facts, reason: .storedDeviceOffline, expiresAt: until, channelID: channel)
        steps.note(.storedDeviceOffline, notification, at: now, channelID: channel)
    }

    /// Drops the oldest slot's push when the phone already stores pushes for the most slots
    /// and a new slot (a topic's, or a channel's) is about to be taken: the oldest of the same
    /// kind when there is one.
    private mutating func makeRoom(forChannel: Bool, at now: Date, steps: inout PhoneSteps) {
        guard slots.count + channelSlots.count >= PhoneState.Bounds.storageSlots else { return }
        let detail =
            "the phone stores pushes for at most \(PhoneState.Bounds.storageSlots) topics and channels: "
            + "the oldest is dropped"
        let oldestSlot = slots.min { $0.value.notification.sequenceNumber < $1.value.notification.sequenceNumber }
        let oldestChannel = channelSlots.min { $0.value.expiresAt < $1.value.expiresAt }
        if let oldestSlot, oldestChannel == nil || !forChannel {
            slots[oldestSlot.key] = nil
            steps.note(.overwritten, oldestSlot.value.notification, at: now, detail: detail)
        } else if let oldestChannel {
            channelSlots[oldestChannel.key] = nil
            steps.note(
                .overwritten, oldestChannel.value.notification, at: now, channelID: oldestChannel.key, detail: detail)
        }
    }

    /// After a change of the phone: discards what it no longer takes, marks what is stored for
    /// another reason now, and returns what it takes now, in the order the pushes were sent
    /// (topics' slots, then channels' when it is online).
    mutating func settle(
        _ settings: DeviceSettings, app: (String?) -> AppSettings, reason: (PushNotification) -> DeliveryStatus?,
        at now: Date, steps: inout PhoneSteps
    ) -> [StoredPush] {
        var released: [StoredPush] = []
        let inOrder = slots.sorted { $0.value.notification.sequenceNumber < $1.value.notification.sequenceNumber }
        for (key, stored) in inOrder {
            let notification = stored.notification
            let app = app(stored.facts.bundleID)
            if !app.isInstalled {
                slots[key] = nil
                steps.note(.discardedTokenUnregisteredFromStorage, notification, at: now)
            } else if app.authorization == .denied, !stored.facts.isBackground {
                slots[key] = nil
                steps.note(.discardedDisabledFromStorage, notification, at: now)
            } else if let reason = reason(notification) {
                guard reason != stored.reason else { continue }
                slots[key]?.reason = reason
                steps.note(reason, notification, at: now)
            } else {
                slots[key] = nil
                released.append(stored)
            }
        }
        if settings.isOnline {
            for (channel, stored) in channelSlots.sorted(by: { $0.key < $1.key }) {
                channelSlots[channel] = nil
                released.append(stored)
            }
        }
        return released
    }

    /// Takes the pushes stored for power considerations, in the order they were sent.
    mutating func takeBursts() -> [StoredPush] {
        let bursts = slots.filter { $0.value.reason == .storedPowerConsiderations }
            .sorted { $0.value.notification.sequenceNumber < $1.value.notification.sequenceNumber }
        for (key, _) in bursts { slots[key] = nil }
        return bursts.map(\.value)
    }

    /// The next push to expire.
    var nextExpiry: (at: Date, expiring: Slot)? {
        var next: (at: Date, expiring: Slot)?
        for (key, stored) in slots where next == nil || stored.expiresAt < next!.at {
            next = (stored.expiresAt, .topic(key))
        }
        for (channel, stored) in channelSlots where next == nil || stored.expiresAt < next!.at {
            next = (stored.expiresAt, .channel(channel))
        }
        return next
    }

    /// Discards the push in `slot`, expired at `date`.
    mutating func expire(_ slot: Slot, at date: Date, steps: inout PhoneSteps) {
        switch slot {
        case .topic(let key):
            guard let stored = slots.removeValue(forKey: key) else { return }
            steps.note(.discardedExpired, stored.notification, at: date)
        case .channel(let channel):
            guard let stored = channelSlots.removeValue(forKey: channel) else { return }
            steps.note(.discardedExpired, stored.notification, at: date, channelID: channel)
        }
    }

    /// A topic's slot or a channel's.
    enum Slot {
        case topic(String?)
        case channel(String)
    }
}

/// A push a storage slot holds (the phone is offline, restricted or asleep).
struct StoredPush {
    /// What the phone makes of it, read when it came.
    var facts: PushFacts
    var notification: PushNotification { facts.notification }
    /// `Stored - Device Offline` or `Stored - Power Considerations`.
    var reason: DeliveryStatus
    /// When it expires ("Discarded - Expired").
    var expiresAt: Date
    /// A broadcast's channel.
    var channelID: String?
    /// How many pushes were offered to the slot while it was full (for the seeded choice).
    var offered: Int = 1
}

/// SplitMix64: the seeded storage choice's generator, the same choices for the same seed.
struct StorageGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
