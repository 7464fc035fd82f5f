/// Follows a client's byte stream through the connection preface and then each frame's
/// 9-byte header and length, without keeping any of it: enough to tell a connection resting
/// between frames from one stalled inside the preface or a frame. nghttp2 reads the frames
/// themselves; it does not say where a frame ends.
struct HTTP2FrameBoundary {
    /// `PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`; the client sends it first, at once.
    private static let prefaceLength = 24
    private static let headerLength = 9

    private var prefaceLeft = prefaceLength
    /// Bytes of the current frame header seen, and the length read from them so far.
    private var headerSeen = 0
    private var length = 0
    private var payloadLeft = 0

    /// Whether the bytes so far end with the preface and a whole frame.
    var isBetweenFrames: Bool {
        prefaceLeft == 0 && headerSeen == 0 && payloadLeft == 0
    }

    /// Moves past the next bytes of the stream.
    mutating func advance(over bytes: UnsafeRawBufferPointer) {
        var offset = min(prefaceLeft, bytes.count)
        prefaceLeft -= offset
        while offset < bytes.count {
            if payloadLeft > 0 {
                let skipped = min(payloadLeft, bytes.count - offset)
                payloadLeft -= skipped
                offset += skipped
            } else if headerSeen == 0 && bytes.count - offset >= Self.headerLength {
                payloadLeft = Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
                offset += Self.headerLength
            } else {
                if headerSeen < 3 { length = length << 8 | Int(bytes[offset]) }
                headerSeen += 1
                offset += 1
                if headerSeen == Self.headerLength {
                    payloadLeft = length
                    headerSeen = 0
                    length = 0
                }
            }
        }
    }
}
