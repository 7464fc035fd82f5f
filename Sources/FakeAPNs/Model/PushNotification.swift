#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One push notification as the server received it, whichever protocol carried it.
///
/// ```swift
/// let notification = try server.notifications.pop(timeout: .seconds(2))
/// XCTAssertEqual(notification.deviceToken, "fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2")
/// XCTAssertEqual(notification.payload.aps.alert?.body, "Hello")
/// XCTAssertEqual(notification.identifier, 42)
/// ```
public struct PushNotification: Sendable, CustomStringConvertible {
    /// The fields live in one shared, copy-on-write object: a server keeps every notification
    /// twice (in the queue and in the history), and two references cost far less than two
    /// copies of the fields. A value changes its storage only when it holds the sole reference
    /// (it copies first otherwise), so no two threads ever write one storage.
    ///
    /// The fields are in the order that packs them: the format, identifier and expiration
    /// fill the token's last word, so the object is 120 bytes, a 128-byte allocation (152 in
    /// declaration by kind).
    private final class Storage: @unchecked Sendable {
        var deviceToken: DeviceToken
        var format: Format
        var identifier: UInt32
        var expiration: UInt32?
        var priority: Priority
        var payload: Payload
        var connection: ConnectionInfo
        var receivedAt: Date
        var sequenceNumber: UInt64
        var http2: HTTP2Fields?
        var lintFindings: [LintFinding]?
        var deviceLintFindings: [LintFinding] = []

        init(
            deviceToken: DeviceToken, payload: Payload, identifier: UInt32, expiration: UInt32?, priority: Priority,
            format: Format, connection: ConnectionInfo, receivedAt: Date, sequenceNumber: UInt64, http2: HTTP2Fields?
        ) {
            self.deviceToken = deviceToken
            self.payload = payload
            self.identifier = identifier
            self.expiration = expiration
            self.priority = priority
            self.format = format
            self.connection = connection
            self.receivedAt = receivedAt
            self.sequenceNumber = sequenceNumber
            self.http2 = http2
        }

        func copy() -> Storage {
            let copy = Storage(
                deviceToken: deviceToken, payload: payload, identifier: identifier, expiration: expiration,
                priority: priority, format: format, connection: connection, receivedAt: receivedAt,
                sequenceNumber: sequenceNumber, http2: http2)
            copy.lintFindings = lintFindings
            copy.deviceLintFindings = deviceLintFindings
            return copy
        }
    }

    private var storage: Storage

    /// The storage, copied first when another value shares it.
    private var unique: Storage {
        mutating get {
            if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
            return storage
        }
    }

    /// The device the notification is for (empty for a broadcast).
    public package(set) var deviceToken: DeviceToken {
        get { storage.deviceToken }
        set { unique.deviceToken = newValue }
    }
    /// The JSON payload: raw bytes, parsed on first use, with typed `aps` accessors.
    public package(set) var payload: Payload {
        get { storage.payload }
        set { unique.payload = newValue }
    }
    /// The binary notification identifier (commands 1 and 2), echoed in error responses.
    /// Its 4 bytes are opaque: this is their big-endian reading. 0 when the client sent none.
    public package(set) var identifier: UInt32 {
        get { storage.identifier }
        set { unique.identifier = newValue }
    }
    /// The expiry as sent, in UNIX seconds: 0 means "do not store". Nil when the format has
    /// none (command 0).
    public package(set) var expiration: UInt32? {
        get { storage.expiration }
        set { unique.expiration = newValue }
    }
    /// The delivery priority (10 when the client sent none).
    public package(set) var priority: Priority {
        get { storage.priority }
        set { unique.priority = newValue }
    }
    /// The wire format that carried the notification.
    public package(set) var format: Format {
        get { storage.format }
        set { unique.format = newValue }
    }
    /// The connection it came over.
    public package(set) var connection: ConnectionInfo {
        get { storage.connection }
        set { unique.connection = newValue }
    }
    /// When the server finished reading it, by the server's clock (``FakeAPNsServer/clock``,
    /// which a test may have moved).
    public package(set) var receivedAt: Date {
        get { storage.receivedAt }
        set { unique.receivedAt = newValue }
    }
    /// Its place in the order of arrival at this server, from 1.
    public package(set) var sequenceNumber: UInt64 {
        get { storage.sequenceNumber }
        set { unique.sequenceNumber = newValue }
    }

