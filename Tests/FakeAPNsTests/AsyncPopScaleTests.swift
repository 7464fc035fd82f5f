import FakeAPNsTestSupport
import Foundation
import XCTest
@testable import FakeAPNs

/// Async pops at scale: a suspended `next` holds no thread, and its timeout is an entry of the
/// process's one deadline heap, not a timer of its own.
final class AsyncPopScaleTests: XCTestCase {
    private static let waiters = 10_000

    func testTenThousandPendingNextCallsCostNoThreadEachAndEachGetsExactlyOne() async throws {
        let box = Mailbox<Int>(noun: "number")
        let threadsBefore = try threadCount()
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<Self.waiters {
                group.addTask { try await box.next(timeout: .seconds(30)) }
            }
            XCTAssertTrue(eventually(timeout: .seconds(60)) { box.waitingCount == Self.waiters }, "\(box.waitingCount) waiting")
            let threadsWaiting = try threadCount()
            XCTAssertLessThan(
                threadsWaiting - threadsBefore, 10,
                "threads before: \(threadsBefore), with \(Self.waiters) pops waiting: \(threadsWaiting)")
            // A pop is counted waiting just before its timeout entry is added: wait for both.
            XCTAssertTrue(
                eventually(timeout: .seconds(60)) { box.liveTimerCount == Self.waiters },
                "one timeout entry per waiting pop: \(box.liveTimerCount)")

            box.append(contentsOf: Array(0..<Self.waiters))
            var received: [Int] = []
            for try await item in group { received.append(item) }
            XCTAssertEqual(received.count, Self.waiters)
            XCTAssertEqual(Set(received), Set(0..<Self.waiters), "each task got exactly one, and none twice")
        }
        XCTAssertTrue(box.isEmpty)
        XCTAssertEqual(box.waitingCount, 0)
        XCTAssertEqual(box.liveTimerCount, 0, "every timeout was cancelled with its answer")
    }

    func testTenThousandShortTimeoutsAllExpire() async throws {
        let box = Mailbox<Int>(noun: "number")
        let started = ContinuousClock.now
        let timedOut = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<Self.waiters {
                group.addTask {
                    do {
                        _ = try await box.next(timeout: .milliseconds(50))
                        return false
                    } catch {
                        return error is MailboxTimeout
                    }
                }
            }
            var timedOut = 0
            for await expired in group where expired { timedOut += 1 }
            return timedOut
        }
        XCTAssertEqual(timedOut, Self.waiters, "every pop threw a MailboxTimeout")
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(30))
        XCTAssertEqual(box.waitingCount, 0)
        XCTAssertEqual(box.liveTimerCount, 0)
    }

    func testACancelledNextEndsAtOnceWithCancellationErrorAndTakesNothing() async throws {
        let box = Mailbox<Int>(noun: "number")
        let waiter = Task { try await box.next(timeout: .seconds(60)) }
        XCTAssertTrue(eventually { box.waitingCount == 1 })
        let cancelledAt = ContinuousClock.now
        waiter.cancel()
        let result = await waiter.result
        XCTAssertLessThan(ContinuousClock.now - cancelledAt, .seconds(5), "resumed by the cancellation, not the timeout")
        XCTAssertThrowsError(try result.get()) { XCTAssertTrue($0 is CancellationError, "\($0)") }
        box.append(1)
        XCTAssertEqual(box.count, 1, "a cancelled pop takes nothing")
        XCTAssertEqual(box.liveTimerCount, 0)
    }

    func testANextWhoseTaskIsCancelledBeforeItStartsTakesNothing() async throws {
        let box = Mailbox<Int>(noun: "number")
        box.append(1)
        let started = Locked(false)
        let task = Task {
            while !Task.isCancelled { await Task.yield() }
            started.withLock { $0 = true }
            return try await box.next(timeout: .seconds(60))
        }
        task.cancel()
        let result = await task.result
        XCTAssertTrue(started.withLock { $0 })
        XCTAssertThrowsError(try result.get()) { XCTAssertTrue($0 is CancellationError, "\($0)") }
        XCTAssertEqual(box.count, 1, "the queued item stays")
        XCTAssertEqual(box.unqueuedWaiterCount, 0)
    }

    func testCancellingTasksWhoseNextWasAnsweredLeavesNothingBehind() async throws {
        let box = Mailbox<Int>(noun: "number")
        box.append(contentsOf: Array(0..<100))
        let tasks = (0..<100).map { _ in Task { try await box.next(timeout: .seconds(60)) } }
        var received: [Int] = []
        for task in tasks {
            received.append(try await task.value)
            task.cancel()
        }
        XCTAssertEqual(received.sorted(), Array(0..<100))
        XCTAssertEqual(box.unqueuedWaiterCount, 0)
        XCTAssertEqual(box.waitingCount, 0)
    }

    func testAnEnormousTimeoutWaitsLikeAnyOther() async throws {
        let box = Mailbox<Int>(noun: "number")
        let waiter = Task { try await box.next(timeout: .seconds(Int64.max)) }
        XCTAssertTrue(eventually { box.waitingCount == 1 })
        box.append(5)
        let value = try await waiter.value
        XCTAssertEqual(value, 5)
        XCTAssertEqual(box.liveTimerCount, 0)
    }

    func testTheDeadlineTimerRunsActionsInDeadlineOrderAndSkipsCancelledOnes() {
        let ran = Mailbox<Int>(noun: "action")
        let timer = DeadlineTimer.shared
        timer.schedule(after: .milliseconds(300)) { ran.append(3) }
        let cancelled = timer.schedule(after: .milliseconds(100)) { ran.append(0) }
        timer.schedule(after: .milliseconds(200)) { ran.append(2) }
        timer.schedule(after: .milliseconds(50)) { ran.append(1) }
        XCTAssertTrue(timer.cancel(cancelled), "not run yet: cancelled")
        XCTAssertFalse(timer.cancel(cancelled), "cancelled once already")
        XCTAssertEqual(try ran.pop(count: 3, timeout: .seconds(10)), [1, 2, 3])
        XCTAssertEqual(try? ran.pop(timeout: .milliseconds(200)), nil, "the cancelled action never ran")
    }

    /// The process's thread count, as /proc/self/status says it.
    private func threadCount() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try XCTUnwrap(status.split(separator: "\n").first { $0.hasPrefix("Threads:") })
        return try XCTUnwrap(Int(line.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces)))
    }
}
