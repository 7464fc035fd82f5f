import FakeAPNs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's engine: the server configured from the options, with the devices and channels
/// of `--devices` registered and created, and the control API beside it. `reset()` brings both back to how they started.
final class Daemon: Sendable {
    let options: Options
    let server: FakeAPNsServer
    let devices: [DevicesFile.Entry]
    /// The apps of `--devices`, described at start and again after each reset.
    let apps: [DevicesFile.App]
    /// The channels of `--devices`, as created at start (ids included), with their subscribers.
    let channels: [(channel: FakeAPNs.Channel, subscribers: [DeviceToken])]
    private let api = Locked<(api: ControlAPI?, port: Int)>((nil, 0))

    /// A daemon whose server reports its events to `onEvent` (inside the server's locks: it
    /// must not block) and calls `backPressure` after them, holding no lock (it may block to
    /// slow the connections down).
    init(
        options: Options, devices: [DevicesFile.Entry], channels: [DevicesFile.Channel] = [],
        apps: [DevicesFile.App] = [], onEvent: @escaping @Sendable (ServerEvent) -> Void, backPressure: (@Sendable () -> Void)? = nil
    ) throws {
        self.options = options
        self.devices = devices
        self.apps = apps
        // The start line names the channels created here: their events would come before it,
        // where a client expects the start line first.
        let starting = Locked(true)
        let server = try Self.makeServer(
            options: options,
            onEvent: { event in
                if case .channelCreated = event, starting.withLock({ $0 }) { return }
                onEvent(event)
            },
            backPressure: backPressure)
        self.server = server
        self.channels = try channels.map { entry in
            do {
                let made = try entry.id.map {
                    try server.channels.create(bundleID: entry.bundleID, storagePolicy: entry.storagePolicy, id: $0)
                } ?? server.channels.create(bundleID: entry.bundleID, storagePolicy: entry.storagePolicy)
                return (made, entry.subscribers)
            } catch {
                throw Options.StartFailure(description: "\(entry.origin): \(error)")
            }
        }
        starting.withLock { $0 = false }
        registerDevices()
        subscribeDevices()
    }

    /// Starts the APNs listeners and the control API. A failure says which option is behind it
    /// (``Options/StartFailure``) when the options tell.
    func start(metrics: Metrics) throws {
        do {
            try server.start()
        } catch let error as TLSError {
            throw Self.explain(error, options)
        } catch let error as SocketError {
            throw Self.explain(error, options)
        }
        let control = ControlAPI(daemon: self, metrics: metrics, maximumConnections: options.webMaxConnections)
        do {
            let port = try control.start(host: options.webHost, port: options.webPort)
            api.withLock { $0 = (control, port) }
        } catch {
            server.stop()
            throw Options.StartFailure(description: "--web-port \(options.webPort): \(error)\(Self.inUseHint("\(error)"))")
        }
    }

    /// What a TLS failure at start means in terms of the options: which file is not what it
    /// should be. OpenSSL's words follow, for the details.
    private static func explain(_ error: TLSError, _ options: Options) -> any Error {
        let operation = error.operation
        let openSSL = error.details.isEmpty ? "" : " (OpenSSL: \(error.details))"
        if let certificate = options.certificateFile, let key = options.keyFile {
            if operation.contains("certificate chain") || operation.contains("the certificate")
                || operation.contains("intermediate")
            {
                return Options.StartFailure(description: "--cert \(certificate): not a PEM certificate chain\(openSSL)")
            }
            if operation == "loading the private key" && error.details.contains("bad decrypt") {
                return Options.StartFailure(
                    description: options.keyPassphrase == nil
                        ? "--key \(key): the key is encrypted; give its passphrase with --key-passphrase"
                        : "--key \(key): --key-passphrase does not decrypt the key")
            }
            if operation == "loading the private key" {
                return Options.StartFailure(description: "--key \(key): not a PEM private key\(openSSL)")
            }
            if operation.contains("private key") {
                return Options.StartFailure(
                    description: "--key \(key) is not the private key of the certificate in --cert \(certificate)\(openSSL)")
            }
        }
        if let file = options.trustedCAFile, operation.contains("CA certificate") {
            return Options.StartFailure(description: "--trusted-ca \(file): not PEM CA certificates\(openSSL)")
        }
        return error
    }

