import FakeAPNsTestSupport
import Foundation
import XCTest
@testable import FakeAPNs

/// The queue on its own: blocking and async pops, counts, predicates, timeouts.
final class MailboxTests: XCTestCase {
    private func mailbox() -> Mailbox<Int> {
        Mailbox(noun: "number")
    }

    func testPopReturnsItemsInOrderOfArrival() throws {
        let box = mailbox()
        box.append(contentsOf: [1, 2, 3])
        XCTAssertEqual(try box.pop(timeout: .zero), 1)
        XCTAssertEqual(try box.pop(count: 2, timeout: .zero), [2, 3])
        XCTAssertTrue(box.isEmpty)
        XCTAssertEqual(box.totalArrived, 3)
    }

    func testBlockingPopWakesWhenAnItemArrivesFromAnotherThread() throws {
        let box = mailbox()
        let producer = Thread { box.append(7) }
        producer.start()
        XCTAssertEqual(try box.pop(timeout: .seconds(5)), 7)
    }

    func testPopCountWaitsForTheWholeCount() throws {
        let box = mailbox()
        let producer = Thread {
            for value in 1...5 { box.append(value) }
        }
        producer.start()
        XCTAssertEqual(try box.pop(count: 5, timeout: .seconds(5)), [1, 2, 3, 4, 5])
    }

    func testPopMatchingTakesTheFirstMatchAndLeavesTheRest() throws {
        let box = mailbox()
        box.append(contentsOf: [1, 2, 3, 4])
        XCTAssertEqual(try box.pop(timeout: .zero) { $0 % 2 == 0 }, 2)
        XCTAssertEqual(box.snapshot(), [1, 3, 4])
    }

    func testTimeoutSaysWhatWasAwaitedAndWhatArrived() {
        let box = mailbox()
        box.append(contentsOf: [1, 3])
        XCTAssertThrowsError(try box.pop(timeout: .milliseconds(20), matching: "an even number") { $0 % 2 == 0 }) { error in
            let timeout = error as? MailboxTimeout
            XCTAssertEqual(timeout?.queuedCount, 2)
            let text = "\(error)"
            XCTAssertTrue(text.contains("waiting for a number matching an even number"), text)
            XCTAssertTrue(text.contains("the queue holds 2: 1; 3"), text)
            XCTAssertTrue(text.contains("2 numbers arrived in all"), text)
        }
        XCTAssertEqual(box.count, 2, "a failed pop removes nothing")
    }

    func testTimeoutOnAnEmptyQueueSaysSo() {
        XCTAssertThrowsError(try mailbox().pop(count: 3, timeout: .milliseconds(10))) { error in
            XCTAssertTrue("\(error)".contains("waiting for 3 numbers; the queue is empty"), "\(error)")
        }
    }

    func testAsyncPopResumesWhenAnItemArrives() async throws {
        let box = mailbox()
        async let popped = box.pop(timeout: .seconds(5))
        XCTAssertTrue(eventually { box.waitingCount == 1 })
        box.append(9)
        let value = try await popped
        XCTAssertEqual(value, 9)
    }

    func testAsyncPopTimesOutWithTheSameMessage() async {
        let box = mailbox()
        do {
            _ = try await box.pop(count: 2, timeout: .milliseconds(20))
            XCTFail("expected a timeout")
        } catch {
            XCTAssertTrue("\(error)".contains("waiting for 2 numbers"), "\(error)")
        }
    }

    func testSeveralAsyncWaitersAreEachServed() async throws {
        let box = mailbox()
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<10 {
                group.addTask { try await box.pop(timeout: .seconds(5)) }
            }
            XCTAssertTrue(eventually { box.waitingCount == 10 })
            box.append(contentsOf: Array(1...10))
            var popped: [Int] = []
            for try await value in group { popped.append(value) }
            XCTAssertEqual(popped.sorted(), Array(1...10))
        }
        XCTAssertTrue(box.isEmpty)
    }

    func testCancellingAnAsyncPopEndsItWithCancellationError() async {
        let box = mailbox()
        let task = Task { try await box.pop(timeout: .seconds(30)) }
        XCTAssertTrue(eventually { box.waitingCount == 1 })
        task.cancel()
        do {
            _ = try await task.value
            XCTFail("expected cancellation")
        } catch {
            XCTAssertTrue(error is CancellationError, "\(error)")
        }
        box.append(1)
        XCTAssertEqual(box.count, 1, "a cancelled waiter takes nothing")
    }

    func testPopAllTakesEverythingQueued() throws {
        let box = mailbox()
        box.append(contentsOf: [1, 2])
        XCTAssertEqual(try box.popAll(timeout: .zero), [1, 2])
        XCTAssertThrowsError(try box.popAll(timeout: .milliseconds(5)))
    }

    func testRemoveAllEmptiesTheQueue() {
        let box = mailbox()
        box.append(contentsOf: [1, 2])
        XCTAssertEqual(box.removeAll(), [1, 2])
        XCTAssertTrue(box.isEmpty)
        XCTAssertEqual(box.totalArrived, 2)
    }

    func testConcurrentProducersAndConsumersLoseNothing() throws {
        let box = mailbox()
        let producers = 4
        let each = 5_000
        DispatchQueue.concurrentPerform(iterations: producers + 2) { index in
            if index < producers {
                for value in 0..<each { box.append(index * each + value) }
            }
        }
        let all = try box.pop(count: producers * each, timeout: .seconds(5))
        XCTAssertEqual(Set(all).count, producers * each)
    }
}
