/// A listener's connection as an ``HTTP2Connection`` runs on it.
extension TLSListener.Connection: HTTP2ConnectionHost {
    func write(_ bytes: [UInt8]) throws {
        try stream.write(bytes)
    }

    func pause(_ duration: Duration) -> Bool {
        listener.pause(duration)
    }

    var isStopping: Bool { listener.isStopping }

    var mayKeepReading: Bool { listener.mayKeepReading }
}

extension HTTP2Connection {
    /// A connection of `connection`'s listener.
    convenience init(
        connection: TLSListener.Connection, context: HTTP2Context,
        framing: @escaping (any HTTP2SessionDelegate) throws -> any RequestFraming = {
            try NGHTTP2Session(server: true, delegate: $0)
        }
    ) {
        self.init(host: connection, info: connection.info, context: context, framing: framing)
    }

    /// Serves `connection` to its end: reads, hands the bytes to the state machine, and does
    /// what it says next.
    func run(on connection: TLSListener.Connection) {
        defer { finish() }
        var buffer = ReadBuffer()
        defer { buffer.deallocate() }
        var next = start()
        while next == .read {
            let read: TLSListener.Connection.Read
            do {
                read = try connection.read(into: &buffer, insideFrame: !isBetweenMessages, until: retiresAt)
            } catch {
                return
            }
            switch read {
            case .bytes:
                next = buffer.withReadable { received($0) }
                buffer.consume(buffer.count)
            case .end:
                next = readEnded()
            case .timedOut:
                next = readTimedOut()
            }
        }
        guard next == .drain else { return }
        let drainEnds = ContinuousClock.now.advanced(by: Self.drainTime)
        while connection.listener.mayKeepReading {
            guard
                case .bytes = try? connection.read(into: &buffer, insideFrame: false, until: drainEnds),
                buffer.withReadable({ drained($0) })
            else { return }
            buffer.consume(buffer.count)
        }
    }
}

/// A connection that lives in memory, for the tests and the fuzz target that drive an
/// ``HTTP2Connection`` without a socket: what the server writes is kept; pauses return at once.
final class HTTP2MemoryHost: HTTP2ConnectionHost {
    private(set) var written: [UInt8] = []
    func write(_ bytes: [UInt8]) throws { written += bytes }
    func pause(_ duration: Duration) -> Bool { true }
    var isStopping: Bool { false }
    var mayKeepReading: Bool { true }
}
