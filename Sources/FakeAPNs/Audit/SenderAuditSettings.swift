/// The sender audit's windows, thresholds and bounds (``FakeAPNsServer/Configuration/senderAudit``).
/// Apple gives no number for any of them; each default is chosen so that a correct sender
/// (one connection, pushes answered 200) has no finding, and is stated in the SenderAudit and
/// Limits articles.
public struct SenderAuditSettings: Sendable, Hashable {
    /// Whether the audit runs (default true). Off, the report is always empty.
    public var isEnabled: Bool = true
    /// How long two pushes with the same token, topic and payload (or the same `apns-id`) count
    /// as the same push, for `duplicate-push` and `retried-refusal` (default 60 s).
    public var samePushWindow: Duration = .seconds(60)
    /// How soon after a 429, 500 or 503 a push to the same token is `no-backoff` (default 1 s).
    public var backoffWindow: Duration = .seconds(1)
    /// How many connections a sender may close within ``connectionChurnWindow`` of opening
    /// them, within that window, before each further one is `connection-churn` (default 20).
    public var connectionChurnCount: Int = 20
    /// The churn window (default 60 s): a connection closed sooner after opening is short-lived.
    public var connectionChurnWindow: Duration = .seconds(60)
    /// The most pushes remembered to tell "the same push" (default 10,000), oldest forgotten first.
    public var rememberedPushLimit: Int = 10_000
    /// The most tokens remembered as answered 410 (default 10,000), oldest forgotten first.
    public var unregisteredTokenLimit: Int = 10_000
    /// The most senders tracked (default 1,000); findings of senders beyond are counted only.
    public var senderLimit: Int = 1_000
    /// The most examples a finding keeps (default 5): the first ones.
    public var examplesPerFinding: Int = 5

    /// The defaults.
    public init() {}

    /// The settings with every count at least 1 (0 or less: 1), for the audit's own use.
    var clamped: SenderAuditSettings {
        var settings = self
        settings.connectionChurnCount = max(1, connectionChurnCount)
        settings.rememberedPushLimit = max(1, rememberedPushLimit)
        settings.unregisteredTokenLimit = max(1, unregisteredTokenLimit)
        settings.senderLimit = max(1, senderLimit)
        settings.examplesPerFinding = max(0, examplesPerFinding)
        return settings
    }
}
