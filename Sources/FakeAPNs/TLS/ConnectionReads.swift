internal import CPOSIXShims
import Synchronization

/// Polling before sleeping, for clients that answer quickly. A client that sends, waits for the
/// answer (or for the test to pop what it sent) and sends again finds the connection's thread
/// asleep each time, and waking a thread on an idle CPU costs more than the whole exchange on
/// some machines: a virtual machine's halted vCPU takes about 7 µs to wake, twice an exchange.
/// So a connection whose client's last turn was short and small
/// (``isExchange(waited:bytes:more:)``) polls its socket, without sleeping, for up to ``window``
/// before it blocks. One connection of the process polls at a time, none while another
/// connection is working, and none in a process that may use a single CPU, where polling would
/// only hold the CPU the client needs; a client that paused longer than ``quickWait`` is not
/// polled for again until it answers quickly once more. The most a connection spends polling
/// is one window per wait.
enum QuickClientPolling {
    /// How long a connection polls before it sleeps (nanoseconds): about two wake-ups.
    static let window: UInt64 = 30_000
    /// The longest wait (nanoseconds) after which the client still counts as quick.
    static let quickWait: UInt64 = 1_000_000

    private static let mayPoll = SpeedUp.polling.isOn && fakeapns_usable_cpu_count() > 1
    private static let polling = Atomic<Bool>(false)
    /// Connections of the process between a read that brought bytes and their next wait.
    private static let working = Atomic<Int>(0)

    /// Takes the one polling place of the process; false when it is taken, when another
    /// connection is working (the CPUs have better to do), or when polling is off.
    static func begin() -> Bool {
        mayPoll && working.load(ordering: .relaxed) == 0
            && polling.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
    }

    static func startWorking(_ stream: TLSStream) {
        if !stream.countedWorking {
            stream.countedWorking = true
            working.add(1, ordering: .relaxed)
        }
    }

    static func stopWorking(_ stream: TLSStream) {
        if stream.countedWorking {
            stream.countedWorking = false
            working.subtract(1, ordering: .relaxed)
        }
    }

    /// Whether a read of `bytes` after a wait of `waited` nanoseconds, with `more` bytes
    /// already behind them, looks like one turn of a client that sends a little and waits for
    /// the answer: worth polling for next time. A client streaming requests or notifications
    /// sends more at once, and its connection has enough to do without polling.
    static func isExchange(waited: UInt64, bytes: Int, more: Bool) -> Bool {
        waited < quickWait && bytes <= exchangeBytes && !more
    }

    /// The most bytes one turn of a request-and-answer client brings.
    static let exchangeBytes = 4 * 1024

    /// Gives the polling place back.
    static func end() {
        polling.store(false, ordering: .releasing)
    }

    /// How many connections count as working now.
    static var workingCount: Int { working.load(ordering: .relaxed) }

    /// Whether this process polls at all (it may use more than one CPU).
    static var isOn: Bool { mayPoll }
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
    /// The most one ``read(into:insideFrame:)`` takes: what OpenSSL's read-ahead holds, about
    /// four records.
    private static let batchSize = 64 * 1024

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
            let started = monotonicNanoseconds()
            QuickClientPolling.stopWorking(stream)
            if stream.clientAnswersQuickly, !stream.holdsReadAhead, QuickClientPolling.begin() {
                _ = stream.pollUntilReadable(until: started + QuickClientPolling.window)
                QuickClientPolling.end()
            }
            switch try stream.receive(into: buffer.freeSpace) {
            case .bytes(let count):
                buffer.commit(count)
                QuickClientPolling.startWorking(stream)
                stream.clientAnswersQuickly = QuickClientPolling.isExchange(
                    waited: monotonicNanoseconds() - started, bytes: count, more: stream.holdsReadAhead)
                if stream.holdsReadAhead { takeReadAhead(into: &buffer, after: count) }
                return .bytes
            case .end:
                return .end
            case .quiet:
                stream.clientAnswersQuickly = false
                let timeout = insideFrame || stream.holdsReadAhead ? timeouts.frame : timeouts.idle
                let remaining = timeout.map { $0 - timeouts.receive }
                if let remaining, remaining <= .zero { return .timedOut }
                if buffer.count == 0 { buffer.release() }
                stream.releaseBuffers()
                if SpeedUp.stack.isOn { OSThread.releaseUnusedStack() }
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
