/// "The same push", as the sender audit tells it: the same token, topic and payload, or the
/// same `apns-id`. A client makes a new `apns-id` for each retry, so the content says more; a
/// client that re-sends its own `apns-id` is caught by it.
///
/// Each is kept as a 64-bit digest (one pass of the standard library's hasher over the token,
/// the topic and the payload's bytes, or over the `apns-id`'s bits), so that what the audit
/// remembers is keyed by an integer: a push costs two hasher passes and integer look-ups, not
/// the hashing of a token, a topic and a payload at every look-up. Two different pushes share a
/// digest with a chance of about one in 2^64.
enum SamePushKey {
    /// The keys of an accepted HTTP/2 push: by content, and by `apns-id`.
    static func keys(of push: PushNotification) -> (content: Int, id: Int?) {
        let content = content(token: push.deviceToken, topic: push.topic, payload: push.payload)
        return (content, push.http2.map { id($0.apnsIDKey) })
    }

    /// The keys of a refused push to a device: by content when its token and payload were read,
    /// and by `apns-id`.
    static func keys(of refusal: Rejection) -> (content: Int?, id: Int?) {
        var content: Int?
        if let token = refusal.deviceToken, let payload = refusal.payload {
            content = self.content(token: token, topic: refusal.topic, payload: payload)
        }
        return (content, refusal.apnsID.map { id(PushNotification.HTTP2Fields.StoredID($0)) })
    }

    private static func content(token: DeviceToken, topic: String?, payload: Payload) -> Int {
        var hasher = Hasher()
        hasher.combine(0 as UInt8)
        hasher.combine(token)
        hasher.combine(topic)
        payload.hash(into: &hasher)
        return hasher.finalize()
    }

    private static func id(_ id: PushNotification.HTTP2Fields.StoredID) -> Int {
        var hasher = Hasher()
        hasher.combine(1 as UInt8)
        hasher.combine(id)
        return hasher.finalize()
    }
}

/// What the audit remembers of one push: how it was answered, when, and over which connection.
struct RememberedPush {
    /// Nil: accepted (200); else the reason it was refused with.
    var refusal: APNsReason?
    var connection: Int
}

extension APNsReason {
    /// Whether sending the same push again cannot change the answer: the answer is about what
    /// makes the same push (its token, its topic, its payload), not about a header or the
    /// provider's credentials, which a retry may have corrected (a retry with a provider token
    /// added is not the same request). 410 has a rule of its own; 429, 500 and 503 say "later".
    var isFinalForTheSamePush: Bool {
        Self.finalForTheSamePush.contains(rawValue)
    }

    /// `BadDeviceToken`, `DeviceTokenNotForTopic`, `BadTopic`, `TopicDisallowed`,
    /// `PayloadTooLarge`, `PayloadEmpty`.
    private static let finalForTheSamePush: Set<String> = [
        APNsReason.badDeviceToken.rawValue, APNsReason.deviceTokenNotForTopic.rawValue, APNsReason.badTopic.rawValue,
        APNsReason.topicDisallowed.rawValue, APNsReason.payloadTooLarge.rawValue, APNsReason.payloadEmpty.rawValue,
    ]

    /// Whether the answer asks the sender to wait before sending to the token again: 429
    /// `TooManyRequests`, 500 and 503; not 429 `TooManyProviderTokenUpdates` (about the
    /// provider token), nor 503 `Shutdown`, after which a client is right to send at once on
    /// another connection.
    var asksForBackoff: Bool {
        switch status {
        case 429: self != .tooManyProviderTokenUpdates
        case 500: true
        case 503: self != .shutdown
        default: false
        }
    }
}
