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

extension Duration {
    /// The duration in seconds, as a person writes it ("10", "0.5").
    var secondsText: String {
        let value = timeInterval
        return value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    /// The duration as a person says it: "1 second", "10 seconds", "0.5 seconds".
    package var secondsPhrase: String {
        let text = secondsText
        return text + (text == "1" ? " second" : " seconds")
    }
}
