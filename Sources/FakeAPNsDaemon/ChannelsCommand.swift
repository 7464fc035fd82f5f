import FakeAPNs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `fake-apns channels create|read|list|delete`: one channel management request (Apple's
/// `/1/apps/<bundle>/…` API, on FakeAPNs or Apple's own hosts), its outcome printed as one JSON
/// line. Exits 0 when the server did what was asked, 1 when it refused or the connection failed,
/// 64 on usage errors.
enum ChannelsCommand {
    /// What to ask the server.
    enum Action: String, CaseIterable {
        case create
        case read
        case list
        case delete

        /// The status Apple answers when it did it.
        var success: Int {
            switch self {
            case .create: 201
            case .read, .list: 200
            case .delete: 204
            }
        }
    }

    /// The command line, read.
    struct Settings: TokenAuthSettings {
        var connection = ConnectionSettings()
        var showHelp = false
        var jwtKey: JWTKey?
        var bundleID: String?
        var channelID: String?
        var storagePolicy = 0
        var requestID: String?

        /// The port: `--port`, or the channel management port of a local fake-apns.
        var port: Int { connection.port ?? 2198 }
    }

    // MARK: - Running

    static func run(_ arguments: [String], output: CommandOutput = .standard) -> Int32 {
        if arguments.first == "--help" || arguments.first == "-h" {
            output.line(help)
            return 0
        }
        let actions = Action.allCases.map(\.rawValue).joined(separator: ", ")
        guard let first = arguments.first, let action = Action(rawValue: first) else {
            let given = arguments.first.map { ", not '\($0)'" } ?? ""
            return output.usageError("channels takes an action: \(actions)\(given) (see fake-apns channels --help)")
        }
        let settings: Settings
        let providerToken: String?
        do {
            var parsed = Settings()
            let given = try ClientArguments.parse(
                Array(arguments.dropFirst()), into: &parsed, table: table, command: "channels")
            if parsed.showHelp {
                output.line(help)
                return 0
            }
            try check(parsed, action: action, given: given)
            settings = parsed
            providerToken = try settings.jwtKey?.sign()
        } catch {
            return output.usageError("\(error)")
        }
        let bundleID = settings.bundleID!
        let request: ProviderAPIClient.Request =
            switch action {
            case .create:
                .createChannel(
                    bundleID: bundleID, storagePolicy: settings.storagePolicy, requestID: settings.requestID,
                    providerToken: providerToken)
            case .read:
                .readChannel(
                    bundleID: bundleID, channelID: settings.channelID!, requestID: settings.requestID,
                    providerToken: providerToken)
            case .list:
                .listChannels(bundleID: bundleID, requestID: settings.requestID, providerToken: providerToken)
            case .delete:
                .deleteChannel(
                    bundleID: bundleID, channelID: settings.channelID!, requestID: settings.requestID,
                    providerToken: providerToken)
            }
        let response: ProviderAPIClient.ChannelResponse
        do {
            response = ProviderAPIClient.ChannelResponse(try settings.connection.send(request, port: settings.port))
        } catch let error as Options.UsageError {
            return output.usageError("\(error)")
        } catch {
            return output.failure("\(error)")
        }
        output.line(line(response, leading: [(key: "action", value: .string(action.rawValue))]))
        return response.status == action.success ? 0 : 1
    }

    /// The outcome line: `leading`, the status, the ids and the reason, then what the body said.
    static func line(_ response: ProviderAPIClient.ChannelResponse, leading: [JSONObject.Element]) -> String {
        let text = { (value: String?) in value.map { JSONValue.string($0) } ?? .null }
        var members = leading + [
            (key: "status", value: response.response.resetCode == nil ? .int(response.status) : .null),
            (key: "requestID", value: text(response.requestID)),
        ]
        if let channelID = response.channelID { members.append((key: "channelID", value: .string(channelID))) }
        if let uniqueID = response.uniqueID { members.append((key: "uniqueID", value: .string(uniqueID))) }
        members.append((key: "reason", value: text(response.reason)))
        if let policy = response.storagePolicy { members.append((key: "storagePolicy", value: .int(policy))) }
        if let pushType = response.pushType { members.append((key: "pushType", value: .string(pushType))) }
        if let channels = response.channels {
            members.append((key: "channels", value: .array(channels.map { .string($0) })))
        }
        if let resetCode = response.response.resetCode {
            members.append((key: "resetCode", value: .int(Int(resetCode))))
        }
        return JSONValue.object(JSONObject(members)).serialized()
    }

    // MARK: - Options

    private static var table: [ClientOption<Settings>] {
        [
            ClientOption(flag: "--bundle", argument: "ID", help: "The app's bundle ID (required).") {
                $0.bundleID = $1
            },
            ClientOption(
                flag: "--channel", argument: "ID", help: "read, delete: the channel id (base64) create printed."
            ) {
                $0.channelID = $1
            },
            .integer(
                "--storage-policy", argument: "0|1",
                help: "create: 0 stores no message (default), 1 keeps the most recent for later subscribers.",
                in: 0...1, what: "0 or 1"
            ) { $0.storagePolicy = $1 },
            ClientOption(
                flag: "--request-id", argument: "UUID",
                help: "apns-request-id, a lowercase UUID (the server makes one otherwise)."
            ) {
                $0.requestID = $1
            },
            JWTKey.option(help: "Sign a provider token with this .p8 key and send authorization: bearer <token>."),
        ] + ConnectionSettings.options(defaultPort: "2198, the channel management port of fake-apns")
    }

    static var help: String {
        ClientArguments.help(
            usage: "fake-apns channels create|read|list|delete --bundle ID [--channel ID] [options]",
            about: """
                Sends one channel management request (Apple's API for broadcast push: POST, GET and DELETE
                /1/apps/<bundle>/channels, GET /1/apps/<bundle>/all-channels) to FakeAPNs or to Apple's
                api-manage-broadcast hosts, and prints the outcome as one JSON line.
                """,
            table: table,
            footer: """
                Output (<request-id>: the server's apns-request-id; <channel-id>: a channel's base64 id):
                  {"action":"create","status":201,"requestID":"<request-id>","channelID":"<channel-id>","reason":null}
                  {"action":"read","status":200,"requestID":"<request-id>","reason":null,"storagePolicy":1,"pushType":"LiveActivity"}
                  {"action":"list","status":200,"requestID":"<request-id>","reason":null,"channels":["<channel-id>"]}
                  {"action":"delete","status":204,"requestID":"<request-id>","reason":null}
                  {"action":"read","status":400,"requestID":"<request-id>","reason":"ChannelNotRegistered"}

                Exits 0 when the server did it (201, 200 or 204), 1 when it refused or when the connection
                fails (message on standard error), 64 on usage errors.

                Examples, against fake-apns started with no options (<channel-id>: the id create printed):
                  fake-apns channels create --bundle com.example.app --storage-policy 1
                  fake-apns channels list --bundle com.example.app
                  fake-apns channels read --bundle com.example.app --channel <channel-id>
                  fake-apns channels delete --bundle com.example.app --channel <channel-id>
                Against Apple's sandbox (<key-id>, <team-id>, <AuthKey.p8>: your token key; <bundle-id>: your app):
                    fake-apns channels create --host api-manage-broadcast.sandbox.push.apple.com --port 2195 \\
                      --ca /etc/ssl/certs/ca-certificates.crt --jwt-key <key-id>:<team-id>:<AuthKey.p8> --bundle <bundle-id>
                """)
    }

    /// The checks between options, once all are read.
    private static func check(_ settings: Settings, action: Action, given: [String]) throws {
        try settings.connection.check()
        guard settings.bundleID != nil else {
            throw Options.UsageError(description: "--bundle is required: the app's bundle ID")
        }
        switch action {
        case .read, .delete:
            guard settings.channelID != nil else {
                throw Options.UsageError(description: "channels \(action.rawValue) needs --channel: the channel id")
            }
        case .create, .list:
            if given.contains("--channel") {
                let why = action == .create ? "the server picks a new channel's id" : "list names every channel"
                throw Options.UsageError(description: "--channel applies to read and delete; \(why)")
            }
        }
        if action != .create && given.contains("--storage-policy") {
            throw Options.UsageError(description: "--storage-policy applies to create only")
        }
    }
}
