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

    /// The bundle ID of `topic`: the topic without a `.push-type.*` or `.voip`, `.complication`
    /// suffix.
    package static func bundleID(of topic: String) -> String {
        for suffix in [".voip", ".complication"] where topic.hasSuffix(suffix) {
            return String(topic.dropLast(suffix.count))
        }
        let marker = Array(".push-type.".utf8)
        let bytes = Array(topic.utf8)
        guard bytes.count > marker.count else { return topic }
        for start in 0...(bytes.count - marker.count) where bytes[start..<start + marker.count].elementsEqual(marker) {
            return String(decoding: bytes[..<start], as: UTF8.self)
        }
        return topic
    }

}
