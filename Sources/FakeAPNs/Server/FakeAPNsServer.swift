#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A fake Apple Push Notification service: the binary gateway and the feedback service, on
/// local ports, with the notifications it accepts (and those it refuses) in queues that tests
/// pop, a device registry, and fault rules.
///
/// ```swift
/// try withFakeAPNs { server in                    // 127.0.0.1, free ports, test identity
///     // point the client under test at 127.0.0.1:\(server.gatewayPort), trusting the test CA
///     let notification = try server.notifications.pop(timeout: .seconds(2))
///     XCTAssertEqual(notification.payload.aps.alert?.body, "Hello")
/// }                                                // stopped, whatever the body did
/// ```
///
/// ``withFakeAPNs(configuration:_:)`` starts and stops a server around a test; `started()`
/// with `stop()` is for a server that outlives one scope.
public final class FakeAPNsServer: @unchecked Sendable {
    /// How a server listens and what it accepts.
    public struct Configuration: Sendable {
        /// The address every listener binds: a name, an IPv4 or an IPv6 literal (default
        /// `127.0.0.1`; `::1` for IPv6 loopback, `0.0.0.0` for every interface).
        public var host: String
        /// The binary gateway's port; 0 lets the system pick a free one (the library default;
        /// Apple's is 2195).
        public var gatewayPort: Int
        /// The feedback service's port; 0 lets the system pick (Apple's is 2196); nil: no
        /// feedback service.
        public var feedbackPort: Int?
        /// The HTTP/2 provider API's port; 0 lets the system pick (Apple's are 443 and 2197);
        /// nil: no HTTP/2 listener.
        public var http2Port: Int?
        /// The channel management API's own listener, for clients configured with a separate
        /// management host and port (Apple's are 2195 and 2196; the daemon's default is 2198);
        /// 0 lets the system pick; nil (the library default): channel management is served on
        /// the HTTP/2 listener only.
        public var channelsPort: Int?
        /// The plaintext listener's port, for test clients configured with an `http://` URL
        /// (APNSwift's and Vapor's test convention): HTTP/1.1, and cleartext HTTP/2 (prior
        /// knowledge, or `Upgrade: h2c`), with the HTTP/2 listener's routes, checks, answers,
        /// authentication and limits. Apple speaks only HTTP/2 over TLS; this exists for tests.
        /// 0 lets the system pick; nil (the default): no plaintext listener. Not with
        /// certificate authentication, which needs TLS: `start()` throws.
        public var plaintextPort: Int?
        /// The bundles whose broadcast capability is enabled; nil (the default): every bundle.
        /// Channel and broadcast requests for others are answered `FeatureNotEnabled`. Changed
        /// while running through ``ChannelRegistry/broadcastBundleIDs``.
        public var broadcastBundleIDs: Set<String>?
        /// How the HTTP/2 provider API authenticates providers (default: it does not).
        public var authentication: HTTP2Authentication
        /// The source of real time (default `{ Date() }`): the server's clock (``FakeAPNsServer/clock``)
        /// reads it until a test moves that clock, and a provider token the server has not seen
        /// yet is judged against it. A test may inject its own to test expiry; moving
        /// `server.clock` does the same without one.
        public var clock: @Sendable () -> Date
        /// The environment the server plays; tokens registered for the other one are refused.
        public var environment: PushEnvironment
        /// Strict device registry: refuse tokens that are not registered (status 8).
        public var strictDeviceRegistry: Bool
        /// The certificate and key presented to clients (default: the built-in test identity).
        public var identity: TLSIdentity
        /// Whether clients must present a provider certificate (default: not requested).
        public var clientCertificates: ClientCertificatePolicy
        /// The largest payload the binary gateway accepts, in bytes (Apple's: 2048).
        public var maximumPayloadSize: Int
        /// The most notifications (and, separately, rejections) kept in each queue and each
        /// history; the oldest are dropped first and counted. Nil (the default): no limit.
        public var retention: Int?
        /// The most connections each listener holds at once (default 1,000); a connection
        /// beyond it is accepted and closed at once, with a `.connectionRefused` event. Every
        /// connection holds a thread and a descriptor, so this bounds what clients can take.
        public var maximumConnectionsPerListener: Int
        /// The most connections all the listeners hold together (default 2,000), refused the
        /// same way.
        public var maximumConnections: Int
        /// Descriptors kept free for the rest of the process (default 64): a connection that
        /// would leave fewer free under the process's limit (`RLIMIT_NOFILE`) is refused, so the
        /// test's own sockets and files (the daemon's control API) never run short because
        /// clients took every descriptor. 0: connections may take them all.
        public var reservedDescriptors: Int
        /// How long a client may take over its TLS handshake, from the connection's start;
        /// one that takes longer is closed (a `handshakeFailed` event says so). Default 10 s;
        /// nil: no limit.
        public var handshakeTimeout: Duration? = .seconds(10)
        /// How long a client that has sent part of something (a binary notification, an
        /// HTTP/2 frame or the connection preface, which is due at once) may go without sending
        /// another byte; then the connection is closed. A binary notification cut short this way
        /// is answered and recorded as one cut short by the end of the connection (status 255).
        /// Default 10 s; nil: no limit.
        public var frameTimeout: Duration? = .seconds(10)
        /// How long a connection may rest between notifications (binary) or frames (HTTP/2)
        /// before it is closed; HTTP/2 says goodbye with GOAWAY `IdleTimeout`. Default nil: idle
        /// connections stay open, as Apple kept providers' connections for hours.
        public var idleTimeout: Duration?
        /// Hears every event (connections, acceptances in order, refusals, feedback reads) on
        /// the server's own threads; keep it quick. The daemon's log and metrics use it.
        public var onEvent: (@Sendable (ServerEvent) -> Void)?
        /// Called on the server thread that has just reported events to `onEvent`, once it
        /// holds none of the server's locks: a consumer of `onEvent` that falls behind may block
        /// here, which slows that connection down instead of letting a backlog grow (the
        /// daemon's log does). Nil: never waits.
        package var eventBackPressure: (@Sendable () -> Void)?
        /// How the push lint reports (default `.on`: findings on each notification;
        /// `.strict` also records each error-level finding as a refusal).
        public var lint: LintMode = .on
        /// The most delivery-log entries the device model keeps per phone (default 1,000); the
        /// oldest go first.
        public var deviceLogLimit: Int = 1000
        /// What a provider API connection costs a sender that errs (a stream limit of 1 after a
        /// refusal, GOAWAY after too many) and how long it lives; Apple's behaviour by default.
        public var connectionRules = ProviderConnectionRules()
        /// Answer a token whose key is not valid for ``environment`` with Apple's documented
        /// `BadEnvironmentKeyIdInToken` instead of `BadEnvironmentKeyInToken` (the default), the
        /// spelling APNs was seen to send (APNSwift PR #229, 2025). Both are 403.
        public var documentedBadEnvironmentReason = false
        /// Once a connection was answered `ExpiredProviderToken`, answer every later request on it
        /// the same until the client reconnects, as Pushy's maintainers saw APNs do
        /// (jchambers/pushy PR #783). Default false: a fresh token recovers the connection.
        public var expiredProviderTokenWedgesConnection = false
        /// A per-device-token rate answered 429 `TooManyRequests` (``DeviceTokenRateLimit``), on
        /// every API that pushes to a device; nil (the default): none.
        public var deviceTokenRateLimit: DeviceTokenRateLimit?
        /// The sender audit's windows, thresholds and bounds (default: on, with the defaults
        /// the SenderAudit article states); read the findings with ``FakeAPNsServer/senderReport``.
        public var senderAudit = SenderAuditSettings()