    /// What a socket failure at start means in terms of the options: the address of `--host`,
    /// or the port of one listener.
    private static func explain(_ error: SocketError, _ options: Options) -> any Error {
        if error.operation.hasPrefix("resolving") || error.code == EADDRNOTAVAIL {
            return Options.StartFailure(description: "--host \(options.host): \(error)")
        }
        let listeners = [
            ("gateway", "--gateway-port", options.gatewayPort), ("feedback", "--feedback-port", options.feedbackPort),
            ("HTTP/2", "--http2-port", options.http2Port), ("channel management", "--channels-port", options.channelsPort),
            ("plaintext", "--plaintext-port", options.plaintextPort ?? 0),
        ]
        // The options give every listener its own port, so the port in the message tells which.
        guard let (name, flag, port) = listeners.first(where: { $0.2 != 0 && error.operation.hasSuffix(":\($0.2)") })
        else { return error }
        return Options.StartFailure(
            description: "\(flag) \(port): the \(name) listener cannot listen: \(error)\(inUseHint(error.description))")
    }

    private static func inUseHint(_ message: String) -> String {
        message.contains(String(cString: strerror(EADDRINUSE)))
            ? " (another process listens there: stop it, or pick another port; 0 picks a free one)" : ""
    }

    /// Stops every APNs listener, then the control API. A `next` that starts meanwhile is
    /// answered 503 at once; those already waiting wait on while the listeners stop (their
    /// last connections still deliver), then are answered 503 before the API closes. `step` is
    /// told each step as it begins.
    func stop(step: (String) -> Void = { _ in }) {
        let control = api.withLock { $0.api }
        control?.refuseNewWaits()
        step("stopping the APNs listeners")
        server.stop()
        control?.stop(step: step)
    }

    /// The control API's bound port (0 until it listens).
    var webPort: Int { api.withLock { $0.port } }

    /// The control API connections served at once (0 until it listens): `--web-max-connections`,
    /// or fewer when RLIMIT_NOFILE leaves descriptors for fewer.
    var webConnectionLimit: Int { api.withLock { $0.api?.servedConnectionLimit ?? 0 } }

    /// Everything back to how the daemon started: queues, histories, faults, feedback, the
    /// clock, and the devices (their phones' settings), channels (with the ids they had) and
    /// apps of `--devices`.
    func reset() {
        server.reset()
        registerDevices()
        for (channel, _) in channels {
            // Cannot fail: the registry is empty, and these ids were accepted at start.
            _ = try? server.channels.create(bundleID: channel.bundleID, storagePolicy: channel.storagePolicy, id: channel.id)
        }
        subscribeDevices()
    }

    /// Subscribes the `--devices` channels' devices; at start and after a reset the channels
    /// have no stored message, so nothing is delivered.
    private func subscribeDevices() {
        for (channel, subscribers) in channels {
            try? server.channels.subscribe(subscribers, to: channel.id)
        }
    }

    /// Registers the `--devices` devices, sets their phones' settings and describes the apps.
    private func registerDevices() {
        for app in apps {
            // Within the bounds: the file was checked when read, and a reset forgot the others.
            try? server.apps.describe(app.bundleID, as: app.bundle)
        }
        for device in devices {
            server.devices.register(device.token, topic: device.topic, environment: device.environment)
            if let phone = device.phone {
                server.device(device.token).update { $0 = phone.applied(to: $0) }
            }
        }
    }

    /// The first line of standard output: every listener and its bound port.
    var startLine: JSONValue {
        let host = JSONValue.string(options.host)
        var listeners: [JSONValue] = [
            ["name": "gateway", "host": host, "port": .int(server.gatewayPort)],
            ["name": "feedback", "host": host, "port": .int(server.feedbackPort ?? 0)],
            ["name": "http2", "host": host, "port": .int(server.http2Port ?? 0)],
            ["name": "channels", "host": host, "port": .int(server.channelsPort ?? 0)],
        ]
        if let plaintextPort = server.plaintextPort {
            listeners.append(["name": "plaintext", "host": host, "port": .int(plaintextPort)])
        }
        listeners.append(["name": "web", "host": .string(options.webHost), "port": .int(webPort)])
        var line: [JSONObject.Element] = [
            ("event", "listening"),
            ("version", .string(Options.version)),
            ("listeners", .array(listeners)),
            ("authentication", .string(Self.modeName(options))),
            ("environment", .string(options.environment.rawValue)),
        ]
        if !channels.isEmpty {
            // The ids the registry picked, for a provider to be pointed at.
            line.append(("channels", .array(channels.map { channel, subscribers in
                ControlJSON.channel(channel, subscriberCount: subscribers.count)
            })))
        }
        return .object(JSONObject(line))
    }