    /// The push lint's findings in the request, when the lint stage judged them as the push
    /// came (with the app's bundle described, or strict lint on); nil: judged from the request
    /// alone when read (``lintFindings``). Only the lint stage writes them.
    package var judgedLintFindings: [LintFinding]? {
        get { storage.lintFindings }
        set { unique.lintFindings = newValue }
    }

    /// The push lint's findings that need the phone's state (an offline burst, a stale Live
    /// Activity timestamp, the Live Activity budget …), found as the device model played the
    /// push on a phone a test described; empty otherwise. Only the device model writes them;
    /// ``lintFindings`` lists them with the request's.
    public package(set) var deviceLintFindings: [LintFinding] {
        get { storage.deviceLintFindings }
        set { unique.deviceLintFindings = newValue }
    }

    /// What only HTTP/2 requests carry, behind one reference so binary notifications stay small.
    public package(set) var http2: HTTP2Fields? {
        get { storage.http2 }
        set { unique.http2 = newValue }
    }

    /// HTTP/2 only: the `apns-id` answered: the client's as it sent it (capitals kept, as APNs
    /// echoes it), or the lowercase one the server made up.
    public var apnsID: String? { http2?.apnsID }
    /// HTTP/2 only: the `apns-topic`, or the topic taken from the client certificate.
    public var topic: String? { http2?.topic }
    /// HTTP/2 only: the `apns-push-type`, when sent.
    public var pushType: PushType? { http2?.pushType }
    /// HTTP/2 only: the `apns-collapse-id`, when sent.
    public var collapseID: String? { http2?.collapseID }
    /// HTTP/2 with token authentication: the verified provider token's claims.
    public var providerToken: ProviderTokenClaims? { http2?.providerToken }
    /// A broadcast only: the channel it was sent to (`apns-channel-id`).
    public var channelID: String? { http2?.channelID }
    /// A broadcast only: the `apns-request-id` answered (the client's, or one the server made up).
    public var requestID: String? { http2?.requestID }
    /// The `apns-unique-id` answered: a broadcast's, and a device push's in the sandbox
    /// environment (Apple sends it there only, to look the push up in its delivery log).
    public var uniqueID: String? { http2?.uniqueID }

    /// The fields only HTTP/2 requests carry.
    public final class HTTP2Fields: Sendable {
        /// The `apns-id` answered: the client's as sent, or the lowercase one the server made up.
        public var apnsID: String { storedID.text }
        /// The topic.
        public var topic: String? { shared.topic }
        /// The push type, when sent.
        public var pushType: PushType? { shared.pushType }
        /// The collapse ID, when sent.
        public var collapseID: String? { shared.collapseID }
        /// The provider token's claims, with token authentication.
        public var providerToken: ProviderTokenClaims? { shared.providerToken }
        /// A broadcast's channel id.
        public var channelID: String? { shared.channelID }
        /// A broadcast's `apns-request-id`.
        public var requestID: String? { shared.requestID }
        /// The `apns-unique-id` answered (a broadcast's, or a sandbox device push's).
        public var uniqueID: String? { ownUniqueID?.text ?? shared.uniqueID }

        /// The `apns-id`: a UUID in 8-4-4-4-12 form as its bits and the case of its digits (no
        /// text kept); anything else as it was given.
        private let storedID: StoredID
        /// The `apns-id` as a value to compare, without making its text: the sender audit's
        /// key for "the same `apns-id`".
        var apnsIDKey: StoredID { storedID }
        /// The other fields, in one object that the notifications with the same share: a
        /// connection's pushes mostly go to one topic with one push type and one token, so an
        /// accepted push keeps 64 bytes of fields of its own, not 112 or 192 and its
        /// `apns-id`'s text.
        private let shared: Shared
        /// A device push's own `apns-unique-id` (sandbox only).
        private let ownUniqueID: UUIDBits?

        /// HTTP/2 fields.
        package init(
            apnsID: String, topic: String?, pushType: PushType?, collapseID: String?, providerToken: ProviderTokenClaims?,
            channelID: String? = nil, requestID: String? = nil, uniqueID: String? = nil
        ) {
            storedID = StoredID(apnsID)
            ownUniqueID = nil
            shared = Shared(
                topic: topic, pushType: pushType, collapseID: collapseID, providerToken: providerToken,
                channelID: channelID, requestID: requestID, uniqueID: uniqueID)
        }

        /// HTTP/2 fields whose other fields are `shared`'s.
        init(apnsID: UUIDBits, uniqueID: UUIDBits? = nil, shared: Shared) {
            storedID = .uuid(apnsID)
            ownUniqueID = uniqueID
            self.shared = shared
        }