        /// A configuration; every parameter has the default a first test wants.
        public init(
            host: String = "127.0.0.1", gatewayPort: Int = 0, feedbackPort: Int? = 0, http2Port: Int? = 0,
            authentication: HTTP2Authentication = .none, clock: @escaping @Sendable () -> Date = { Date() },
            environment: PushEnvironment = .sandbox, strictDeviceRegistry: Bool = false,
            identity: TLSIdentity = .testServer, clientCertificates: ClientCertificatePolicy = .off,
            maximumPayloadSize: Int = 2048, retention: Int? = nil, maximumConnectionsPerListener: Int = 1000,
            maximumConnections: Int = 2000, reservedDescriptors: Int = 64,
            onEvent: (@Sendable (ServerEvent) -> Void)? = nil
        ) {
            self.host = host
            self.gatewayPort = gatewayPort
            self.feedbackPort = feedbackPort
            self.http2Port = http2Port
            self.channelsPort = nil
            self.plaintextPort = nil
            self.broadcastBundleIDs = nil
            self.authentication = authentication
            self.clock = clock
            self.environment = environment
            self.strictDeviceRegistry = strictDeviceRegistry
            self.identity = identity
            self.clientCertificates = clientCertificates
            self.maximumPayloadSize = maximumPayloadSize
            self.retention = retention
            self.maximumConnectionsPerListener = maximumConnectionsPerListener
            self.maximumConnections = maximumConnections
            self.reservedDescriptors = reservedDescriptors
            self.onEvent = onEvent
        }
    }

