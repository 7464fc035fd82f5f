/// How much a sender finding matters.
public enum SenderAuditLevel: String, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    /// Apple documents the behaviour as one it punishes (throttling, a closed connection, a
    /// blocked provider), or the phone gets something twice.
    case error
    /// Apple warns against it, or a test may well do it on purpose.
    case warning

    /// Errors first.
    public static func < (lhs: SenderAuditLevel, rhs: SenderAuditLevel) -> Bool { lhs == .error && rhs == .warning }

    public var description: String { rawValue }
}

/// One of the sender audit's rules: something Apple expects of a provider over a whole run,
/// which a single request cannot show. Everything about a rule is here: its stable identifier
/// (tests, logs and the daemon's JSON name it by it), level, source with its evidence grade
/// (D documented by Apple, M seen by client maintainers, U reported once, F follows from the
/// others) and the row of the rule table in the SenderAudit article; ``all`` is the table
/// (a test holds the article to it).
public struct SenderAuditRule: Hashable, Sendable, CustomStringConvertible {
    /// The stable identifier, such as `push-after-unregistered`.
    public let id: String
    /// How much a finding of this rule matters.
    public let level: SenderAuditLevel
    /// The page or report the rule rests on, with its evidence grade.
    public let source: String
    /// When it fires, as the article's rule table says it.
    package let doc: String

    private init(_ id: String, _ level: SenderAuditLevel, source: String, doc: String) {
        self.id = id
        self.level = level
        self.source = source
        self.doc = doc
    }

    public var description: String { id }

    public static func == (lhs: SenderAuditRule, rhs: SenderAuditRule) -> Bool { lhs.id == rhs.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }

    /// A push to a token that APNs answered 410 `Unregistered` (or `ExpiredToken`), sent to
    /// it again by the same sender, and answered 410 again: the token was not registered since.
    public static let pushAfterUnregistered = SenderAuditRule(
        "push-after-unregistered", .error,
        source: "Apple: Handling notification responses from APNs (the `timestamp` member) (D)",
        doc: "a push to a token the same sender was answered 410 for, answered 410 again: the token was not"
            + " registered again in between (a push that is accepted means it was)")
    /// The same push re-sent after a refusal that sending it again cannot fix.
    public static let retriedRefusal = SenderAuditRule(
        "retried-refusal", .error,
        source: "Apple: Handling notification responses from APNs (a 4xx slows the connection; too many end it) (D)",
        doc: "the same push (see below) sent again within the same-push window after an answer about what"
            + " makes it the same push: `BadDeviceToken`, `DeviceTokenNotForTopic`, `BadTopic`, `TopicDisallowed`,"
            + " `PayloadTooLarge`, `PayloadEmpty`")
    /// Connections opened and closed at the rate of one per push.
    public static let connectionChurn = SenderAuditRule(
        "connection-churn", .warning,
        source: "Apple: Sending notification requests to APNs (\"rapid connection and disconnection\" is treated as"
            + " a denial-of-service attack) (D); the number is the project's",
        doc: "a sender's connection closed within the churn window of opening, when it has closed the churn"
            + " count of them (default 20) within that window (default 60 s)")
    /// A push re-sent too soon after 429 or 500/503.
    public static let noBackoff = SenderAuditRule(
        "no-backoff", .error,
        source: "Apple: Handling notification responses from APNs (429 TooManyRequests, 500, 503: retry later) (D);"
            + " the window is the project's",
        doc: "a push to a token within the back-off window (default 1 s) after the same sender's push to it was"
            + " answered 429, 500 or 503")
    /// A stream opened beyond the advertised SETTINGS_MAX_CONCURRENT_STREAMS.
    public static let streamsPastLimit = SenderAuditRule(
        "streams-past-limit", .error,
        source: "Apple: Establishing a connection to APNs (D); RFC 9113 section 5.1.2 (D); pushy #356 (U)",
        doc: "a stream opened while the connection already had as many open as its last acknowledged"
            + " SETTINGS_MAX_CONCURRENT_STREAMS allows")
    /// A stream opened after the server's GOAWAY.
    public static let streamsAfterGoAway = SenderAuditRule(
        "streams-after-goaway", .error,
        source: "RFC 9113 section 6.8 (D); parse-community/node-apn #140, Fatal1ty/aioapns #63 (U)",
        doc: "a stream opened on a connection after the client read the server's GOAWAY (it answered the PING"
            + " sent after it)")
    /// A push the server accepted, sent again.
    public static let duplicatePush = SenderAuditRule(
        "duplicate-push", .warning,
        source: "Follows from RFC 9113 section 6.8 and Apple's answers: an accepted push is delivered (F)",
        doc: "the same push accepted twice within the same-push window (default 60 s): the phone would show it"
            + " twice; a warning, as a test may send one payload twice on purpose")
    /// A provider token re-signed too often, or used past its hour.
    public static let tokenRefresh = SenderAuditRule(
        "token-refresh", .error,
        source: "Apple: Establishing a token-based connection to APNs (refresh no more than once every 20 minutes"
            + " and no less than once every 60) (D)",
        doc: "a sender's provider token issued less than 20 minutes after its previous one, or one answered 403"
            + " `ExpiredProviderToken` (used past an hour)")

    /// Every rule, in the order the report and the article list them.
    public static let all: [SenderAuditRule] = [
        .pushAfterUnregistered, .retriedRefusal, .noBackoff, .duplicatePush, .connectionChurn, .streamsPastLimit,
        .streamsAfterGoAway, .tokenRefresh,
    ]

    /// The rule with identifier `id`.
    public static func named(_ id: String) -> SenderAuditRule? { all.first { $0.id == id } }

    /// The rule's row in the article's rule table.
    package var docRow: String { "| `\(id)` | \(level) | \(doc) | \(source) |" }
}
