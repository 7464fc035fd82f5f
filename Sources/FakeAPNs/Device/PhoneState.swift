#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One described phone, as the device model plays it: what the test said about it, its log and
/// deliveries, and its parts, each owning its own state: the storage slots
/// (``StoredPushes``), the background wakes and held pushes (``BackgroundWakes``), the Live
/// Activities (``LiveActivities``) and the notification centre (``NotificationCentre``).
/// A push is played by the part it concerns; every part adds what it did to the
/// ``PhoneSteps`` it is handed. Guarded by the intake's lock, and each part bounded
/// (``Bounds``): a phone a test floods keeps a fixed amount.
final class PhoneState: TimeIndexed {
    /// The most of each part one phone keeps.
    enum Bounds {
        /// Storage slots (one per topic, plus one per broadcast channel): beyond, the oldest
        /// slot's push is dropped.
        static let storageSlots = 256
        /// Notification centre entries: beyond, the oldest is dropped.
        static let notificationCenter = 1000
        /// Live Activities: beyond, the oldest is forgotten.
        static let liveActivities = 256
        /// Background wakes (and Live Activity updates) remembered to judge the budgets.
        static let wakesJudged = 4096
        /// Described phones at one server: describing one more forgets the phone described
        /// first, so a control API client reading random tokens cannot grow the model.
        static let phones = 10_000
    }

    let token: DeviceToken
    /// When it next falls due in the model's index of time, and its current entry there.
    var timeIndexDue: Date?
    var timeIndexVersion: UInt64 = 0
    private(set) var settings = DeviceSettings()
    /// Counts the changes of `settings`: a test's change made outside the lock is applied only
    /// if no other came in between.
    private(set) var settingsVersion: UInt64 = 0
    let deliveries: Mailbox<DeviceDelivery>
    /// Pushes numbered up to this one were played when the phone was described: the stage
    /// plays only later ones.
    var replayedThrough: UInt64 = 0
    /// The delivery log, oldest first, at most the model's log limit.
    private(set) var log: BoundedQueue<DeliveryLogEntry>
    private var storage = StoredPushes()
    private var background: BackgroundWakes
    private var activities = LiveActivities()
    private var centre = NotificationCentre()

    init(token: DeviceToken, deliveries: Mailbox<DeviceDelivery>, logLimit: Int) {
        self.token = token
        self.deliveries = deliveries
        log = BoundedQueue(capacity: logLimit)
        background = BackgroundWakes(shownLimit: logLimit)
    }

    /// What the phone shows now: its notification centre newest first, its Live Activities
    /// oldest first.
    var screen: Screen {
        var shown = Screen()
        shown.badges = centre.badges
        shown.wakes = background.shown
        shown.notificationCenter = centre.entries.items.reversed()
        shown.liveActivities = activities.shown
        return shown
    }

    /// Appends to the log and returns the entries the limit dropped.
    func record(_ entries: [DeliveryLogEntry]) -> [DeliveryLogEntry] {
        guard !entries.isEmpty else { return [] }
        var dropped: [DeliveryLogEntry] = []
        if let capacity = log.capacity {
            let over = log.count + entries.count - capacity
            if over > 0 { dropped = Array(log.items.prefix(over)) + entries.prefix(max(0, over - log.count)) }
        }
        log.append(contentsOf: entries)
        return dropped
    }

    // MARK: A push arrives

    /// Plays a push the stage took: `uninstalled` is the device registry's word on its app,
    /// `apps` what the test described of the apps.
    func play(
        _ notification: PushNotification, uninstalled: Bool, apps: AppCatalog?, at now: Date, steps: inout PhoneSteps
    ) {
        steps.note(.received, notification, at: now)
        let facts = PushFacts(notification, in: apps)
        let app = appSettings(facts.bundleID)
        if !app.isInstalled || uninstalled {
            let detail = app.isInstalled ? "the device registry has the app uninstalled" : nil
            steps.note(.discardedTokenUnregistered, notification, at: now, detail: detail)
            return
        }
        if app.authorization == .denied, !facts.isBackground {
            steps.note(.discardedDisabled, notification, at: now)
            return
        }
        guard let reason = storageReason(notification) else {
            arrive(facts, at: now, fromStorage: false, steps: &steps)
            return
        }
        var until = StoredPushes.expiry(of: notification, acceptedAt: now)
        if let expiration = notification.expiration, expiration == 0 || until <= now {
            let grace = settings.expirationGrace.timeInterval
            guard grace > 0 else {
                let detail = "apns-expiration \(expiration): one attempt, and the phone was unreachable"
                steps.note(.discardedExpired, notification, at: now, detail: detail)
                return
            }
            until = UnixTime.clamped(now, adding: grace)
        }
        storage.store(facts, reason: reason, until: until, choice: settings.storage, at: now, steps: &steps)
    }