    /// The configuration the server was made with.
    public let configuration: Configuration
    /// Every notification accepted, in order of arrival, waiting to be popped.
    public var notifications: Mailbox<PushNotification> { intake.notifications.mailbox }
    /// Every notification refused (malformed, registry, fault), in order, waiting to be popped.
    public var rejections: Mailbox<Rejection> { intake.rejections.mailbox }
    /// The devices the server knows; unregistering one feeds the feedback service.
    public var devices: DeviceRegistry { policy.devices }
    /// Deterministic faults, added and removed while the server runs.
    public var faults: FaultRules { policy.faults }
    /// The feedback service's pending tuples.
    public let feedback: FeedbackService
    /// The broadcast channels, their subscribers and what each broadcast delivered.
    public var channels: ChannelRegistry { intake.channels }
    /// Every notification accepted, popped or not, up to `retention`.
    public var notificationHistory: History<PushNotification> { intake.notifications.history }
    /// Every refusal, popped or not, up to `retention`.
    public var rejectionHistory: History<Rejection> { intake.rejections.history }

    /// The server's clock, the one "now" everything the server stamps or judges reads (the
    /// time a push was received, token ages, unregistrations, feedback and 410 timestamps,
    /// channels, the device model): real time (``Configuration/clock``) until a test sets or
    /// advances it.
    public let clock: ServerClock
    /// When the server first saw each provider token, on real time and on ``clock``.
    let tokenSightings: ProviderTokenSightings
    /// The apps a test described (categories, sounds, entitlements), by bundle ID, for the
    /// push lint.
    public let apps = AppCatalog()
    /// The phones behind the front door.
    let phones: DeviceModel
    /// What each sender did against what Apple expects of a provider, over the run.
    let audit: SenderAudit

    /// The sender audit's findings so far, worst first: what the senders did that Apple
    /// punishes (pushing after 410, retrying what cannot succeed, a connection per push …).
    /// A correct sender has none. Forgotten by ``reset()``.
    ///
    /// ```swift
    /// try await sendWelcome(toPort: server.http2Port!)            // the code under test
    /// XCTAssertTrue(server.senderReport.isClean, server.senderReport.description)
    /// ```
    public var senderReport: SenderReport { audit.report() }

    /// The findings of the senders `sender` names: `token:TEAMID:KEYID` (or `token:TEAMID`),
    /// `certificate:SUBJECT` or `address:HOST` (``PushSender/matches(_:)``).
    public func senderReport(sender: String) -> SenderReport { audit.report(sender: sender) }

    /// The phone with `token`, as the device model plays it: control it (online, power, apps)
    /// and read what it got and shows. A phone no test described is online, awake, authorised
    /// and idle, and gets every push at once.
    public func device(_ token: DeviceToken) -> Phone { Phone(token: token, model: phones) }

