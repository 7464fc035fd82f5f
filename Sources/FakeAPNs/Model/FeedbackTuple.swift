#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One record of the feedback service: a device that no longer takes notifications for the
/// app, and since when.
public struct FeedbackTuple: Sendable, Hashable, CustomStringConvertible {
    /// When APNs decided the app was gone, in UNIX seconds (4 bytes on the wire).
    public let timestamp: UInt32
    /// The device token.
    public let deviceToken: DeviceToken

    /// A tuple with a timestamp in UNIX seconds.
    package init(timestamp: UInt32, deviceToken: DeviceToken) {
        self.timestamp = timestamp
        self.deviceToken = deviceToken
    }

    /// A tuple at `date` (whole seconds, clamped to the 32-bit field).
    package init(date: Date, deviceToken: DeviceToken) {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        self.init(timestamp: UInt32(clamping: Int64(max(0, min(seconds, Double(UInt32.max))))), deviceToken: deviceToken)
    }

    /// The timestamp as a date.
    public var date: Date { Date(timeIntervalSince1970: TimeInterval(timestamp)) }

    /// The bytes on the wire: timestamp (4, big-endian), token length (2), token.
    public var bytes: [UInt8] {
        let length = UInt16(truncatingIfNeeded: deviceToken.count)
        return [
            UInt8(timestamp >> 24), UInt8(timestamp >> 16 & 0xFF), UInt8(timestamp >> 8 & 0xFF), UInt8(timestamp & 0xFF),
            UInt8(length >> 8), UInt8(length & 0xFF),
        ] + deviceToken.bytes
    }

    /// Reads every whole tuple in `bytes`, as a feedback client does; trailing bytes that do
    /// not make a whole tuple are returned as `rest`.
    public static func decodeAll(_ bytes: [UInt8]) -> (tuples: [FeedbackTuple], rest: [UInt8]) {
        var tuples: [FeedbackTuple] = []
        var offset = 0
        while bytes.count - offset >= 6 {
            let length = Int(bytes[offset + 4]) << 8 | Int(bytes[offset + 5])
            guard bytes.count - offset >= 6 + length else { break }
            let timestamp = bytes[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            tuples.append(FeedbackTuple(
                timestamp: timestamp, deviceToken: DeviceToken(bytes: bytes[offset + 6..<offset + 6 + length])))
            offset += 6 + length
        }
        return (tuples, Array(bytes[offset...]))
    }

    /// The token and the timestamp.
    public var description: String { "\(deviceToken.hex) at \(timestamp)" }
}
