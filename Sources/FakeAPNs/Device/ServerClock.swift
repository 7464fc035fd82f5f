#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The clock the device model reads: real time until a test moves it, then the test's own.
/// Every rule of the model (expiry, the 30-day storage limit, budgets per hour, Live Activity
/// dates) is judged by it, and nothing in the model waits on wall time: a test of a 30-day
/// expiry advances the clock and reads the result at once.
///
/// ```swift
/// server.clock.advance(by: .seconds(31 * 24 * 3600))   // now a manual clock, 31 days on
/// XCTAssertEqual(server.device(token).log.last?.status, .discardedExpired)
/// ```
public final class ServerClock: @unchecked Sendable {
    private let base: @Sendable () -> Date
    private let lock = ConditionLock()
    private var manual: Date?
    private var observers: [@Sendable (Date) -> Void] = []

    /// A clock that reads `base` (the real time by default) until a test moves it.
    public init(reading base: @escaping @Sendable () -> Date = { Date() }) {
        self.base = base
    }

    /// The time now: the manual time once a test has set or advanced the clock.
    public var currentDate: Date { lock.withLock { manual } ?? base() }

    /// Whether a test has taken the clock over (``advance(by:)`` or ``set(to:)``).
    public var isManual: Bool { lock.withLock { manual != nil } }

    /// Moves the clock forward by `interval` (from the real time now, the first time), and
    /// plays everything that falls due on the way, in order, before returning.
    public func advance(by interval: Duration) {
        let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
        move { $0.addingTimeInterval(max(0, seconds)) }
    }

    /// Sets the clock to `date`, forward or back, and plays what falls due.
    public func set(to date: Date) {
        move { _ in date }
    }

    /// Gives the clock back to real time.
    public func returnToRealTime() {
        move(manual: false) { _ in base() }
    }

    private func move(manual keep: Bool = true, _ next: (Date) -> Date) {
        var date = Date()
        var observers: [@Sendable (Date) -> Void] = []
        lock.withLock {
            date = next(manual ?? base())
            manual = keep ? date : nil
            observers = self.observers
        }
        for observer in observers { observer(date) }
    }

    /// Calls `observer` after each move, with the new time, outside the clock's lock.
    package func observe(_ observer: @escaping @Sendable (Date) -> Void) {
        lock.withLock { observers.append(observer) }
    }
}
