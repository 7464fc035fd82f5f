#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Store-and-forward: who gets a push at once, what is stored (one slot per topic), what
/// expires, and what a change of the phone releases or discards.
extension DeviceModel {
    /// Apple's storage time-to-live when `apns-expiration` is omitted or later.
    static let storageLifetime: TimeInterval = 30 * 24 * 3600

    /// What falls due later on a phone.
    enum DueEvent {
        case slotExpires(String?)
        case channelSlotExpires(String)
        case budgetRefills(String)
        case activity(String, LiveActivity.State)
    }

    // MARK: A push arrives

    /// Plays a push the stage took for a described phone.
    func play(_ notification: PushNotification, on phone: PhoneState, at now: Date) {
        note(.received, notification, on: phone, at: now)
        let app = phone.settings[app: notification.topic ?? ""]
        if !app.isInstalled {
            note(.discardedTokenUnregistered, notification, on: phone, at: now)
            return
        }
        if app.authorization == .denied, !Self.isBackground(notification) {
            note(.discardedDisabled, notification, on: phone, at: now)
            return
        }
        guard let reason = storageReason(notification, phone.settings) else {
            arrive(notification, on: phone, at: now, fromStorage: false)
            return
        }
        if Self.isOneAttempt(notification, at: now) {
            let grace = Self.seconds(phone.settings.expirationGrace)
            guard grace > 0 else {
                let detail = "apns-expiration \(notification.expiration ?? 0): one attempt, and the phone was unreachable"
                note(.discardedExpired, notification, on: phone, at: now, detail: detail)
                return
            }
            store(notification, reason: reason, until: now.addingTimeInterval(grace), on: phone, at: now)
            return
        }
        store(notification, reason: reason, until: Self.expiry(of: notification, acceptedAt: now), on: phone, at: now)
    }

    /// Plays a broadcast's delivery to a described phone.
    func play(_ delivery: BroadcastDelivery, on phone: PhoneState, at now: Date) {
        let notification = delivery.notification
        let channel = delivery.channelID
        note(.received, notification, on: phone, at: now, channelID: channel)
        if phone.settings.isOnline {
            arrive(notification, on: phone, at: now, fromStorage: false, channelID: channel)
            return
        }
        guard notification.expiration != 0 else {
            note(.discardedExpired, notification, on: phone, at: now, channelID: channel,
                detail: "the channel stores no message")
            return
        }
        var until = now.addingTimeInterval(ChannelRegistry.storedMessageLifetime)
        if let expiry = notification.expirationDate, expiry < until { until = expiry }
        if let old = phone.channelSlots[channel] {
            note(.overwritten, old.notification, on: phone, at: now, channelID: channel,
                detail: "overwritten by \(Self.name(of: notification))")
        } else {
            makeRoom(on: phone, forChannel: true, at: now)
        }
        phone.channelSlots[channel] = StoredPush(
            notification: notification, reason: .storedDeviceOffline, expiresAt: until, channelID: channel)
        note(.storedDeviceOffline, notification, on: phone, at: now, channelID: channel)
    }

    /// Why the phone cannot take the push now (nil: it can).
    func storageReason(_ notification: PushNotification, _ settings: DeviceSettings) -> DeliveryStatus? {
        if !settings.isOnline { return .storedDeviceOffline }
        let priority = notification.priority.rawValue
        if priority <= 5, settings.isPowerRestricted { return .storedPowerConsiderations }
        if priority <= 1, !settings.isAwake { return .storedPowerConsiderations }
        return nil
    }

    /// `apns-expiration` 0, or a date already past: one attempt, no storage.
    static func isOneAttempt(_ notification: PushNotification, at now: Date) -> Bool {
        guard let expiration = notification.expiration else { return false }
        return expiration == 0 || Date(timeIntervalSince1970: TimeInterval(expiration)) <= now
    }

    /// When a stored push expires: its `apns-expiration`, or 30 days after it was accepted,
    /// whichever comes first.
    static func expiry(of notification: PushNotification, acceptedAt: Date) -> Date {
        let limit = acceptedAt.addingTimeInterval(storageLifetime)
        guard let date = notification.expirationDate else { return limit }
        return min(date, limit)
    }

    /// Stores a push in its topic's slot: a push already there is overwritten (the newest
    /// wins, or the seeded generator chooses), and the newer push gets the `offlineBurst`
    /// finding.
    private func store(
        _ notification: PushNotification, reason: DeliveryStatus, until: Date, on phone: PhoneState, at now: Date
    ) {
        let key = notification.topic
        note(reason, notification, on: phone, at: now)
        guard var old = phone.slots[key] else {
            makeRoom(on: phone, forChannel: false, at: now)
            phone.slots[key] = StoredPush(notification: notification, reason: reason, expiresAt: until)
            return
        }
        find(.offlineBurst, "the phone already stores \(Self.name(of: old.notification)) for \(key ?? "this app"); it keeps one push per app")
        old.offered += 1
        var keepNew = true
        if case .seededRandom(let seed) = phone.settings.storage {
            if phone.generator == nil { phone.generator = StorageGenerator(seed: seed) }
            keepNew = phone.generator!.next() % UInt64(old.offered) == 0
        }
        if keepNew {
            note(.overwritten, old.notification, on: phone, at: now, detail: "overwritten by \(Self.name(of: notification))")
            phone.slots[key] = StoredPush(notification: notification, reason: reason, expiresAt: until, offered: old.offered)
        } else {
            note(.overwritten, notification, on: phone, at: now,
                detail: "the seeded storage choice kept \(Self.name(of: old.notification))")
            phone.slots[key] = old
        }
    }

