/// The frame headers a client sends once nghttp2 reads nothing more: after this side's GOAWAY,
/// with no stream open, nghttp2 discards every byte. Enough is read to see the answer to the
/// PING sent after the GOAWAY and the streams the client opens after it; nothing is kept but
/// the header being read and a PING's eight bytes.
struct FramesAfterGoAway {
    private var header: [UInt8] = []
    private var payloadLeft = 0
    /// A PING acknowledgement's payload, while it arrives.
    private var pingAnswer: [UInt8]?

    enum Seen: Equatable {
        /// A PING with ACK and its 8 bytes.
        case pingAnswer([UInt8])
        /// HEADERS on this stream.
        case headers(Int32)
    }

    /// Reads `bytes`, which continue the client's byte stream at a frame boundary or where the
    /// last call stopped, telling `seen` of what it finds.
    mutating func read(_ bytes: UnsafeRawBufferPointer, _ seen: (Seen) -> Void) {
        var index = 0
        while index < bytes.count {
            guard payloadLeft == 0 else {
                let take = min(payloadLeft, bytes.count - index)
                pingAnswer? += bytes[index..<index + take]
                index += take
                payloadLeft -= take
                if payloadLeft == 0 { finishPayload(seen) }
                continue
            }
            header.append(bytes[index])
            index += 1
            guard header.count == 9 else { continue }
            let length = Int(header[0]) << 16 | Int(header[1]) << 8 | Int(header[2])
            let type = header[3]
            let flags = header[4]
            let stream = header[5...8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } & 0x7FFF_FFFF
            header.removeAll(keepingCapacity: true)
            if type == 1 { seen(.headers(Int32(stream))) }
            pingAnswer = type == 6 && flags & 1 != 0 && length == 8 ? [] : nil
            payloadLeft = length
            if length == 0 { finishPayload(seen) }
        }
    }

    private mutating func finishPayload(_ seen: (Seen) -> Void) {
        if let answer = pingAnswer { seen(.pingAnswer(answer)) }
        pingAnswer = nil
    }
}
