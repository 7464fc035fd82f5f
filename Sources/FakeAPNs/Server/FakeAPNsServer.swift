import Foundation

/// A fake Apple Push Notification service: the binary gateway, on a local port, with the
/// notifications it accepts in a queue that tests pop.
///
/// ```swift
/// let server = try FakeAPNsServer.started()            // 127.0.0.1, a free port, test identity
/// defer { server.stop() }
/// // point the client under test at 127.0.0.1:\(server.gatewayPort), trusting TestCerts/ca.pem
/// let notification = try server.notifications.pop(timeout: .seconds(2))
/// XCTAssertEqual(notification.payload.aps.alert?.body, "Hello")
/// ```
public final class FakeAPNsServer: @unchecked Sendable {
    /// How a server listens and what it accepts.
    public struct Configuration: Sendable {
        /// The address every listener binds: a name, an IPv4 or an IPv6 literal (default
        /// `127.0.0.1`; `::1` for IPv6 loopback, `0.0.0.0` for every interface).
        public var host: String
        /// The binary gateway's port; 0 lets the system pick a free one (the library default;
        /// Apple's is 2195).
        public var gatewayPort: Int
        /// The certificate and key presented to clients (default: the built-in test identity).
        public var identity: TLSIdentity
        /// Whether clients must present a provider certificate (default: not requested).
        public var clientCertificates: ClientCertificatePolicy
        /// The largest payload the binary gateway accepts, in bytes (Apple's: 2048).
        public var maximumPayloadSize: Int

        /// A configuration; every parameter has the default a first test wants.
        public init(
            host: String = "127.0.0.1", gatewayPort: Int = 0, identity: TLSIdentity = .testServer,
            clientCertificates: ClientCertificatePolicy = .off, maximumPayloadSize: Int = 2048
        ) {
            self.host = host
            self.gatewayPort = gatewayPort
            self.identity = identity
            self.clientCertificates = clientCertificates
            self.maximumPayloadSize = maximumPayloadSize
        }
    }

    /// The configuration the server was made with.
    public let configuration: Configuration
    /// Every notification accepted, in order of arrival, waiting to be popped.
    public let notifications: Mailbox<PushNotification>

    private let lock = ConditionLock()
    private var gateway: TLSListener?
    private var state = State.created
    private let connectionIDs = ConnectionCounter()

    private enum State { case created, running, stopped }

    /// A server that is not listening yet; call `start()`.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.notifications = Mailbox(noun: "notification") { notification, sequence in
            notification.sequenceNumber = UInt64(sequence)
        }
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
            let context = try TLSContext.server(
                identity: configuration.identity, clientCertificates: configuration.clientCertificates)
            let decoder = BinaryDecoder(maximumPayloadSize: configuration.maximumPayloadSize)
            let notifications = self.notifications
            let listener = TLSListener(
                name: "gateway", host: configuration.host, port: configuration.gatewayPort, context: context,
                connectionIDs: connectionIDs
            ) { connection in
                GatewaySession(
                    connection: connection, decoder: decoder,
                    deliver: { notifications.append(contentsOf: $0) },
                    refuse: { _, _ in }
                ).run()
            }
            _ = try listener.start()
            gateway = listener
            state = .running
        }
    }

    /// Closes every listener and connection and waits for their threads to end; the ports
    /// are free when it returns. Queued notifications stay poppable. Safe to call twice.
    public func stop() {
        let listener: TLSListener? = lock.withLock {
            state = .stopped
            return gateway
        }
        listener?.stop()
    }

    /// The binary gateway's bound port (0 before `start()`).
    public var gatewayPort: Int {
        lock.withLock { gateway?.port ?? 0 }
    }

    /// How many client connections are open now.
    public var openConnectionCount: Int {
        lock.withLock { gateway?.openConnectionCount ?? 0 }
    }
}

/// Misuse of a server's lifecycle.
public enum FakeAPNsServerError: Error, Sendable, CustomStringConvertible {
    /// `start()` was called on a server that was started before.
    case alreadyStarted

    public var description: String {
        switch self {
        case .alreadyStarted: "the server was already started; make a new FakeAPNsServer to start again"
        }
    }
}
