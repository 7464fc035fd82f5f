import Foundation
import XCTest

@testable import FakeAPNs

/// Dates from outside enter through `UnixTime`, and every date written is RFC 3339 with a
/// four-digit year, however far the clock or a computed date went.
final class UnixTimeTests: XCTestCase {
    func testADateIsAWholeSecondFrom1970ToTheEndOfYear9999() {
        XCTAssertEqual(UnixTime(seconds: 0)?.seconds, 0)
        XCTAssertEqual(UnixTime(seconds: Int64(253_402_300_799))?.date, Date(timeIntervalSince1970: 253_402_300_799))
        XCTAssertNil(UnixTime(seconds: Int64(253_402_300_800)))
        XCTAssertNil(UnixTime(seconds: -1))
        XCTAssertNil(UnixTime(seconds: Int64.max - 511))
        XCTAssertNil(UnixTime(seconds: Int.min))
        XCTAssertEqual(UnixTime(exactly: 1.8e9)?.seconds, 1_800_000_000)
        for unusable in [1.5, -0.5, 1e300, .infinity, -.infinity, .nan] { XCTAssertNil(UnixTime(exactly: unusable)) }
    }

    func testClampingSaturatesAtTheEnds() {
        XCTAssertEqual(UnixTime(clamping: Date(timeIntervalSince1970: 1e300)), .latest)
        XCTAssertEqual(UnixTime(clamping: .distantPast), .earliest)
        XCTAssertEqual(UnixTime(clamping: Date(timeIntervalSince1970: .nan)), .earliest)
        XCTAssertEqual(UnixTime.clamped(Date(timeIntervalSince1970: 1e300)).timeIntervalSince1970, 253_402_300_799.999, accuracy: 0.001)
        XCTAssertEqual(UnixTime.clamped(.now, adding: 1e300), UnixTime.clamped(Date(timeIntervalSince1970: 1e300)))
        let now = Date()
        XCTAssertEqual(UnixTime.clamped(now, adding: .nan), now)
        XCTAssertEqual(UnixTime.clamped(now, adding: -5), now, "a negative step moves nothing")
    }

    func testEveryDateIsWrittenAsRFC3339WithAFourDigitYear() {
        XCTAssertEqual(Timestamp.rfc3339(Date(timeIntervalSince1970: 1e300)), "9999-12-31T23:59:59.999999Z")
        XCTAssertEqual(Timestamp.rfc3339(Date(timeIntervalSince1970: 9.2e18)), "9999-12-31T23:59:59.999999Z")
        XCTAssertEqual(Timestamp.rfc3339(.distantPast), "0000-12-30T00:00:00.000000Z", "proleptic Gregorian")
        XCTAssertEqual(Timestamp.rfc3339(Date(timeIntervalSince1970: -1e300)), "0000-01-01T00:00:00.000000Z")
        XCTAssertEqual(Timestamp.rfc3339(Date(timeIntervalSince1970: .nan)), "0000-01-01T00:00:00.000000Z")
        XCTAssertEqual(Timestamp.rfc3339(Date(timeIntervalSince1970: 253_402_300_799.9999996)), "9999-12-31T23:59:59.999999Z")
        XCTAssertEqual(Timestamp.rfc3339(Date(timeIntervalSince1970: 1_800_000_000.25)), "2027-01-15T08:00:00.250000Z")
    }
}
