import FakeAPNs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `fake-apns send`: sends one notification to an HTTP/2 provider API or a binary gateway
/// (FakeAPNs or any server that speaks Apple's protocols) and prints the outcome as one JSON
/// line. Exits 0 when the notification was accepted, 1 when it was refused or the connection
/// failed, 64 on usage errors.
enum SendCommand {
    /// Which provider API to speak.
    enum Transport: String {
        case http2
        case binary
    }

    /// Which binary command carries the notification.
    enum BinaryFormat: String {
        /// Command 0: token and payload; the gateway never answers it.
        case simple
        /// Command 1: identifier, expiry, token, payload.
        case enhanced
        /// Command 2: items, with priority.
        case frame
    }

    /// The command line, read.
    struct Settings: TokenAuthSettings {
        var connection = ConnectionSettings()
        var showHelp = false
        var transport = Transport.http2
        var token: DeviceToken?
        var alert: String?
        var title: String?
        var badge: Int?
        var sound: String?
        var contentAvailable = false
        var json: String?
        var custom: [JSONObject.Element] = []
        var topic: String?
        var pushType: String?
        var priority: Int?
        var expiration: Int?
        var collapseID: String?
        var apnsID: String?
        var identifier: UInt32?
        var format = BinaryFormat.frame
        var quietPeriod = BinaryProviderClient.defaultQuietPeriod
        var jwtKey: JWTKey?
        var broadcast = false
        var channelID: String?
        var bundleID: String?

        /// The port: `--port`, or the protocol's usual one.
        var port: Int { connection.port ?? (transport == .http2 ? 2197 : 2195) }
    }

    /// Options that only one protocol carries, and the flags that build the payload from parts.
    private static let binaryOnly: Set = ["--identifier", "--format", "--quiet-period"]
    private static let http2Only: Set = ["--topic", "--push-type", "--collapse-id", "--apns-id", "--jwt-key"]
    private static let broadcastOnly: Set = ["--channel", "--bundle"]
    private static let payloadParts: Set = ["--alert", "--title", "--badge", "--sound", "--content-available"]

    // MARK: - Running

    static func run(_ arguments: [String], output: CommandOutput = .standard) -> Int32 {
        let settings: Settings
        let payload: [UInt8]
        let providerToken: String?
        do {
            var parsed = Settings()
            let given = try ClientArguments.parse(arguments, into: &parsed, table: table, command: "send")
            if parsed.showHelp {
                output.line(help)
                return 0
            }
            try check(parsed, given: given)
            settings = parsed
            payload = try makePayload(settings)
            providerToken = try settings.jwtKey?.sign()
        } catch {
            return output.usageError("\(error)")
        }
        switch settings.transport {
        case .http2 where settings.broadcast:
            return sendBroadcast(settings, payload: payload, providerToken: providerToken, output: output)
        case .http2: return sendHTTP2(settings, payload: payload, providerToken: providerToken, output: output)
        case .binary: return sendBinary(settings, payload: payload, output: output)
        }
    }

    private static func sendHTTP2(
        _ settings: Settings, payload: [UInt8], providerToken: String?, output: CommandOutput
    ) -> Int32 {
        let response: ProviderAPIClient.Response
        do {
            response = try settings.connection.send(
                ProviderAPIClient.Request(
                    token: settings.token!, payload: payload, topic: settings.topic,
                    pushType: settings.pushType.map { PushType(rawValue: $0) }, priority: settings.priority,
                    expiration: settings.expiration, collapseID: settings.collapseID, apnsID: settings.apnsID,
                    providerToken: providerToken),
                port: settings.port)
        } catch let error as Options.UsageError {
            return output.usageError("\(error)")
        } catch {
            return output.failure("\(error)")
        }
        var members: [JSONObject.Element] = [
            (key: "protocol", value: "http2"),
            (key: "status", value: response.resetCode == nil ? .int(response.status) : .null),
            (key: "apnsID", value: response.apnsID.map { .string($0) } ?? .null),
            (key: "reason", value: response.reason.map { .string($0) } ?? .null),
        ]
        if let timestamp = response.timestamp { members.append((key: "timestamp", value: .int(timestamp))) }
        if let resetCode = response.resetCode { members.append((key: "resetCode", value: .int(Int(resetCode)))) }
        output.line(JSONValue.object(JSONObject(members)).serialized())
        return response.status == 200 ? 0 : 1
    }