    /// Plays a broadcast's delivery.
    func play(_ delivery: BroadcastDelivery, apps: AppCatalog?, at now: Date, steps: inout PhoneSteps) {
        let notification = delivery.notification
        let facts = PushFacts(notification, in: apps)
        let channel = delivery.channelID
        steps.note(.received, notification, at: now, channelID: channel)
        if settings.isOnline {
            arrive(facts, at: now, fromStorage: false, channelID: channel, steps: &steps)
            return
        }
        guard notification.expiration != 0 else {
            steps.note(
                .discardedExpired, notification, at: now, channelID: channel, detail: "the channel stores no message")
            return
        }
        var until = UnixTime.clamped(now, adding: ChannelRegistry.storedMessageLifetime)
        if let expiry = notification.expirationDate, expiry < until { until = expiry }
        storage.store(facts, channel: channel, until: until, at: now, steps: &steps)
    }

    /// A push sent before a test described the phone, received and delivered at once when it
    /// was received, as a phone no test described has it (no budget, no hold).
    func replay(_ notification: PushNotification, apps: AppCatalog?, steps: inout PhoneSteps) {
        steps.note(.received, notification, at: notification.receivedAt)
        arrive(
            PushFacts(notification, in: apps), at: notification.receivedAt, fromStorage: false, replaying: true,
            steps: &steps)
    }

    /// Why the phone cannot take the push now (nil: it can).
    private func storageReason(_ notification: PushNotification) -> DeliveryStatus? {
        if !settings.isOnline { return .storedDeviceOffline }
        let priority = notification.priority.rawValue
        if priority <= 5, settings.isPowerRestricted { return .storedPowerConsiderations }
        if priority <= 1, !settings.isAwake { return .storedPowerConsiderations }
        return nil
    }

    /// What the test said about the app with this bundle ID; a push for no app is taken as an
    /// app with the defaults would take it.
    func appSettings(_ bundleID: String?) -> AppSettings {
        bundleID.map { settings[app: $0] } ?? AppSettings()
    }

    /// A push the phone can take now: a Live Activity push goes to its activity, a background
    /// push wakes its app (or is held), a Wallet pass update sends Wallet to the pass's web
    /// service, any other goes to the screen.
    private func arrive(
        _ facts: PushFacts, at now: Date, fromStorage: Bool, channelID: String? = nil, replaying: Bool = false,
        steps: inout PhoneSteps
    ) {
        let notification = facts.notification
        let status: DeliveryStatus = fromStorage ? .deliveredFromStorage : .deliveredToDevice
        if facts.isLiveActivity {
            guard
                let update = activities.admit(
                    facts, channelID: channelID, settings, at: now, replaying: replaying, steps: &steps)
            else { return }
            steps.deliver(
                notification, status: status, at: now, fromStorage: fromStorage, channelID: channelID,
                detail: update.startDetail)
            activities.apply(update, notification, token: token, settings, at: now)
            if let channel = update.joinsChannel { steps.join(channel: channel) }
            return
        }
        // Whatever its push type: Wallet, not an app, takes it.
        if facts.isWalletPassUpdate {
            steps.deliver(
                notification, status: status, at: now, fromStorage: fromStorage, channelID: channelID,
                detail: Self.walletPassUpdateDetail(facts))
            return
        }
        if facts.isBackground {
            guard let bundle = facts.bundleID else {
                steps.deliver(
                    notification, status: status, at: now, fromStorage: fromStorage, channelID: channelID,
                    detail: "for no app: the push names no topic, so no app wakes")
                return
            }
            if !replaying, let why = background.holdReason(for: bundle, settings, at: now) {
                background.hold(facts, bundle: bundle, why: why, settings, at: now, steps: &steps)
                return
            }
            steps.deliver(notification, status: status, at: now, fromStorage: fromStorage, channelID: channelID)
            background.recordWake(AppWake(bundleID: bundle, apnsID: notification.apnsID, at: now))
            return
        }
        steps.deliver(notification, status: status, at: now, fromStorage: fromStorage, channelID: channelID)
        centre.show(facts, app: appSettings(facts.bundleID), settings, at: now)
    }

    /// What the phone does with a Wallet pass update, as Apple's Wallet Developer Guide
    /// ("Updating a Pass") has it: nothing on the screen; Wallet asks the web service of the
    /// passes of this pass type which have changed, then fetches each.
    private static func walletPassUpdateDetail(_ facts: PushFacts) -> String {
        let passType = facts.bundleID ?? "the pass type"
        return "Wallet pass update: the phone asks the passes' web service for the serial numbers changed since"
            + " its last update (GET /v1/devices/<device>/registrations/\(passType)), then fetches each changed"
            + " pass; nothing is shown but a changed field's changeMessage"
    }

