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
///
/// Serves the `send-to-pop latency` rows of `Scripts/bench.sh` (two cores). Measured
/// 2026-12-03, medians of 4 runs of 10,000 round trips: binary 47.4 µs on, 81.5 µs off (57% and
/// 101% of the TLS ping-pong, 42% less); HTTP/2 119% and 132% of the ping-pong (10% less). On
/// one core it is off by design. Switch: `polling` (off: a connection sleeps at once).
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

    /// One connection's part in the polling, owned by its thread.
    struct State {
        /// Whether the client's last wait was short enough that the next one is worth polling
        /// for (``isExchange(waited:bytes:more:)``).
        var clientAnswersQuickly = true
        /// Whether the connection counts as working.
        fileprivate(set) var countedWorking = false
    }

    /// Counts the connection as working (once however often it is called) until
    /// ``stopWorking(_:)``.
    static func startWorking(_ state: inout State) {
        if !state.countedWorking {
            state.countedWorking = true
            working.add(1, ordering: .relaxed)
        }
    }

    /// Counts the connection as working no longer: at its wait, or closed.
    static func stopWorking(_ state: inout State) {
        if state.countedWorking {
            state.countedWorking = false
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