    /// The phones a test described or read, by token.
    public var describedDevices: [DeviceToken] { phones.describedTokens.sorted { $0.hex < $1.hex } }

    /// Every phone's steps of the push answered with this `apns-unique-id` (a broadcast's
    /// reach every subscribed phone described), oldest first.
    public func deliveryLog(uniqueID: String) -> [DeliveryLogEntry] { phones.log(uniqueID: uniqueID) }

    /// Where every session hands what it accepted or refused: the one stage that numbers,
    /// records, announces and queues notifications, rejections and broadcast deliveries.
    let intake: Intake
    private let policy: Policy
    private let lock = ConditionLock()
    private var gateway: TLSListener?
    private var feedbackListener: TLSListener?
    private var http2Listener: TLSListener?
    private var channelsListener: TLSListener?
    private var plaintextListener: TLSListener?
    private var state = State.created
    private let connectionIDs = ConnectionCounter()
    private let budget: ConnectionBudget

    private enum State { case created, running, stopped }

    private var timeouts: ConnectionTimeouts {
        ConnectionTimeouts(
            handshake: configuration.handshakeTimeout, frame: configuration.frameTimeout,
            idle: configuration.idleTimeout)
    }

    /// A server that is not listening yet; call `start()`.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let onEvent = configuration.onEvent
        var announceAccepted: (@Sendable ([PushNotification]) -> Void)?
        var announceRejected: (@Sendable ([Rejection]) -> Void)?
        if let onEvent {
            announceAccepted = { batch in onEvent(.accepted(batch)) }
            announceRejected = { batch in batch.forEach { onEvent(.rejected($0)) } }
        }
        var announceChannel: (@Sendable (Channel, Bool) -> Void)?
        if configuration.onEvent != nil {
            let report = Self.report(configuration)
            announceChannel = { channel, created in
                report(created ? ServerEvent.channelCreated(channel) : ServerEvent.channelDeleted(channel))
            }
        }
        let clock = ServerClock(reading: configuration.clock)
        self.clock = clock
        tokenSightings = ProviderTokenSightings(clock: clock)
        let feedback = FeedbackService(clock: clock)
        self.feedback = feedback
        intake = Intake(
            retention: configuration.retention, environment: configuration.environment, clock: clock,
            broadcastBundleIDs: configuration.broadcastBundleIDs, announceAccepted: announceAccepted,
            announceRejected: announceRejected, announceChannel: announceChannel,
            backPressure: configuration.eventBackPressure)
        var announceDeviceLog: (@Sendable ([DeliveryLogEntry]) -> Void)?
        if let onEvent { announceDeviceLog = { entries in onEvent(.deviceLog(entries)) } }
        let policy = Policy(
            strict: configuration.strictDeviceRegistry, environment: configuration.environment, feedback: feedback,
            clock: clock, tokenRateLimit: configuration.deviceTokenRateLimit)
        self.policy = policy
        let registry = policy.devices
        let phones = DeviceModel(
            lock: intake.lock, clock: clock, logLimit: configuration.deviceLogLimit,
            history: intake.notifications.history, announce: announceDeviceLog, apps: apps,
            strictLint: configuration.lint == .strict, isUninstalled: { registry.isUninstalled($0) },
            // Weakly: the channels' delivery lane holds the intake's stages, this model among them.
            subscribeToChannel: { [weak channels = intake.channels] in channels?.unlockedSubscribe($0, to: $1) ?? false },
            activityDismissed: { registry.expireActivityToken($0, topic: $1, at: $2) })
        self.phones = phones
        intake.add(LintStage(apps: apps, mode: configuration.lint))
        intake.add(phones)
        let audit = SenderAudit(clock: clock, settings: configuration.senderAudit)
        self.audit = audit
        intake.add(audit)
        clock.observe { [weak phones] now in phones?.advance(to: now) }
        self.budget = ConnectionBudget(
            perListener: configuration.maximumConnectionsPerListener, total: configuration.maximumConnections,
            reservedDescriptors: configuration.reservedDescriptors)
    }

    /// A server, already started.
    public static func started(configuration: Configuration = Configuration()) throws -> FakeAPNsServer {
        let server = FakeAPNsServer(configuration: configuration)
        try server.start()
        return server
    }

    deinit {
        stop()
    }

    /// Binds every listener and starts accepting. The bound ports are readable as soon as
    /// this returns. A server starts once; make a new one to start again.
    public func start() throws {
        try lock.withLock {
            guard state == .created else {
                throw FakeAPNsServerError.alreadyStarted
            }
            if configuration.plaintextPort != nil && configuration.authentication == .certificate {
                throw FakeAPNsServerError.plaintextWithCertificateAuthentication
            }
            let context = try TLSContext.server(
                identity: configuration.identity, clientCertificates: configuration.clientCertificates)
            let gatewayContext = GatewayContext(
                decoder: BinaryDecoder(maximumPayloadSize: configuration.maximumPayloadSize), policy: policy,
                intake: intake, clock: clock)
            let gateway = TLSListener(
                name: "gateway", host: configuration.host, port: configuration.gatewayPort, context: context,
                connectionIDs: connectionIDs, budget: budget, timeouts: timeouts,
                onHandshakeFailure: handshakeFailed(.gateway), onRefusal: refused(.gateway),
                onConnection: connectionChanged(.gateway)
            ) { connection in
                GatewaySession(connection: connection, context: gatewayContext).run()
            }
            _ = try gateway.start()
            self.gateway = gateway
            do {
                if let feedbackPort = configuration.feedbackPort {
                    let feedback = self.feedback
                    let report = report
                    let listener = TLSListener(
                        name: "feedback", host: configuration.host, port: feedbackPort, context: context,
                        connectionIDs: connectionIDs, budget: budget, timeouts: timeouts,
                        onHandshakeFailure: handshakeFailed(.feedback), onRefusal: refused(.feedback),
                        onConnection: connectionChanged(.feedback)
                    ) { connection in
                        FeedbackSession(connection: connection, feedback: feedback) { tuples, info in
                            report(.feedbackRead(tuples, info))
                        }.run()
                    }
                    _ = try listener.start()
                    feedbackListener = listener
                }
                if let http2Port = configuration.http2Port {
                    let listener = try makeHTTP2Listener(port: http2Port, kind: .http2)
                    _ = try listener.start()
                    http2Listener = listener
                }
                if let channelsPort = configuration.channelsPort {
                    let listener = try makeHTTP2Listener(port: channelsPort, kind: .channels)
                    _ = try listener.start()
                    channelsListener = listener
                }
                if let plaintextPort = configuration.plaintextPort {
                    let listener = try makeHTTP2Listener(port: plaintextPort, kind: .plaintext)
                    _ = try listener.start()
                    plaintextListener = listener
                }
            } catch {
                allListeners.forEach { $0.stop() }
                self.gateway = nil
                feedbackListener = nil
                http2Listener = nil
                channelsListener = nil
                plaintextListener = nil
                throw error
            }
            state = .running
        }
    }

    /// Reports an event from a connection's or listener's thread, then lets a consumer that
    /// falls behind hold that thread back.
    private var report: @Sendable (ServerEvent) -> Void { Self.report(configuration) }

    private static func report(_ configuration: Configuration) -> @Sendable (ServerEvent) -> Void {
        let onEvent = configuration.onEvent
        let backPressure = configuration.eventBackPressure
        return { event in
            onEvent?(event)
            backPressure?()
        }
    }

    private func handshakeFailed(_ listener: ListenerKind) -> @Sendable (String, TLSError) -> Void {
        let report = report
        return { peer, error in report(.handshakeFailed(peer: peer, listener: listener, reason: error.description)) }
    }

    private func refused(_ listener: ListenerKind) -> @Sendable (String, ConnectionRefusal) -> Void {
        let report = report
        return { peer, refusal in report(.connectionRefused(peer: peer, listener: listener, reason: refusal)) }
    }

    private func connectionChanged(_ listener: ListenerKind) -> @Sendable (ConnectionInfo, Bool) -> Void {
        let report = report
        // A feedback client connects, reads and leaves, as Apple asked: not churn.
        let audit: SenderAudit? = listener == .feedback ? nil : self.audit
        return { info, opened in
            if opened {
                audit?.connectionOpened(info)
            } else {
                audit?.connectionClosed(info)
            }
            report(opened ? .connectionOpened(info, listener: listener) : .connectionClosed(info, listener: listener))
        }
    }

    /// Forgets every notification, rejection and broadcast delivery (queues and histories),
    /// channel, fault rule, device, phone (the device model's), described app, pending
    /// feedback tuple, provider token seen and sender finding (with what the sender audit
    /// remembered), gives the clock back to real time, and sets strict mode back to the
    /// configuration's: the state of a server just started, for one server serving many
    /// tests. One step: whatever arrives meanwhile is wholly before it (and forgotten) or
    /// wholly after it (and kept), and a thread popping or reading the histories never sees
    /// part of it done. Sequence numbers go on from where they were.
    public func reset() {
        let policy = policy
        let feedback = feedback
        let strict = configuration.strictDeviceRegistry
        intake.reset {
            policy.reset(strict: strict)
            feedback.takePending()
        }
        apps.removeAll()
        tokenSightings.forget()
        clock.returnToRealTime()
    }

    /// Every listener started, with the lock held.
    private var allListeners: [TLSListener] {
        [gateway, feedbackListener, http2Listener, channelsListener, plaintextListener].compactMap { $0 }
    }

    /// The HTTP/2 listener (`.http2`), the channel management one (`.channels`), which
    /// answers every other path `BadPath`, or the plaintext one (`.plaintext`), which serves
    /// the HTTP/2 listener's routes over HTTP/1.1 and cleartext HTTP/2.
    private func makeHTTP2Listener(port: Int, kind: ListenerKind) throws -> TLSListener {
        // Certificate authentication needs the certificate asked for; without one the request
        // is answered 403 MissingProviderToken, as APNs does, so asking is enough.
        var clientCertificates = configuration.clientCertificates
        if configuration.authentication == .certificate && clientCertificates.mode == .off {
            clientCertificates = .optional(trustedCAsPEM: clientCertificates.trustedCAsPEM)
        }
        let context =
            kind == .plaintext
            ? nil
            : try TLSContext.server(
                identity: configuration.identity, clientCertificates: clientCertificates, offerHTTP2: true)
        var verifier: ProviderTokenVerifier?
        if case .token(let keys) = configuration.authentication {
            var tokenVerifier = ProviderTokenVerifier(keys: keys)
            if configuration.documentedBadEnvironmentReason {
                tokenVerifier.badEnvironmentReason = .badEnvironmentKeyIdInToken
            }
            tokenVerifier.expiredTokenWedgesConnection = configuration.expiredProviderTokenWedgesConnection
            verifier = tokenVerifier
        }
        var context2 = HTTP2Context(
            validator: RequestValidator(), authentication: configuration.authentication, verifier: verifier,
            policy: policy, intake: intake, clock: clock, tokenSightings: tokenSightings,
            managementOnly: kind == .channels)
        context2.rules = configuration.connectionRules
        context2.audit = audit
        if let onEvent = configuration.onEvent {
            context2.onRule = { info, event in onEvent(.connectionRule(info, listener: kind, event)) }
        }
        let http2Context = context2
        return TLSListener(
            name: kind.rawValue, host: configuration.host, port: port, context: context, connectionIDs: connectionIDs,
            budget: budget, timeouts: timeouts, onHandshakeFailure: handshakeFailed(kind), onRefusal: refused(kind),
            onConnection: connectionChanged(kind)
        ) { connection in
            if kind == .plaintext {
                HTTP2Connection(connection: connection, context: http2Context) { PlaintextSession(delegate: $0) }
                    .run(on: connection)
            } else {
                HTTP2Connection(connection: connection, context: http2Context).run(on: connection)
            }
        }
    }

    /// Closes every listener, ends every connection as Apple's servers did, and waits for
    /// their threads to end; the ports are free when it returns. Everything a client had sent
    /// is decoded first; then binary connections get status 10 (shutdown) naming the last
    /// notification accepted on them, and HTTP/2 connections a GOAWAY naming the last stream
    /// processed. Connections still open after a second are cut. Queued notifications stay
    /// poppable. Safe to call twice.
    ///
    /// It blocks the calling thread while connections drain (up to about a second); in async
    /// code, `await stop()` suspends the task instead.
    @available(*, noasync, message: "stop() blocks the thread while connections drain; in async code use await stop()")
    public func stop() {
        let listeners = beginStop()
        listeners.forEach { $0.finishStop() }
    }

    /// Does what the blocking `stop()` does, suspending the task instead of blocking a
    /// thread while the connections drain: no thread of Swift's cooperative pool, which
    /// the tests beside this one share, waits for them. Returns when the ports are free and
    /// every connection has ended. Safe to call twice.
    public func stop() async {
        for listener in beginStop() {
            await listener.finishStop()
        }
    }

    /// Marks the server stopped and begins every listener's stop, so that they drain side by
    /// side; returns the listeners, to finish their stops.
    private func beginStop() -> [TLSListener] {
        let listeners: [TLSListener] = lock.withLock {
            state = .stopped
            return allListeners
        }
        listeners.forEach { $0.beginStop() }
        return listeners
    }

    /// The binary gateway's bound port (0 before `start()`).
    public var gatewayPort: Int {
        lock.withLock { gateway?.port ?? 0 }
    }

    /// The feedback service's bound port; nil before `start()` or without a feedback service.
    public var feedbackPort: Int? {
        lock.withLock { feedbackListener?.port }
    }

    /// The HTTP/2 provider API's bound port; nil before `start()` or without HTTP/2.
    public var http2Port: Int? {
        lock.withLock { http2Listener?.port }
    }

    /// The channel management listener's bound port; nil before `start()` or without one
    /// (``Configuration/channelsPort``).
    public var channelsPort: Int? {
        lock.withLock { channelsListener?.port }
    }

    /// The plaintext listener's bound port; nil before `start()` or without one
    /// (``Configuration/plaintextPort``).
    public var plaintextPort: Int? {
        lock.withLock { plaintextListener?.port }
    }

    /// How many client connections are open now, on every listener.
    public var openConnectionCount: Int {
        lock.withLock { allListeners.reduce(0) { $0 + $1.openConnectionCount } }
    }
}

