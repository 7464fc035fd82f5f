/// The apps a test described, by bundle ID: what the push lint judges categories, sounds and
/// interruption levels against.
///
/// ```swift
/// server.apps["com.example.shop"] = AppBundle(categories: ["ORDER"])
/// try server.apps.describe("com.example.news", as: descriptionReadFromAFile)
/// ```
///
/// Bounded, so that a long-lived server described over and over stays small: at most
/// ``maximumApps`` apps, each within ``AppBundle``'s bounds (``AppBundle/maximumCategories``,
/// ``AppBundle/maximumSounds``, ``AppBundle/maximumNameLength``, ``AppBundle/maximumNameBytes``).
/// ``describe(_:as:)`` throws beyond them: what the daemon's control API and devices file
/// describe through, since their clients share one server. The subscript takes what a test's
/// own code gives, whatever its size: it is the test's process, and a description dropped or
/// a process stopped would serve it worse.
public final class AppCatalog: Sendable {
    private let bundles = Locked<[String: AppBundle]>([:])

    /// The most apps described at once: real tests describe a few; a thousand is room for a
    /// server shared by many suites.
    public static let maximumApps = 1_000

    package init() {}

    /// The app with this bundle ID (a topic's `.push-type.*` suffix is ignored), when described.
    /// Setting nil forgets it. Setting takes any description, beyond the bounds too
    /// (``describe(_:as:)`` checks them).
    public subscript(bundleID: String) -> AppBundle? {
        get { bundles.withLock { $0[AppBundle.bundleID(of: bundleID)] } }
        set { bundles.withLock { $0[AppBundle.bundleID(of: bundleID)] = newValue } }
    }

    /// Describes the app with this bundle ID (a topic's `.push-type.*` suffix is ignored), or
    /// forgets it (nil).
    ///
    /// - Throws: ``AppCatalogError`` when the description is over one of ``AppBundle``'s
    ///   bounds, or when ``maximumApps`` other apps are described; the catalog is unchanged.
    public func describe(_ bundleID: String, as bundle: AppBundle?) throws(AppCatalogError) {
        let key = AppBundle.bundleID(of: bundleID)
        guard let bundle else {
            bundles.withLock { $0[key] = nil }
            return
        }
        if let problem = bundle.boundsProblem(bundleID: key) { throw problem }
        let described: Bool = bundles.withLock { bundles in
            guard bundles[key] != nil || bundles.count < Self.maximumApps else { return false }
            bundles[key] = bundle
            return true
        }
        guard described else { throw .tooManyApps(bundleID: key, limit: Self.maximumApps) }
    }

    /// How many apps are described.
    public var count: Int { bundles.withLock { $0.count } }

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
            let findings = PushLint.findings(for: PushFacts(notifications[index], in: apps))
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
