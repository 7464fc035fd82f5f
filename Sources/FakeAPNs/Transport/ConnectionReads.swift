/// How long a server connection may wait at each stage of its life; nil: no limit.
struct ConnectionTimeouts: Sendable {
    /// From the connection's start to the end of its TLS handshake.
    var handshake: Duration?
    /// For the next byte, while part of a frame (a notification, an HTTP/2 frame or preface,
    /// a TLS record) has arrived.
    var frame: Duration?
    /// For the next byte, between frames.
    var idle: Duration?
}

extension TLSListener.Connection {
    /// How ``read(into:insideFrame:)`` ended.
    enum Read {
        /// Bytes were appended to the buffer.
        case bytes
        /// The client ended the stream, or the listener ended the reads.
        case end
        /// No byte came within the timeout that applies (frame or idle); the connection is
        /// still open.
        case timedOut
    }

    /// Bytes asked of each read: one TLS record's worth, the most `SSL_read` returns at once.
    private static let readSize = 16 * 1024

    /// Waits for the next bytes, the frame timeout applying when `insideFrame` and the idle
    /// timeout otherwise, and appends them to `buffer`. Before a wait that would block, an empty
    /// buffer gives its memory back, and so does the stack below this call (a handshake or
    /// a burst of requests went deeper); the wait happens outside OpenSSL, which then holds no
    /// read buffer either: an idle connection keeps only its TLS state and a few pages of stack.
    func read(into buffer: inout ReadBuffer, insideFrame: Bool) throws -> Read {
        let timeout = insideFrame ? listener.timeouts.frame : listener.timeouts.idle
        while true {
            if !stream.hasData(waitingAtMost: .zero) {
                if buffer.count == 0 {
                    buffer.release()
                    OSThread.releaseUnusedStack()
                }
                guard stream.hasData(waitingAtMost: timeout) else { return .timedOut }
            }
            buffer.reserve(Self.readSize)
            switch try stream.receive(into: buffer.freeSpace) {
            case .bytes(let count):
                buffer.commit(count)
                return .bytes
            case .end:
                return .end
            case .stalled:
                return .timedOut
            case .nothing:
                continue
            }
        }
    }
}

extension Duration {
    /// The duration in seconds, as a person writes it ("10", "0.5").
    var secondsText: String {
        let value = Double(components.seconds) + Double(components.attoseconds) / 1e18
        return value == value.rounded() ? String(Int(value)) : String(value)
    }
}
