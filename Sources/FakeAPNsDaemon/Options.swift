import FakeAPNs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The daemon's options, parsed by hand (no outside packages here). One table describes every
/// option: its flag, its environment variable (`FAKE_APNS_` and the flag in capitals), its help
/// line, and how it sets the value, so help, environment and command line never disagree.
public struct Options: Sendable {
    var host = "127.0.0.1"
    var gatewayPort = 2195
    var feedbackPort = 2196
    var http2Port = 2197
    var channelsPort = 2198
    /// The plaintext listener's port; nil: none (the default).
    var plaintextPort: Int?
    var webHost = "127.0.0.1"
    var webPort = 8195
    var webPublic = false
    var webMaxConnections = ControlLimits.defaultMaximumConnections
    var authentication: String?
    var jwtKeys: [JWTKeyOption] = []
    /// The `--jwt-key-scope`s, at most one per key ID.
    var jwtKeyScopes: [JWTKeyScopeOption] = []
    /// Answer a key for the other environment with Apple's documented spelling.
    var documentedBadEnvironmentReason = false
    /// Keep answering ExpiredProviderToken on a connection once it was.
    var expiredTokenWedgesConnection = false
    /// The per-device-token rate; nil: none.
    var deviceTokenRate: DeviceTokenRateLimit?
    var environment = PushEnvironment.sandbox
    var devicesFile: String?
    /// The bundles with the broadcast capability; nil: every bundle.
    var broadcastBundleIDs: Set<String>?
    var strict = false
    var certificateFile: String?
    var keyFile: String?
    var keyPassphrase: String?
    var clientCertificates = ClientCertificatePolicy.Mode.off
    var trustedCAFile: String?
    var maximumPayloadSize = 2048
    var retention = 10_000
    /// How the push lint reports: findings on each notification, or also refusals (`strict`).
    var lint = LintMode.on
    /// Delivery log entries kept per phone.
    var deviceLogLimit = 1000
    /// The sender audit's switch, windows and churn threshold.
    var senderAudit = SenderAuditSettings()
    var maximumConnectionsPerListener = 1000
    var maximumConnections = 2000
    /// Connection timeouts; nil: none (`0` on the command line).
    var handshakeTimeout: Duration? = .seconds(10)
    var frameTimeout: Duration? = .seconds(10)
    var idleTimeout: Duration?
    /// What a provider API connection costs a sender that errs, and how long it lives.
    var connectionRules = ProviderConnectionRules()
    var log: LogFormat?
    var logFile: String?
    var showHelp = false
    var showVersion = false

    /// A `--jwt-key KEYID:TEAMID:FILE`.
    struct JWTKeyOption: Sendable {
        let keyID: String
        let teamID: String
        let path: String
    }

    /// A `--jwt-key-scope KEYID:ENVIRONMENT[:TOPIC,TOPIC...[:RELATEDKEYID]]`.
    struct JWTKeyScopeOption: Sendable, Equatable {
        let keyID: String
        let environments: Set<PushEnvironment>
        /// Nil: a team-scoped key.
        let topics: Set<String>?
        let relatedKeyID: String?

        /// Parses one scope; `flag` names the option in messages.
        static func parse(_ text: Substring, flag: String) throws -> JWTKeyScopeOption {
            let usage = "\(flag) takes KEYID:ENVIRONMENT[:TOPIC,TOPIC...[:RELATEDKEYID]], ENVIRONMENT sandbox, "
                + "production or both, not '\(text)'"
            let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard (2...4).contains(parts.count), !parts[0].isEmpty else { throw UsageError(description: usage) }
            let environments: Set<PushEnvironment>
            switch parts[1] {
            case "both": environments = Set(PushEnvironment.allCases)
            case let name:
                guard let environment = PushEnvironment(rawValue: name) else { throw UsageError(description: usage) }
                environments = [environment]
            }
            var topics: Set<String>?
            if parts.count >= 3 {
                let listed = parts[2].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                guard !listed.contains(where: \.isEmpty) else { throw UsageError(description: usage) }
                guard listed.count <= JWTSigningKey.maximumTopicCount else {
                    throw UsageError(
                        description: "\(flag) \(parts[0]) lists \(listed.count) topics; a key has at most "
                            + "\(JWTSigningKey.maximumTopicCount)")
                }
                topics = Set(listed)
            }
            var related: String?
            if parts.count == 4 {
                guard !parts[3].isEmpty, parts[3] != parts[0] else { throw UsageError(description: usage) }
                related = parts[3]
            }
            return JWTKeyScopeOption(keyID: parts[0], environments: environments, topics: topics, relatedKeyID: related)
        }
    }

