/// What an app ships, the same on every phone: the categories it registers, the sounds it
/// bundles and the entitlements it holds. The lint's rules that need one (categories, sounds,
/// interruption levels) stay quiet for an app that was never described.
///
/// ```swift
/// server.apps["com.example.shop"] = AppBundle(categories: ["ORDER"], sounds: ["chime.caf"])
/// ```
public struct AppBundle: Sendable, Hashable {
    /// The notification categories the app registers; nil: not described.
    public var categories: Set<String>?
    /// The sound files the app bundles (`Library/Sounds` included); nil: not described.
    public var sounds: Set<String>?
    /// The entitlements the app holds; nil: not described.
    public var entitlements: Set<Entitlement>?

    /// An app; nil leaves a part undescribed.
    public init(categories: Set<String>? = nil, sounds: Set<String>? = nil, entitlements: Set<Entitlement>? = nil) {
        self.categories = categories
        self.sounds = sounds
        self.entitlements = entitlements
    }

    /// An entitlement a notification feature needs.
    public enum Entitlement: String, Sendable, Hashable, CaseIterable {
        /// `com.apple.developer.usernotifications.time-sensitive`.
        case timeSensitive = "time-sensitive"
        /// Critical alerts: Apple's entitlement, and the user's authorisation.
        case criticalAlerts = "critical-alerts"
    }

    /// The bundle ID of `topic`: the topic without the suffix of a push type (`.voip`,
    /// `.push-type.liveactivity`, `.location-query` …, ``PushType/topicSuffix``).
    package static func bundleID(of topic: String) -> String {
        guard let suffix = PushType.named(byTopic: topic)?.topicSuffix else { return topic }
        return String(topic.dropLast(suffix.count))
    }

}
