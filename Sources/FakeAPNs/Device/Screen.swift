#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a phone shows and did after its pushes: the notification centre once collapses are
/// applied, the badges, the apps woken by background pushes, and the Live Activities.
public struct Screen: Sendable, Hashable {
    /// The notification centre's entries, newest first: one per identifier (the
    /// `apns-collapse-id`, or one made up per push without one).
    public var notificationCenter: [NotificationCenterEntry] = []
    /// Each app's badge, by bundle ID (absent: no badge set; 0 clears it).
    public var badges: [String: Int] = [:]
    /// The apps background pushes woke, oldest first.
    public var wakes: [AppWake] = []
    /// The Live Activities, by the token or channel that updates them.
    public var liveActivities: [LiveActivity] = []

    /// An empty screen.
    public init() {}
}

/// One entry of the notification centre.
public struct NotificationCenterEntry: Sendable, Hashable {
    /// The request identifier: the `apns-collapse-id`, or `apns-id` when there was none
    /// (`#<sequence number>` for the binary gateway's pushes, which have neither).
    public var identifier: String
    /// The app's bundle ID: its push's topic's, or its client certificate's; nil for a push
    /// that named none (no `apns-topic` on a server without authentication).
    public var bundleID: String?
    /// The `apns-id` of the push shown now.
    public var apnsID: String?
    /// The alert's title as shown (its `title-loc-key` when localised).
    public var title: String?
    /// The alert's subtitle as shown (its `subtitle-loc-key` when localised).
    public var subtitle: String?
    /// The alert's body as shown (its `loc-key` when localised).
    public var body: String?
    /// `thread-id`, which groups entries.
    public var threadID: String?
    /// `category`; its actions show only when the app registered it.
    public var category: String?
    /// Whether the category's actions show.
    public var showsActions: Bool
    /// The sound played: the file, `default` for an unknown file, nil for none.
    public var sound: String?
    /// The interruption level as shown (downgraded to `active` without the entitlement).
    public var interruptionLevel: String?
    /// Whether it presented (banner and sound): false when delivered quietly (provisional,
    /// a foreground app that asked for nothing, a replacement that does not present again).
    public var presented: Bool
    /// Whether the app's service extension ran (`mutable-content` with alert text).
    public var serviceExtensionRan: Bool
    /// The `apns-id`s of the pushes this entry replaced (same collapse ID), oldest first.
    public var replaced: [String]
    /// When it was delivered (its last replacement).
    public var deliveredAt: Date

    /// An entry.
    public init(
        identifier: String, bundleID: String?, apnsID: String?, title: String? = nil, subtitle: String? = nil,
        body: String? = nil, threadID: String? = nil, category: String? = nil, showsActions: Bool = false,
        sound: String? = nil, interruptionLevel: String? = nil, presented: Bool = true,
        serviceExtensionRan: Bool = false, replaced: [String] = [], deliveredAt: Date
    ) {
        self.identifier = identifier
        self.bundleID = bundleID
        self.apnsID = apnsID
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.threadID = threadID
        self.category = category
        self.showsActions = showsActions
        self.sound = sound
        self.interruptionLevel = interruptionLevel
        self.presented = presented
        self.serviceExtensionRan = serviceExtensionRan
        self.replaced = replaced
        self.deliveredAt = deliveredAt
    }
}

/// An app woken by a background push (it has 30 seconds to run).
public struct AppWake: Sendable, Hashable {
    /// The app's bundle ID.
    public var bundleID: String
    /// The push's `apns-id`.
    public var apnsID: String?
    /// When.
    public var at: Date

    /// A wake.
    public init(bundleID: String, apnsID: String?, at: Date) {
        self.bundleID = bundleID
        self.apnsID = apnsID
        self.at = at
    }
}

/// A Live Activity as the phone shows it.
public struct LiveActivity: Sendable, Hashable {
    /// Where it is: active, stale (past its `stale-date`), ended, dismissed.
    public enum State: String, Sendable, Hashable, CaseIterable {
        /// Running: its updates apply.
        case active
        /// Past its `stale-date`, until an update brings a later one.
        case stale
        /// Ended (an `end`, or 8 hours after it started): still shown, updates are ignored.
        case ended
        /// Gone from the Lock Screen.
        case dismissed
    }

    /// The push token (the device token the pushes went to) or, for a broadcast, the channel.
    public var key: String
    /// The app's bundle ID.
    public var bundleID: String
    /// Its state.
    public var state: State
    /// The `content-state` last applied, as JSON text.
    public var contentState: String?
    /// The `timestamp` of the last update applied.
    public var timestamp: Date?
    /// The `stale-date` last sent.
    public var staleDate: Date?
    /// The `dismissal-date` last sent.
    public var dismissalDate: Date?

    /// An activity.
    public init(
        key: String, bundleID: String, state: State, contentState: String? = nil, timestamp: Date? = nil,
        staleDate: Date? = nil, dismissalDate: Date? = nil
    ) {
        self.key = key
        self.bundleID = bundleID
        self.state = state
        self.contentState = contentState
        self.timestamp = timestamp
        self.staleDate = staleDate
        self.dismissalDate = dismissalDate
    }
}