    /// How the event log is written.
    enum LogFormat: String, Sendable {
        case json
        case text
    }

    static let version = "0.2.0"

    /// A usage problem: the message names the option. Exits 64.
    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    /// Why the daemon cannot start although its command line is well formed: a file an option
    /// names, or a listener that cannot listen. The message names the option. Exits 1.
    struct StartFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// One option of the table.
    private struct Option {
        let flag: String
        let argument: String?
        let help: String
        let apply: @Sendable (inout Options, String, String) throws -> Void

        /// The environment variable: `--gateway-port` → `FAKE_APNS_GATEWAY_PORT`.
        var environmentName: String {
            "FAKE_APNS_" + String(flag.dropFirst(2).uppercased().map { $0 == "-" ? "_" : $0 })
        }
    }

    private static func port(_ name: String, _ text: String) throws -> Int {
        guard let number = Int(text), (0...65535).contains(number) else {
            throw UsageError(description: "\(name) takes a port from 0 to 65535, not '\(text)'")
        }
        return number
    }

    private static func count(_ name: String, _ text: String) throws -> Int {
        guard let count = Int(text), count > 0 else {
            throw UsageError(description: "\(name) takes a positive count, not '\(text)'")
        }
        return count
    }

    /// A count, 0 for none (nil).
    private static func limit(_ name: String, _ text: String) throws -> Int? {
        guard let count = Int(text), (0...1_000_000_000).contains(count) else {
            throw UsageError(description: "\(name) takes a count (0 for none), not '\(text)'")
        }
        return count == 0 ? nil : count
    }