    /// Drops the oldest slot's push when the phone already stores pushes for the most slots
    /// and a new slot (a topic's, or a channel's) is about to be taken: the oldest of the same
    /// kind when there is one.
    private func makeRoom(on phone: PhoneState, forChannel: Bool, at now: Date) {
        let taken = phone.slots.count + phone.channelSlots.count
        guard taken >= PhoneState.Bounds.storageSlots else { return }
        let detail = "the phone stores pushes for at most \(PhoneState.Bounds.storageSlots) topics and channels: the oldest is dropped"
        let oldestSlot = phone.slots.min { $0.value.notification.sequenceNumber < $1.value.notification.sequenceNumber }
        let oldestChannel = phone.channelSlots.min { $0.value.expiresAt < $1.value.expiresAt }
        if let oldestSlot, oldestChannel == nil || !forChannel {
            phone.slots[oldestSlot.key] = nil
            note(.overwritten, oldestSlot.value.notification, on: phone, at: now, detail: detail)
        } else if let oldestChannel {
            phone.channelSlots[oldestChannel.key] = nil
            note(.overwritten, oldestChannel.value.notification, on: phone, at: now, channelID: oldestChannel.key,
                detail: detail)
        }
    }

    // MARK: The phone changes

    /// After a change of the phone: discards what it no longer takes, delivers what it now
    /// takes, in the order the pushes were sent, and releases held background pushes.
    func settle(_ phone: PhoneState, at now: Date) {
        for (key, stored) in phone.slots.sorted(by: { $0.value.notification.sequenceNumber < $1.value.notification.sequenceNumber }) {
            let notification = stored.notification
            let app = phone.settings[app: notification.topic ?? ""]
            if !app.isInstalled {
                phone.slots[key] = nil
                note(.discardedTokenUnregisteredFromStorage, notification, on: phone, at: now)
            } else if app.authorization == .denied, !Self.isBackground(notification) {
                phone.slots[key] = nil
                note(.discardedDisabledFromStorage, notification, on: phone, at: now)
            } else if let reason = storageReason(notification, phone.settings) {
                guard reason != stored.reason else { continue }
                phone.slots[key]?.reason = reason
                note(reason, notification, on: phone, at: now)
            } else {
                phone.slots[key] = nil
                arrive(notification, on: phone, at: now, fromStorage: true)
            }
        }
        if phone.settings.isOnline {
            for (channel, stored) in phone.channelSlots.sorted(by: { $0.key < $1.key }) {
                phone.channelSlots[channel] = nil
                arrive(stored.notification, on: phone, at: now, fromStorage: true, channelID: channel)
            }
        }
        settleHeld(phone, at: now)
    }

    /// Delivers the pushes stored for power considerations, as a burst, when the phone is
    /// online.
    func releaseBursts(of phone: PhoneState, at now: Date) {
        guard phone.settings.isOnline else { return }
        for (key, stored) in phone.slots.sorted(by: { $0.value.notification.sequenceNumber < $1.value.notification.sequenceNumber })
        where stored.reason == .storedPowerConsiderations {
            phone.slots[key] = nil
            arrive(stored.notification, on: phone, at: now, fromStorage: true)
        }
    }

    // MARK: Time

    /// The phone's next transition, whenever it falls due.
    func nextDue(on phone: PhoneState) -> (at: Date, event: DueEvent)? {
        var next: (at: Date, event: DueEvent)?
        func consider(_ date: Date?, _ event: @autoclosure () -> DueEvent) {
            guard let date, next == nil || date < next!.at else { return }
            next = (date, event())
        }
        for (key, stored) in phone.slots { consider(stored.expiresAt, .slotExpires(key)) }
        for (channel, stored) in phone.channelSlots { consider(stored.expiresAt, .channelSlotExpires(channel)) }
        for (bundle, held) in phone.held where held.byBudget {
            consider(budgetRefill(for: bundle, on: phone), .budgetRefills(bundle))
        }
        for (key, activity) in phone.activities {
            switch activity.shown.state {
            case .active:
                consider(activity.shown.staleDate.flatMap { $0 < activity.endsAt ? $0 : nil }, .activity(key, .stale))
                consider(activity.endsAt, .activity(key, .ended))
            case .stale:
                consider(activity.endsAt, .activity(key, .ended))
            case .ended:
                consider(activity.dismissesAt, .activity(key, .dismissed))
            case .dismissed:
                break
            }
        }
        return next
    }

    /// Plays one due transition at its instant.
    func fire(_ event: DueEvent, on phone: PhoneState, at date: Date) {
        switch event {
        case .slotExpires(let key):
            guard let stored = phone.slots.removeValue(forKey: key) else { return }
            note(.discardedExpired, stored.notification, on: phone, at: date)
        case .channelSlotExpires(let channel):
            guard let stored = phone.channelSlots.removeValue(forKey: channel) else { return }
            note(.discardedExpired, stored.notification, on: phone, at: date, channelID: channel)
        case .budgetRefills(let bundle):
            guard let held = phone.held.removeValue(forKey: bundle) else { return }
            wake(held.notification, on: phone, at: date, detail: "released: the background budget refilled")
        case .activity(let key, let state):
            transition(key, to: state, on: phone, at: date)
        }
    }

    // MARK: Names

    /// "#3 (apns-id …)", how a detail names a push.
    static func name(of notification: PushNotification) -> String {
        if let apnsID = notification.apnsID { return "#\(notification.sequenceNumber) (apns-id \(apnsID))" }
        return "#\(notification.sequenceNumber)"
    }

    static func seconds(_ duration: Duration) -> TimeInterval {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
