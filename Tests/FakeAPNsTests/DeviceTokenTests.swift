import Foundation
import XCTest

// Reads internals on purpose: DeviceToken(copying:), as a connection copies a token out of its buffer.
@testable import FakeAPNs

final class DeviceTokenTests: XCTestCase {
    private let sampleHex = "fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500be9a"

    private func error(decoding hex: String, file: StaticString = #filePath, line: UInt = #line) -> DeviceTokenError? {
        do {
            let token = try DeviceToken(hex: hex)
            XCTFail("expected an error, got token \(token)", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    // MARK: - Reading hex

    func testHexRoundTrips() throws {
        let token = try DeviceToken(hex: sampleHex)
        XCTAssertEqual(token.bytes.count, 32)
        XCTAssertEqual(token.hex, sampleHex)
    }

    func testDecodesBytesInOrder() throws {
        XCTAssertEqual(try DeviceToken(hex: "00ff10a0").bytes, [0x00, 0xFF, 0x10, 0xA0])
    }

    func testAcceptsUppercaseAndMixedCase() throws {
        XCTAssertEqual(try DeviceToken(hex: sampleHex.uppercased()).hex, sampleHex)
        XCTAssertEqual(try DeviceToken(hex: "Fe15A27d").bytes, [0xFE, 0x15, 0xA2, 0x7D])
    }

    func testAcceptsNSDataDescriptionForm() throws {
        let described = "<fe15a27d 5df3c347 78defb1f 4f388026 5cc52c0c 04768222 3be59fb6 8500be9a>"
        XCTAssertEqual(try DeviceToken(hex: described).hex, sampleHex)
    }

    func testAcceptsTabsNewlinesAndSpacesAnywhere() throws {
        XCTAssertEqual(try DeviceToken(hex: " \tfe 15\na2\r\n7d \n").hex, "fe15a27d")
    }

    func testAcceptsWhitespaceAroundAndInsideBrackets() throws {
        XCTAssertEqual(try DeviceToken(hex: "  < fe15 a27d >\n").hex, "fe15a27d")
    }

    func testAcceptsLongTokens() throws {
        let hex = String(repeating: "ab", count: 100)
        XCTAssertEqual(try DeviceToken(hex: hex).bytes.count, 100)
    }

    // MARK: - Rejections

    func testRejectsEmptyText() {
        XCTAssertEqual(error(decoding: ""), .empty)
        XCTAssertEqual(error(decoding: " \n\t"), .empty)
        XCTAssertEqual(error(decoding: "<>"), .empty)
        XCTAssertEqual(error(decoding: "< >"), .empty)
    }

    func testRejectsOddNumberOfDigits() {
        XCTAssertEqual(error(decoding: "abc"), .oddLength(digitCount: 3))
        XCTAssertEqual(error(decoding: "<ab cd e>"), .oddLength(digitCount: 5))
    }

    func testRejectsNonHexCharacterNamingItsPosition() {
        XCTAssertEqual(error(decoding: "fe1g"), .invalidCharacter("g", position: 3))
    }

    func testPositionCountsCharactersOfTheTextAsGiven() {
        XCTAssertEqual(error(decoding: "<fe 1x>"), .invalidCharacter("x", position: 5))
    }

    func testPositionCountsCharactersNotBytes() {
        XCTAssertEqual(error(decoding: "fe 😀"), .invalidCharacter("😀", position: 3))
    }

    func testRejectsBracketsAwayFromTheEnds() {
        XCTAssertEqual(error(decoding: "fe<15"), .invalidCharacter("<", position: 2))
        XCTAssertEqual(error(decoding: "<<fe15>"), .invalidCharacter("<", position: 1))
        XCTAssertEqual(error(decoding: "fe15>>"), .invalidCharacter(">", position: 4))
    }

    func testRejectsSeparatorsOtherThanWhitespace() {
        XCTAssertEqual(error(decoding: "fe:15"), .invalidCharacter(":", position: 2))
        XCTAssertEqual(error(decoding: "0xfe15"), .invalidCharacter("x", position: 1))
    }

    func testInvalidCharacterErrorTakesPrecedenceOverOddLength() {
        XCTAssertEqual(error(decoding: "abz"), .invalidCharacter("z", position: 2))
    }

    // MARK: - Error messages

    func testInvalidCharacterMessageNamesTheCharacterAndPosition() {
        XCTAssertEqual(
            error(decoding: "fe1g")?.description,
            "invalid character 'g' (U+0067) at position 3 in device token: expected hex digits 0-9, a-f or A-F"
        )
    }

    func testControlCharacterIsNamedByItsCode() throws {
        let message = try XCTUnwrap(error(decoding: "fe\u{0}1")?.description)
        XCTAssertTrue(message.hasPrefix("invalid character U+0000 at position 2"), message)
    }

    func testOddLengthMessageGivesTheDigitCount() {
        XCTAssertEqual(
            error(decoding: "abc")?.description,
            "device token has an odd number of hex digits (3): each byte needs two"
        )
    }

    func testEmptyMessageSaysTheTokenIsEmpty() {
        XCTAssertEqual(error(decoding: "")?.description, "device token is empty: expected hex digits")
    }

    // MARK: - Other forms

    func testInitFromBytesKeepsThem() {
        XCTAssertEqual(DeviceToken(bytes: [0x01, 0xAB]).bytes, [0x01, 0xAB])
        XCTAssertEqual(DeviceToken(bytes: Data([0x02])).bytes, [0x02])
    }

    func testDescriptionIsLowercaseHex() {
        XCTAssertEqual(DeviceToken(bytes: [0xAB, 0x0C]).description, "ab0c")
        XCTAssertEqual("\(DeviceToken(bytes: [0xFF]))", "ff")
    }

    func testHexOfEmptyTokenIsEmpty() {
        XCTAssertEqual(DeviceToken(bytes: []).hex, "")
    }

    func testDataHoldsTheBytes() {
        XCTAssertEqual(DeviceToken(bytes: [0xFE, 0x15]).data, Data([0xFE, 0x15]))
    }

    func testStringLiteralReadsHex() {
        let token: DeviceToken = "<FE15 a27d>"
        XCTAssertEqual(token.bytes, [0xFE, 0x15, 0xA2, 0x7D])
    }

    func testTokensAreEqualByBytesWhateverTheirSpelling() throws {
        let lower = try DeviceToken(hex: "fe15a27d")
        let described = try DeviceToken(hex: "<FE15A27D>")
        XCTAssertEqual(lower, described)
        XCTAssertEqual(Set([lower, described]).count, 1)
    }
}

/// Tokens kept inline (up to 32 bytes) and on the heap (longer) behave alike.
final class DeviceTokenStorageTests: XCTestCase {
    func testEveryLengthRoundTripsItsBytes() {
        for length in [0, 1, 7, 8, 9, 31, 32, 33, 64, 100] {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let token = DeviceToken(bytes: bytes)
            XCTAssertEqual(token.bytes, bytes, "length \(length)")
            XCTAssertEqual(token.count, length)
            XCTAssertEqual(bytes.withUnsafeBytes { DeviceToken(copying: $0) }, token, "length \(length)")
        }
    }

    func testEqualityAndHashingFollowTheBytes() {
        let short = DeviceToken(bytes: [1, 2, 3])
        XCTAssertNotEqual(short, DeviceToken(bytes: [1, 2, 3, 0]), "a trailing zero is a different token")
        XCTAssertEqual(Set([short, DeviceToken(bytes: [1, 2, 3])]).count, 1)
        let long = DeviceToken(bytes: [UInt8](repeating: 9, count: 40))
        XCTAssertEqual(long, try DeviceToken(hex: String(repeating: "09", count: 40)))
    }
}

/// Payloads copied from a receive buffer behave as those made from arrays.
final class PayloadStorageTests: XCTestCase {
    func testPayloadCopiedFromABufferEqualsOneFromAnArray() {
        let bytes = Array(#"{"aps":{"alert":"x"}}"#.utf8)
        let copied = bytes.withUnsafeBytes { Payload(copying: $0) }
        XCTAssertEqual(copied, Payload(bytes: bytes))
        XCTAssertEqual(copied.hashValue, Payload(bytes: bytes).hashValue)
        XCTAssertEqual(copied.count, bytes.count)
        XCTAssertEqual(copied.aps.alert?.body, "x")
        XCTAssertEqual(Payload(bytes: []).bytes, [])
    }
}