    /// A broadcast to a channel: `POST /4/broadcasts/apps/<bundle>` on the provider port.
    private static func sendBroadcast(
        _ settings: Settings, payload: [UInt8], providerToken: String?, output: CommandOutput
    ) -> Int32 {
        let response: ProviderAPIClient.ChannelResponse
        do {
            let request = ProviderAPIClient.Request.broadcast(
                bundleID: settings.bundleID!, channelID: settings.channelID!, payload: payload,
                priority: settings.priority ?? 10, expiration: settings.expiration,
                pushType: settings.pushType ?? ProviderAPIClient.Request.liveActivityPushType, apnsID: settings.apnsID,
                providerToken: providerToken)
            response = ProviderAPIClient.ChannelResponse(try settings.connection.send(request, port: settings.port))
        } catch let error as Options.UsageError {
            return output.usageError("\(error)")
        } catch {
            return output.failure("\(error)")
        }
        let leading: [JSONObject.Element] = [(key: "protocol", value: "http2"), (key: "broadcast", value: true)]
        output.line(ChannelsCommand.line(response, leading: leading))
        return response.status == 200 ? 0 : 1
    }

    private static func sendBinary(_ settings: Settings, payload: [UInt8], output: CommandOutput) -> Int32 {
        let token = settings.token!
        let frames: [UInt8]
        switch settings.format {
        case .simple:
            frames = BinaryEncoder.simple(token: token, payload: payload)
        case .enhanced:
            frames = BinaryEncoder.enhanced(
                identifier: settings.identifier ?? 0, expiration: UInt32(settings.expiration ?? 0), token: token,
                payload: payload)
        case .frame:
            frames = BinaryEncoder.frame(
                token: token, payload: payload, identifier: settings.identifier ?? 0,
                expiration: UInt32(settings.expiration ?? 0), priority: UInt8(settings.priority ?? 10))
        }
        let refusal: BinaryErrorResponse?
        do {
            let client = try BinaryProviderClient(
                host: settings.connection.host, port: settings.port,
                trustedCAsPEM: try settings.connection.trustedCAsPEM(), identity: try settings.connection.identity(),
                timeout: settings.connection.timeoutDuration)
            defer { client.close() }
            // A write can fail because the gateway already refused and closed; its error
            // response is still there to read, and says more than the failed write.
            var writeError: (any Error)?
            do {
                try client.send(frames)
            } catch {
                writeError = error
            }
            refusal = try client.finish(
                quietPeriod: settings.quietPeriod, waitingUpTo: settings.connection.timeoutDuration)
            if refusal == nil, let writeError { throw writeError }
        } catch let error as Options.UsageError {
            return output.usageError("\(error)")
        } catch {
            return output.failure("\(error)")
        }
        guard let refusal else {
            output.line(#"{"protocol":"binary","accepted":true}"#)
            return 0
        }
        let line: JSONValue = [
            "protocol": "binary", "accepted": false, "status": .int(Int(refusal.status.rawValue)),
            "statusName": .string(refusal.status.name), "identifier": .int(Int(refusal.identifier)),
        ]
        output.line(line.serialized())
        return 1
    }

    // MARK: - Options

    private static var table: [ClientOption<Settings>] {
        [
            ClientOption(flag: "--protocol", argument: "PROTOCOL", help: "http2 (default) or binary.") {
                guard let transport = Transport(rawValue: $1) else {
                    throw Options.UsageError(description: "--protocol takes http2 or binary, not '\($1)'")
                }
                $0.transport = transport
            },
            ClientOption(
                flag: "--token", argument: "HEX",
                help: "Device token in hex (required); the spaces and brackets of the NSData form are accepted."
            ) { settings, text in
                switch Result(catching: { () throws(DeviceTokenError) in try DeviceToken(hex: text) }) {
                case .success(let token): settings.token = token
                case .failure(let error): throw Options.UsageError(description: "--token: \(error)")
                }
            },
            .switch(
                "--broadcast",
                help: "http2: broadcast a Live Activity update to a channel (POST /4/broadcasts/apps/<bundle>),"
                    + " with --channel and --bundle instead of --token; push type LiveActivity and priority 10"
                    + " unless given."
            ) {
                $0.broadcast = true
            },
            ClientOption(flag: "--channel", argument: "ID", help: "--broadcast: apns-channel-id, the channel.") {
                $0.channelID = $1
            },
            ClientOption(flag: "--bundle", argument: "ID", help: "--broadcast: the app's bundle ID, in the path.") {
                $0.bundleID = $1
            },
            ClientOption(
                flag: "--alert", argument: "TEXT", help: "Alert text: aps.alert, or aps.alert.body with --title."
            ) {
                $0.alert = $1
            },
            ClientOption(flag: "--title", argument: "TEXT", help: "Alert title: aps.alert.title.") {
                $0.title = $1
            },
            ClientOption(flag: "--badge", argument: "N", help: "Badge number: aps.badge.") {
                guard let badge = Int($1) else {
                    throw Options.UsageError(description: "--badge takes a whole number, not '\($1)'")
                }
                $0.badge = badge
            },
            ClientOption(
                flag: "--sound", argument: "NAME", help: "Sound: aps.sound (\"default\" for the default sound)."
            ) {
                $0.sound = $1
            },
            .switch("--content-available", help: "Background update: aps.content-available = 1.") {
                $0.contentAvailable = true
            },
            ClientOption(
                flag: "--json", argument: "TEXT",
                help: "The whole payload, sent as written; not with --alert, --title, --badge, --sound or"
                    + " --content-available."
            ) {
                $0.json = $1
            },
            ClientOption(
                flag: "--custom", argument: "KEY=JSON",
                help: "A custom top-level key whose value is JSON (strings in quotes: 'id=\"abc\"'); repeatable."
            ) {
                try $0.custom.append(customKey($1))
            },
            ClientOption(flag: "--topic", argument: "TOPIC", help: "http2: apns-topic, the app's bundle ID.") {
                $0.topic = $1
            },
            ClientOption(
                flag: "--push-type", argument: "TYPE", help: "http2: apns-push-type (alert, background, voip, ...)."
            ) {
                $0.pushType = $1
            },
            .integer(
                "--priority", argument: "N",
                help: "Priority: 10 now, 5 considering power, 1 lowest (http2 apns-priority; binary --format frame).",
                in: Int.min...Int.max, what: "a whole number"
            ) { $0.priority = $1 },
            .integer(
                "--expiration", argument: "SECONDS",
                help: "Expiry in UNIX seconds, 0: now or never (http2 apns-expiration; binary enhanced and frame).",
                in: 0...Int.max, what: "UNIX seconds (0 or more)"
            ) { $0.expiration = $1 },
            ClientOption(flag: "--collapse-id", argument: "ID", help: "http2: apns-collapse-id.") {
                $0.collapseID = $1
            },
            ClientOption(
                flag: "--apns-id", argument: "UUID", help: "http2: apns-id (the server makes one up otherwise)."
            ) {
                $0.apnsID = $1
            },
            .integer(
                "--identifier", argument: "N",
                help: "binary: the notification identifier echoed in error responses (default 0).",
                in: 0...Int(UInt32.max), what: "a number from 0 to 4294967295"
            ) { $0.identifier = UInt32($1) },
            ClientOption(
                flag: "--format", argument: "FORMAT",
                help: "binary: simple (command 0, never answered), enhanced (1) or frame (2, default)."
            ) {
                guard let format = BinaryFormat(rawValue: $1) else {
                    throw Options.UsageError(description: "--format takes simple, enhanced or frame, not '\($1)'")
                }
                $0.format = format
            },
            ClientOption(
                flag: "--quiet-period", argument: "SECONDS",
                help: "binary: how long the gateway must stay silent after the notification, the connection"
                    + " open, before its silence counts as accepted (default 1; decimals allowed)."
            ) {
                $0.quietPeriod = .milliseconds(Int64((try ClientArguments.seconds("--quiet-period", $1) * 1000).rounded()))
            },
            JWTKey.option(
                help: "http2: sign a provider token with this .p8 key and send authorization: bearer <token>."),
        ] + ConnectionSettings.options(defaultPort: "2197 for http2, 2195 for binary")
    }

    static var help: String {
        ClientArguments.help(
            usage: "fake-apns send (--token HEX | --broadcast --channel ID --bundle ID) [--alert TEXT | --json TEXT] [options]",
            about: """
                Sends one notification to an HTTP/2 provider API or a binary gateway (FakeAPNs, or any
                server that speaks Apple's protocols) and prints the outcome as one JSON line.
                """,
            table: table,
            footer: """
                Output (<apns-id>: the notification's UUID; <request-id>, <unique-id>: a broadcast's ids):
                  {"protocol":"http2","status":200,"apnsID":"<apns-id>","reason":null}   (410 adds "timestamp")
                  {"protocol":"http2","broadcast":true,"status":200,"requestID":"<request-id>","uniqueID":"<unique-id>","reason":null}
                  {"protocol":"binary","accepted":true}
                  {"protocol":"binary","accepted":false,"status":8,"statusName":"Invalid token","identifier":7}
                The binary gateway answers only refusals, so --protocol binary waits for its verdict:
                an error response, a refused handshake, a close or a reset (all failures), or else
                --quiet-period seconds (default 1) of silence after the notification, then a clean
                close on both sides (accepted).

                Exits 0 when accepted, 1 when refused or when the connection fails (message on standard
                error), 64 on usage errors.

                Examples, against fake-apns started with no options (the device token is any hex you choose):
                  fake-apns send --token fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2 --alert Hi --topic com.example.app
                  fake-apns send --protocol binary --token fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2 --alert Hi --badge 3
                A broadcast (<channel-id>: the id fake-apns channels create printed):
                    fake-apns send --broadcast --bundle com.example.app --channel <channel-id> --json '{"aps":{"event":"update","content-state":{"score":"2-1"},"timestamp":1700000000}}'
                """)
    }

    /// The checks between options, once all are read.
    private static func check(_ settings: Settings, given: [String]) throws {
        try settings.connection.check()
        if settings.broadcast {
            try checkBroadcast(settings, given: given)
        } else if let flag = given.first(where: broadcastOnly.contains) {
            throw Options.UsageError(description: "\(flag) applies to --broadcast only")
        }
        guard settings.token != nil || settings.broadcast else {
            throw Options.UsageError(description: "--token is required: the device token in hex")
        }
        switch settings.transport {
        case .http2:
            if let flag = given.first(where: binaryOnly.contains) {
                throw Options.UsageError(description: "\(flag) applies to --protocol binary only")
            }
        case .binary:
            if let flag = given.first(where: http2Only.contains) {
                throw Options.UsageError(
                    description: "\(flag) applies to --protocol http2 only; the binary protocol has no such field")
            }
            let unsupported: Set<String> =
                switch settings.format {
                case .simple: ["--identifier", "--priority", "--expiration"]
                case .enhanced: ["--priority"]
                case .frame: []
                }
            if let flag = given.first(where: unsupported.contains) {
                throw Options.UsageError(description: "\(flag) is not carried by --format \(settings.format.rawValue)")
            }
            if let priority = settings.priority, !(0...255).contains(priority) {
                throw Options.UsageError(
                    description: "--priority takes 0 to 255 in the binary protocol, not \(priority)")
            }
            if let expiration = settings.expiration, expiration > Int(UInt32.max) {
                throw Options.UsageError(
                    description: "--expiration \(expiration) does not fit the binary protocol's 32 bits")
            }
        }
        if settings.json != nil, let flag = given.first(where: payloadParts.contains) {
            throw Options.UsageError(description: "--json is a whole payload: drop \(flag) or write it into the JSON")
        }
    }

    /// A broadcast goes to a channel of a bundle over HTTP/2, never to a device or a topic.
    private static func checkBroadcast(_ settings: Settings, given: [String]) throws {
        if settings.transport == .binary {
            throw Options.UsageError(description: "--broadcast is an HTTP/2 request: drop --protocol binary")
        }
        if let flag = given.first(where: ["--token", "--topic", "--collapse-id"].contains) {
            throw Options.UsageError(
                description: "\(flag) does not apply to --broadcast, which goes to --channel of --bundle")
        }
        guard settings.channelID != nil, settings.bundleID != nil else {
            throw Options.UsageError(description: "--broadcast needs --channel ID and --bundle ID")
        }
    }

    // MARK: - Payload

    /// A `--custom KEY=JSON`.
    private static func customKey(_ text: String) throws -> JSONObject.Element {
        guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
            throw Options.UsageError(description: "--custom takes KEY=JSON, not '\(text)'")
        }
        let key = String(text[..<equals])
        let json = String(text[text.index(after: equals)...])
        switch parseJSON(json) {
        case .success(let value):
            return (key: key, value: value)
        case .failure(let error):
            throw Options.UsageError(
                description: "--custom \(key): '\(json)' is not JSON (\(error)); write strings in quotes:"
                    + " --custom '\(key)=\"text\"'")
        }
    }

