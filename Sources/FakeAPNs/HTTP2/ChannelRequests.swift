#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where a request to the channel management API (`/1/apps/…`) or the broadcast API
/// (`/4/broadcasts/…`) goes. Their paths never overlap `/3/device/…`.
enum ChannelRoute: Equatable {
    /// `/1/apps/<bundle>/channels`: create (POST), read (GET), delete (DELETE).
    case channels(bundleID: String)
    /// `/1/apps/<bundle>/all-channels`: list (GET).
    case allChannels(bundleID: String)
    /// `/4/broadcasts/apps/<bundle>`: send (POST).
    case broadcast(bundleID: String)

    /// The route of `path`; nil when the path is none of these, and the provider API's
    /// checks answer it (`BadPath`, as for any unknown path).
    init?(path: String) {
        guard path.hasPrefix("/1/apps/") || path.hasPrefix("/4/broadcasts/apps/") else { return nil }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        // "", "1", "apps", bundle, "channels" | "all-channels"; "", "4", "broadcasts", "apps", bundle
        guard parts.count == 5 else { return nil }
        if parts[1] == "1", Self.isBundleID(parts[3]) {
            switch parts[4] {
            case "channels": self = .channels(bundleID: String(parts[3]))
            case "all-channels": self = .allChannels(bundleID: String(parts[3]))
            default: return nil
            }
        } else if parts[1] == "4", Self.isBundleID(parts[4]) {
            self = .broadcast(bundleID: String(parts[4]))
        } else {
            return nil
        }
    }

    /// The bundle the path names.
    var bundleID: String {
        switch self {
        case .channels(let bundleID), .allChannels(let bundleID), .broadcast(let bundleID): bundleID
        }
    }

    /// Whether the route is channel management (served on the channel listener too).
    var isManagement: Bool {
        switch self {
        case .channels, .allChannels: true
        case .broadcast: false
        }
    }

    /// What a request with `method` asks for on this route; nil for a method it does not answer.
    func operation(method: String) -> ChannelOperation? {
        switch (self, method) {
        case (.channels, "POST"): .create
        case (.channels, "GET"): .read
        case (.channels, "DELETE"): .delete
        case (.allChannels, "GET"): .list
        case (.broadcast, "POST"): .broadcast
        default: nil
        }
    }

    /// The methods the route answers.
    var methods: [String] {
        switch self {
        case .channels: ["POST", "GET", "DELETE"]
        case .allChannels: ["GET"]
        case .broadcast: ["POST"]
        }
    }

    private static func isBundleID(_ text: Substring) -> Bool {
        !text.isEmpty && !text.contains("?") && RequestValidator.isWellFormedTopic(String(text))
    }
}

/// The rules the channel and broadcast APIs share, as pure functions.
enum ChannelRequests {
    /// The largest broadcast body (Apple: 5,120 bytes).
    static let maximumBroadcastPayloadSize = 5120

    /// The client's `apns-request-id`, as sent (capitals kept: the client matches the answer
    /// by it), when it is a canonical UUID; nil otherwise (the server makes one up).
    static func clientRequestID(_ value: String?) -> String? {
        value.flatMap(RequestValidator.canonicalUUID)
    }

    /// The push type suffix `bundleID` ends in, when it ends in one: a bundle, not a topic,
    /// belongs in these paths (`TopicDisallowed`).
    static func pushTypeSuffix(of bundleID: String) -> String? {
        PushType.known.lazy.compactMap(\.topicSuffix).first { !$0.isEmpty && bundleID.hasSuffix($0) }
    }

    /// Whether `value` names the Live Activity push type, in any case: Apple's pages write
    /// `LiveActivity` and `liveactivity`, and node-apn sends the latter.
    static func isLiveActivity(_ value: String) -> Bool {
        value.lowercased() == "liveactivity"
    }

    /// The storage policy of a create request's body, or the refusal: a JSON object with
    /// exactly `message-storage-policy` (0 or 1, as a number or a one-digit string, as
    /// node-apn sends it) and `push-type` (Live Activity, any case).
    static func storagePolicy(createBody body: UnsafeRawBufferPointer) -> Result<Channel.StoragePolicy, ChannelRefusal> {
        guard let json = try? JSONValue.parse(body), let object = json.objectValue else {
            return .failure(ChannelRefusal(.badRequestPayload, "the body is not a JSON object"))
        }
        var policy: Channel.StoragePolicy?
        var pushType = false
        for (key, value) in object {
            switch key {
            case "message-storage-policy":
                let number = value.intValue ?? value.stringValue.flatMap { $0.utf8.count == 1 ? Int($0) : nil }
                guard let number, let known = Channel.StoragePolicy(rawValue: number) else {
                    return .failure(ChannelRefusal(.badRequestParams, "message-storage-policy is not 0 or 1"))
                }
                policy = known
            case "push-type":
                guard let text = value.stringValue, isLiveActivity(text) else {
                    return .failure(ChannelRefusal(.badRequestParams, "push-type is not LiveActivity"))
                }
                pushType = true
            default:
                return .failure(ChannelRefusal(.badRequestParams, "unknown attribute \(key.debugDescription)"))
            }
        }
        guard let policy else { return .failure(ChannelRefusal(.badRequestParams, "no message-storage-policy")) }
        guard pushType else { return .failure(ChannelRefusal(.badRequestParams, "no push-type")) }
        return .success(policy)
    }

    /// A read's answer body: `{"message-storage-policy":n,"push-type":"LiveActivity"}`.
    static func readBody(_ channel: Channel) -> [UInt8] {
        Array(#"{"message-storage-policy":\#(channel.storagePolicy.rawValue),"push-type":"LiveActivity"}"#.utf8)
    }

    /// A list's answer body: `{"channels":["<id>",…]}`.
    static func listBody(_ channels: [Channel]) -> [UInt8] {
        var body: [UInt8] = []
        JSONWriter.append(#"{"channels":["#, to: &body)
        for (index, channel) in channels.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(channel.id, to: &body)
        }
        JSONWriter.append("]}", to: &body)
        return body
    }
}

/// A channel or broadcast request refused: Apple's reason, and what was wrong in words.
struct ChannelRefusal: Error {
    let reason: APNsReason
    let detail: String

    init(_ reason: APNsReason, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }
}
