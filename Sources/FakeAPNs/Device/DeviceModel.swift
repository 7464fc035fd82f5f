#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The phones behind the front door: every push the intake accepted for a phone a test
/// described is played through it, by the rules of the device-delivery notes, on the server's
/// ``ServerClock``. Guarded by the intake's lock, so a reset sees the phones as of the same
/// instant as the queues.
package final class DeviceModel: IntakeStage, @unchecked Sendable {
    private let lock: ConditionLock
    private let clock: ServerClock
    private let logLimit: Int
    private let retention: Int?
    private let history: () -> [PushNotification]
    private let announce: (@Sendable ([DeliveryLogEntry]) -> Void)?
    // Protected by `lock`:
    private var settings: [DeviceToken: DeviceSettings] = [:]
    private var mailboxes: [DeviceToken: Mailbox<DeviceDelivery>] = [:]

    /// A model that keeps `logLimit` log entries per phone, judges time by `clock`, reads
    /// `history` (inside the lock) to catch a phone up on what was sent before a test first
    /// described it, and tells `announce` each batch of log entries, inside the lock.
    package init(
        lock: ConditionLock, clock: ServerClock, logLimit: Int, retention: Int?,
        history: @escaping () -> [PushNotification], announce: (@Sendable ([DeliveryLogEntry]) -> Void)?
    ) {
        self.lock = lock
        self.clock = clock
        self.logLimit = logLimit
        self.retention = retention
        self.history = history
        self.announce = announce
    }

    // MARK: The intake's stage

    package func unlockedTake(_ notifications: inout [PushNotification], rejections: inout [Rejection]) {}

    package func unlockedTake(_ deliveries: [BroadcastDelivery]) {}

    package func unlockedReset() {
        settings = [:]
        mailboxes.values.forEach { $0.removeAll() }
        mailboxes = [:]
    }

    // MARK: Phones

    /// The phones a test has described or read, in no order.
    package var describedTokens: [DeviceToken] { lock.withLock { Array(settings.keys) } }

    package func settings(of token: DeviceToken) -> DeviceSettings {
        lock.withLock { settings[token] ?? DeviceSettings() }
    }

    package func update(_ token: DeviceToken, to new: DeviceSettings) {
        lock.withLock { settings[token] = new }
    }

    package func launchApp(_ bundleID: String, on token: DeviceToken) {}

    package func forceQuit(_ bundleID: String, on token: DeviceToken) {}

    package func releaseBursts(on token: DeviceToken) {}

    package func log(of token: DeviceToken) -> [DeliveryLogEntry] { [] }

    /// Every phone's steps of the push with this `apns-unique-id` (a broadcast's reach many).
    package func log(uniqueID: String) -> [DeliveryLogEntry] { [] }

    package func screen(of token: DeviceToken) -> Screen { Screen() }

    package func deliveries(of token: DeviceToken) -> Mailbox<DeviceDelivery> {
        lock.withLock {
            if let mailbox = mailboxes[token] { return mailbox }
            let mailbox = Mailbox<DeviceDelivery>(noun: "delivery to \(token.hex)", capacity: retention)
            mailboxes[token] = mailbox
            return mailbox
        }
    }

    /// Plays what falls due up to `now` (expiry, budgets refilling, Live Activity dates).
    package func advance(to now: Date) {}
}
