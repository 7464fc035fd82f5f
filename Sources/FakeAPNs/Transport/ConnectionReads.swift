/// How long a server connection may wait at each stage of its life; nil: no limit.
struct ConnectionTimeouts: Sendable {
    /// From the connection's start to the end of its TLS handshake.
    var handshake: Duration?
    /// For the next byte, while part of a frame (a notification, an HTTP/2 frame or preface,
    /// a TLS record) has arrived.
    var frame: Duration?
    /// For the next byte, between frames.
    var idle: Duration?

    /// How long a read blocks inside OpenSSL (`SO_RCVTIMEO`) before the connection counts as
    /// resting and waits on outside it: short enough that a resting connection soon gives its
    /// memory back, long enough that a busy one never does (and pays no system call for it).
    var receive: Duration {
        [Duration.milliseconds(100), frame, idle].compactMap { $0 }.min()!
    }
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

    /// Reads the next bytes into `buffer`, waiting at most the frame timeout when
    /// `insideFrame` (or inside a TLS record) and the idle timeout otherwise.
    ///
    /// A read blocks in OpenSSL for the socket's short receive timeout; a connection still
    /// quiet then rests: an empty `buffer`, OpenSSL's buffers and the stack below this call (a
    /// handshake or a burst of requests went deeper) are given back, and the rest of the wait
    /// happens outside OpenSSL. An idle connection keeps only its TLS state and a few pages of
    /// stack.
    func read(into buffer: inout ReadBuffer, insideFrame: Bool) throws -> Read {
        let timeouts = listener.timeouts
        while true {
            buffer.reserve(Self.readSize)
            switch try stream.receive(into: buffer.freeSpace) {
            case .bytes(let count):
                buffer.commit(count)
                return .bytes
            case .end:
                return .end
            case .quiet:
                let timeout = insideFrame || stream.isInsideRecord ? timeouts.frame : timeouts.idle
                let remaining = timeout.map { $0 - timeouts.receive }
                if let remaining, remaining <= .zero { return .timedOut }
                if buffer.count == 0 { buffer.release() }
                stream.releaseBuffers()
                OSThread.releaseUnusedStack()
                guard stream.waitUntilReadable(atMost: remaining) else { return .timedOut }
            }
        }
    }
}

extension Duration {
    /// The duration in seconds, as a person writes it ("10", "0.5").
    package var secondsText: String {
        let value = Double(components.seconds) + Double(components.attoseconds) / 1e18
        return value == value.rounded() ? String(Int(value)) : String(value)
    }

    /// The duration as a person says it: "1 second", "10 seconds", "0.5 seconds".
    package var secondsPhrase: String {
        let text = secondsText
        return text + (text == "1" ? " second" : " seconds")
    }
}
