/// The 6-byte error response of the binary gateway: command 8, status, identifier.
public struct BinaryErrorResponse: Hashable, Sendable, CustomStringConvertible {
    /// Why the notification was refused.
    public let status: BinaryStatus
    /// The identifier of the refused notification (or, for shutdown, of the last one
    /// delivered), as its 4 bytes read big-endian.
    public let identifier: UInt32

    /// A response.
    public init(status: BinaryStatus, identifier: UInt32) {
        self.status = status
        self.identifier = identifier
    }

    /// Reads a response from its 6 bytes; nil when they are not one.
    public init?(bytes: some Collection<UInt8>) {
        let bytes = Array(bytes)
        guard bytes.count == 6, bytes[0] == 8 else { return nil }
        status = BinaryStatus(rawValue: bytes[1])
        identifier = UInt32(bytes[2]) << 24 | UInt32(bytes[3]) << 16 | UInt32(bytes[4]) << 8 | UInt32(bytes[5])
    }

    /// The 6 bytes on the wire.
    public var bytes: [UInt8] {
        [8, status.rawValue, UInt8(identifier >> 24), UInt8(identifier >> 16 & 0xFF),
         UInt8(identifier >> 8 & 0xFF), UInt8(identifier & 0xFF)]
    }

    /// The status and the identifier.
    public var description: String { "error response: status \(status), identifier \(identifier)" }
}