    /// A server configured from the command line; not started.
    private static func makeServer(
        options: Options, onEvent: @escaping @Sendable (ServerEvent) -> Void, backPressure: (@Sendable () -> Void)?
    ) throws -> FakeAPNsServer {
        var configuration = FakeAPNsServer.Configuration(
            host: options.host, gatewayPort: options.gatewayPort, feedbackPort: options.feedbackPort,
            http2Port: options.http2Port, environment: options.environment, strictDeviceRegistry: options.strict,
            maximumPayloadSize: options.maximumPayloadSize, retention: options.retention,
            maximumConnectionsPerListener: options.maximumConnectionsPerListener,
            maximumConnections: options.maximumConnections,
            reservedDescriptors: reservedDescriptors(limit: DescriptorLimit.current, controlConnections: options.webMaxConnections),
            onEvent: onEvent)
        configuration.eventBackPressure = backPressure
        configuration.channelsPort = options.channelsPort
        configuration.plaintextPort = options.plaintextPort
        configuration.broadcastBundleIDs = options.broadcastBundleIDs
        configuration.handshakeTimeout = options.handshakeTimeout
        configuration.frameTimeout = options.frameTimeout
        configuration.idleTimeout = options.idleTimeout
        configuration.connectionRules = options.connectionRules
        configuration.lint = options.lint
        configuration.deviceLogLimit = options.deviceLogLimit
        configuration.documentedBadEnvironmentReason = options.documentedBadEnvironmentReason
        configuration.expiredProviderTokenWedgesConnection = options.expiredTokenWedgesConnection
        configuration.deviceTokenRateLimit = options.deviceTokenRate
        configuration.senderAudit = options.senderAudit
        if let certificate = options.certificateFile, let key = options.keyFile {
            configuration.identity = TLSIdentity(
                certificateChainPEM: try Options.readFile("--cert", certificate),
                privateKeyPEM: try Options.readFile("--key", key), passphrase: options.keyPassphrase)
        }
        configuration.authentication = try authentication(options)
        // With the mode off, the CAs still serve --auth certificate's HTTP/2 listener.
        configuration.clientCertificates = ClientCertificatePolicy(
            mode: options.clientCertificates,
            trustedCAsPEM: try options.trustedCAFile.map { try Options.readFile("--trusted-ca", $0) }
                ?? TestCertificates.caPEM)
        return FakeAPNsServer(configuration: configuration)
    }

    /// Descriptors the APNs listeners leave free, so the control API and `/healthz` answer while
    /// clients hold every connection they may: the control API's own connections (its limit,
    /// and the 64 it answers once beyond it) and a margin for what the daemon opens besides (its
    /// listening sockets, the log file, libmicrohttpd's own); but at most a quarter of a low
    /// limit, which then still serves APNs connections.
    static func reservedDescriptors(limit: Int, controlConnections: Int) -> Int {
        min(controlConnections + 64 + 32, limit / 4)
    }

    /// The authentication mode the options name (`--jwt-key` alone implies token).
    static func modeName(_ options: Options) -> String {
        options.authentication ?? (options.jwtKeys.isEmpty ? "none" : "token")
    }

    private static func authentication(_ options: Options) throws -> HTTP2Authentication {
        switch modeName(options) {
        case "certificate":
            return .certificate
        case "token":
            var keys: [JWTSigningKey] = []
            for key in options.jwtKeys {
                keys.append(try signingKey(keyID: key.keyID, teamID: key.teamID, path: key.path))
            }
            if keys.isEmpty { keys = [.test] }
            for scope in options.jwtKeyScopes {
                for index in keys.indices where keys[index].keyID == scope.keyID {
                    let scoped = Result { () throws(JWTKeyError) in
                        try keys[index].scoped(
                            to: scope.environments, topics: scope.topics, relatedKeyID: scope.relatedKeyID)
                    }
                    switch scoped {
                    case .success(let key): keys[index] = key
                    case .failure(let error): throw Options.UsageError(description: "--jwt-key-scope: \(error.message)")
                    }
                }
            }
            return .token(keys)
        default:
            return .none
        }
    }

    /// A trusted JWT key from a `.p8` or a public key PEM file.
    private static func signingKey(keyID: String, teamID: String, path: String) throws -> JWTSigningKey {
        let text = try Options.readFile("--jwt-key", path)
        let key = Result { () throws(JWTKeyError) in
            text.contains("PUBLIC KEY")
                ? try JWTSigningKey(keyID: keyID, teamID: teamID, publicKeyPEM: text)
                : try JWTSigningKey(keyID: keyID, teamID: teamID, privateKeyPEM: text)
        }
        switch key {
        case .success(let key): return key
        case .failure(let error): throw Options.StartFailure(description: "--jwt-key \(path): \(error.message)")
        }
    }
}
