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
    /// The binary status of the answer.
    @available(*, deprecated, message: "compare answer with .status(_:)")
    public var status: BinaryStatus? {
        if case .status(let status) = answer { status } else { nil }
    }
    /// The HTTP/2 reason of the answer.
    @available(*, deprecated, message: "compare answer with .reason(_:)")
    public var apnsReason: APNsReason? {
        if case .reason(let reason) = answer { reason } else { nil }
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
    /// HTTP/2: the `apns-id` of the refused request.
    public package(set) var apnsID: String?
    /// HTTP/2: the `apns-topic` of the refused request, when it had one; channel management and
    /// broadcast: the bundle ID of the path.
    public package(set) var topic: String?
    /// Channel management and broadcast: what the request asked for; nil for a notification
    /// to a device, or a method the path does not answer.
    public package(set) var channelOperation: ChannelOperation?
    /// Channel management and broadcast: the `apns-channel-id` sent, as sent.
    public package(set) var channelID: String?
    /// Channel management and broadcast: the `apns-request-id` answered (the client's, or one
    /// the server made).
    public package(set) var requestID: String?
    /// HTTP/2 410: the time the token became invalid, sent as `timestamp` in the body.
    public package(set) var unregisteredAt: Date?
    /// The connection it came over.
    public package(set) var connection: ConnectionInfo
    /// When the server refused it.
    public package(set) var receivedAt: Date
    /// Its place in the order of refusals at this server, from 1.
    public package(set) var sequenceNumber: UInt64

    /// A rejection record; `reason` says what happened when there is no `answer`.
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
        self.apnsID = apnsID
        self.topic = topic
        self.channelOperation = channelOperation
        self.channelID = channelID
        self.requestID = requestID
        self.unregisteredAt = unregisteredAt
        self.connection = connection
        self.receivedAt = receivedAt
        self.sequenceNumber = sequenceNumber
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
