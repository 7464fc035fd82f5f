#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The feedback service's pending tuples. Each connection to the feedback listener takes all
/// of them, so each tuple is delivered once, as Apple's service did.
///
/// ```swift
/// server.feedback.add(token, at: Date(timeIntervalSince1970: 1_700_000_000))
/// ```
public final class FeedbackService: Sendable {
    private let pending = Mailbox<FeedbackTuple>(noun: "feedback tuple")
    private let clock: ServerClock

    /// A feedback service whose tuples are dated by `clock` unless given a date.
    init(clock: ServerClock = ServerClock()) {
        self.clock = clock
    }

    /// Adds a tuple for the next feedback connection, dated `date` (nil: now, by the server's
    /// clock, ``FakeAPNsServer/clock``).
    public func add(_ deviceToken: DeviceToken, at date: Date? = nil) {
        pending.append(FeedbackTuple(date: date ?? clock.currentDate, deviceToken: deviceToken))
    }

    /// Adds a tuple for the next feedback connection.
    public func add(_ tuple: FeedbackTuple) {
        pending.append(tuple)
    }

    /// The tuples waiting for the next feedback connection, without taking them.
    public var pendingTuples: [FeedbackTuple] { pending.snapshot() }

    /// Takes every pending tuple, as a feedback connection does.
    @discardableResult
    public func takePending() -> [FeedbackTuple] { pending.removeAll() }

    /// How many feedback tuples were ever added.
    public var totalAdded: Int { pending.totalArrived }
}
