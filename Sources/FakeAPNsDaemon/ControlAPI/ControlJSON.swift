import FakeAPNs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How the control API writes devices, feedback tuples and fault rules. Fault rules come out
/// in the shape `POST /api/v1/faults` takes, so a listed rule can be posted back.
enum ControlJSON {
    /// `{"token":"…","topic":"com.x"|null,"environment":"sandbox"|null,"unregisteredAt":1700000000|null}`
    static func device(_ device: DeviceRegistry.Device) -> JSONValue {
        [
            "token": .string(device.token.hex),
            "topic": device.topic.map { .string($0) } ?? .null,
            "environment": device.environment.map { .string($0.rawValue) } ?? .null,
            "unregisteredAt": device.unregisteredAt.map(seconds) ?? .null,
        ]
    }

    /// `{"authentication":"token","keys":[{"keyID":"…","teamID":"…","environments":["production"],
    /// "topics":["com.x"]|null,"relatedKeyID":"…"|null}],"badEnvironmentReason":"BadEnvironmentKeyInToken",
    /// "expiredTokenWedgesConnection":false}`: the keys trusted for provider tokens (none unless
    /// the authentication is `token`), sorted by key ID, and how token refusals are answered.
    static func keys(_ configuration: FakeAPNsServer.Configuration) -> JSONValue {
        var mode = "none"
        var keys: [JWTSigningKey] = []
        switch configuration.authentication {
        case .none: mode = "none"
        case .certificate: mode = "certificate"
        case .token(let trusted):
            mode = "token"
            keys = trusted.sorted { $0.keyID < $1.keyID }
        }
        let reason: APNsReason =
            configuration.documentedBadEnvironmentReason ? .badEnvironmentKeyIdInToken : .badEnvironmentKeyInToken
        let listed: [JSONValue] = keys.map(key)
        return .object(JSONObject([
            ("authentication", .string(mode)),
            ("keys", .array(listed)),
            ("badEnvironmentReason", .string(reason.rawValue)),
            ("expiredTokenWedgesConnection", .bool(configuration.expiredProviderTokenWedgesConnection)),
        ]))
    }

    /// One trusted key and its scope, as ``keys(_:)`` lists it.
    static func key(_ key: JWTSigningKey) -> JSONValue {
        let environments: [JSONValue] = key.environments.map(\.rawValue).sorted().map { .string($0) }
        let topics: JSONValue = key.topics.map { topics in .array(topics.sorted().map { .string($0) }) } ?? .null
        return .object(JSONObject([
            ("keyID", .string(key.keyID)),
            ("teamID", .string(key.teamID)),
            ("environments", .array(environments)),
            ("topics", topics),
            ("relatedKeyID", key.relatedKeyID.map { .string($0) } ?? .null),
        ]))
    }

    /// `{"id":"…","bundle":"com.x","environment":"sandbox","storagePolicy":1,"createdAt":"…","subscriberCount":2}`:
    /// the subscribers themselves are read page by page (``subscriberPage(_:)``).
    static func channel(_ channel: Channel, subscriberCount: Int) -> JSONValue {
        .object(JSONObject([
            ("id", .string(channel.id)),
            ("bundle", .string(channel.bundleID)),
            ("environment", .string(channel.environment.rawValue)),
            ("storagePolicy", .int(channel.storagePolicy.rawValue)),
            ("createdAt", .string(Timestamp.rfc3339(channel.createdAt))),
            ("subscriberCount", .int(subscriberCount)),
        ]))
    }

    /// `{"channel":"…","token":"…","subscriberCount":2}`: one subscription, the same size
    /// however many devices the channel has.
    static func subscription(channelID: String, token: DeviceToken, subscriberCount: Int) -> JSONValue {
        .object(JSONObject([
            ("channel", .string(channelID)),
            ("token", .string(token.hex)),
            ("subscriberCount", .int(subscriberCount)),
        ]))
    }

    /// `{"subscribers":["<token hex>",…],"next":1000}`; `next` is null on the last page.
    static func subscriberPage(_ page: SubscriberPage) -> JSONValue {
        .object(JSONObject([
            ("subscribers", .array(page.subscribers.map { .string($0.hex) })),
            ("next", page.next.map { .int(Int(truncatingIfNeeded: $0.position)) } ?? .null),
        ]))
    }

    /// `{"sequence":1,"token":"…","channel":"…","storedMessage":false,"deliveredAt":"…","notification":{…}}`
    static func delivery(_ delivery: BroadcastDelivery) -> JSONValue {
        [
            "sequence": .int(Int(delivery.sequenceNumber)),
            "token": .string(delivery.deviceToken.hex),
            "channel": .string(delivery.channelID),
            "storedMessage": .bool(delivery.isStoredMessage),
            "deliveredAt": .string(Timestamp.rfc3339(delivery.deliveredAt)),
            "notification": delivery.notification.jsonObject,
        ]
    }

    /// `{"token":"…","timestamp":1700000000}`
    static func tuple(_ tuple: FeedbackTuple) -> JSONValue {
        ["token": .string(tuple.deviceToken.hex), "timestamp": .int(Int(tuple.timestamp))]
    }

    /// `{"id":1,"match":…,"action":…,"times":…,"hits":0,"remaining":1|null,"description":"…"}`
    static func fault(_ entry: FaultRules.Entry) -> JSONValue {
        [
            "id": .int(entry.id),
            "match": match(entry.rule.match),
            "action": action(entry.rule.action),
            "times": times(entry.rule.times),
            "hits": .int(entry.hits),
            "remaining": entry.remaining.map { .int($0) } ?? .null,
            "description": .string(entry.rule.description),
        ]
    }

    static func match(_ match: FaultRule.Match) -> JSONValue {
        switch match {
        case .token(let token): ["token": .string(token.hex)]
        case .topic(let topic): ["topic": .string(topic)]
        case .channel(let channelID): ["channel": .string(channelID)]
        case .nth(let n): ["nth": .int(n)]
        case .every: "every"
        }
    }

    static func action(_ action: FaultRule.Action) -> JSONValue {
        switch action {
        case .reject(let status): ["reject": .int(Int(status.rawValue))]
        case .respond(let reason): ["respond": .string(reason.rawValue), "status": .int(reason.status)]
        case .goAway(let reason): ["goAway": .string(reason.rawValue), "status": .int(reason.status)]
        case .resetStream: "resetStream"
        case .closeConnection: "closeConnection"
        case .delay(let duration): ["delayMilliseconds": .int(milliseconds(duration))]
        }
    }

    static func times(_ times: FaultRule.Times) -> JSONValue {
        switch times {
        case .once: "once"
        case .always: "always"
        case .count(let count): .int(count)
        }
    }

    /// UNIX seconds: an integer when whole, as they usually are.
    static func seconds(_ date: Date) -> JSONValue {
        let seconds = date.timeIntervalSince1970
        if seconds == seconds.rounded(), abs(seconds) < 1e15 { return .int(Int(seconds)) }
        return .double(seconds)
    }

    /// Whole milliseconds, saturating: a test's `Duration` may be any number of seconds.
    private static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = Int(seconds).multipliedReportingOverflow(by: 1000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (sum, over) = whole.addingReportingOverflow(Int(attoseconds / 1_000_000_000_000_000))
        return over ? (whole < 0 ? .min : .max) : sum
    }
}
