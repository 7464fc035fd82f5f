/// A status of the binary gateway's error response (command 8), with Apple's names.
public struct BinaryStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The status byte of the error response.
    public let rawValue: UInt8
    /// The status with this byte, documented or not.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// 0: no errors encountered.
    public static let noErrors = BinaryStatus(rawValue: 0)
    /// 1: processing error.
    public static let processingError = BinaryStatus(rawValue: 1)
    /// 2: missing device token.
    public static let missingDeviceToken = BinaryStatus(rawValue: 2)
    /// 3: missing topic.
    public static let missingTopic = BinaryStatus(rawValue: 3)
    /// 4: missing payload.
    public static let missingPayload = BinaryStatus(rawValue: 4)
    /// 5: invalid token size.
    public static let invalidTokenSize = BinaryStatus(rawValue: 5)
    /// 6: invalid topic size.
    public static let invalidTopicSize = BinaryStatus(rawValue: 6)
    /// 7: invalid payload size.
    public static let invalidPayloadSize = BinaryStatus(rawValue: 7)
    /// 8: invalid token (often a sandbox token sent to production, or the reverse).
    public static let invalidToken = BinaryStatus(rawValue: 8)
    /// 10: shutdown; the identifier is the last notification delivered.
    public static let shutdown = BinaryStatus(rawValue: 10)
    /// 128: protocol error, the notification could not be parsed.
    public static let protocolError = BinaryStatus(rawValue: 128)
    /// 255: none (unknown).
    public static let unknown = BinaryStatus(rawValue: 255)

    /// Apple's name for the status ("Invalid token size").
    public var name: String {
        switch rawValue {
        case 0: return "No errors encountered"
        case 1: return "Processing error"
        case 2: return "Missing device token"
        case 3: return "Missing topic"
        case 4: return "Missing payload"
        case 5: return "Invalid token size"
        case 6: return "Invalid topic size"
        case 7: return "Invalid payload size"
        case 8: return "Invalid token"
        case 10: return "Shutdown"
        case 128: return "Protocol error"
        case 255: return "None (unknown)"
        default: return "Status \(rawValue)"
        }
    }

    /// The byte and Apple's name, "8 (Invalid token)".
    public var description: String { "\(rawValue) (\(name))" }
}
