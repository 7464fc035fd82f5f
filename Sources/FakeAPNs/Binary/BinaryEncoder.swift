/// Builds the binary provider API's commands, as a provider sends them: for clients written
/// with this package (the daemon's `send`, tests) and for tests that craft exact bytes.
///
/// ```swift
/// let bytes = BinaryEncoder.frame(token: token, payload: Array(#"{"aps":{"alert":"Hi"}}"#.utf8), identifier: 7)
/// ```
public enum BinaryEncoder {
    /// Command 0: token and payload.
    public static func simple(token: DeviceToken, payload: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = [0]
        appendUInt16(UInt16(truncatingIfNeeded: token.count), to: &bytes)
        bytes += token.bytes
        appendUInt16(UInt16(truncatingIfNeeded: payload.count), to: &bytes)
        bytes += payload
        return bytes
    }

    /// Command 1: identifier, expiry (UNIX seconds, 0 = do not store), token, payload.
    public static func enhanced(identifier: UInt32, expiration: UInt32 = 0, token: DeviceToken, payload: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = [1]
        appendUInt32(identifier, to: &bytes)
        appendUInt32(expiration, to: &bytes)
        appendUInt16(UInt16(truncatingIfNeeded: token.count), to: &bytes)
        bytes += token.bytes
        appendUInt16(UInt16(truncatingIfNeeded: payload.count), to: &bytes)
        bytes += payload
        return bytes
    }

    /// One item of a command-2 frame.
    public struct Item: Sendable {
        /// The item ID (1 token, 2 payload, 3 identifier, 4 expiry, 5 priority).
        public let id: UInt8
        /// The item's data.
        public let data: [UInt8]

        /// Any item, valid or not, for tests that send malformed frames.
        public init(id: UInt8, data: [UInt8]) {
            self.id = id
            self.data = data
        }

        /// Item 1: the device token.
        public static func deviceToken(_ token: DeviceToken) -> Item { Item(id: 1, data: token.bytes) }
        /// Item 2: the JSON payload.
        public static func payload(_ payload: [UInt8]) -> Item { Item(id: 2, data: payload) }
        /// Item 3: the notification identifier.
        public static func identifier(_ identifier: UInt32) -> Item { Item(id: 3, data: bigEndian(identifier)) }
        /// Item 4: the expiry in UNIX seconds.
        public static func expiration(_ expiration: UInt32) -> Item { Item(id: 4, data: bigEndian(expiration)) }
        /// Item 5: the priority (10 or 5).
        public static func priority(_ priority: UInt8) -> Item { Item(id: 5, data: [priority]) }
    }

    /// Command 2 with the items in the given order.
    public static func frame(items: [Item]) -> [UInt8] {
        var body: [UInt8] = []
        for item in items {
            body.append(item.id)
            appendUInt16(UInt16(truncatingIfNeeded: item.data.count), to: &body)
            body += item.data
        }
        var bytes: [UInt8] = [2]
        appendUInt32(UInt32(body.count), to: &bytes)
        return bytes + body
    }

    /// Command 2 with every item, in ascending order as most clients send them.
    public static func frame(
        token: DeviceToken, payload: [UInt8], identifier: UInt32 = 0, expiration: UInt32 = 0, priority: UInt8 = 10
    ) -> [UInt8] {
        frame(items: [
            .deviceToken(token), .payload(payload), .identifier(identifier), .expiration(expiration), .priority(priority),
        ])
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    private static func appendUInt16(_ value: UInt16, to bytes: inout [UInt8]) {
        bytes.append(UInt8(value >> 8))
        bytes.append(UInt8(value & 0xFF))
    }

    private static func appendUInt32(_ value: UInt32, to bytes: inout [UInt8]) {
        bytes += bigEndian(value)
    }
}
