/// The apps a test described, by bundle ID: what the push lint judges categories, sounds and
/// interruption levels against.
///
/// ```swift
/// server.apps["com.example.shop"] = AppBundle(categories: ["ORDER"])
/// ```
public final class AppCatalog: Sendable {
    private let bundles = Locked<[String: AppBundle]>([:])

    package init() {}

    /// The app with this bundle ID (a topic's `.push-type.*` suffix is ignored), when described.
    public subscript(bundleID: String) -> AppBundle? {
        get { bundles.withLock { $0[AppBundle.bundleID(of: bundleID)] } }
        set { bundles.withLock { $0[AppBundle.bundleID(of: bundleID)] = newValue } }
    }

    /// Whether no app is described.
    public var isEmpty: Bool { bundles.withLock { $0.isEmpty } }

    /// Forgets every app.
    public func removeAll() { bundles.withLock { $0.removeAll() } }
}

/// How the push lint reports.
public enum LintMode: String, Sendable, Hashable, CaseIterable {
    /// Findings are on each accepted notification (``PushNotification/lintFindings``).
    case on
    /// Also, an error-level finding is recorded as a refusal (cause ``Rejection/Cause/lint``)
    /// beside the accepted notification; the client is still answered Apple's 200.
    case strict
}

/// The intake's stage that judges each push as it comes when anything described makes the
/// judgement depend on the moment (an app's bundle), and that records error-level findings
/// as refusals in strict mode.
final class LintStage: IntakeStage, @unchecked Sendable {
    private let apps: AppCatalog
    private let mode: LintMode

    init(apps: AppCatalog, mode: LintMode) {
        self.apps = apps
        self.mode = mode
    }

    func unlockedTake(_ notifications: inout [PushNotification], rejections: inout [Rejection]) {
        let describedApps = !apps.isEmpty
        guard describedApps || mode == .strict else { return }
        for index in notifications.indices {
            let app = notifications[index].topic.flatMap { apps[$0] }
            let findings = PushLint.findings(for: notifications[index], app: app)
            notifications[index].judgedLintFindings = findings
            if mode == .strict {
                for finding in findings where finding.level == .error {
                    rejections.append(Rejection(lintFinding: finding, of: notifications[index]))
                }
            }
        }
    }

    func unlockedTake(_ deliveries: [BroadcastDelivery]) {}

    func unlockedReset() {}
}