    /// Delivers a held background push and wakes its app.
    private func wake(_ held: HeldPush, at now: Date, detail: String, steps: inout PhoneSteps) {
        let notification = held.notification
        steps.deliver(
            notification, status: .deliveredToDevice, at: now, fromStorage: false, channelID: nil, detail: detail)
        if let bundle = held.facts.bundleID {
            background.recordWake(AppWake(bundleID: bundle, apnsID: notification.apnsID, at: now))
        }
    }

    // MARK: The phone changes

    /// Sets the settings when they are still at `version` (nil: whatever they are), then plays
    /// what the change releases or discards. False when another change came in between.
    func update(
        to new: DeviceSettings, ifAt version: UInt64?, at now: Date, steps: inout PhoneSteps
    ) -> Bool {
        if let version, version != settingsVersion { return false }
        if new.storage != settings.storage { storage.choiceChanged() }
        settings = new
        settingsVersion &+= 1
        settle(at: now, steps: &steps)
        return true
    }

    /// The user opens the app: it leaves the force-quit state and gets its held push.
    func launch(_ bundle: String, at now: Date, steps: inout PhoneSteps) {
        if settings[app: bundle].state == .forceQuit {
            settings[app: bundle].state = .background
            settingsVersion &+= 1
        }
        if let held = background.release(bundle) {
            wake(held, at: now, detail: "released: \(bundle) was launched", steps: &steps)
        }
    }

    /// The app starts a Live Activity for pushes to `topic` (`Activity.request`), decoding them
    /// with `attributesType` (nil: the app's only declared type).
    func startLiveActivity(topic: String, attributesType: String?, at now: Date) {
        let bundle = AppBundle.bundleID(of: topic)
        let activityTopic = bundle + (PushType.liveactivity.topicSuffix ?? "")
        activities.startInApp(
            topic: activityTopic, bundleID: bundle, attributesType: attributesType, token: token, at: now)
    }

    /// The user swipes the app away.
    func forceQuit(_ bundle: String, at now: Date, steps: inout PhoneSteps) {
        settings[app: bundle].state = .forceQuit
        settingsVersion &+= 1
        settle(at: now, steps: &steps)
    }

    /// Delivers the pushes stored for power considerations, as a burst, when the phone is
    /// online; then settles.
    func releaseBursts(at now: Date, steps: inout PhoneSteps) {
        if settings.isOnline {
            for stored in storage.takeBursts() {
                arrive(stored.facts, at: now, fromStorage: true, steps: &steps)
            }
        }
        settle(at: now, steps: &steps)
    }

    /// After a change: discards what the phone no longer takes, delivers what it now takes, in
    /// the order the pushes were sent, and releases held background pushes.
    private func settle(at now: Date, steps: inout PhoneSteps) {
        for stored in storage.settle(settings, app: appSettings, reason: storageReason, at: now, steps: &steps) {
            arrive(stored.facts, at: now, fromStorage: true, channelID: stored.channelID, steps: &steps)
        }
        for held in background.settle(settings, at: now, steps: &steps) {
            wake(held, at: now, detail: "released: nothing holds it any more", steps: &steps)
        }
    }

    // MARK: Time

    /// What falls due later on a phone.
    enum DueEvent {
        case expires(StoredPushes.Slot)
        case budgetRefills(String)
        case activity(String, LiveActivity.State)
    }

    /// The phone's next transition, whenever it falls due.
    var nextDue: (at: Date, event: DueEvent)? {
        var next: (at: Date, event: DueEvent)?
        if let expiry = storage.nextExpiry { next = (expiry.at, .expires(expiry.expiring)) }
        if let refill = background.nextRefill(settings), next == nil || refill.at < next!.at {
            next = (refill.at, .budgetRefills(refill.bundle))
        }
        if let change = activities.nextTransition, next == nil || change.at < next!.at {
            next = (change.at, .activity(change.key, change.state))
        }
        return next
    }

    /// Plays one due transition at its instant.
    func fire(_ event: DueEvent, at date: Date, steps: inout PhoneSteps) {
        switch event {
        case .expires(let slot):
            storage.expire(slot, at: date, steps: &steps)
        case .budgetRefills(let bundle):
            guard let held = background.release(bundle) else { return }
            wake(held, at: date, detail: "released: the background budget refilled", steps: &steps)
        case .activity(let key, let state):
            if let topic = activities.transition(key, to: state, at: date) { steps.dismissed(topic: topic, at: date) }
        }
    }
}