        /// Every field but the `apns-id`, shared by the notifications that have the same.
        package final class Shared: Sendable {
            let topic: String?
            let pushType: PushType?
            let collapseID: String?
            let providerToken: ProviderTokenClaims?
            let channelID: String?
            let requestID: String?
            let uniqueID: String?

            package init(
                topic: String?, pushType: PushType?, collapseID: String?, providerToken: ProviderTokenClaims?,
                channelID: String? = nil, requestID: String? = nil, uniqueID: String? = nil
            ) {
                self.topic = topic
                self.pushType = pushType
                self.collapseID = collapseID
                self.providerToken = providerToken
                self.channelID = channelID
                self.requestID = requestID
                self.uniqueID = uniqueID
            }

            /// Whether a device push with these fields can share this object.
            func isShared(
                byTopic topic: String?, pushType: PushType?, collapseID: String?, providerToken: ProviderTokenClaims?
            ) -> Bool {
                channelID == nil && requestID == nil && uniqueID == nil && self.topic == topic
                    && self.pushType == pushType && self.collapseID == collapseID && self.providerToken == providerToken
            }
        }

        /// An `apns-id`: a UUID's bits (with the case of its digits), or other text as given.
        enum StoredID: Sendable, Hashable {
            case uuid(UUIDBits)
            case text(String)

            init(_ text: String) {
                // A UUID's bits give back its text as it came, capitals included.
                if let bits = UUIDBits(text: text) {
                    self = .uuid(bits)
                } else {
                    self = .text(text)
                }
            }

            var text: String {
                switch self {
                case .text(let text): text
                case .uuid(let bits): bits.text
                }
            }
        }
    }

    /// The expiry as a date, when one was sent and is not 0.
    public var expirationDate: Date? {
        guard let expiration, expiration != 0 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(expiration))
    }

    /// A notification value, as the decoders build it.
    package init(
        deviceToken: DeviceToken, payload: Payload, identifier: UInt32 = 0, expiration: UInt32? = nil,
        priority: Priority = .immediately, format: Format, connection: ConnectionInfo,
        receivedAt: Date = Date(), sequenceNumber: UInt64 = 0, http2: HTTP2Fields? = nil
    ) {
        storage = Storage(
            deviceToken: deviceToken, payload: payload, identifier: identifier, expiration: expiration,
            priority: priority, format: format, connection: connection, receivedAt: receivedAt,
            sequenceNumber: sequenceNumber, http2: http2)
    }

    /// A one-line summary: sequence, format, token, identifier or apns-id, topic and the start of the payload.
    public var description: String {
        var text = "#\(sequenceNumber) \(format) token \(deviceToken.hex)"
        if let apnsID {
            text += " apns-id \(apnsID)"
        } else if format != .simple {
            text += " id \(identifier)"
        }
        if let topic { text += " topic \(topic)" }
        if let channelID { text += " channel \(channelID)" }
        let body = payload.text ?? "<\(payload.count) bytes, not UTF-8>"
        text += " payload " + (body.count > 120 ? String(body.prefix(120)) + "…" : body)
        return text
    }

    /// The wire format of a notification.
    public enum Format: String, Sendable, CustomStringConvertible {
        /// Binary command 0: token and payload only.
        case simple
        /// Binary command 1: identifier, expiry, token, payload.
        case enhanced
        /// Binary command 2: a frame of items.
        case frame
        /// An HTTP/2 provider API request.
        case http2
        /// A broadcast to a channel (`POST /4/broadcasts/apps/<bundle>`): ``PushNotification/channelID``
        /// names the channel, ``PushNotification/topic`` the bundle, and the device token is empty.
        case broadcast

        /// The format's name, as the daemon's JSON writes it.
        public var description: String { rawValue }
    }
}

/// A notification's delivery priority, as APNs defines it.
public struct Priority: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The `apns-priority` value (the binary priority item).
    public let rawValue: Int
    /// The priority with this value, documented or not.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// 10: send at once (the default).
    public static let immediately = Priority(rawValue: 10)
    /// 5: send at a time that conserves the device's power.
    public static let consideringDevicePower = Priority(rawValue: 5)
    /// 1: favour power; never wake the device.
    public static let prioritizingPowerEfficiency = Priority(rawValue: 1)

    /// The value as a number.
    public var description: String { String(rawValue) }
}