extension FakeAPNsServer {
    /// The server of the test running in this task: the one the Swift Testing trait
    /// `.fakeAPNs` (module `FakeAPNsTesting`) started for it; nil outside such a test.
    ///
    /// ```swift
    /// @Test(.fakeAPNs) func sendsTheWelcome() async throws {
    ///     let server = try #require(FakeAPNsServer.current)   // fails the test, clearly, when nil
    ///     try await sendWelcome(toPort: server.http2Port!)     // the code under test
    ///     let notification = try await server.notifications.next(timeout: .seconds(2))
    ///     #expect(notification.payload.aps.alert?.body == "Welcome")
    /// }
    /// ```
    ///
    /// A task-local value: the test's body and the tasks it creates (child tasks, `Task {}`)
    /// see it; a `Task.detached` does not, nor a thread the test starts. Each test has its own
    /// server, so tests running in parallel never see each other's.
    @TaskLocal public static var current: FakeAPNsServer?
}

/// Misuse of a server's lifecycle.
public enum FakeAPNsServerError: Error, Sendable, CustomStringConvertible {
    /// `start()` was called on a server that was started before.
    case alreadyStarted
    /// A plaintext listener was asked for with certificate authentication, which needs the
    /// client certificate that only TLS carries.
    case plaintextWithCertificateAuthentication

    /// What went wrong, in words.
    public var description: String {
        switch self {
        case .alreadyStarted: "the server was already started; make a new FakeAPNsServer to start again"
        case .plaintextWithCertificateAuthentication:
            "the plaintext listener cannot serve certificate authentication, which needs TLS to carry the client certificate; use token authentication or no plaintext port"
        }
    }
}
