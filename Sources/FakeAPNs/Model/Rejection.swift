#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A notification the server refused, and why: malformed input, the device registry, or a
/// fault rule. Every refusal lands on `server.rejections`, which pops like `notifications`:
/// those of the channel management and broadcast APIs too (``channelOperation`` says which).
///
/// ```swift
/// let rejection = try server.rejections.pop(timeout: .seconds(2))
/// XCTAssertEqual(rejection.answer, .status(.invalidToken))
/// XCTAssertEqual(rejection.identifier, 7)
/// ```
public struct Rejection: Sendable, CustomStringConvertible {
    /// What decided the refusal.
    public enum Cause: String, Sendable, CustomStringConvertible {
        /// The bytes were not a valid notification.
        case malformed
        /// The device registry refused the token (unknown in strict mode, other environment,
        /// other topic, unregistered), or the channel registry the request (no such channel,
        /// the channel limit).
        case registry
        /// A fault rule the test added.
        case fault
        /// The push lint in strict mode: an error-level finding in a push that was accepted
        /// and answered Apple's 200 (it is on ``FakeAPNsServer/notifications`` too). The
        /// reason is the rule's identifier, the detail its message.
        case lint

        /// The cause's name, as the daemon's JSON writes it.
        public var description: String { rawValue }
    }

    /// Apple's answer to a refused notification, in the terms of the protocol that carried it.
    public enum Answer: Sendable, Hashable, CustomStringConvertible {
        /// Binary gateway: the status of the error response (or, for command 0, which has
        /// none, the status that describes the refusal).
        case status(BinaryStatus)
        /// HTTP/2: the reason answered, with its HTTP status (`.badDeviceToken`: 400).
        case reason(APNsReason)

        /// The protocol's term: "status 8 (Invalid token)" or "HTTP 400 BadDeviceToken".
        public var description: String {
            switch self {
            case .status(let status): "status \(status)"
            case .reason(let reason): "HTTP \(reason)"
            }
        }
    }

    /// What Apple's answer is: a binary status or an HTTP/2 reason. Nil for refusals nothing
    /// answers: an uninstalled app on the binary gateway, a closed connection, a reset stream.
    public package(set) var answer: Answer?
    /// What happened when nothing answers the refusal ("Unregistered", "Connection closed").
    private var outcome: String
    /// Apple's name for the refusal: the binary status name ("Invalid token"), the HTTP/2
    /// reason ("BadDeviceToken"), or what happened ("Unregistered", "Connection closed").
    public var reason: String {
        switch answer {
        case .status(let status): status.name
        case .reason(let reason): reason.rawValue
        case nil: outcome
        }
    }
    /// A sentence saying exactly what was wrong ("token length 101 is over 100 bytes").
    public package(set) var detail: String
    /// What decided it.
    public package(set) var cause: Cause
    /// Whether an answer was written: the 6-byte error response, or an HTTP/2 response.
    public package(set) var responseSent: Bool
    /// Whether the server closed the connection because of it.
    public package(set) var connectionClosed: Bool
    /// The notification identifier (0 when unknown or not sent).
    public package(set) var identifier: UInt32
    /// The device token, when it was read before the problem was found.
    public package(set) var deviceToken: DeviceToken?
    /// The payload, when it was read before the problem was found.
    public package(set) var payload: Payload?
    /// The wire format, when the command byte was known.
    public package(set) var format: PushNotification.Format?
    /// What only HTTP/2 requests carry; nil for the binary gateway's refusals.
    public package(set) var http2: HTTP2Fields?

    /// HTTP/2 only: the `apns-id` of the refused request.
    public var apnsID: String? { http2?.apnsID }
    /// HTTP/2 only: the `apns-topic` of the refused request, when it had one; channel
    /// management and broadcast: the bundle ID of the path.
    public var topic: String? { http2?.topic }
    /// Channel management and broadcast only: what the request asked for; nil for a
    /// notification to a device, or a method the path does not answer.
    public var channelOperation: ChannelOperation? { http2?.channelOperation }
    /// Channel management and broadcast only: the `apns-channel-id` sent, as sent.
    public var channelID: String? { http2?.channelID }
    /// Channel management and broadcast only: the `apns-request-id` answered (the client's, or
    /// one the server made).
    public var requestID: String? { http2?.requestID }
    /// HTTP/2 410 only: the time the token became invalid, sent as `timestamp` in the body.
    public var unregisteredAt: Date? { http2?.unregisteredAt }

