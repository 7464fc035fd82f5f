#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Everything the device model keeps about one described phone, guarded by the intake's lock.
/// Each part is bounded (``Bounds``): a phone a test floods keeps a fixed amount.
final class PhoneState {
    /// The most of each part one phone keeps.
    enum Bounds {
        /// Storage slots (one per topic, plus one per broadcast channel): beyond, the oldest
        /// slot's push is dropped.
        static let storageSlots = 256
        /// Notification centre entries: beyond, the oldest is dropped.
        static let notificationCenter = 1000
        /// Live Activities: beyond, the oldest is forgotten.
        static let liveActivities = 256
        /// Background wakes remembered to judge the budgets.
        static let wakesJudged = 4096
    }

    let token: DeviceToken
    var settings = DeviceSettings()
    let deliveries: Mailbox<DeviceDelivery>
    /// Pushes numbered up to this one were played when the phone was described (from the
    /// history): the stage plays only later ones.
    var replayedThrough: UInt64 = 0
    /// The delivery log, oldest first, at most the model's log limit.
    var log: BoundedQueue<DeliveryLogEntry>
    /// Stored pushes, one per topic (nil: the binary gateway's pushes, which have none).
    var slots: [String?: StoredPush] = [:]
    /// Stored broadcast messages, one per channel.
    var channelSlots: [String: StoredPush] = [:]
    /// The held background push of each app, by bundle ID.
    var held: [String: HeldPush] = [:]
    /// Background wakes within the last day, oldest first: what the budgets are judged by.
    var recentWakes: [AppWake] = []
    /// The Live Activities, by `ActivityKey`.
    var activities: [String: ActivityState] = [:]
    var activitiesMade: UInt64 = 0
    /// The notification centre, badges and wakes (Live Activities are added when read).
    var screen = Screen()
    /// The generator of the seeded storage choice, made when the first choice is due.
    var generator: StorageGenerator?

    init(token: DeviceToken, deliveries: Mailbox<DeviceDelivery>, logLimit: Int) {
        self.token = token
        self.deliveries = deliveries
        log = BoundedQueue(capacity: logLimit)
    }

    /// What the phone shows now, its Live Activities oldest first.
    var currentScreen: Screen {
        var shown = screen
        shown.liveActivities = activities.values.sorted { $0.made < $1.made }.map(\.shown)
        return shown
    }
}

/// A push the phone's storage slot holds (the phone is offline, restricted or asleep).
struct StoredPush {
    var notification: PushNotification
    /// `Stored - Device Offline` or `Stored - Power Considerations`.
    var reason: DeliveryStatus
    /// When it expires ("Discarded - Expired").
    var expiresAt: Date
    /// A broadcast's channel.
    var channelID: String?
    /// How many pushes were offered to the slot while it was full (for the seeded choice).
    var offered: Int = 1
}

/// A background push the phone holds for its app.
struct HeldPush {
    var notification: PushNotification
    /// Why, in one line.
    var reason: String
    /// Whether only a budget holds it (it is released when the budget refills).
    var byBudget: Bool
}

/// A Live Activity and what its clock-driven transitions need.
struct ActivityState {
    var shown: LiveActivity
    let made: UInt64
    var startedAt: Date
    var endedAt: Date?
    /// When its priority 10 updates were applied, within the last hour.
    var budgeted: [Date] = []

    /// When the system ends it: 8 hours after it started.
    var endsAt: Date { startedAt.addingTimeInterval(8 * 3600) }

    /// When it leaves the Lock Screen: the `dismissal-date`, else 4 hours after it ended, and
    /// at the latest 12 hours after it started.
    var dismissesAt: Date? {
        guard let endedAt else { return nil }
        let latest = startedAt.addingTimeInterval(12 * 3600)
        let chosen = shown.dismissalDate ?? endedAt.addingTimeInterval(4 * 3600)
        return min(chosen, latest)
    }
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