    /// The payload's bytes: `--json` as written, or built from the parts; `--custom` keys last.
    static func makePayload(_ settings: Settings) throws -> [UInt8] {
        var members: [JSONObject.Element] = []
        if let json = settings.json {
            let parsed: JSONValue
            switch parseJSON(json) {
            case .success(let value): parsed = value
            case .failure(let error): throw Options.UsageError(description: "--json is not JSON: \(error)")
            }
            if settings.custom.isEmpty { return try checkedSize(Array(json.utf8), settings) }
            guard let object = parsed.objectValue else {
                throw Options.UsageError(description: "--custom adds keys to an object, and --json is not one")
            }
            members = Array(object)
        } else {
            var aps: [JSONObject.Element] = []
            if let title = settings.title {
                var alert: [JSONObject.Element] = [(key: "title", value: .string(title))]
                if let body = settings.alert { alert.append((key: "body", value: .string(body))) }
                aps.append((key: "alert", value: .object(JSONObject(alert))))
            } else if let alert = settings.alert {
                aps.append((key: "alert", value: .string(alert)))
            }
            if let badge = settings.badge { aps.append((key: "badge", value: .int(badge))) }
            if let sound = settings.sound { aps.append((key: "sound", value: .string(sound))) }
            if settings.contentAvailable { aps.append((key: "content-available", value: 1)) }
            if !aps.isEmpty { members.append((key: "aps", value: .object(JSONObject(aps)))) }
            guard !members.isEmpty || !settings.custom.isEmpty else {
                throw Options.UsageError(
                    description: "nothing to send: give --alert, --title, --badge, --sound, --content-available,"
                        + " --custom or --json")
            }
        }
        for member in settings.custom {
            guard !members.contains(where: { $0.key == member.key }) else {
                throw Options.UsageError(
                    description: "--custom \(member.key): the payload already has the key '\(member.key)'")
            }
            members.append(member)
        }
        return try checkedSize(Array(JSONValue.object(JSONObject(members)).serialized().utf8), settings)
    }

    /// The binary protocol's length fields have 16 bits; a longer payload cannot be written.
    private static func checkedSize(_ bytes: [UInt8], _ settings: Settings) throws -> [UInt8] {
        if settings.transport == .binary && bytes.count > Int(UInt16.max) {
            throw Options.UsageError(
                description: "the payload has \(bytes.count) bytes; the binary protocol carries at most 65535")
        }
        return bytes
    }

    /// Parses JSON, as a `Result` (typed throws in a `do` block trips the optimizer of Swift 6.3).
    private static func parseJSON(_ text: String) -> Result<JSONValue, JSONParseError> {
        Result { () throws(JSONParseError) in try JSONValue(parsing: text) }
    }
}
