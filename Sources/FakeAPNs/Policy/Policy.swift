#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// Decides, for each well-formed notification, whether it is accepted: fault rules first (the
/// test asked for them explicitly), then the device registry, then the per-token rate when one
/// is set (``DeviceTokenRateLimit``). With no rule, an empty open registry and no rate it is
/// inactive, and the gateway skips it with one atomic load.
///
/// The rules and the registry share one lock, so a verdict sees them as they were at one
/// instant; each says whether it can refuse anything through `PolicyActivity`, in the same step
/// as it changes. Nothing here calls back into a session: a fault delay comes back as a
/// verdict the session waits out itself.
final class Policy: Sendable {
    let faults: FaultRules
    let devices: DeviceRegistry
    let environment: PushEnvironment
    /// The per-token rate's windows; nil: no rate.
    let tokenRate: DeviceTokenRate?
    private let lock = ConditionLock()
    private let activity = PolicyActivity()

    /// What the policy says of one notification; each transport answers in its own terms.
    enum Verdict {
        case accept
        /// The registry refuses it.
        case registry(DeviceRegistry.Verdict)
        /// A fault rule acts on it (never `.delay`: that comes as the verdict `.delay`).
        case fault(FaultRule, FaultRule.Action)
        /// A fault rule delays it: the session waits this long, without the policy's lock, so
        /// control requests go on meanwhile, then asks again with `afterDelay`.
        case delay(Duration)
        /// The server stopped while the session waited out a delay (the session's own verdict).
        case stopped
    }

    init(
        strict: Bool, environment: PushEnvironment, feedback: FeedbackService,
        clock: ServerClock = ServerClock(), tokenRateLimit: DeviceTokenRateLimit? = nil
    ) {
        faults = FaultRules(lock: lock, activity: activity)
        devices = DeviceRegistry(strict: strict, feedback: feedback, lock: lock, activity: activity, clock: clock)
        self.environment = environment
        tokenRate = tokenRateLimit.map { DeviceTokenRate(limit: $0, clock: clock) }
        // A rate judges every push for as long as the server runs.
        if tokenRate != nil { lock.withLock { activity.setLocked(PolicyActivity.tokenRate, true) } }
    }

    /// Whether any rule or registry entry can refuse anything.
    var isActive: Bool { activity.isActive }

    /// Forgets every rule and device and sets strict mode, in one step: a notification judged
    /// meanwhile sees the state before or the state after, never a mix.
    func reset(strict: Bool) {
        lock.withLock {
            // The registry first: when strict mode comes on with the reset, the policy never
            // reads as inactive between the two.
            devices.resetLocked(strict: strict)
            faults.removeAllLocked()
            tokenRate?.resetLocked()
        }
    }

    /// The verdict on one notification. `topic` is the notification's topic (binary: the
    /// client certificate's), compared with registered topics. `afterDelay`: the second call,
    /// once a `.delay` verdict was waited out; the rule that delayed the notification has acted
    /// on it, so only the registry is asked.
    func judge(token: DeviceToken, topic: String?, afterDelay: Bool = false) -> Verdict {
        lock.withLock {
            if !afterDelay, let verdict = faultLocked(FaultRules.Subject(token: token, topic: topic)) { return verdict }
            let verdict = devices.verdictLocked(for: token, topic: topic, serverEnvironment: environment)
            guard verdict == .accept else { return .registry(verdict) }
            if let tokenRate, let refusal = tokenRate.refusalLocked(for: token) {
                return .fault(FaultRule.tokenRate(token, refusal), .respond(.tooManyRequests))
            }
            return .accept
        }
    }

    /// The verdict on a channel management or broadcast request, for `bundleID` and, when the
    /// request names one, `channelID`: only fault rules apply (the registry knows devices).
    /// `afterDelay` as for ``judge(token:topic:afterDelay:)``.
    func judgeChannelRequest(bundleID: String, channelID: String?, afterDelay: Bool = false) -> Verdict {
        guard !afterDelay else { return .accept }
        return lock.withLock { faultLocked(FaultRules.Subject(topic: bundleID, channelID: channelID)) ?? .accept }
    }

    /// The first rule's action on `subject`, as a verdict; nil when none hits. With the lock held.
    private func faultLocked(_ subject: FaultRules.Subject) -> Verdict? {
        guard let (rule, action) = faults.actionLocked(for: subject) else { return nil }
        if case .delay(let duration) = action { return .delay(duration) }
        return .fault(rule, action)
    }
}

/// Whether the fault rules and the device registry can refuse anything, one bit each in one
/// atomic word: a session reads the whole answer with one load. Each part sets its bit with the
/// policy's lock held, in the same step as the change that decides it, so concurrent control
/// requests cannot leave the policy inactive while a rule or strict mode is in force.
final class PolicyActivity: Sendable {
    static let faults: UInt8 = 1
    static let devices: UInt8 = 2
    static let tokenRate: UInt8 = 4
    private let bits = Atomic<UInt8>(0)

    var isActive: Bool { bits.load(ordering: .acquiring) != 0 }

    /// Sets or clears `part`'s bit; the caller holds the policy's lock, so no other write races.
    func setLocked(_ part: UInt8, _ active: Bool) {
        let old = bits.load(ordering: .relaxed)
        bits.store(active ? old | part : old & ~part, ordering: .releasing)
    }
}
