import FakeAPNsTestSupport
import Foundation
import XCTest
@testable import FakeAPNs

/// What the control API's long polls rely on: a mailbox takes back what a consumer could not
/// pass on, in front and in order, and a history's long poll waits without a thread.
final class PutBackAndAsyncListTests: XCTestCase {
    private struct Numbered: Sequenced, Equatable {
        let sequenceNumber: UInt64
    }

    func testItemsPutBackComeFirstInTheirOrder() throws {
        let box = Mailbox<Int>(noun: "number")
        box.append(contentsOf: [1, 2, 3, 4])
        let taken = try box.pop(count: 2, timeout: .zero)
        box.putBack(taken)
        XCTAssertEqual(box.snapshot(), [1, 2, 3, 4])
        XCTAssertEqual(box.totalArrived, 4, "a put-back item is not a new arrival")
        XCTAssertEqual(try box.pop(timeout: .zero), 1)
    }

    func testAnItemPutBackGoesToAPopThatWaits() async throws {
        let box = Mailbox<Int>(noun: "number")
        let waiter = Task { try await box.next(timeout: .seconds(10)) }
        let waiting = await eventuallyAsync { box.waitingCount == 1 }
        XCTAssertTrue(waiting)
        box.putBack([7])
        let value = try await waiter.value
        XCTAssertEqual(value, 7)
        XCTAssertTrue(box.isEmpty)
    }

    func testAnAsyncLongPollAnswersWhenSomethingArrivesAndIsEmptyWhenTheTimeIsUp() async throws {
        let history = History<Numbered>(capacity: nil)
        history.append(contentsOf: [Numbered(sequenceNumber: 1)])
        let poll = Task {
            try await history.list(since: 1, limit: nil, waitingUntil: .now + .seconds(10)) { _ in true }
        }
        history.append(contentsOf: [Numbered(sequenceNumber: 2), Numbered(sequenceNumber: 3)])
        let found = try await poll.value
        XCTAssertEqual(found.map(\.sequenceNumber), [2, 3])

        let started = ContinuousClock.now
        let none = try await history.list(since: 3, limit: nil, waitingUntil: .now + .milliseconds(200)) { _ in true }
        XCTAssertEqual(none, [])
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - started, .milliseconds(200))
    }

    func testCancellingAnAsyncLongPollEndsItAtOnce() async throws {
        let history = History<Numbered>(capacity: nil)
        let poll = Task {
            try await history.list(since: 0, limit: nil, waitingUntil: .now + .seconds(30)) { _ in true }
        }
        poll.cancel()
        let started = ContinuousClock.now
        do {
            _ = try await poll.value
            XCTFail("a cancelled long poll returned")
        } catch is CancellationError {}
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(5))
    }

    private func eventuallyAsync(_ condition: @escaping @Sendable () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return condition()
    }
}
