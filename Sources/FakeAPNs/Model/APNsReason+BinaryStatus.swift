/// The one place where binary statuses and HTTP/2 reasons meet, so a rule or a registry
/// refusal means the same on both transports.
extension APNsReason {
    /// The HTTP/2 reason for a binary status.
    public init(binaryStatus: BinaryStatus) {
        switch binaryStatus {
        case .missingDeviceToken: self = .missingDeviceToken
        case .missingTopic: self = .missingTopic
        case .missingPayload: self = .payloadEmpty
        case .invalidTokenSize, .invalidToken: self = .badDeviceToken
        case .invalidTopicSize: self = .badTopic
        case .invalidPayloadSize: self = .payloadTooLarge
        case .shutdown: self = .shutdown
        default: self = .internalServerError
        }
    }
}

extension BinaryStatus {
    /// The binary status for an HTTP/2 reason: the closest of Apple's binary statuses,
    /// processing error (1) when none is close.
    public init(apnsReason: APNsReason) {
        switch apnsReason {
        case .missingDeviceToken: self = .missingDeviceToken
        case .missingTopic: self = .missingTopic
        case .payloadEmpty: self = .missingPayload
        case .badDeviceToken, .deviceTokenNotForTopic, .unregistered, .expiredToken: self = .invalidToken
        case .badTopic, .topicDisallowed: self = .invalidTopicSize
        case .payloadTooLarge: self = .invalidPayloadSize
        case .shutdown, .serviceUnavailable: self = .shutdown
        default: self = .processingError
        }
    }
}