    /// Seconds, fractions allowed, from 0.001 to a day: one of the sender audit's windows.
    private static func window(_ name: String, _ text: String) throws -> Duration {
        guard let seconds = Double(text), seconds.isFinite, (0.001...86_400).contains(seconds) else {
            throw UsageError(description: "\(name) takes seconds from 0.001 to 86400, not '\(text)'")
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// Seconds, fractions allowed; 0 is no limit.
    private static func timeout(_ name: String, _ text: String) throws -> Duration? {
        guard let seconds = Double(text), seconds.isFinite, (0...86_400 * 365).contains(seconds) else {
            throw UsageError(description: "\(name) takes seconds (0 for no limit), not '\(text)'")
        }
        return seconds == 0 ? nil : .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }

    private static func flag(_ name: String, _ text: String) throws -> Bool {
        switch text.lowercased() {
        case "", "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default: throw UsageError(description: "\(name) is a switch: 1 or 0, not '\(text)'")
        }
    }

    private static let table: [Option] = [
        Option(flag: "--host", argument: "HOST", help: "Address the APNs listeners bind (default 127.0.0.1; ::1, 0.0.0.0).") {
            $0.host = $2
        },
        Option(flag: "--gateway-port", argument: "PORT", help: "Binary gateway port (default 2195; 0 picks a free one).") {
            $0.gatewayPort = try port($1, $2)
        },
        Option(flag: "--feedback-port", argument: "PORT", help: "Feedback service port (default 2196; 0 picks a free one).") {
            $0.feedbackPort = try port($1, $2)
        },
        Option(flag: "--http2-port", argument: "PORT", help: "HTTP/2 provider API port (default 2197; 0 picks a free one).") {
            $0.http2Port = try port($1, $2)
        },
        Option(flag: "--channels-port", argument: "PORT", help: "Channel management API's own port (default 2198; 0 picks a free one); also served on the HTTP/2 port.") {
            $0.channelsPort = try port($1, $2)
        },
        Option(flag: "--plaintext-port", argument: "PORT", help: "Plaintext listener (off by default; 0 picks a free port): the HTTP/2 port's routes over HTTP/1.1 and cleartext HTTP/2, for test clients configured with an http:// URL. Apple speaks only HTTP/2 over TLS. Not with --auth certificate.") {
            $0.plaintextPort = try port($1, $2)
        },
        Option(flag: "--web-port", argument: "PORT", help: "Control API and web page port (default 8195; 0 picks a free one).") {
            $0.webPort = try port($1, $2)
        },
        Option(flag: "--web-host", argument: "HOST", help: "Address the control API binds (default 127.0.0.1; another needs --web-public).") {
            $0.webHost = $2
        },
        Option(flag: "--web-public", argument: nil, help: "Allow the control API on a non-loopback address (it has no authentication).") {
            $0.webPublic = try flag($1, $2)
        },
        Option(flag: "--web-max-connections", argument: "COUNT", help: "Control API connections served at once (default 1024); 64 more get one answer each (503 for a wait), later ones wait to be accepted.") {
            guard let count = Int($2), (1...65_536).contains(count) else {
                throw UsageError(description: "\($1) takes a count from 1 to 65536, not '\($2)'")
            }
            $0.webMaxConnections = count
        },
        Option(flag: "--auth", argument: "MODE", help: "HTTP/2 authentication: none (default), certificate or token; --jwt-key alone implies token.") {
            guard ["none", "certificate", "token"].contains($2) else {
                throw UsageError(description: "\($1) takes none, certificate or token, not '\($2)'")
            }
            $0.authentication = $2
        },
        Option(flag: "--jwt-key", argument: "KEYID:TEAMID:FILE", help: "A key trusted for tokens (.p8 or public key PEM); repeatable; in the environment, separate keys with commas. --auth token without one trusts the test key.") {
            for item in $2.split(separator: ",") {
                let parts = item.split(separator: ":", maxSplits: 2).map(String.init)
                guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty }) else {
                    throw UsageError(description: "\($1) takes KEYID:TEAMID:FILE, not '\(item)'")
                }
                $0.jwtKeys.append(JWTKeyOption(keyID: parts[0], teamID: parts[1], path: parts[2]))
            }
        },
        Option(flag: "--jwt-key-scope", argument: "KEYID:ENVIRONMENT[:TOPIC,TOPIC...[:RELATEDKEYID]]", help: "Limits a trusted key as Apple's keys since February 2025: ENVIRONMENT sandbox, production or both; with topics, a topic-specific key (up to 400 topics) and the key ID of its one related key; repeatable, one per key; in the environment, separate scopes with spaces. A key for the other environment is answered 403 BadEnvironmentKeyInToken, an unlisted topic 400 TopicDisallowed, a switch to an unrelated key 403 UnrelatedKeyIdInToken.") {
            for item in $2.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }) {
                let scope = try JWTKeyScopeOption.parse(item, flag: $1)
                guard !$0.jwtKeyScopes.contains(where: { $0.keyID == scope.keyID }) else {
                    throw UsageError(description: "\($1) scopes key \(scope.keyID) twice; give each key one scope")
                }
                $0.jwtKeyScopes.append(scope)
            }
        },
        Option(flag: "--documented-bad-environment-reason", argument: nil, help: "Answer a key for the other environment with Apple's documented spelling BadEnvironmentKeyIdInToken instead of BadEnvironmentKeyInToken, the one APNs was seen to send.") {
            $0.documentedBadEnvironmentReason = try flag($1, $2)
        },
        Option(flag: "--expired-token-wedges-connection", argument: nil, help: "Once a connection was answered 403 ExpiredProviderToken, answer every later request on it the same until the client reconnects, as Pushy's maintainers saw APNs do (off by default).") {
            $0.expiredTokenWedgesConnection = try flag($1, $2)
        },
        Option(flag: "--device-token-rate", argument: "COUNT/SECONDS", help: "At most COUNT pushes to one device token within SECONDS on the server's clock; more are answered 429 TooManyRequests (off by default; 100000 tokens remembered at most).") {
            let parts = $2.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, let count = Int(parts[0]), let seconds = Double(parts[1]), seconds.isFinite,
                seconds >= 0.001, seconds <= 86_400 * 365,
                let rate = DeviceTokenRateLimit(
                    requests: count, per: .milliseconds(Int64((seconds * 1000).rounded(.up))))
            else {
                throw UsageError(
                    description: "\($1) takes COUNT/SECONDS (a count of at least 1, seconds from 0.001 to a year), "
                        + "not '\($2)'")
            }
            $0.deviceTokenRate = rate
        },
        Option(flag: "--environment", argument: "ENV", help: "sandbox (default) or production: the environment played.") {
            guard let environment = PushEnvironment(rawValue: $2) else {
                throw UsageError(description: "\($1) takes sandbox or production, not '\($2)'")
            }
            $0.environment = environment
        },
        Option(flag: "--devices", argument: "FILE", help: "Pre-registers devices, one a line: TOKEN [TOPIC] [sandbox|production] [{PHONE SETTINGS}], creates channels, one a line: channel BUNDLE [policy=0|1] [id=BASE64] [TOKEN...], and describes apps, one a line: app BUNDLE {APP}; the JSON objects are the control API's PATCH /api/v1/devices/TOKEN and PUT /api/v1/apps/BUNDLE bodies; # comments.") {
            $0.devicesFile = $2
        },
        Option(flag: "--broadcast-bundles", argument: "ID[,ID...]", help: "Only these bundles have the broadcast capability; channel and broadcast requests for others are answered 400 FeatureNotEnabled (default: every bundle).") {
            let bundles = $2.split(separator: ",", omittingEmptySubsequences: false).map {
                $0.trimmingWhitespace()
            }
            guard !bundles.contains(where: \.isEmpty) else {
                throw UsageError(description: "\($1) takes bundle ids separated by commas, not '\($2)'")
            }
            $0.broadcastBundleIDs = Set(bundles)
        },
        Option(flag: "--strict", argument: nil, help: "Refuse tokens that are not registered (binary status 8, HTTP/2 BadDeviceToken).") {
            $0.strict = try flag($1, $2)
        },
        Option(flag: "--cert", argument: "FILE", help: "Server certificate chain, PEM (default: the built-in test identity for localhost; clients trust the test CA, which fake-apns ca prints and Scripts/install puts in PREFIX/share/fake-apns/ca.pem).") {
            $0.certificateFile = $2
        },
        Option(flag: "--key", argument: "FILE", help: "Server private key, PEM (with --cert).") {
            $0.keyFile = $2
        },
        Option(flag: "--key-passphrase", argument: "TEXT", help: "Passphrase of an encrypted --key.") {
            $0.keyPassphrase = $2
        },
        Option(flag: "--client-certificates", argument: "MODE", help: "off (default), optional or required: ask clients for a provider certificate.") {
            guard let mode = ClientCertificatePolicy.Mode(rawValue: $2) else {
                throw UsageError(description: "\($1) takes off, optional or required, not '\($2)'")
            }
            $0.clientCertificates = mode
        },
        Option(flag: "--trusted-ca", argument: "FILE", help: "CAs, PEM, that client certificates must chain to, with --client-certificates or --auth certificate (default: the test CA, fake-apns ca).") {
            $0.trustedCAFile = $2
        },
        Option(flag: "--max-payload-size", argument: "BYTES", help: "Largest binary payload accepted (default 2048, as Apple's).") {
            guard let size = Int($2), (1...65_535).contains(size) else {
                throw UsageError(description: "\($1) takes a byte count from 1 to 65535, not '\($2)'")
            }
            $0.maximumPayloadSize = size
        },
        Option(flag: "--retention", argument: "COUNT", help: "Notifications (and rejections) kept; the oldest are dropped first and counted (default 10000).") {
            $0.retention = try count($1, $2)
        },
        Option(flag: "--lint", argument: "MODE", help: "Push lint: on (default; findings on each notification) or strict (also records an error-level finding as a refusal, cause lint, while the client still gets Apple's 200).") {
            guard let mode = LintMode(rawValue: $2) else {
                throw UsageError(description: "\($1) takes on or strict, not '\($2)'")
            }
            $0.lint = mode
        },
        Option(flag: "--device-log-limit", argument: "COUNT", help: "Delivery log entries the device model keeps per phone; the oldest go first (default 1000).") {
            $0.deviceLogLimit = try count($1, $2)
        },
        Option(flag: "--sender-audit", argument: "MODE", help: "Sender audit: on (default; GET /api/v1/sender-report) or off.") {
            guard ["on", "off"].contains($2) else { throw UsageError(description: "\($1) takes on or off, not '\($2)'") }
            $0.senderAudit.isEnabled = $2 == "on"
        },
        Option(flag: "--same-push-window", argument: "SECONDS", help: "How long two pushes alike (token, topic, payload; or apns-id) are the same push for the sender audit (default 60).") {
            $0.senderAudit.samePushWindow = try window($1, $2)
        },
        Option(flag: "--backoff-window", argument: "SECONDS", help: "A push to a token this soon after 429, 500 or 503 for it is the sender audit's no-backoff (default 1).") {
            $0.senderAudit.backoffWindow = try window($1, $2)
        },
        Option(flag: "--churn-connections", argument: "COUNT", help: "Short-lived connections a sender may close within the churn window before each more is connection-churn (default 20).") {
            $0.senderAudit.connectionChurnCount = try count($1, $2)
        },
        Option(flag: "--churn-window", argument: "SECONDS", help: "A connection closed sooner after opening is short-lived, and the churn count's window (default 60).") {
            $0.senderAudit.connectionChurnWindow = try window($1, $2)
        },
        Option(flag: "--max-connections", argument: "COUNT", help: "Connections each APNs listener holds at once; more are closed as soon as accepted (default 1000).") {
            $0.maximumConnectionsPerListener = try count($1, $2)
        },
        Option(flag: "--max-total-connections", argument: "COUNT", help: "Connections the APNs listeners hold together; more are closed as soon as accepted (default 2000).") {
            $0.maximumConnections = try count($1, $2)
        },
        Option(flag: "--handshake-timeout", argument: "SECONDS", help: "Close a connection whose TLS handshake takes longer (default 10; 0: no limit).") {
            $0.handshakeTimeout = try timeout($1, $2)
        },
        Option(flag: "--frame-timeout", argument: "SECONDS", help: "Close a connection that sent part of a notification, HTTP/2 frame or preface and nothing more for this long (default 10; 0: no limit).") {
            $0.frameTimeout = try timeout($1, $2)
        },
        Option(flag: "--idle-timeout", argument: "SECONDS", help: "Close a connection idle between notifications or frames for this long (default 0: never, as Apple kept connections for hours).") {
            $0.idleTimeout = try timeout($1, $2)
        },
        Option(flag: "--throttle-after-refusal", argument: "on|off", help: "After a refused push (a 4xx other than 410) cut the connection's SETTINGS_MAX_CONCURRENT_STREAMS to 1 until its next accepted push, as Apple documents (default on).") {
            $0.connectionRules.throttleAfterRefusal = try flag($1, $2)
        },
        Option(flag: "--error-limit", argument: "COUNT", help: "End a provider API connection with GOAWAY after this many refusals (4xx but 410) within --error-window (default 1000; 0: never).") {
            $0.connectionRules.errorLimit = try limit($1, $2)
        },
        Option(flag: "--bad-device-token-limit", argument: "COUNT", help: "The same for BadDeviceToken refusals, which Apple says end a connection sooner (default 500; 0: only --error-limit counts them).") {
            $0.connectionRules.badDeviceTokenLimit = try limit($1, $2)
        },
        Option(flag: "--error-window", argument: "SECONDS", help: "The window --error-limit and --bad-device-token-limit count refusals in, on the server's clock (default 60).") {
            guard let window = try timeout($1, $2) else {
                throw UsageError(description: "\($1) takes a number of seconds above 0, not '\($2)'")
            }
            $0.connectionRules.errorWindow = window
        },
        Option(flag: "--stream-limit-violation", argument: "ANSWER", help: "What a stream over the acknowledged SETTINGS_MAX_CONCURRENT_STREAMS meets: refuse (default; RST_STREAM REFUSED_STREAM, RFC 9113) or goaway (GOAWAY \"Maximum active streams violated for this endpoint.\", as APNs was seen to answer).") {
            switch $2 {
            case "refuse": $0.connectionRules.streamLimitViolation = .refuseStream
            case "goaway": $0.connectionRules.streamLimitViolation = .goAway
            default: throw UsageError(description: "\($1) takes refuse or goaway, not '\($2)'")
            }
        },
        Option(flag: "--bad-certificate-environment", argument: "ANSWER", help: "What a client certificate for the other environment meets: answer (default; 403 BadCertificateEnvironment per request, as Apple documents) or goaway (GOAWAY naming stream 0, as clients saw APNs do).") {
            switch $2 {
            case "answer": $0.connectionRules.certificateEnvironmentGoAway = false
            case "goaway": $0.connectionRules.certificateEnvironmentGoAway = true
            default: throw UsageError(description: "\($1) takes answer or goaway, not '\($2)'")
            }
        },
        Option(flag: "--connection-lifetime", argument: "SECONDS", help: "Retire a provider API connection after this long with GOAWAY Shutdown, answering what it accepted, as APNs was seen to after hours (default 0: never).") {
            $0.connectionRules.connectionLifetime = try timeout($1, $2)
        },
        Option(flag: "--requests-per-connection", argument: "COUNT", help: "Retire a provider API connection the same way after it served this many requests (default 0: no limit).") {
            $0.connectionRules.requestsPerConnection = try limit($1, $2)
        },
        Option(flag: "--log", argument: "FORMAT", help: "Event log format: json (default when standard output is not a terminal) or text.") {
            guard let format = LogFormat(rawValue: $2) else {
                throw UsageError(description: "\($1) takes json or text, not '\($2)'")
            }
            $0.log = format
        },
        Option(flag: "--log-file", argument: "FILE", help: "Append the event log to FILE instead of standard output.") {
            $0.logFile = $2
        },
    ]

    /// The help text: usage, every option with its environment variable, the subcommands.
    static var help: String {
        var text = """
            fake-apns: a fake Apple Push Notification service for tests.

            Listens like APNs (binary gateway, feedback service, HTTP/2 provider API), accepts what
            a provider sends, logs one line per event, and serves a control API over HTTP. The
            first line of standard output names every listener with its bound port, so a script
            can start it with port 0 and read where it listens.

            Usage: fake-apns [serve] [options]    run the fake APNs (the default command)
                   fake-apns send [options]       send one notification and print the outcome
                   fake-apns channels ACTION ...  create, read, list or delete a broadcast channel
                   fake-apns feedback [options]   read and print the feedback tuples
                   fake-apns token [options]      print a provider token (JWT) for --auth token
                   fake-apns ca                   print the test CA, PEM, that clients trust
                   fake-apns trust ACTION         put the test CA in the system trust store or take it out
                                                  (install, uninstall, status)
                   fake-apns healthcheck [options] exit 0 when the control API's /healthz answers 200
                   (fake-apns COMMAND --help lists the options of each)

            Options (each also read from the environment variable shown; the command line wins):

            """
        for option in table {
            let left = option.flag + (option.argument.map { " " + $0 } ?? "")
            text += "  " + left.padded(to: 28) + "  " + option.help + "\n"
            text += String(repeating: " ", count: 32) + "[" + option.environmentName + "]\n"
        }
        text += """
              --version                     Print the version and exit.
              --help                        Print this help and exit.

            Stops on SIGINT or SIGTERM, exiting 0. Usage errors exit 64. A failure to start exits 1:
            a file an option names that is missing, unreadable or not what it should be, or a port
            in use; the message names the option.

            Examples (fake-apns with no options listens on 127.0.0.1: gateway 2195, feedback 2196,
            HTTP/2 2197, channel management 2198, control API 8195; the device token is any hex you choose):
              fake-apns --gateway-port 0 --feedback-port 0 --http2-port 0 --channels-port 0 --web-port 0
                  free ports, named on the first line of output
              fake-apns send --token fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2 --alert Hi --topic com.example.app
                  an HTTP/2 notification; then take it from the control API:
              curl 'http://127.0.0.1:8195/api/v1/notifications/next?timeout=5'
              curl --http2 --cacert <(fake-apns ca) -H 'apns-topic: com.example.app' -d '{"aps":{"alert":"Hi"}}' https://127.0.0.1:2197/3/device/fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2
                  the same with curl; against fake-apns --auth token, add
                  -H "authorization: bearer $(fake-apns token)"
            """
        return text
    }

    /// `--name=value` as its name and value; any other argument as itself and no value.
    static func splitInlineValue(_ argument: String) -> (name: String, inline: String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }

    /// Options from the environment, then the command line.
    static func parse(_ arguments: [String], environment: [String: String] = [:]) throws -> Options {
        var options = Options()
        for option in table {
            if let value = environment[option.environmentName] {
                try option.apply(&options, option.environmentName, value)
            }
        }
        var rest = arguments[...]
        if rest.first == "serve" { rest = rest.dropFirst() }
        while let argument = rest.popFirst() {
            let (name, inline) = splitInlineValue(argument)
            switch name {
            case "--help", "-h":
                options.showHelp = true
                continue
            case "--version":
                options.showVersion = true
                continue
            default:
                break
            }
            guard let option = table.first(where: { $0.flag == name }) else {
                if !name.hasPrefix("-") {
                    throw UsageError(
                        description: "unexpected argument '\(name)': the commands are serve, send, channels, feedback, token, ca, trust and healthcheck"
                            + " (see fake-apns --help)")
                }
                throw UsageError(description: "unknown option '\(name)' (see fake-apns --help)")
            }
            let value: String
            if option.argument == nil {
                value = inline ?? ""
            } else if let inline {
                value = inline
            } else if let next = rest.popFirst() {
                value = next
            } else {
                throw UsageError(description: "\(name) needs a value")
            }
            if name == "--jwt-key" && value.contains(",") {
                throw UsageError(description: "--jwt-key takes one KEYID:TEAMID:FILE; repeat the option for more")
            }
            try option.apply(&options, name, value)
        }
        try options.check()
        return options
    }

    private func check() throws {
        if !jwtKeys.isEmpty && authentication != nil && authentication != "token" {
            throw UsageError(description: "--jwt-key needs --auth token (or no --auth)")
        }
        if !jwtKeyScopes.isEmpty && Daemon.modeName(self) != "token" {
            throw UsageError(description: "--jwt-key-scope needs token authentication (--jwt-key or --auth token)")
        }
        let trustedKeyIDs = jwtKeys.isEmpty ? [TestCertificates.jwtKeyID] : jwtKeys.map(\.keyID)
        if let unknown = jwtKeyScopes.first(where: { !trustedKeyIDs.contains($0.keyID) }) {
            throw UsageError(
                description: "--jwt-key-scope names key \(unknown.keyID), which no --jwt-key trusts (trusted: "
                    + trustedKeyIDs.joined(separator: ", ") + ")")
        }
        if (certificateFile == nil) != (keyFile == nil) {
            throw UsageError(description: certificateFile == nil ? "--key needs --cert" : "--cert needs --key")
        }
        if keyPassphrase != nil && keyFile == nil {
            throw UsageError(description: "--key-passphrase needs --cert and --key")
        }
        if trustedCAFile != nil && clientCertificates == .off && Daemon.modeName(self) != "certificate" {
            throw UsageError(
                description: "--trusted-ca applies only with --client-certificates optional or required, or --auth certificate")
        }
        if plaintextPort != nil && Daemon.modeName(self) == "certificate" {
            throw UsageError(
                description: "--plaintext-port cannot serve --auth certificate: the client certificate needs TLS; use --auth token or leave the plaintext listener off")
        }
        try checkPortsDiffer()
        if !webPublic && !Self.isLoopback(webHost) {
            throw UsageError(description: "--web-host \(webHost) is not a loopback address; the control API has no authentication, so add --web-public to mean it")
        }
    }

    /// Two listeners on one port: the second could never bind, so say it before starting.
    private func checkPortsDiffer() throws {
        var ports = [("--gateway-port", gatewayPort), ("--feedback-port", feedbackPort), ("--http2-port", http2Port),
            ("--channels-port", channelsPort)]
        if let plaintextPort { ports.append(("--plaintext-port", plaintextPort)) }
        if webHost == host { ports.append(("--web-port", webPort)) }
        for (index, (flag, port)) in ports.enumerated() where port != 0 {
            if let (other, _) = ports[..<index].first(where: { $0.1 == port }) {
                throw UsageError(description: "\(other) and \(flag) both name port \(port); each listener needs its own")
            }
        }
    }

    /// The text of the file an option names, or a ``StartFailure`` naming the option and the file
    /// and saying what is wrong: missing, a folder, unreadable, or not text.
    static func readFile(_ name: String, _ path: String) throws -> String {
        #if canImport(FoundationEssentials)
        var isFolder = false
        #else
        var isFolder: ObjCBool = false
        #endif
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw StartFailure(description: "\(name) \(path): no such file")
        }
        guard !Bool(isFolder) else {
            throw StartFailure(description: "\(name) \(path): a folder, not a file")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            let why = FileManager.default.isReadableFile(atPath: path) ? "a read error" : "permission denied"
            throw StartFailure(description: "\(name) \(path): cannot read it (\(why))")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw StartFailure(description: "\(name) \(path): not text (PEM and --devices files are UTF-8 text)")
        }
        return text
    }

    /// Whether `host` names this machine only.
    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }
}
