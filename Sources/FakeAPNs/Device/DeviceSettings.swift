#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a test says about one phone: whether it is reachable, its power state, its apps and
/// the budgets the system keeps. A phone no test described has these defaults: online, awake,
/// unrestricted, every app installed, authorised and idle in the background, so every push
/// accepted for it is delivered at once.
///
/// ```swift
/// server.device(token).update { $0.isOnline = false }
/// ```
public struct DeviceSettings: Sendable, Hashable {
    /// Connected to APNs. Offline, pushes are stored (one per app) and delivered on return.
    public var isOnline: Bool = true
    /// Under power restrictions: priority 5 and 1 pushes are stored ("Stored - Power
    /// Considerations") until the restriction lifts or ``Phone/releaseBursts()``.
    public var isPowerRestricted: Bool = false
    /// Awake: priority 1 pushes, which never wake a phone, are held while it sleeps.
    public var isAwake: Bool = true
    /// Low Power Mode: background pushes are held until it is off.
    public var isLowPowerMode: Bool = false
    /// Background App Refresh: off, background pushes are held until it is on.
    public var backgroundAppRefresh: Bool = true
    /// A debugger is attached (running from Xcode): background pushes are not throttled.
    public var isDebuggerAttached: Bool = false
    /// Background pushes delivered per app per rolling hour before the phone holds the next
    /// (Apple: "two or three per hour"; default 3).
    public var backgroundPushesPerHour: Int = 3
    /// Background pushes delivered per day across all apps; nil (the default): only the hourly
    /// budget applies.
    public var backgroundPushesPerDay: Int?
    /// Priority 10 Live Activity updates per activity per rolling hour before they are
    /// dropped (Apple documents "a certain budget"; default 15, an arbitrary choice).
    public var liveActivityUpdatesPerHour: Int = 15
    /// `NSSupportsLiveActivitiesFrequentUpdates` on and allowed: no Live Activity budget.
    public var frequentLiveActivityUpdates: Bool = false
    /// Which stored push survives when several arrive for one app while offline.
    public var storage: StorageChoice = .latest
    /// How late a push with `apns-expiration: 0` (or a past date) may still reach a phone
    /// that comes online after it was sent (default 0: only a phone online at once gets it).
    public var expirationGrace: Duration = .zero
    /// Whether a push that replaces a shown notification (same `apns-collapse-id`) presents
    /// again, with a banner and sound (default true).
    public var replacementPresentsAgain: Bool = true
    /// The apps, by topic (bundle ID); an app not named has ``AppSettings``' defaults.
    public var apps: [String: AppSettings] = [:]

    /// The defaults: online, awake, unrestricted.
    public init() {}

    /// The settings of the app with `topic` (a `.push-type.*` suffix names its app).
    public subscript(app topic: String) -> AppSettings {
        get { apps[AppBundle.bundleID(of: topic)] ?? AppSettings() }
        set { apps[AppBundle.bundleID(of: topic)] = newValue }
    }

    /// Which stored push survives.
    public enum StorageChoice: Sendable, Hashable {
        /// The newest (Apple: "in most cases, the latest notification is stored").
        case latest
        /// One chosen by a generator seeded with this value (Apple: "non-deterministic").
        case seededRandom(UInt64)
    }
}

/// One app on one phone.
public struct AppSettings: Sendable, Hashable {
    /// Installed. An uninstalled app's pushes are discarded ("Discarded - Token Unregistered").
    public var isInstalled: Bool = true
    /// Whether the user allows its notifications.
    public var authorization: Authorization = .authorized
    /// Foreground, background or force-quit.
    public var state: AppState = .background
    /// What the app asks the system to show for a push that comes while it is in the
    /// foreground (its `willPresent` answer); empty (the default) shows nothing.
    public var foregroundPresentation: Set<Presentation> = []

    /// An app with the defaults: installed, authorised, in the background.
    public init() {}

    /// The user's choice for the app's notifications.
    public enum Authorization: String, Sendable, Hashable, CaseIterable {
        /// Notifications off: APNs discards the app's pushes ("Discarded - Disabled"), but for
        /// background pushes, which need no permission and still wake the app.
        case denied
        /// Delivered quietly: to the notification centre only, no banner, no sound.
        case provisional
        /// Shown as sent.
        case authorized
    }

    /// Where the app is.
    public enum AppState: String, Sendable, Hashable, CaseIterable {
        /// On screen: pushes go to the app, which shows what ``foregroundPresentation`` says.
        case foreground
        /// Running in the background, or suspended.
        case background
        /// Swiped away by the user: background pushes are not delivered, and the held one is
        /// discarded, until the app is launched.
        case forceQuit = "force-quit"
    }

    /// What a foreground app asks the system to show.
    public enum Presentation: String, Sendable, Hashable, CaseIterable {
        /// A banner (it presents).
        case banner
        /// An entry in the notification centre, without a banner.
        case list
        /// Its sound.
        case sound
        /// Its badge.
        case badge
    }
}