    /// The fields only HTTP/2 requests carry.
    public struct HTTP2Fields: Sendable, Hashable {
        /// The `apns-id` of the refused request, when it had one or the server made one up.
        public let apnsID: String?
        /// The `apns-topic`, when sent; channel management and broadcast: the path's bundle ID.
        public let topic: String?
        /// Channel management and broadcast: what the request asked for.
        public let channelOperation: ChannelOperation?
        /// Channel management and broadcast: the `apns-channel-id` sent, as sent.
        public let channelID: String?
        /// Channel management and broadcast: the `apns-request-id` answered.
        public let requestID: String?
        /// 410: the time the token became invalid.
        public let unregisteredAt: Date?

        /// The HTTP/2 fields of a refusal.
        package init(
            apnsID: String? = nil, topic: String? = nil, channelOperation: ChannelOperation? = nil,
            channelID: String? = nil, requestID: String? = nil, unregisteredAt: Date? = nil
        ) {
            self.apnsID = apnsID
            self.topic = topic
            self.channelOperation = channelOperation
            self.channelID = channelID
            self.requestID = requestID
            self.unregisteredAt = unregisteredAt
        }
    }

    /// The connection it came over.
    public package(set) var connection: ConnectionInfo
    /// When the server refused it, by the server's clock (``FakeAPNsServer/clock``, which a
    /// test may have moved).
    public package(set) var receivedAt: Date
    /// Its place in the order of refusals at this server, from 1.
    public package(set) var sequenceNumber: UInt64

    /// A rejection record; `reason` says what happened when there is no `answer`. The HTTP/2
    /// fields make ``http2``, which is nil when none is given and the format is not HTTP/2's.
    package init(
        answer: Answer? = nil, reason: String? = nil, detail: String, cause: Cause,
        responseSent: Bool, connectionClosed: Bool, identifier: UInt32 = 0, deviceToken: DeviceToken? = nil,
        payload: Payload? = nil, format: PushNotification.Format? = nil, apnsID: String? = nil, topic: String? = nil,
        channelOperation: ChannelOperation? = nil, channelID: String? = nil, requestID: String? = nil,
        unregisteredAt: Date? = nil, connection: ConnectionInfo, receivedAt: Date = Date(), sequenceNumber: UInt64 = 0
    ) {
        self.answer = answer
        self.outcome = reason ?? "Refused"
        self.detail = detail
        self.cause = cause
        self.responseSent = responseSent
        self.connectionClosed = connectionClosed
        self.identifier = identifier
        self.deviceToken = deviceToken
        self.payload = payload
        self.format = format
        let fields = HTTP2Fields(
            apnsID: apnsID, topic: topic, channelOperation: channelOperation, channelID: channelID,
            requestID: requestID, unregisteredAt: unregisteredAt)
        let overHTTP2 = format == .http2 || format == .broadcast
        self.http2 = overHTTP2 || fields != HTTP2Fields() ? fields : nil
        self.connection = connection
        self.receivedAt = receivedAt
        self.sequenceNumber = sequenceNumber
    }

    /// The strict lint's record of `finding` in `notification`, which was accepted.
    package init(lintFinding finding: LintFinding, of notification: PushNotification) {
        self.init(
            reason: finding.rule.id, detail: finding.message, cause: .lint, responseSent: true, connectionClosed: false,
            identifier: notification.identifier, deviceToken: notification.deviceToken, payload: notification.payload,
            format: notification.format, apnsID: notification.apnsID, topic: notification.topic,
            channelID: notification.channelID, connection: notification.connection,
            receivedAt: notification.receivedAt)
    }

    /// A one-line summary: sequence, reason, cause, answer, identifier or apns-id, token and detail.
    public var description: String {
        var text = "#\(sequenceNumber) \(reason) (\(cause)"
        switch answer {
        case .status(let status): text += ", status \(status.rawValue)"
        case .reason(let reason): text += ", HTTP \(reason.status)"
        case nil: break
        }
        text += ")"
        if let channelOperation {
            text += " \(channelOperation) \(topic ?? "")" + (channelID.map { " channel \($0)" } ?? "")
            text += requestID.map { " apns-request-id \($0)" } ?? ""
        } else {
            text += apnsID.map { " apns-id \($0)" } ?? " id \(identifier)"
        }
        if let deviceToken { text += " token \(deviceToken.hex)" }
        return text + ": \(detail)"
    }
}
