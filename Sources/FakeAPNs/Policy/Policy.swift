import Foundation
import Synchronization

/// Decides, for each well-formed notification, whether it is accepted: fault rules first (the
/// test asked for them explicitly), then the device registry. With no rule and an empty open
/// registry it is inactive, and the gateway skips it with one atomic load.
final class Policy: Sendable {
    let faults: FaultRules
    let devices: DeviceRegistry
    let environment: APNsEnvironment
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
        faults = FaultRules { reference.policy?.refresh() }
        devices = DeviceRegistry(strict: strict, feedback: feedback) { reference.policy?.refresh() }
        self.environment = environment
        reference.policy = self
        refresh()
    }

    /// Whether any rule or registry entry can refuse anything.
    var isActive: Bool { active.load(ordering: .acquiring) }

    private func refresh() {
        active.store(faults.isActive || devices.isActive, ordering: .releasing)
    }

    /// The verdict on one notification; `wait` performs a fault's delay and returns false when
    /// the server stops meanwhile. `topic` is the notification's topic (binary: the client
    /// certificate's), compared with registered topics.
    func judge(token: DeviceToken, topic: String?, wait: (Duration) -> Bool) -> Verdict {
        if let (rule, action) = faults.action(for: token, topic: topic) {
            if case .delay(let duration) = action {
                guard wait(duration) else { return .stopped }
            } else {
                return .fault(rule, action)
            }
        }
        let verdict = devices.verdict(for: token, topic: topic, serverEnvironment: environment)
        return verdict == .accept ? .accept : .registry(verdict)
    }
}
