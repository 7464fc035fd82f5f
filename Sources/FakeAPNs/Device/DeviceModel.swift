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
/// A phone no test touched costs nothing: the model plays nothing while no phone is
/// described, and keeps the retained pushes by token and by `apns-unique-id` (``PushIndex``)
/// only from the first describe or look-up by unique id. A phone is described the first time
/// a test reads or changes it, and is then caught up on the retained pushes of its token, as a
/// default phone would have had them.
///
/// Time is an index, not a scan: each described phone's next transition (an expiry, a budget
/// refill, a Live Activity date) is kept in a ``TimeIndex``, so a clock advance visits only
/// what falls due, and a change to one phone touches only that phone's entry. Anything that
/// reads or changes a phone first plays what fell due on that phone. An advance plays its due
/// transitions in time order in slices of at most ``sliceSize``, leaving the lock between
/// slices (after any thread waiting for it has had it), so a push on another connection waits
/// for one slice, never for the whole advance.
package final class DeviceModel: IntakeStage, @unchecked Sendable {
    private let lock: ConditionLock
    let clock: ServerClock
    let logLimit: Int
    private let retention: Int?
    private let history: History<PushNotification>
    private let announce: (@Sendable ([DeliveryLogEntry]) -> Void)?
    /// The apps a test described: categories, sounds and entitlements shape the screen.
    let apps: AppCatalog?
    private let strictLint: Bool
    /// Whether the device registry says the token's app was uninstalled (reported or not
    /// yet): the phone discards what APNs still accepts for it.
    let isUninstalled: (@Sendable (DeviceToken) -> Bool)?
    /// Subscribes a token to a broadcast channel, inside the intake's lock; false when no such
    /// channel exists (a push-started Live Activity's `input-push-channel`).
    let subscribeToChannel: (@Sendable (DeviceToken, String) -> Bool)?
    /// Tells the device registry that the activity of a topic on a token was dismissed, at a
    /// date: its pushes are answered `ExpiredToken` from then on, without the model's lock.
    let activityDismissed: (@Sendable (DeviceToken, String, Date) -> Void)?
    /// The most phones described at once (``PhoneState/Bounds/phones``; less in tests).
    private let maximumPhones: Int
    /// The most due transitions an advance plays in one hold of the lock.
    package let sliceSize: Int
    /// Called between an advance's slices, outside the lock (tests watch the slices with it).
    package let betweenSlices: (@Sendable () -> Void)?
    // Protected by `lock`:
    private var phones: [DeviceToken: PhoneState] = [:]
    /// The described phones, first described first: the first is forgotten first.
    private var describedOrder = FirstInFirstOut<DeviceToken>()
    /// Each described phone's next transition.
    private var due = TimeIndex<PhoneState>()
    private var pushes: PushIndex
    /// The phones whose logs hold entries of each `apns-unique-id` (lowercased), with how many.
    private var logged: [String: [DeviceToken: Int]] = [:]

    /// A model that keeps `logLimit` log entries per phone, judges time by `clock`, catches a
    /// phone up from `history` when a test first describes it, and tells `announce` each batch
    /// of log entries, inside the lock. `apps` shape what the screen shows; `strictLint` records
    /// the model's error-level findings as refusals; `isUninstalled` is the device registry's
    /// word on a token's app; `subscribeToChannel` and `activityDismissed` reach the channels
    /// and the device registry; at most `maximumPhones` are described at once; an advance plays
    /// `sliceSize` transitions per hold of the lock and calls `betweenSlices` between them.
    package init(
        lock: ConditionLock, clock: ServerClock, logLimit: Int, history: History<PushNotification>,
        announce: (@Sendable ([DeliveryLogEntry]) -> Void)?, apps: AppCatalog? = nil, strictLint: Bool = false,
        isUninstalled: (@Sendable (DeviceToken) -> Bool)? = nil,
        subscribeToChannel: (@Sendable (DeviceToken, String) -> Bool)? = nil,
        activityDismissed: (@Sendable (DeviceToken, String, Date) -> Void)? = nil,
        maximumPhones: Int = PhoneState.Bounds.phones, sliceSize: Int = 256,
        betweenSlices: (@Sendable () -> Void)? = nil
    ) {
        self.subscribeToChannel = subscribeToChannel
        self.activityDismissed = activityDismissed
        self.maximumPhones = max(1, maximumPhones)
        self.isUninstalled = isUninstalled
        self.lock = lock
        self.clock = clock
        self.logLimit = max(1, logLimit)
        self.retention = history.capacity
        self.history = history
        self.announce = announce
        self.apps = apps
        self.strictLint = strictLint
        self.sliceSize = max(1, sliceSize)
        self.betweenSlices = betweenSlices
        pushes = PushIndex(capacity: history.capacity)
    }

    // MARK: The intake's stage

    package func unlockedTake(_ notifications: inout [PushNotification], rejections: inout [Rejection]) {
        if pushes.isActive { for notification in notifications { pushes.add(notification) } }
        guard !phones.isEmpty else { return }
        let now = clock.currentDate
        for index in notifications.indices {
            let notification = notifications[index]
            guard notification.format != .broadcast, let phone = phones[notification.deviceToken] else { continue }
            let uninstalled = isUninstalled?(phone.token) == true
            let found = play(on: phone, at: now, judging: notification.sequenceNumber) { steps in
                phone.play(notification, uninstalled: uninstalled, apps: apps, at: now, steps: &steps)
            }
            guard !found.isEmpty else { continue }
            notifications[index].deviceLintFindings = found
            if strictLint {
                for finding in found where finding.level == .error {
                    rejections.append(Rejection(lintFinding: finding, of: notifications[index]))
                }
            }
        }
    }

    package func unlockedTake(_ deliveries: [BroadcastDelivery]) {
        guard !phones.isEmpty else { return }
        let now = clock.currentDate
        for delivery in deliveries {
            guard let phone = phones[delivery.deviceToken] else { continue }
            play(on: phone, at: now) { steps in phone.play(delivery, apps: apps, at: now, steps: &steps) }
        }
    }

    package func unlockedReset() {
        for phone in phones.values { phone.deliveries.removeAll() }
        phones = [:]
        describedOrder = FirstInFirstOut()
        due.removeAll()
        pushes.removeAll()
        logged = [:]
    }

    // MARK: Phones

    /// The phones a test has described or read, in no order.
    package var describedTokens: [DeviceToken] { lock.withLock { Array(phones.keys) } }

    package func settings(of token: DeviceToken) -> DeviceSettings {
        withPhone(token) { phone, _, _ in phone.settings }
    }

    /// The settings and the version a change of them must find (``update(_:to:ifAt:)``).
    package func versionedSettings(of token: DeviceToken) -> (DeviceSettings, UInt64) {
        withPhone(token) { phone, _, _ in (phone.settings, phone.settingsVersion) }
    }

    /// Sets the phone's settings, when still at `version` (nil: whatever they are), and plays
    /// what the change releases or discards. False when another change came in between.
    @discardableResult
    package func update(_ token: DeviceToken, to new: DeviceSettings, ifAt version: UInt64? = nil) -> Bool {
        withPhone(token) { phone, now, steps in
            phone.update(to: new, ifAt: version, at: now, steps: &steps)
        }
    }

    package func launchApp(_ bundleID: String, on token: DeviceToken) {
        withPhone(token) { phone, now, steps in
            phone.launch(AppBundle.bundleID(of: bundleID), at: now, steps: &steps)
        }
    }

    package func forceQuit(_ bundleID: String, on token: DeviceToken) {
        withPhone(token) { phone, now, steps in
            phone.forceQuit(AppBundle.bundleID(of: bundleID), at: now, steps: &steps)
        }
    }

    package func startLiveActivity(_ topic: String, attributesType: String?, on token: DeviceToken) {
        withPhone(token) { phone, now, _ in
            phone.startLiveActivity(topic: topic, attributesType: attributesType, at: now)
        }
    }

    package func releaseBursts(on token: DeviceToken) {
        withPhone(token) { phone, now, steps in phone.releaseBursts(at: now, steps: &steps) }
    }

    package func log(of token: DeviceToken) -> [DeliveryLogEntry] {
        withPhone(token) { phone, _, _ in Array(phone.log.items) }
    }

    /// Every phone's steps of the push with this `apns-unique-id` (a broadcast's reach many):
    /// the phones are found by index, and only they are read.
    package func log(uniqueID: String) -> [DeliveryLogEntry] {
        let wanted = uniqueID.lowercased()
        return lock.withLock {
            let now = clock.currentDate
            pushes.activate(with: history.list())
            // A device push to a phone no test described yet: describing it catches its log up.
            if let number = pushes.sequenceNumber(uniqueID: wanted), let push = retained(number),
                phones[push.deviceToken] == nil
            {
                _ = describe(push.deviceToken, at: now)
            }
            var entries: [DeliveryLogEntry] = []
            for token in logged[wanted]?.keys.map({ $0 }) ?? [] {
                guard let phone = phones[token] else { continue }
                play(on: phone, at: now) { _ in }
                entries += phone.log.items.filter { $0.uniqueID?.lowercased() == wanted }
            }
            return entries.sorted { ($0.at, $0.sequenceNumber) < ($1.at, $1.sequenceNumber) }
        }
    }

    package func screen(of token: DeviceToken) -> Screen {
        withPhone(token) { phone, _, _ in phone.screen }
    }

    package func deliveries(of token: DeviceToken) -> Mailbox<DeviceDelivery> {
        withPhone(token) { phone, _, _ in phone.deliveries }
    }

    /// Plays what falls due up to `now` (expiry, budgets refilling, Live Activity dates), in
    /// time order, in slices of ``sliceSize`` transitions with the lock left between them.
    package func advance(to now: Date) {
        while true {
            let more = lock.withLock {
                var played = 0
                while played < sliceSize, let first = due.first(), first.at <= now {
                    played += 1
                    let phone = first.indexed
                    play(on: phone, at: now, catchingUp: false) { steps in
                        guard let next = phone.nextDue, next.at <= now else { return }
                        phone.fire(next.event, at: next.at, steps: &steps)
                    }
                }
                return due.first().map { $0.at <= now } ?? false
            }
            guard more else { return }
            lock.yieldToWaiters()
            betweenSlices?()
        }
    }

    // MARK: Inside the lock

    /// Inside the lock: describes the phone (catching it up the first time), plays what fell
    /// due on it and runs `body` with it, the time now and the steps to add to.
    private func withPhone<T>(_ token: DeviceToken, _ body: (PhoneState, Date, inout PhoneSteps) -> T) -> T {
        lock.withLock {
            let now = clock.currentDate
            let phone = phones[token] ?? describe(token, at: now)
            // What fell due is in the log before `body` reads it.
            play(on: phone, at: now) { _ in }
            var result: T?
            play(on: phone, at: now) { steps in result = body(phone, now, &steps) }
            return result!
        }
    }

    /// Plays `body` on `phone` with what fell due on it before and after (a Live Activity's
    /// stale or dismissal date already past applies at once), then applies the steps: the
    /// log and its index, the deliveries (with the findings on the push numbered `judging`),
    /// the announcement and the phone's place in the time index. Returns the findings.
    @discardableResult
    private func play(
        on phone: PhoneState, at now: Date, judging: UInt64? = nil, catchingUp: Bool = true,
        _ body: (inout PhoneSteps) -> Void
    ) -> [LintFinding] {
        var steps = PhoneSteps(token: phone.token)
        if catchingUp { catchUp(phone, to: now, steps: &steps) }
        body(&steps)
        if catchingUp { catchUp(phone, to: now, steps: &steps) }
        for channel in steps.channelsJoined where subscribeToChannel?(phone.token, channel) == false {
            let shown = channel.count > 64 ? String(channel.prefix(64)) + "…" : channel
            steps.find(
                .liveActivityUnknownChannel,
                "aps.input-push-channel \(shown) names no channel the server knows; the activity gets no broadcast"
                    + " updates")
        }
        for dismissed in steps.activitiesDismissed {
            activityDismissed?(phone.token, AppBundle.bundleID(of: dismissed.topic), dismissed.at)
        }
        let dropped = phone.record(steps.entries)
        for entry in steps.entries { count(entry, by: 1) }
        for entry in dropped { count(entry, by: -1) }
        let deliveries = steps.deliveries(judging: judging, with: steps.findings) { [self] number in
            retained(number)?.deviceLintFindings ?? []
        }
        for delivery in deliveries { phone.deliveries.append(delivery) }
        if !steps.entries.isEmpty { announce?(steps.entries) }
        due.set(phone, at: phone.nextDue?.at)
        return judging == nil ? [] : steps.findings
    }

    /// Plays every transition due on `phone` by `now`, in time order. Each transition removes
    /// what made it due, so the loop ends; the bound is a guard against a rule that would not.
    private func catchUp(_ phone: PhoneState, to now: Date, steps: inout PhoneSteps) {
        for _ in 0..<Self.transitionsPerCatchUp {
            guard let next = phone.nextDue, next.at <= now else { return }
            phone.fire(next.event, at: next.at, steps: &steps)
        }
    }

    /// More than one phone's parts can have due at once (slots, held pushes, three
    /// transitions per Live Activity).
    private static let transitionsPerCatchUp =
        2 * PhoneState.Bounds.storageSlots + 3 * PhoneState.Bounds.liveActivities + 1024

    /// A phone described for the first time: caught up on the retained pushes of its token,
    /// each received and delivered at once when it was received, as a phone no test described
    /// has it. Describing one past the most forgets the first described.
    private func describe(_ token: DeviceToken, at now: Date) -> PhoneState {
        if phones.count >= maximumPhones, let first = describedOrder.removeFirst(),
            let forgotten = phones.removeValue(forKey: first)
        {
            forgotten.deliveries.removeAll()
            for entry in forgotten.log.items { count(entry, by: -1) }
            due.remove(forgotten)
        }
        let capacity = min(retention ?? logLimit, logLimit)
        let phone = PhoneState(
            token: token, deliveries: Mailbox(noun: "delivery to \(token.hex)", capacity: capacity), logLimit: logLimit)
        phones[token] = phone
        describedOrder.append(token)
        pushes.activate(with: history.list())
        play(on: phone, at: now) { steps in
            for number in pushes.sequenceNumbers(of: token) {
                guard let notification = retained(number) else { continue }
                phone.replay(notification, apps: apps, steps: &steps)
            }
        }
        return phone
    }

    /// The retained push numbered `number`.
    private func retained(_ number: UInt64) -> PushNotification? {
        guard number > 0, let push = history.list(since: number - 1, limit: 1).first, push.sequenceNumber == number
        else { return nil }
        return push
    }

    /// Counts a log entry in (or out of) the index by `apns-unique-id`.
    private func count(_ entry: DeliveryLogEntry, by change: Int) {
        guard let uniqueID = entry.uniqueID?.lowercased() else { return }
        let now = (logged[uniqueID]?[entry.deviceToken] ?? 0) + change
        if now > 0 {
            logged[uniqueID, default: [:]][entry.deviceToken] = now
        } else {
            logged[uniqueID]?[entry.deviceToken] = nil
            if logged[uniqueID]?.isEmpty == true { logged[uniqueID] = nil }
        }
    }

    // MARK: Names

    /// "#3 (apns-id …)", how a detail names a push.
    static func name(of notification: PushNotification) -> String {
        if let apnsID = notification.apnsID { return "#\(notification.sequenceNumber) (apns-id \(apnsID))" }
        return "#\(notification.sequenceNumber)"
    }
}
