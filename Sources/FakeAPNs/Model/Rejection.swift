import Foundation

/// A notification the server refused, and why: malformed input, the device registry, or a
/// fault rule. Every refusal lands on `server.rejections`, which pops like `notifications`.
///
/// ```swift
/// let rejection = try server.rejections.pop(timeout: .seconds(2))
/// XCTAssertEqual(rejection.status, .invalidToken)
/// XCTAssertEqual(rejection.identifier, 7)
/// ```
public struct Rejection: Sendable, CustomStringConvertible {
    /// What decided the refusal.
    public enum Cause: String, Sendable, CustomStringConvertible {
        /// The bytes were not a valid notification.
        case malformed
        /// The device registry refused the token (unknown in strict mode, other environment,
        /// other topic, unregistered).
        case registry
        /// A fault rule the test added.
        case fault

        public var description: String { rawValue }
    }

    /// Binary gateway: the status sent in the error response, or the one that describes the
    /// refusal when none was sent (command 0). Nil for HTTP/2 and for refusals that have no
    /// status (an uninstalled app, a closed connection).
    public var status: BinaryStatus?
    /// HTTP/2: the reason answered (`.badDeviceToken`, `.unregistered`, …), with its status.
    /// Nil for the binary gateway and for HTTP/2 refusals without an answer (GOAWAY, reset).
    public var apnsReason: APNsReason?
    /// Apple's name for the refusal: the binary status name ("Invalid token"), the HTTP/2
    /// reason ("BadDeviceToken"), or what happened ("Unregistered", "Connection closed").
    public var reason: String
    /// A sentence saying exactly what was wrong ("token length 101 is over 100 bytes").
    public var detail: String
    /// What decided it.
    public var cause: Cause
    /// Whether an answer was written: the 6-byte error response, or an HTTP/2 response.
    public var responseSent: Bool
    /// Whether the server closed the connection because of it.
    public var connectionClosed: Bool
    /// The notification identifier (0 when unknown or not sent).
    public var identifier: UInt32
    /// The device token, when it was read before the problem was found.
    public var deviceToken: DeviceToken?
    /// The payload, when it was read before the problem was found.
    public var payload: Payload?
    /// The wire format, when the command byte was known.
    public var format: PushNotification.Format?
    /// HTTP/2: the `apns-id` of the refused request.
    public var apnsID: String?
    /// HTTP/2 410: the time the token became invalid, sent as `timestamp` in the body.
    public var unregisteredAt: Date?
    /// The connection it came over.
    public var connection: ConnectionInfo
    /// When the server refused it.
    public var receivedAt: Date
    /// Its place in the order of refusals at this server, from 1.
    public var sequenceNumber: UInt64

    /// A rejection record.
    public init(
        status: BinaryStatus? = nil, apnsReason: APNsReason? = nil, reason: String? = nil, detail: String, cause: Cause,
        responseSent: Bool, connectionClosed: Bool, identifier: UInt32 = 0, deviceToken: DeviceToken? = nil,
        payload: Payload? = nil, format: PushNotification.Format? = nil, apnsID: String? = nil,
        unregisteredAt: Date? = nil, connection: ConnectionInfo, receivedAt: Date = Date(), sequenceNumber: UInt64 = 0
    ) {
        self.status = status
        self.apnsReason = apnsReason
        self.reason = reason ?? apnsReason?.rawValue ?? status?.name ?? "Refused"
        self.detail = detail
        self.cause = cause
        self.responseSent = responseSent
        self.connectionClosed = connectionClosed
        self.identifier = identifier
        self.deviceToken = deviceToken
        self.payload = payload
        self.format = format
        self.apnsID = apnsID
        self.unregisteredAt = unregisteredAt
        self.connection = connection
        self.receivedAt = receivedAt
        self.sequenceNumber = sequenceNumber
    }

    public var description: String {
        var text = "#\(sequenceNumber) \(reason) (\(cause)"
        if let status { text += ", status \(status.rawValue)" }
        if let apnsReason { text += ", HTTP \(apnsReason.status)" }
        text += ")"
        text += apnsID.map { " apns-id \($0)" } ?? " id \(identifier)"
        if let deviceToken { text += " token \(deviceToken.hex)" }
        return text + ": \(detail)"
    }
}
