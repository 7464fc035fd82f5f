import Dispatch
import FakeAPNsTestSupport
import Foundation
import Synchronization
import XCTest

@testable import FakeAPNs

/// The speed-ups of `Sources/FakeAPNs/Tuning` keep what they promise: the arena shares chunks
/// and keeps each value's bytes, a chunk computes once per value, and the heap reserve's
/// mapping-ahead thread gives the room back and ends when the flood is over.
final class TuningTests: XCTestCase {
    func testTheArenaPutsSmallValuesEndToEndInOneChunkAndLargeOnesAlone() throws {
        try XCTSkipUnless(SpeedUp.arena.isOn, "FAKEAPNS_SPEEDUPS_OFF names arena")
        var arena = ByteArena()
        let first = Array("first".utf8), second = Array("second".utf8)
        let large = [UInt8](repeating: 7, count: ByteArena.largestShared + 1)
        let a = first.withUnsafeBytes { arena.copy($0) }
        let b = second.withUnsafeBytes { arena.copy($0) }
        let c = large.withUnsafeBytes { arena.copy($0) }
        XCTAssertTrue(a.chunk === b.chunk, "two small values in two chunks")
        XCTAssertEqual(a.offset, 0)
        XCTAssertEqual(b.offset, first.count)
        XCTAssertFalse(c.chunk === a.chunk, "a large value in the shared chunk")
        XCTAssertEqual(b.chunk.withBytes(at: b.offset, count: second.count) { Array($0) }, second)
        XCTAssertEqual(c.chunk.withBytes(at: c.offset, count: large.count) { Array($0) }, large)
    }

    func testAFullChunkIsFollowedByANewOne() {
        var arena = ByteArena()
        let value = [UInt8](repeating: 1, count: ByteArena.largestShared)
        var chunks: [ObjectIdentifier] = []
        for _ in 0..<(ByteArena.chunkSize / value.count + 1) {
            let copy = value.withUnsafeBytes { arena.copy($0) }
            if chunks.last != ObjectIdentifier(copy.chunk) { chunks.append(ObjectIdentifier(copy.chunk)) }
            XCTAssertLessThanOrEqual(copy.offset + value.count, ByteArena.chunkSize, "a value past its chunk's end")
        }
        XCTAssertGreaterThanOrEqual(chunks.count, 2)
    }

    func testAChunkComputesOnceForEachValueAcrossThreads() {
        // Shared as a payload shares it: written before, only read and computed from here.
        nonisolated(unsafe) let chunk = ByteChunk.make(capacity: 16)
        final class Box: Sendable { let offset: UInt32; init(_ offset: UInt32) { self.offset = offset } }
        let made = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 64) { index in
            let offset = UInt32(index % 2)
            let box = chunk.computed(at: offset) {
                made.withLock { $0 += 1 }
                return Box(offset)
            }
            XCTAssertEqual(box.offset, offset)
        }
        XCTAssertEqual(made.withLock { $0 }, 2, "computed more than once per offset")
        XCTAssertTrue(chunk.hasComputed(at: 1))
        XCTAssertFalse(chunk.hasComputed(at: 2))
    }

    func testTheReserveIsGivenBackAndTheMappingThreadEndsWhenQuiet() throws {
        try XCTSkipUnless(SpeedUp.reserve.isOn, "FAKEAPNS_SPEEDUPS_OFF names reserve")
        let ended = Mutex<(held: Bool, released: Bool)?>(nil)
        let thread = try OSThread(name: "reserve-test") {
            // The first reserve may be a block glibc maps on its own; the second is the arena's.
            HeapReserve.reserve()
            HeapReserve.reserve()
            let held = HeapReserve.threadHoldsReserve
            HeapReserve.release()
            ended.withLock { $0 = (held, !HeapReserve.threadHoldsReserve) }
        }
        thread.join()
        let result = try XCTUnwrap(ended.withLock { $0 })
        XCTAssertTrue(result.held, "no room held after two reserves")
        XCTAssertTrue(result.released, "the room was not given back")
        XCTAssertTrue(eventually(timeout: .seconds(5)) { !HeapReserve.isMappingAhead }, "the mapping-ahead thread still runs")
    }
}
