#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The devices a server knows. In open mode (the default) any well-formed token is accepted
/// and the registry only matters for the tokens it holds; in strict mode a token it does not
/// hold is refused with status 8 (invalid token), as Apple refuses tokens it never issued.
///
/// ```swift
/// server.devices.register(alice, topic: "com.example.app", environment: .sandbox)
/// server.devices.unregister(alice, at: Date(timeIntervalSince1970: 1_700_000_000))
/// // alice now appears on the feedback service with that timestamp.
/// ```
public final class DeviceRegistry: @unchecked Sendable {
    /// A registered device.
    public struct Device: Sendable, Hashable, CustomStringConvertible {
        /// The device token.
        public internal(set) var token: DeviceToken
        /// The app (bundle ID) the token belongs to; nil: any.
        public internal(set) var topic: String?
        /// The environment that issued the token; nil: either.
        public internal(set) var environment: PushEnvironment?
        /// When the app was uninstalled from the device; nil while it is installed.
        public internal(set) var unregisteredAt: Date?
        /// From when notifications to it are refused as unregistered (410 `Unregistered`,
        /// the binary gateway's silence): `unregisteredAt` plus the delay the test chose
        /// (``DeviceRegistry/unregister(_:at:reportedAfter:)``); until then they are answered
        /// 200 and the phone discards them. Nil while it is installed.
        public internal(set) var refusedFrom: Date?

        /// The token, then the topic, environment and unregistration date when set.
        public var description: String {
            var text = token.hex
            if let topic { text += " topic \(topic)" }
            if let environment { text += " \(environment)" }
            if let unregisteredAt { text += " unregistered at \(Int(unregisteredAt.timeIntervalSince1970))" }
            if let refusedFrom, refusedFrom != unregisteredAt {
                text += ", refused from \(Int(refusedFrom.timeIntervalSince1970))"
            }
            return text
        }
    }

    /// What the registry says of a notification. Each transport answers a refusal its own
    /// way: the binary gateway with status 8 (or, for an uninstalled app, silence), HTTP/2
    /// with Apple's reason.
    enum Verdict: Equatable {
        case accept
        /// Strict mode and a token the registry does not hold.
        case unknownToken(String)
        /// A token issued by the other environment.
        case otherEnvironment(String)
        /// A token of another app than the topic's.
        case otherTopic(String)
        /// The app was uninstalled at this date.
        case unregistered(Date)
        /// The token is a Live Activity's, and the activity was dismissed at this date.
        case expiredToken(Date)
    }

    /// The policy's lock, shared with the fault rules.
    private let lock: ConditionLock
    /// Where the registry says, in the same step as each change, whether it can refuse anything.
    private let activity: PolicyActivity
    private var entries: [DeviceToken: Device] = [:]
    private var order: [DeviceToken] = []
    private var strict: Bool
    /// The Live Activity tokens whose activity was dismissed, by token and bundle ID, with when;
    /// at most ``maximumExpiredActivityTokens``, the oldest mark forgotten first.
    private var expiredActivities: [DeviceToken: [String: (at: Date, mark: UInt64)]] = [:]
    /// The marks, oldest first from `expiredHead`; a mark cleared since stays until it comes up
    /// or a sweep drops it.
    private var expiredOrder: [(key: ExpiredActivity, mark: UInt64)] = []
    private var expiredHead = 0
    private var expiredCount = 0
    private var marksMade: UInt64 = 0
    private let feedback: FeedbackService
    /// The server's clock, which says when a delayed unregistration starts being refused.
    private let clock: ServerClock

    init(
        strict: Bool, feedback: FeedbackService, lock: ConditionLock, activity: PolicyActivity,
        clock: ServerClock = ServerClock()
    ) {
        self.clock = clock
        self.strict = strict
        self.feedback = feedback
        self.lock = lock
        self.activity = activity
        lock.withLock { changed() }
    }

