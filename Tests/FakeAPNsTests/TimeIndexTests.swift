import FakeAPNsTestSupport
import Foundation
import XCTest

@testable import FakeAPNs

/// The device model's index of time against a plain dictionary, over seeded random moves.
final class TimeIndexTests: XCTestCase {
    private final class Item: TimeIndexed {
        let name: Int
        var timeIndexDue: Date?
        var timeIndexVersion: UInt64 = 0
        init(_ name: Int) { self.name = name }
    }

    func testTheEarliestIsAlwaysTheDictionarysEarliest() {
        var generator = SeededRandom(seed: 32)
        let items = (0..<50).map(Item.init)
        var index = TimeIndex<Item>()
        var expected: [Int: Date] = [:]
        for step in 0..<20_000 {
            let item = items[Int(generator.next() % 50)]
            let date: Date? = generator.next() % 4 == 0 ? nil : Date(timeIntervalSince1970: Double(generator.next() % 1000))
            index.set(item, at: date)
            expected[item.name] = date
            let earliest = expected.min { $0.value < $1.value }
            XCTAssertEqual(index.first()?.at, earliest?.value, "step \(step)")
            XCTAssertEqual(index.count, expected.count, "step \(step)")
            if step % 97 == 0, let first = index.first(), first.at == earliest?.value {
                index.remove(first.indexed)
                expected[first.indexed.name] = nil
            }
        }
    }
}
