#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a provider API connection costs a sender that errs, and how long it lives: the rules
/// APNs applies to a connection, beyond answering each request. Each default is Apple's
/// documented behaviour with a generous number where Apple gives none, so that a correct
/// client, and a test that sends a few refused pushes on purpose, never meet them; the
/// HTTP2Protocol article gives each rule's source.
public struct ProviderConnectionRules: Sendable, Equatable {
    /// After a refused request (a 4xx other than 410) the connection's
    /// SETTINGS_MAX_CONCURRENT_STREAMS drops to 1, and the next accepted push raises it again,
    /// as Apple documents ("An error code beginning with 4XX slows down your ability to send").
    /// Default true.
    public var throttleAfterRefusal = true
    /// Refusals (4xx other than 410) within ``errorWindow`` after which the connection ends
    /// with GOAWAY, as Apple documents it disconnects "a provider connection with too many
    /// error conditions". Default 1,000; nil: never.
    public var errorLimit: Int? = 1000
    /// The same for `BadDeviceToken`, which Apple says ends a connection sooner. Default 500
    /// (a test that sends a few hundred on one connection on purpose, as a registry or fault
    /// test may, is not cut off); nil: only ``errorLimit`` counts them.
    public var badDeviceTokenLimit: Int? = 500
    /// The window the limits count refusals in, on the server's clock. Default 60 s.
    public var errorWindow: Duration = .seconds(60)
    /// What a stream opened over the concurrent-stream limit the client acknowledged meets.
    public var streamLimitViolation: StreamLimitViolation = .refuseStream
    /// A client certificate for the other environment ends the connection with GOAWAY
    /// `{"reason":"BadCertificateEnvironment"}` naming stream 0 and answering nothing, as
    /// clients saw APNs do; default false: each request is answered 403
    /// `BadCertificateEnvironment`, as Apple documents.
    public var certificateEnvironmentGoAway = false
    /// How long a connection lives before the server retires it with GOAWAY
    /// `{"reason":"Shutdown"}`, answering what it accepted, as APNs was seen to do after hours.
    /// Default nil: for ever.
    public var connectionLifetime: Duration?
    /// Requests a connection serves before the server retires it the same way. Default nil:
    /// no limit.
    public var requestsPerConnection: Int?

    /// The rules, with Apple's behaviour and the stated defaults.
    public init() {}

    /// What a stream over the acknowledged concurrent-stream limit meets.
    public enum StreamLimitViolation: Sendable, Equatable {
        /// RST_STREAM REFUSED_STREAM for that stream alone (RFC 9113 §5.1.2): the client may
        /// send it again. The default.
        case refuseStream
        /// GOAWAY PROTOCOL_ERROR "Maximum active streams violated for this endpoint.", as
        /// APNs was seen to answer in 2016.
        case goAway
    }
}

extension ProviderConnectionRules {
    /// What a rule did to a connection, for the server's events, log and metrics.
    public enum Event: Sendable, Equatable {
        /// A refusal cut the connection's stream limit to 1 until its next accepted push.
        case throttled(reason: String)
        /// Refusals ended the connection with GOAWAY: how many were counted in the window
        /// and the last one's reason.
        case endedAfterRefusals(Int, reason: String)
        /// The connection was retired with GOAWAY `Shutdown`, and why (its lifetime, or the
        /// requests it served).
        case retired(String)

        /// The rule's name in the daemon's log and metrics.
        public var name: String {
            switch self {
            case .throttled: "throttled"
            case .endedAfterRefusals: "ended-after-refusals"
            case .retired: "retired"
            }
        }

        /// What happened, in words.
        public var detail: String {
            switch self {
            case .throttled(let reason): "stream limit cut to 1 after a refusal (\(reason)) until the next accepted push"
            case .endedAfterRefusals(let count, let reason):
                "ended with GOAWAY after \(count) refusal\(count == 1 ? "" : "s") in the window, the last \(reason)"
            case .retired(let why): "retired with GOAWAY Shutdown: \(why)"
            }
        }
    }
}

/// The refusals of one connection counted against ``ProviderConnectionRules/errorLimit`` and
/// ``ProviderConnectionRules/badDeviceTokenLimit``, in windows of
/// ``ProviderConnectionRules/errorWindow`` that begin at the first refusal after the last
/// window ended.
struct RefusalCount {
    private var windowStart: Date?
    /// Refusals in the current window.
    private(set) var total = 0
    private var badDeviceTokens = 0

    /// Counts a refusal at `now`; true when it reaches a limit.
    mutating func exceeds(_ rules: ProviderConnectionRules, counting reason: APNsReason, at now: Date) -> Bool {
        let window = max(rules.errorWindow, .zero).timeInterval
        if let start = windowStart, now.timeIntervalSince(start) < window, now >= start {
            total += 1
        } else {
            windowStart = now
            total = 1
            badDeviceTokens = 0
        }
        if reason == .badDeviceToken { badDeviceTokens += 1 }
        if let limit = rules.errorLimit, total >= max(limit, 1) { return true }
        if let limit = rules.badDeviceTokenLimit, reason == .badDeviceToken, badDeviceTokens >= max(limit, 1) {
            return true
        }
        return false
    }
}
