import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: Mailbox.append and wakeUpCount.
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
        let producer = try OSThread(name: "producer") { box.append(7) }
        XCTAssertEqual(try box.pop(timeout: .seconds(5)), 7)
        producer.join()
    }

    func testPopCountWaitsForTheWholeCount() throws {
        let box = mailbox()
        let producer = try OSThread(name: "producer") {
            for value in 1...5 { box.append(value) }
        }
        XCTAssertEqual(try box.pop(count: 5, timeout: .seconds(5)), [1, 2, 3, 4, 5])
        producer.join()
    }

    func testAPopOfManySleepsThroughArrivalsThatDoNotMakeItsCount() throws {
        let box = mailbox()
        let popped = inBackground { try box.pop(count: 100, timeout: .seconds(10)) }
        XCTAssertTrue(eventually { box.waitingCount == 1 })
        for value in 1...99 { box.append(value) }
        XCTAssertEqual(box.wakeUpCount, 0, "a pop of 100 was woken before 100 had arrived")
        box.append(100)
        XCTAssertEqual(try popped.pop(timeout: .seconds(10)).get(), Array(1...100))
        XCTAssertEqual(box.wakeUpCount, 1)
    }

    func testSlicesPoppedFromALongQueueKeepOrderWhateverTheyLeave() throws {
        let box = mailbox()
        box.append(contentsOf: Array(1...10))
        XCTAssertEqual(try box.pop(timeout: .zero), 1)
        // More leave than stay, with a popped item before them: 2...7 leave, 8...10 stay.
        XCTAssertEqual(try box.pop(count: 6, timeout: .zero), Array(2...7))
        box.append(contentsOf: Array(11...20))
        // Fewer leave than stay.
        XCTAssertEqual(try box.pop(count: 3, timeout: .zero), [8, 9, 10])
        XCTAssertEqual(try box.pop(count: 10, timeout: .zero), Array(11...20))
        XCTAssertTrue(box.isEmpty)
        box.append(contentsOf: [21, 22])
        XCTAssertEqual(box.snapshot(), [21, 22])
        XCTAssertEqual(box.totalArrived, 22)
    }

    func testAPopOfAnyItemIsWokenByEachArrival() throws {
        let box = mailbox()
        let popped = inBackground { try box.pop(timeout: .seconds(10)) }
        XCTAssertTrue(eventually { box.waitingCount == 1 })
        box.append(1)
        XCTAssertEqual(try popped.pop(timeout: .seconds(10)).get(), 1)
        XCTAssertEqual(box.wakeUpCount, 1)
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
        XCTAssertThrowsError(try box.pop(timeout: .milliseconds(20), awaiting: "an even number") { $0 % 2 == 0 }) { error in
            let timeout = error as? MailboxTimeout
            XCTAssertEqual(timeout?.queuedCount, 2)
            let text = "\(error)"
            XCTAssertTrue(text.contains("waiting for an even number; "), text)
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
        async let popped = box.next(timeout: .seconds(5))
        XCTAssertTrue(eventually { box.waitingCount == 1 })
        box.append(9)
        let value = try await popped
        XCTAssertEqual(value, 9)
    }

    func testAsyncPopTimesOutWithTheSameMessage() async {
        let box = mailbox()
        do {
            _ = try await box.next(count: 2, timeout: .milliseconds(20))
            XCTFail("expected a timeout")
        } catch {
            XCTAssertTrue("\(error)".contains("waiting for 2 numbers"), "\(error)")
        }
    }

    func testSeveralAsyncWaitersAreEachServed() async throws {
        let box = mailbox()
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<10 {
                group.addTask { try await box.next(timeout: .seconds(5)) }
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
        let task = Task { try await box.next(timeout: .seconds(30)) }
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

    func testEveryBlockingPopWorksFromSynchronousCode() throws {
        let box = mailbox()
        box.append(contentsOf: [1, 2, 3, 4, 5])
        XCTAssertEqual(try box.pop(), 1)
        XCTAssertEqual(try box.pop(count: 2), [2, 3])
        XCTAssertEqual(try box.pop(awaiting: "an even number") { $0 % 2 == 0 }, 4)
        XCTAssertEqual(try box.popAll(), [5])
    }

    func testNextAllTakesEverythingQueuedAndWaitsForTheNextBatch() async throws {
        let box = mailbox()
        box.append(contentsOf: [1, 2])
        let first = try await box.nextAll(timeout: .zero)
        XCTAssertEqual(first, [1, 2])
        async let second = box.nextAll(timeout: .seconds(5))
        XCTAssertTrue(eventually { box.waitingCount == 1 })
        box.append(contentsOf: [3, 4, 5])
        let batch = try await second
        XCTAssertEqual(batch, [3, 4, 5])
        do {
            _ = try await box.nextAll(timeout: .milliseconds(10))
            XCTFail("expected a timeout")
        } catch {
            XCTAssertTrue("\(error)".contains("waiting for any number; the queue is empty"), "\(error)")
        }
    }

    func testNextWhereTimesOutSayingWhatWasAwaited() async {
        let box = mailbox()
        box.append(contentsOf: [1, 3])
        do {
            _ = try await box.next(timeout: .milliseconds(20), awaiting: "an even number") { $0 % 2 == 0 }
            XCTFail("expected a timeout")
        } catch {
            XCTAssertTrue("\(error)".contains("waiting for an even number; the queue holds 2: 1; 3"), "\(error)")
        }
        do {
            _ = try await box.next(timeout: .milliseconds(10)) { $0 > 5 }
            XCTFail("expected a timeout")
        } catch {
            XCTAssertTrue("\(error)".contains("waiting for a number matching the predicate"), "\(error)")
        }
    }

    func testNoTimerOutlivesAnAsyncPop() async throws {
        let box = mailbox()
        async let answered = box.next(timeout: .seconds(60))
        XCTAssertTrue(eventually { box.liveTimerCount == 1 })
        box.append(1)
        let value = try await answered
        XCTAssertEqual(value, 1)
        XCTAssertEqual(box.liveTimerCount, 0, "answered: its timer is cancelled")

        let cancelled = Task { try await box.next(timeout: .seconds(60)) }
        XCTAssertTrue(eventually { box.liveTimerCount == 1 })
        cancelled.cancel()
        _ = try? await cancelled.value
        XCTAssertEqual(box.liveTimerCount, 0, "cancelled: its timer is cancelled")

        _ = try? await box.next(timeout: .milliseconds(10))
        XCTAssertEqual(box.liveTimerCount, 0, "timed out: its timer is gone")

        box.append(2)
        let immediate = try await box.next(timeout: .seconds(60))
        XCTAssertEqual(immediate, 2)
        XCTAssertEqual(box.liveTimerCount, 0, "answered at once: no timer at all")
    }
}