    /// With the lock held, after every change: strict, or holding devices, the registry can
    /// refuse.
    private func changed() {
        activity.setLocked(PolicyActivity.devices, strict || !entries.isEmpty || expiredCount > 0)
    }

    /// Strict mode: refuse tokens the registry does not hold.
    public var isStrict: Bool {
        get { lock.withLock { strict } }
        set {
            lock.withLock {
                strict = newValue
                changed()
            }
        }
    }

    /// Registers (or re-registers, clearing an unregistration) a device.
    public func register(_ token: DeviceToken, topic: String? = nil, environment: PushEnvironment? = nil) {
        lock.withLock {
            if entries[token] == nil { order.append(token) }
            entries[token] = Device(token: token, topic: topic, environment: environment, unregisteredAt: nil)
            clearExpiredLocked(token)
            changed()
        }
    }

    /// Marks the app as uninstalled from the device at `date` (nil: now by the server's clock,
    /// ``FakeAPNsServer/clock``, in whole seconds as the feedback tuple says): the token appears
    /// once on the feedback service with that timestamp, and notifications to it are refused as
    /// unregistered (HTTP/2 410 `Unregistered` with that timestamp; the binary gateway drops
    /// them). A token the registry did not hold is registered first. A date past year 9999 or
    /// before 1970 is held to that end (``UnixTime/clamped(_:)``), as the clock's are.
    ///
    /// APNs starts answering 410 only after a delay it keeps unpredictable on purpose, and
    /// answers 200 meanwhile. `reportedAfter` plays that: until the server's clock
    /// (``FakeAPNsServer/clock``) reaches `date + reportedAfter`, notifications are accepted
    /// and the phone's delivery log says `Discarded - Token Unregistered`.
    ///
    /// ```swift
    /// server.devices.unregister(token, reportedAfter: .seconds(3600))   // now, by server.clock
    /// // 200 for an hour of the server's clock, then 410 Unregistered
    /// ```
    public func unregister(_ token: DeviceToken, at date: Date? = nil, reportedAfter delay: Duration = .zero) {
        let seconds = delay.timeInterval
        let date = UnixTime.clamped(date ?? UnixTime(clamping: clock.currentDate).date)
        lock.withLock {
            if entries[token] == nil {
                order.append(token)
                entries[token] = Device(token: token)
            }
            entries[token]?.unregisteredAt = date
            entries[token]?.refusedFrom = UnixTime.clamped(date, adding: seconds)
            changed()
        }
        feedback.add(token, at: date)
    }

    // MARK: Live Activity tokens

    /// The most Live Activity tokens marked expired at once: beyond, the oldest mark is
    /// forgotten (its token answered 200 again, and the phone ignores the push).
    public static let maximumExpiredActivityTokens = 10_000

    private struct ExpiredActivity: Hashable {
        let token: DeviceToken
        let bundleID: String
    }

    /// Marks `token` as the push token of `topic`'s Live Activity (the bundle ID, or a topic with
    /// its push type's suffix), dismissed at `date`: from then on its pushes to that topic are
    /// refused 410 `ExpiredToken`, with `date` as the answer's `timestamp`. The device model
    /// marks a token when it dismisses the activity; registering the token again clears it.
    public func expireActivityToken(_ token: DeviceToken, topic: String, at date: Date) {
        let bundleID = Self.bundleID(of: topic)
        let date = UnixTime.clamped(date)
        lock.withLock {
            if let mark = expiredActivities[token]?[bundleID]?.mark {
                expiredActivities[token]?[bundleID] = (date, mark)
                return
            }
            while expiredCount >= Self.maximumExpiredActivityTokens, expiredHead < expiredOrder.count {
                let oldest = expiredOrder[expiredHead]
                expiredHead += 1
                if expiredActivities[oldest.key.token]?[oldest.key.bundleID]?.mark == oldest.mark {
                    forgetExpiredLocked(oldest.key)
                }
            }
            marksMade += 1
            expiredActivities[token, default: [:]][bundleID] = (date, marksMade)
            expiredOrder.append((ExpiredActivity(token: token, bundleID: bundleID), marksMade))
            expiredCount += 1
            if expiredOrder.count - expiredHead > 2 * expiredCount + 1024 || expiredHead > expiredOrder.count / 2 {
                expiredOrder = expiredOrder[expiredHead...].filter { entry in
                    expiredActivities[entry.key.token]?[entry.key.bundleID]?.mark == entry.mark
                }
                expiredHead = 0
            }
            changed()
        }
    }

