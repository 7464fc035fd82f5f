#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A deterministic fault: which notifications it hits, what it does to them, how many times.
///
/// ```swift
/// server.faults.add(.init(match: .token(bad), action: .reject(.invalidToken)))           // once
/// server.faults.add(.init(match: .nth(3), action: .reject(.shutdown), times: .always))
/// server.faults.add(.init(match: .every, action: .delay(.milliseconds(200)), times: .count(5)))
/// ```
public struct FaultRule: Sendable, CustomStringConvertible {
    /// Which notifications a rule hits.
    public enum Match: Sendable, Hashable, CustomStringConvertible {
        /// Notifications to this device.
        case token(DeviceToken)
        /// Notifications for this topic: on the binary gateway, the topic (UID) of the
        /// connection's client certificate; on HTTP/2, `apns-topic` without its push type's
        /// suffix; on the channel management and broadcast APIs, the bundle ID of the path.
        case topic(String)
        /// Requests naming this channel (`apns-channel-id`): broadcasts to it, and reading or
        /// deleting it. Never a notification to a device.
        case channel(String)
        /// The Nth request judged after the rule was added (1 is the next one): a notification
        /// on either protocol, a broadcast, or a channel management request.
        case nth(Int)
        /// Every request judged: notifications, broadcasts and channel management alike.
        case every

        /// What the rule matches.
        public var description: String {
            switch self {
            case .token(let token): "token \(token.hex)"
            case .topic(let topic): "topic \(topic)"
            case .channel(let channelID): "channel \(channelID)"
            case .nth(let n): "notification #\(n) after the rule was added"
            case .every: "every notification"
            }
        }
    }

    /// What a rule does to a notification it hits. Each action has a meaning on both
    /// transports, so one rule serves binary and HTTP/2 clients alike.
    public enum Action: Sendable, Hashable, CustomStringConvertible {
        /// Refuse it with this binary status: error response, close, later frames dropped. For
        /// `.shutdown` (10) the response carries the identifier of the last notification
        /// accepted on the connection, as Apple's did. HTTP/2 answers the matching reason
        /// (8: 400 BadDeviceToken, 10: 503 Shutdown, …; see `APNsReason(binaryStatus:)`).
        case reject(BinaryStatus)
        /// Answer an HTTP/2 request with this reason and its status (429 TooManyRequests,
        /// 500 InternalServerError, 503 ServiceUnavailable, …). The binary gateway refuses with
        /// the matching status (`BinaryStatus(apnsReason:)`).
        case respond(APNsReason)
        /// HTTP/2: answer with the reason, then send GOAWAY with `{"reason":…}` as debug data
        /// and close. Binary: close without a word.
        case goAway(APNsReason)
        /// HTTP/2: reset the stream (RST_STREAM, REFUSED_STREAM) without an answer; the
        /// connection goes on. Binary: close without a word.
        case resetStream
        /// Close the connection without a word; the notification and what follows are dropped.
        case closeConnection
        /// Wait this long before handling the notification (then accept it, unless another
        /// rule says otherwise); the connection reads nothing meanwhile.
        case delay(Duration)

        /// What the action does.
        public var description: String {
            switch self {
            case .reject(let status): "reject with status \(status)"
            case .respond(let reason): "respond \(reason)"
            case .goAway(let reason): "GOAWAY after \(reason)"
            case .resetStream: "reset the stream"
            case .closeConnection: "close the connection"
            case .delay(let duration): "delay \(duration)"
            }
        }
    }

    /// How many times a rule acts before it is used up.
    public enum Times: Sendable, Hashable, CustomStringConvertible {
        /// Once (the default).
        case once
        /// This many times.
        case count(Int)
        /// Every time it matches, until removed.
        case always

        var limit: Int? {
            switch self {
            case .once: 1
            case .count(let count): max(0, count)
            case .always: nil
            }
        }

        /// How many times.
        public var description: String {
            switch self {
            case .once: "once"
            case .count(let count): "\(count) times"
            case .always: "always"
            }
        }
    }

    /// Which notifications it hits.
    public var match: Match
    /// What it does.
    public var action: Action
    /// How many times.
    public var times: Times
    /// What the rule stands for when the server made it itself (the per-token rate), said in
    /// place of its action and match; nil for a rule a test added.
    private(set) var origin: String?

