import FakeAPNs

#if canImport(Glibc)
import Glibc
#endif

/// The bound on a stop: a stop still running after ``limit`` (each step of it bounded far below,
/// so only a stop stuck somewhere gets there) ends the process with status 70 (EX_SOFTWARE),
/// standard error naming the step it was stuck in. The clients still connected see their
/// connections close, and whoever waits for the process sees it end, instead of waiting for ever.
///
/// ```swift
/// let watchdog = try StopWatchdog()
/// watchdog.begin("stopping the APNs listeners")
/// server.stop()
/// watchdog.finished()
/// ```
final class StopWatchdog: @unchecked Sendable {
    /// How long the stop of the listeners and the control API may take: the listeners' grace (a
    /// second) and the control API's drain (a second), with room for a machine loaded many times
    /// over (a sanitizer, tests beside). The log is written after, outside the bound: it takes
    /// as long as its destination takes bytes, and gives up one that takes none for a second.
    static let limit: Duration = .seconds(30)

    /// The exit status of a stop that did not finish (EX_SOFTWARE).
    static let stuckStatus: Int32 = 70

    private let lock = ConditionLock()
    // Protected by `lock`:
    private var step = "starting the stop"
    private var done = false

    /// Starts watching the stop that begins now; `stuck` is told the step of a stop still
    /// running after `limit` (by default it says so on standard error and ends the process).
    init(
        limit: Duration = StopWatchdog.limit,
        stuck: @escaping @Sendable (_ step: String) -> Void = {
            StopWatchdog.exitStuck(in: $0, after: StopWatchdog.limit)
        }
    ) throws {
        let deadline = Deadline.after(limit)
        try OSThread(name: "stop-watchdog") { [self] in
            let stuckIn: String? = lock.withLock {
                while !done && lock.wait(until: deadline) {}
                return done ? nil : step
            }
            if let stuckIn { stuck(stuckIn) }
        }.detach()
    }

    /// Says on standard error where the stop was stuck and ends the process with ``stuckStatus``.
    static func exitStuck(in step: String, after limit: Duration) -> Never {
        FakeAPNsCommand.printError("the stop did not finish within \(limit): stuck \(step); exiting")
        _exit(stuckStatus)
    }

    /// The step the stop is at now, named for the message.
    func begin(_ step: String) {
        lock.withLock { self.step = step }
    }

    /// The stop finished: the process exits as it should.
    func finished() {
        lock.withLock {
            done = true
            lock.broadcast()
        }
    }
}
