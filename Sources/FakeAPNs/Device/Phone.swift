#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One phone as the server's device model plays it: what a test says about it (online, power,
/// apps), and what happened to the pushes sent to it (the delivery log, the screen, the
/// deliveries to pop). Get one with ``FakeAPNsServer/device(_:)``; a phone no test described
/// is online, awake and has every app installed, authorised and idle, so it gets every push
/// at once.
///
/// ```swift
/// let phone = server.device("fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2")
/// phone.update { $0.isOnline = false }
/// // … the code under test sends three pushes …
/// phone.update { $0.isOnline = true }
/// let delivery = try phone.deliveries.pop(timeout: .seconds(2))   // the newest only
/// XCTAssertTrue(delivery.fromStorage)
/// ```
public struct Phone: Sendable {
    /// The phone's token.
    public let token: DeviceToken
    private let model: DeviceModel

    package init(token: DeviceToken, model: DeviceModel) {
        self.token = token
        self.model = model
    }

    /// What the test said about the phone (the defaults until it says otherwise).
    public var settings: DeviceSettings { model.settings(of: token) }

    /// Changes the phone's settings, then plays what the change releases or discards (stored
    /// pushes delivered when it comes online, held ones when a restriction lifts), before
    /// returning. `change` runs outside the server's locks, and again on the newer settings
    /// when another change came in meanwhile, so concurrent updates all apply.
    public func update(_ change: (inout DeviceSettings) -> Void) {
        while true {
            var (settings, version) = model.versionedSettings(of: token)
            change(&settings)
            if model.update(token, to: settings, ifAt: version) { return }
        }
    }

    /// The user opens the app: it leaves the force-quit state and gets its held background push.
    public func launchApp(_ bundleID: String) { model.launchApp(bundleID, on: token) }

    /// The user swipes the app away: its held background push is discarded, and background
    /// pushes are not delivered until it is launched.
    public func forceQuit(_ bundleID: String) { model.forceQuit(bundleID, on: token) }

    /// The app starts a Live Activity (`Activity.request`) whose pushes go to this phone's
    /// token, the activity's push token, with `topic`'s `.push-type.liveactivity` suffix (a
    /// bundle ID or a topic with any push type's suffix). `attributesType` names the app's
    /// declared type (``AppBundle/liveActivityTypes``) its updates must decode as; nil: the
    /// app's only declared type, when it declares one, else none is checked (a name the app
    /// does not declare checks nothing). An activity of the topic already running is replaced.
    /// When the clock later dismisses it, the token is answered 410 `ExpiredToken` for the
    /// topic (``DeviceRegistry/expireActivityToken(_:topic:at:)``).
    ///
    /// ```swift
    /// phone.startLiveActivity("com.example.food", attributesType: "DeliveryAttributes")
    /// // an update whose content-state does not decode as DeliveryAttributes.ContentState is
    /// // logged "Ignored (Live Activity)" and carries a live-activity-content-mismatch finding
    /// ```
    public func startLiveActivity(_ topic: String, attributesType: String? = nil) {
        model.startLiveActivity(topic, attributesType: attributesType, on: token)
    }

    /// The system delivers the priority 5 and 1 pushes it held for power considerations, as
    /// a burst.
    public func releaseBursts() { model.releaseBursts(on: token) }

    /// Every step of every push to this phone, oldest first (the last ``FakeAPNsServer/Configuration/deviceLogLimit`` kept).
    public var log: [DeliveryLogEntry] { model.log(of: token) }

    /// The steps of the push with this `apns-id`.
    public func log(apnsID: String) -> [DeliveryLogEntry] {
        log.filter { $0.apnsID?.lowercased() == apnsID.lowercased() }
    }

    /// The steps of the push with this `apns-unique-id`.
    public func log(uniqueID: String) -> [DeliveryLogEntry] {
        log.filter { $0.uniqueID?.lowercased() == uniqueID.lowercased() }
    }

    /// What the phone shows now.
    public var screen: Screen { model.screen(of: token) }

    /// The pushes as they reach the phone, in order, to pop with a timeout as notifications are.
    public var deliveries: Mailbox<DeviceDelivery> { model.deliveries(of: token) }
}