    /// When the activity of `topic` whose push token is `token` was dismissed; nil when the
    /// token is not marked.
    public func activityTokenExpiry(_ token: DeviceToken, topic: String) -> Date? {
        lock.withLock { expiredActivities[token]?[Self.bundleID(of: topic)]?.at }
    }

    /// How many Live Activity tokens are marked expired.
    public var expiredActivityTokenCount: Int { lock.withLock { expiredCount } }

    /// A topic without its push type's suffix.
    private static func bundleID(of topic: String) -> String {
        guard let suffix = PushType.named(byTopic: topic)?.topicSuffix else { return topic }
        return String(topic.dropLast(suffix.count))
    }

    private func forgetExpiredLocked(_ key: ExpiredActivity) {
        guard expiredActivities[key.token]?.removeValue(forKey: key.bundleID) != nil else { return }
        if expiredActivities[key.token]?.isEmpty == true { expiredActivities[key.token] = nil }
        expiredCount -= 1
    }

    /// Forgets every mark of `token`.
    private func clearExpiredLocked(_ token: DeviceToken) {
        guard let marks = expiredActivities.removeValue(forKey: token) else { return }
        expiredCount -= marks.count
    }

    /// Whether the app behind `token` is uninstalled (refused or not yet).
    package func isUninstalled(_ token: DeviceToken) -> Bool {
        lock.withLock { entries[token]?.unregisteredAt != nil }
    }

    /// Forgets a device.
    public func remove(_ token: DeviceToken) {
        lock.withLock {
            if entries.removeValue(forKey: token) != nil { order.removeAll { $0 == token } }
            clearExpiredLocked(token)
            changed()
        }
    }

    /// Forgets every device (strict mode stays as it is).
    public func removeAll() {
        lock.withLock { resetLocked(strict: strict) }
    }

    /// Forgets every device and sets strict mode; the caller holds the lock.
    func resetLocked(strict: Bool) {
        entries.removeAll()
        order.removeAll()
        expiredActivities.removeAll()
        expiredOrder.removeAll()
        expiredHead = 0
        expiredCount = 0
        self.strict = strict
        changed()
    }

    /// The device registered with `token`.
    public func device(_ token: DeviceToken) -> Device? {
        lock.withLock { entries[token] }
    }

    /// Every registered device, in order of first registration.
    public var devices: [Device] {
        lock.withLock { order.compactMap { entries[$0] } }
    }

    /// What the registry says of a notification; the caller holds the lock.
    func verdictLocked(for token: DeviceToken, topic: String?, serverEnvironment: PushEnvironment) -> Verdict {
        if expiredCount > 0, let topic, let dismissed = expiredActivities[token]?[Self.bundleID(of: topic)] {
            return .expiredToken(dismissed.at)
        }
        guard let device = entries[token] else {
            return strict ? .unknownToken("the token is not registered and the registry is strict") : .accept
        }
        if let environment = device.environment, environment != serverEnvironment {
            return .otherEnvironment("the token was issued by the \(environment) environment; this server plays \(serverEnvironment)")
        }
        if let expected = device.topic, let topic, expected != topic {
            return .otherTopic("the token belongs to \(expected), not to \(topic)")
        }
        if let gone = device.unregisteredAt {
            if let from = device.refusedFrom, from > gone, clock.currentDate < from { return .accept }
            return .unregistered(gone)
        }
        return .accept
    }
}
