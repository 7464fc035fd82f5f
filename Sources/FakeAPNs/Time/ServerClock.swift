#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The server's clock: real time until a test moves it, then the test's own. It is the one
/// "now" the server reads: the time a notification or refusal was received, token ages and the
/// token refresh rule, unregistration and feedback times, 410 timestamps, channels and
/// broadcasts, the device model (expiry, the 30-day storage limit, budgets per hour, Live
/// Activity dates) and the delivery log. Only the transports' timeouts (handshake, frame, idle)
/// run on the monotonic clock. Nothing waits on wall time: a test of a 30-day expiry advances
/// the clock and reads the result at once.
///
/// ```swift
/// server.clock.advance(by: .seconds(31 * 24 * 3600))   // now a manual clock, 31 days on
/// XCTAssertEqual(server.device(token).log.last?.status, .discardedExpired)
/// ```
///
/// The clock stays within ``UnixTime/range`` (1970 to the end of year 9999): a move past either
/// end stops there, and no date or `Duration` a test passes can trap.
public final class ServerClock: @unchecked Sendable {
    private let base: @Sendable () -> Date
    private let lock = ConditionLock()
    private var manual: Date?
    private var observers: [@Sendable (Date) -> Void] = []

    /// A clock that reads `base` (the real time by default; the server's is
    /// ``FakeAPNsServer/Configuration/clock``) until a test moves it.
    public init(reading base: @escaping @Sendable () -> Date = { Date() }) {
        self.base = base
    }

    /// The time now: the manual time once a test has set or advanced the clock.
    public var currentDate: Date { lock.withLock { manual } ?? base() }

    /// The real time, whatever a test did to the clock: what a provider token is first judged
    /// against, since its signer signed it on real time.
    package var realDate: Date { base() }

    /// Whether a test has taken the clock over (``advance(by:)`` or ``set(to:)``).
    public var isManual: Bool { lock.withLock { manual != nil } }

    /// Moves the clock forward by `interval` (from the real time now, the first time), and
    /// plays everything that falls due on the way, in order, before returning. A negative
    /// interval moves nothing; the clock saturates at the last second of year 9999
    /// (``UnixTime/clamped(_:adding:)``), so `advance(by: .seconds(Int64.max))` reads
    /// 9999-12-31T23:59:59Z and does not trap.
    public func advance(by interval: Duration) {
        let seconds = interval.timeInterval
        move { UnixTime.clamped($0, adding: seconds) }
    }

    /// Sets the clock to `date`, forward or back, and plays what falls due. A date past year
    /// 9999 (`.distantFuture` is year 4001, inside) or before 1970 is held to the nearest end of
    /// ``UnixTime/range``, a NaN to 1970 (``UnixTime/clamped(_:)``); nothing traps.
    ///
    /// Set back, the clock undoes nothing: what was played stays played, and a date the server
    /// stamped before stays as it was. Ages measured on the clock never go below 0: a provider
    /// token seen at a later time than the clock now reads is as old as it was when first
    /// seen, and a token first seen after the move is not a too-early refresh of one seen
    /// before it.
    public func set(to date: Date) {
        let date = UnixTime.clamped(date)
        move { _ in date }
    }

    /// Gives the clock back to real time.
    public func returnToRealTime() {
        move(manual: false) { _ in base() }
    }

    private func move(manual keep: Bool = true, _ next: (Date) -> Date) {
        let (date, observers) = lock.withLock {
            let date = next(manual ?? base())
            manual = keep ? date : nil
            return (date, self.observers)
        }
        for observer in observers { observer(date) }
    }

    /// Calls `observer` after each move, with the new time, outside the clock's lock.
    package func observe(_ observer: @escaping @Sendable (Date) -> Void) {
        lock.withLock { observers.append(observer) }
    }
}
