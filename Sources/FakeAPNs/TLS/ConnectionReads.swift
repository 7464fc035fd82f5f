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
    /// The most one ``read(into:insideFrame:)`` takes: what OpenSSL's read-ahead holds, about
    /// four records.
    private static let batchSize = 64 * 1024

    /// Reads the next bytes into `buffer`, waiting at most the frame timeout when
    /// `insideFrame` (or inside a TLS record) and the idle timeout otherwise, and never past
    /// `deadline` (then `.timedOut`).
    ///
    /// A read blocks in OpenSSL for the socket's short receive timeout; a connection still
    /// quiet then rests: an empty `buffer`, OpenSSL's buffers and the stack below this call (a
    /// handshake or a burst of requests went deeper) are given back, and the rest of the wait
    /// happens outside OpenSSL. An idle connection keeps only its TLS state and a few pages of
    /// stack.
    func read(
        into buffer: inout ReadBuffer, insideFrame: Bool, until deadline: ContinuousClock.Instant? = nil
    ) throws -> Read {
        let timeouts = listener.timeouts
        while true {
            buffer.reserve(Self.readSize)
            let started = monotonicNanoseconds()
            QuickClientPolling.stopWorking(&stream.polling)
            if stream.polling.clientAnswersQuickly, !stream.holdsReadAhead, QuickClientPolling.begin() {
                _ = stream.pollUntilReadable(until: started + QuickClientPolling.window)
                QuickClientPolling.end()
            }
            switch try stream.receive(into: buffer.freeSpace) {
            case .bytes(let count):
                buffer.commit(count)
                QuickClientPolling.startWorking(&stream.polling)
                stream.polling.clientAnswersQuickly = QuickClientPolling.isExchange(
                    waited: monotonicNanoseconds() - started, bytes: count, more: stream.holdsReadAhead)
                if stream.holdsReadAhead { takeReadAhead(into: &buffer, after: count) }
                return .bytes
            case .end:
                return .end
            case .quiet:
                stream.polling.clientAnswersQuickly = false
                let timeout = insideFrame || stream.holdsReadAhead ? timeouts.frame : timeouts.idle
                var remaining = timeout.map { $0 - timeouts.receive }
                if let deadline {
                    let left = deadline - ContinuousClock.now
                    remaining = min(remaining ?? left, left)
                }
                if let remaining, remaining <= .zero { return .timedOut }
                if buffer.count == 0 { buffer.release() }
                stream.releaseBuffers()
                MemoryRelease.unusedStack()
                guard stream.waitUntilReadable(atMost: remaining) else { return .timedOut }
            }
        }
    }

    /// Takes the records that arrived back to back with the first, without waiting for any:
    /// a sender that writes fast has its notifications decoded and queued (or its requests
    /// answered) a batch at a time, not a record at a time. A record cut short stays in
    /// OpenSSL for the next read.
    private func takeReadAhead(into buffer: inout ReadBuffer, after first: Int) {
        var taken = first
        stream.withoutWaiting {
            while taken < Self.batchSize {
                buffer.reserve(Self.readSize)
                guard let count = stream.receiveReadAhead(into: buffer.freeSpace) else { return }
                buffer.commit(count)
                taken += count
            }
        }
    }
}
