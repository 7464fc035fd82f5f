#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The phones behind the front door: every push the intake accepted for a phone a test
/// described is played through it, by the rules of the device-delivery notes, on the server's
/// ``ServerClock``. Guarded by the intake's lock, so a reset sees the phones as of the same
/// instant as the queues.
///
/// A phone no test touched costs nothing: the stage returns at once while no phone is
/// described. A phone is described the first time a test reads or changes it, and is then
/// caught up on the retained history of its token, as a default phone would have had it.
package final class DeviceModel: IntakeStage, @unchecked Sendable {
    private let lock: ConditionLock
    let clock: ServerClock
    let logLimit: Int
    private let retention: Int?
    private let history: () -> [PushNotification]
    private let announce: (@Sendable ([DeliveryLogEntry]) -> Void)?
    /// The apps a test described: categories, sounds and entitlements shape the screen.
    let apps: AppCatalog?
    private let strictLint: Bool
    /// Whether the device registry says the token's app was uninstalled (reported or not
    /// yet): the phone discards what APNs still accepts for it.
    let isUninstalled: (@Sendable (DeviceToken) -> Bool)?
    /// The most phones described at once (``PhoneState/Bounds/phones``; less in tests).
    private let maximumPhones: Int
    // Protected by `lock`:
    private var phones: [DeviceToken: PhoneState] = [:]
    /// How many phones were ever described: the next one's order.
    private var describedCount: UInt64 = 0
    /// The entries played since the last announcement, announced in order at the end of each
    /// entry point.
    var played: [DeliveryLogEntry] = []
    /// The model's findings of the push being played by the stage (nil: none is).
    var findings: [LintFinding]?
    /// The earliest transition due on any phone, as of the last look; `stale` once anything
    /// changed since, so a batch looks again only when it may find something.
    private var earliestDue: Date?
    var dueIsStale = false

    /// A model that keeps `logLimit` log entries per phone, judges time by `clock`, reads
    /// `history` (inside the lock) to catch a phone up on what was sent before a test first
    /// described it, and tells `announce` each batch of log entries, inside the lock. `apps`
    /// shape what the screen shows; `strictLint` records the model's error-level findings as
    /// refusals; `isUninstalled` is the device registry's word on a token's app; at most
    /// `maximumPhones` are described at once.
    package init(
        lock: ConditionLock, clock: ServerClock, logLimit: Int, retention: Int?,
        history: @escaping () -> [PushNotification], announce: (@Sendable ([DeliveryLogEntry]) -> Void)?,
        apps: AppCatalog? = nil, strictLint: Bool = false, isUninstalled: (@Sendable (DeviceToken) -> Bool)? = nil,
        maximumPhones: Int = PhoneState.Bounds.phones
    ) {
        self.maximumPhones = max(1, maximumPhones)
        self.isUninstalled = isUninstalled
        self.lock = lock
        self.clock = clock
        self.logLimit = max(1, logLimit)
        self.retention = retention
        self.history = history
        self.announce = announce
        self.apps = apps
        self.strictLint = strictLint
    }

    // MARK: The intake's stage

    package func unlockedTake(_ notifications: inout [PushNotification], rejections: inout [Rejection]) {
        guard !phones.isEmpty else { return }
        let now = clock.currentDate
        unlockedAdvance(to: now)
        for index in notifications.indices {
            let notification = notifications[index]
            guard notification.format != .broadcast, let phone = phones[notification.deviceToken],
                notification.sequenceNumber > phone.replayedThrough
            else { continue }
            findings = []
            play(notification, on: phone, at: now)
            let found = findings ?? []
            findings = nil
            guard !found.isEmpty else { continue }
            notifications[index].judgedLintFindings = notification.lintFindings + found
            if strictLint {
                for finding in found where finding.level == .error {
                    rejections.append(Rejection(lintFinding: finding, of: notifications[index]))
                }
            }
        }
        flushPlayed()
    }

    package func unlockedTake(_ deliveries: [BroadcastDelivery]) {
        guard !phones.isEmpty else { return }
        let now = clock.currentDate
        unlockedAdvance(to: now)
        for delivery in deliveries {
            guard let phone = phones[delivery.deviceToken] else { continue }
            play(delivery, on: phone, at: now)
        }
        flushPlayed()
    }

    package func unlockedReset() {
        for phone in phones.values { phone.deliveries.removeAll() }
        phones = [:]
        played = []
        earliestDue = nil
        dueIsStale = false
    }

    // MARK: Phones

    /// The phones a test has described or read, in no order.
    package var describedTokens: [DeviceToken] { lock.withLock { Array(phones.keys) } }

    package func settings(of token: DeviceToken) -> DeviceSettings {
        withPhone(token) { phone, _ in phone.settings }
    }

    /// Sets the phone's settings and plays what the change releases or discards.
    package func update(_ token: DeviceToken, to new: DeviceSettings) {
        withPhone(token) { phone, now in
            if new.storage != phone.settings.storage { phone.generator = nil }
            dueIsStale = true
            phone.settings = new
            settle(phone, at: now)
        }
    }

    package func launchApp(_ bundleID: String, on token: DeviceToken) {
        withPhone(token) { phone, now in
            let bundle = AppBundle.bundleID(of: bundleID)
            if phone.settings[app: bundle].state == .forceQuit { phone.settings[app: bundle].state = .background }
            if let held = phone.held.removeValue(forKey: bundle) {
                wake(held.notification, on: phone, at: now, detail: "released: \(bundle) was launched")
            }
        }
    }

    package func forceQuit(_ bundleID: String, on token: DeviceToken) {
        withPhone(token) { phone, now in
            let bundle = AppBundle.bundleID(of: bundleID)
            phone.settings[app: bundle].state = .forceQuit
            settle(phone, at: now)
        }
    }

    package func releaseBursts(on token: DeviceToken) {
        withPhone(token) { phone, now in
            releaseBursts(of: phone, at: now)
            settle(phone, at: now)
        }
    }

    package func log(of token: DeviceToken) -> [DeliveryLogEntry] {
        withPhone(token) { phone, _ in Array(phone.log.items) }
    }

    /// Every phone's steps of the push with this `apns-unique-id` (a broadcast's reach many).
    package func log(uniqueID: String) -> [DeliveryLogEntry] {
        let wanted = uniqueID.lowercased()
        return lock.withLock {
            unlockedAdvance(to: clock.currentDate)
            // A device push to a phone no test described yet: describing it catches its log up.
            if let push = history().last(where: { $0.format != .broadcast && $0.uniqueID?.lowercased() == wanted }),
                phones[push.deviceToken] == nil
            {
                _ = describe(push.deviceToken)
            }
            flushPlayed()
            return phones.values.flatMap { $0.log.items.filter { $0.uniqueID?.lowercased() == wanted } }
                .sorted { ($0.at, $0.sequenceNumber) < ($1.at, $1.sequenceNumber) }
        }
    }

    package func screen(of token: DeviceToken) -> Screen {
        withPhone(token) { phone, _ in phone.currentScreen }
    }

    package func deliveries(of token: DeviceToken) -> Mailbox<DeviceDelivery> {
        withPhone(token) { phone, _ in phone.deliveries }
    }

    /// Plays what falls due up to `now` (expiry, budgets refilling, Live Activity dates).
    package func advance(to now: Date) {
        lock.withLock {
            unlockedAdvance(to: now)
            flushPlayed()
        }
    }

    // MARK: Inside the lock

    /// Inside the lock: catches the model up with the clock, describes the phone (replaying
    /// its history the first time) and runs `body` with it and the time now, then announces
    /// what was played.
    private func withPhone<T>(_ token: DeviceToken, _ body: (PhoneState, Date) -> T) -> T {
        lock.withLock {
            let now = clock.currentDate
            unlockedAdvance(to: now)
            let phone = phones[token] ?? describe(token)
            let result = body(phone, now)
            flushPlayed()
            return result
        }
    }

    /// A phone described for the first time: caught up on the history of its token, each push
    /// received and delivered at once when it was received, as a phone no test described has it.
    private func describe(_ token: DeviceToken) -> PhoneState {
        let capacity = min(retention ?? logLimit, logLimit)
        if phones.count >= maximumPhones, let first = phones.values.min(by: { $0.describedOrder < $1.describedOrder }) {
            first.deliveries.removeAll()
            phones[first.token] = nil
        }
        describedCount += 1
        let phone = PhoneState(
            token: token, describedOrder: describedCount,
            deliveries: Mailbox(noun: "delivery to \(token.hex)", capacity: capacity), logLimit: logLimit)
        phones[token] = phone
        for notification in history() {
            phone.replayedThrough = max(phone.replayedThrough, notification.sequenceNumber)
            guard notification.deviceToken == token, notification.format != .broadcast else { continue }
            note(.received, notification, on: phone, at: notification.receivedAt)
            arrive(notification, on: phone, at: notification.receivedAt, fromStorage: false, replaying: true)
        }
        return phone
    }

    /// Plays, in time order, every transition due by `now` on every described phone.
    func unlockedAdvance(to now: Date) {
        guard !phones.isEmpty, dueIsStale || earliestDue.map({ $0 <= now }) == true else { return }
        while true {
            var next: (at: Date, phone: PhoneState, event: DueEvent)?
            for phone in phones.values {
                guard let due = nextDue(on: phone) else { continue }
                if next == nil || due.at < next!.at { next = (due.at, phone, due.event) }
            }
            dueIsStale = false
            earliestDue = next?.at
            guard let next, next.at <= now else { return }
            fire(next.event, on: next.phone, at: next.at)
        }
    }

    /// Records an entry in the phone's log (oldest dropped past the limit) and for the
    /// announcement.
    func note(
        _ status: DeliveryStatus, _ notification: PushNotification, on phone: PhoneState, at date: Date,
        channelID: String? = nil, detail: String? = nil
    ) {
        let entry = DeliveryLogEntry(
            status: status, at: date, deviceToken: phone.token, topic: notification.topic, apnsID: notification.apnsID,
            uniqueID: notification.uniqueID, sequenceNumber: notification.sequenceNumber,
            channelID: channelID ?? notification.channelID, detail: detail)
        dueIsStale = true
        phone.log.append(contentsOf: [entry])
        played.append(entry)
    }

    /// Adds a finding to the push the stage is playing (none when the model plays a stored,
    /// held or replayed push).
    func find(_ rule: LintRule, _ message: String) {
        findings?.append(LintFinding(rule, message))
    }

    private func flushPlayed() {
        guard !played.isEmpty else { return }
        let entries = played
        played = []
        announce?(entries)
    }
}
