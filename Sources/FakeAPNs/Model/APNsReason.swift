/// A reason string of the HTTP/2 provider API, with the status Apple answers it with. An
/// extensible set: every reason Apple documents is a static member, and any other string can
/// be made for reasons not known yet.
///
/// ```swift
/// XCTAssertEqual(rejection.answer, .reason(.badDeviceToken))
/// server.faults.add(FaultRule(match: .every, action: .respond(.tooManyRequests)))
/// ```
public struct APNsReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The reason string, exactly as it appears in the response body `{"reason":"..."}`.
    public let rawValue: String
    /// The HTTP status Apple answers it with.
    public let status: Int

    /// A reason with the status Apple gives it (400 for a string not known here).
    public init(rawValue: String) {
        self.rawValue = rawValue
        self.status = Self.knownStatuses[rawValue] ?? 400
    }

    /// Any reason with any status, for tests of client handling of the unexpected.
    public init(_ rawValue: String, status: Int) {
        self.rawValue = rawValue
        self.status = status
    }

    /// The status and the reason, "400 BadDeviceToken".
    public var description: String { "\(status) \(rawValue)" }

    /// Whether Apple documents this reason (with this status).
    public var isDocumented: Bool { Self.knownStatuses[rawValue] == status }

    /// The documented reason with this string, or nil.
    public init?(documented rawValue: String) {
        guard Self.knownStatuses[rawValue] != nil else { return nil }
        self.init(rawValue: rawValue)
    }

    // MARK: - 400
    /// The collapse identifier exceeds 64 bytes.
    public static let badCollapseId = APNsReason(rawValue: "BadCollapseId")
    /// The device token is malformed, or for the other environment.
    public static let badDeviceToken = APNsReason(rawValue: "BadDeviceToken")
    /// The `apns-expiration` value is bad.
    public static let badExpirationDate = APNsReason(rawValue: "BadExpirationDate")
    /// The `apns-id` value is bad.
    public static let badMessageId = APNsReason(rawValue: "BadMessageId")
    /// The `apns-priority` value is bad.
    public static let badPriority = APNsReason(rawValue: "BadPriority")
    /// The `apns-topic` value is bad.
    public static let badTopic = APNsReason(rawValue: "BadTopic")
    /// The device token does not match the topic.
    public static let deviceTokenNotForTopic = APNsReason(rawValue: "DeviceTokenNotForTopic")
    /// A header was repeated.
    public static let duplicateHeaders = APNsReason(rawValue: "DuplicateHeaders")
    /// Idle timeout.
    public static let idleTimeout = APNsReason(rawValue: "IdleTimeout")
    /// The `apns-push-type` value is bad.
    public static let invalidPushType = APNsReason(rawValue: "InvalidPushType")
    /// The path has no device token.
    public static let missingDeviceToken = APNsReason(rawValue: "MissingDeviceToken")
    /// The topic is required (multi-topic certificate, or token authentication).
    public static let missingTopic = APNsReason(rawValue: "MissingTopic")
    /// The body is empty.
    public static let payloadEmpty = APNsReason(rawValue: "PayloadEmpty")
    /// Pushing to this topic is not allowed.
    public static let topicDisallowed = APNsReason(rawValue: "TopicDisallowed")

    // MARK: - 403
    /// The certificate is invalid.
    public static let badCertificate = APNsReason(rawValue: "BadCertificate")
    /// The certificate is for the other environment.
    public static let badCertificateEnvironment = APNsReason(rawValue: "BadCertificateEnvironment")
    /// The provider token is stale (its `iat` is more than an hour old).
    public static let expiredProviderToken = APNsReason(rawValue: "ExpiredProviderToken")
    /// The action is not allowed.
    public static let forbidden = APNsReason(rawValue: "Forbidden")
    /// The provider token is malformed or its signature does not verify.
    public static let invalidProviderToken = APNsReason(rawValue: "InvalidProviderToken")
    /// No certificate and no usable `authorization` header.
    public static let missingProviderToken = APNsReason(rawValue: "MissingProviderToken")
    /// The key id is unrelated to the key of the connection's first push.
    public static let unrelatedKeyIdInToken = APNsReason(rawValue: "UnrelatedKeyIdInToken")
    /// The key's environment does not match the endpoint.
    public static let badEnvironmentKeyIdInToken = APNsReason(rawValue: "BadEnvironmentKeyIdInToken")
    /// The spelling APNs has also been seen to use for the same refusal.
    public static let badEnvironmentKeyInToken = APNsReason(rawValue: "BadEnvironmentKeyInToken")

    // MARK: - 404, 405, 410, 413
    /// The `:path` is wrong.
    public static let badPath = APNsReason(rawValue: "BadPath")
    /// The method is not POST.
    public static let methodNotAllowed = APNsReason(rawValue: "MethodNotAllowed")
    /// The device token has expired.
    public static let expiredToken = APNsReason(rawValue: "ExpiredToken")
    /// The device token is no longer active for the topic.
    public static let unregistered = APNsReason(rawValue: "Unregistered")
    /// The body is over the limit.
    public static let payloadTooLarge = APNsReason(rawValue: "PayloadTooLarge")

    // MARK: - 429, 500, 503
    /// The provider token was changed too often on one connection.
    public static let tooManyProviderTokenUpdates = APNsReason(rawValue: "TooManyProviderTokenUpdates")
    /// Too many requests in a row to the same device token.
    public static let tooManyRequests = APNsReason(rawValue: "TooManyRequests")
    /// An internal server error.
    public static let internalServerError = APNsReason(rawValue: "InternalServerError")
    /// The service is unavailable.
    public static let serviceUnavailable = APNsReason(rawValue: "ServiceUnavailable")
    /// The server is shutting down.
    public static let shutdown = APNsReason(rawValue: "Shutdown")

    // MARK: - Channels and broadcasts
    /// A channel request or broadcast without `apns-channel-id`.
    public static let missingChannelId = APNsReason(rawValue: "MissingChannelId")
    /// An `apns-channel-id` that is not a channel id (base64).
    public static let badChannelId = APNsReason(rawValue: "BadChannelId")
    /// An `apns-channel-id` no channel of this bundle and environment has.
    public static let channelNotRegistered = APNsReason(rawValue: "ChannelNotRegistered")
    /// A channel management body with an unknown, missing or invalid attribute.
    public static let badRequestParams = APNsReason(rawValue: "BadRequestParams")
    /// A channel management body that is not a JSON object.
    public static let badRequestPayload = APNsReason(rawValue: "BadRequestPayload")
    /// The bundle's broadcast capability is not enabled (``ChannelRegistry/broadcastBundleIDs``).
    public static let featureNotEnabled = APNsReason(rawValue: "FeatureNotEnabled")
    /// The bundle has the most channels allowed.
    public static let cannotCreateChannelConfig = APNsReason(rawValue: "CannotCreateChannelConfig")
    /// A broadcast without `apns-push-type`.
    public static let missingPushType = APNsReason(rawValue: "MissingPushType")
    /// The bundle in the path is not one the credentials may use (403).
    public static let topicMismatch = APNsReason(rawValue: "TopicMismatch")

    private static let knownStatuses: [String: Int] = [
        "BadCollapseId": 400, "BadDeviceToken": 400, "BadExpirationDate": 400, "BadMessageId": 400,
        "BadPriority": 400, "BadTopic": 400, "DeviceTokenNotForTopic": 400, "DuplicateHeaders": 400,
        "IdleTimeout": 400, "InvalidPushType": 400, "MissingDeviceToken": 400, "MissingTopic": 400,
        "PayloadEmpty": 400, "TopicDisallowed": 400, "MissingChannelId": 400, "BadChannelId": 400,
        "ChannelNotRegistered": 400, "BadRequestParams": 400, "BadRequestPayload": 400,
        "CannotCreateChannelConfig": 400, "MissingPushType": 400, "FeatureNotEnabled": 400, "TopicMismatch": 403,
        "BadCertificate": 403, "BadCertificateEnvironment": 403, "ExpiredProviderToken": 403, "Forbidden": 403,
        "InvalidProviderToken": 403, "MissingProviderToken": 403, "UnrelatedKeyIdInToken": 403,
        "BadEnvironmentKeyIdInToken": 403, "BadEnvironmentKeyInToken": 403,
        "BadPath": 404, "MethodNotAllowed": 405, "ExpiredToken": 410, "Unregistered": 410, "PayloadTooLarge": 413,
        "TooManyProviderTokenUpdates": 429, "TooManyRequests": 429, "InternalServerError": 500,
        "ServiceUnavailable": 503, "Shutdown": 503,
    ]
}