    /// A rule; by default it acts once.
    public init(match: Match, action: Action, times: Times = .once) {
        self.match = match
        self.action = action
        self.times = times
    }

    /// The rule the per-token rate (``DeviceTokenRateLimit``) acts as on a push to `token`
    /// it refuses: 429 `TooManyRequests`, the refusal's detail saying why.
    static func tokenRate(_ token: DeviceToken, _ why: String) -> FaultRule {
        var rule = FaultRule(match: .token(token), action: .respond(.tooManyRequests), times: .always)
        rule.origin = why
        return rule
    }

    /// The action, the match and the times, as fault details in rejections read.
    public var description: String { origin ?? "\(action) for \(match), \(times)" }
}

/// The fault rules of a server. Rules are added and removed while it runs; the first rule that
/// matches a notification (in the order they were added) acts on it.
public final class FaultRules: @unchecked Sendable {
    /// A rule as the server holds it, with its identity and what is left of it.
    public struct Entry: Sendable, CustomStringConvertible {
        /// The identity `remove(_:)` takes.
        public let id: Int
        /// The rule.
        public let rule: FaultRule
        /// How many more times it will act; nil: always.
        public internal(set) var remaining: Int?
        /// How many times it has acted.
        public internal(set) var hits: Int
        /// Notifications seen since it was added (for `.nth`).
        var seen: Int

        /// The id, the rule and its hits.
        public var description: String { "rule \(id): \(rule) (\(hits) hits)" }
    }

    /// The policy's lock, shared with the device registry.
    private let lock: ConditionLock
    /// Where the rules say, in the same step as each change, whether any can still act.
    private let activity: PolicyActivity
    private var entries: [Entry] = []
    private var lastID = 0

    init(lock: ConditionLock, activity: PolicyActivity) {
        self.lock = lock
        self.activity = activity
    }

    /// With the lock held, after every change.
    private func changed() {
        activity.setLocked(PolicyActivity.faults, entries.contains { $0.remaining != 0 })
    }

    /// Adds a rule; returns its id.
    @discardableResult
    public func add(_ rule: FaultRule) -> Int {
        lock.withLock {
            lastID += 1
            entries.append(Entry(id: lastID, rule: rule, remaining: rule.times.limit, hits: 0, seen: 0))
            changed()
            return lastID
        }
    }

    /// Removes a rule; false when there was none with that id.
    @discardableResult
    public func remove(_ id: Int) -> Bool {
        lock.withLock {
            let before = entries.count
            entries.removeAll { $0.id == id }
            changed()
            return entries.count != before
        }
    }

    /// Removes every rule.
    public func removeAll() {
        lock.withLock { removeAllLocked() }
    }

    /// Removes every rule; the caller holds the lock.
    func removeAllLocked() {
        entries.removeAll()
        changed()
    }

    /// The rules, in order, with what is left of each (used-up rules included until removed).
    public var rules: [Entry] {
        lock.withLock { entries }
    }

    /// What a rule can match a request by: a notification's token and topic, or a channel
    /// request's bundle and channel.
    struct Subject {
        var token: DeviceToken?
        var topic: String?
        var channelID: String?
    }

    /// The action of the first rule that hits this request, counting it as used; the caller
    /// holds the lock.
    func actionLocked(for subject: Subject) -> (FaultRule, FaultRule.Action)? {
        var found: Int?
        for index in entries.indices {
            entries[index].seen += 1
            guard found == nil, entries[index].remaining != 0 else { continue }
            let hit: Bool = switch entries[index].rule.match {
            case .token(let wanted): wanted == subject.token
            case .topic(let wanted): wanted == subject.topic
            case .channel(let wanted): wanted == subject.channelID
            case .nth(let n): entries[index].seen == n
            case .every: true
            }
            if hit { found = index }
        }
        guard let index = found else { return nil }
        entries[index].hits += 1
        if let remaining = entries[index].remaining {
            entries[index].remaining = remaining - 1
            // The last use of the last rule can switch the policy off.
            if remaining == 1 { changed() }
        }
        return (entries[index].rule, entries[index].rule.action)
    }
}
