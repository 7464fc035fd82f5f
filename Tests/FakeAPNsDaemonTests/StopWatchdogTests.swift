import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: Mailbox.init, to collect what the watchdog reports.
@testable import FakeAPNs
// Reads internals on purpose: StopWatchdog.
@testable import FakeAPNsDaemon

/// The bound on the daemon's stop: a stop still running after the limit is reported with the
/// step it was at (the daemon then exits 70 saying so); one that finished in time never is.
final class StopWatchdogTests: XCTestCase {
    func testAStopStillRunningAfterTheLimitIsReportedWithItsStep() throws {
        let reports = Mailbox<String>(noun: "stuck step")
        let watchdog = try StopWatchdog(limit: .milliseconds(50)) { reports.append($0) }
        watchdog.begin("joining the control API's threads")
        XCTAssertEqual(try reports.pop(timeout: .seconds(10)), "joining the control API's threads")
    }

    func testAStopThatFinishedInTimeIsNeverReported() throws {
        let reports = Mailbox<String>(noun: "stuck step")
        let watchdog = try StopWatchdog(limit: .milliseconds(200)) { reports.append($0) }
        watchdog.begin("stopping the APNs listeners")
        watchdog.finished()
        // Well past the limit, nothing came.
        XCTAssertThrowsError(try reports.pop(timeout: .seconds(1)))
    }
}
