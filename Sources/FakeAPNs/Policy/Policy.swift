import Foundation
import Synchronization

/// Decides, for each well-formed notification, whether it is accepted: fault rules first (the
/// test asked for them explicitly), then the device registry. With no rule and an empty open
/// registry it is inactive, and the gateway skips it with one atomic load.
///
/// The rules, the registry and the active flag share one lock: every change decides whether
/// the policy is active in the same step as it changes the state, so concurrent control
/// requests cannot leave it inactive while a rule or strict mode is in force, and a verdict
/// sees the rules and the registry as they were at one instant.
final class Policy: Sendable {
    let faults: FaultRules
    let devices: DeviceRegistry
    let environment: APNsEnvironment
    private let lock = ConditionLock()
    private let active = Atomic<Bool>(false)

    /// What the policy says of one notification; each transport answers in its own terms.
    enum Verdict {
        case accept
        /// The registry refuses it.
        case registry(DeviceRegistry.Verdict)
        /// A fault rule acts on it (never `.delay`: delays are waited out inside `judge`).
        case fault(FaultRule, FaultRule.Action)
        /// The server stopped while a fault delay was being waited out.
        case stopped
    }

    private final class Reference: @unchecked Sendable {
        weak var policy: Policy?
    }

    init(strict: Bool, environment: APNsEnvironment, feedback: FeedbackService) {
        let reference = Reference()
        faults = FaultRules(lock: lock) { reference.policy?.refreshLocked() }
        devices = DeviceRegistry(strict: strict, feedback: feedback, lock: lock) { reference.policy?.refreshLocked() }
        self.environment = environment
        reference.policy = self
        lock.withLock { refreshLocked() }
    }

    /// Whether any rule or registry entry can refuse anything.
    var isActive: Bool { active.load(ordering: .acquiring) }

    /// With the lock held, after any change.
    private func refreshLocked() {
        active.store(faults.isActiveLocked || devices.isActiveLocked, ordering: .releasing)
    }

    /// Forgets every rule and device and sets strict mode, in one step: a notification judged
    /// meanwhile sees the state before or the state after, never a mix.
    func reset(strict: Bool) {
        lock.withLock {
            faults.removeAllLocked()
            devices.resetLocked(strict: strict)
            refreshLocked()
        }
    }

    /// The verdict on one notification; `wait` performs a fault's delay and returns false when
    /// the server stops meanwhile. `topic` is the notification's topic (binary: the client
    /// certificate's), compared with registered topics.
    func judge(token: DeviceToken, topic: String?, wait: (Duration) -> Bool) -> Verdict {
        var delay: Duration?
        let verdict: Verdict? = lock.withLock {
            if let (rule, action) = faults.actionLocked(for: token, topic: topic) {
                if case .delay(let duration) = action {
                    delay = duration
                    return nil
                }
                return .fault(rule, action)
            }
            return registryVerdictLocked(token: token, topic: topic)
        }
        if let verdict { return verdict }
        // The delay is waited out without the lock, so control requests go on meanwhile.
        guard let delay, wait(delay) else { return .stopped }
        return lock.withLock { registryVerdictLocked(token: token, topic: topic) }
    }

    private func registryVerdictLocked(token: DeviceToken, topic: String?) -> Verdict {
        let verdict = devices.verdictLocked(for: token, topic: topic, serverEnvironment: environment)
        return verdict == .accept ? .accept : .registry(verdict)
    }
}
