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

    enum Decision {
        case accept
        /// Refuse with an error response, then close.
        case reject(BinaryStatus, detail: String, cause: Rejection.Cause)
        /// Drop without a word and read on (an unregistered device).
        case drop(reason: String, detail: String)
        /// Close the connection without a word.
        case close(detail: String)
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

    /// The decision for one notification; `wait` performs a fault's delay (and returns false
    /// when the connection should end instead, because the server is stopping).
    func decide(token: DeviceToken, topic: String?, wait: (Duration) -> Bool) -> Decision {
        if let (rule, action) = faults.action(for: token, topic: topic) {
            switch action {
            case .reject(let status):
                return .reject(status, detail: "fault rule: \(rule)", cause: .fault)
            case .closeConnection:
                return .close(detail: "fault rule: \(rule)")
            case .delay(let duration):
                guard wait(duration) else { return .close(detail: "the server stopped during a fault delay") }
            }
        }
        switch devices.verdict(for: token, topic: topic, serverEnvironment: environment) {
        case .accept:
            return .accept
        case .invalidToken(let detail):
            return .reject(.invalidToken, detail: detail, cause: .registry)
        case .unregistered(let date):
            return .drop(
                reason: "Unregistered",
                detail: "the app was uninstalled from this device at \(Timestamp.rfc3339(date)); the gateway drops the notification without a word and the feedback service reports the token")
        }
    }
}
