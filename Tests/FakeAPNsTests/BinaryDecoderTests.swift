import FakeAPNsTestSupport
import XCTest
// Reads internals on purpose: BinaryDecoder, the gateway's frame parser.
@testable import FakeAPNs

/// The binary decoder on its own: formats, defaults, splits, and Apple's status for every
/// malformed input.
final class BinaryDecoderTests: XCTestCase {
    private let decoder = BinaryDecoder()
    private let token = Fixtures.token
    private let payload = Fixtures.alert

    private func decode(_ bytes: [UInt8], with decoder: BinaryDecoder? = nil) -> BinaryDecoder.Step {
        bytes.withUnsafeBytes { (decoder ?? self.decoder).decode($0) }
    }

    private func frame(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> BinaryDecoder.Frame? {
        guard case .frame(let frame) = decode(bytes) else {
            XCTFail("expected a notification, got \(decode(bytes))", file: file, line: line)
            return nil
        }
        return frame
    }

    private func failure(
        _ bytes: [UInt8], with decoder: BinaryDecoder? = nil, file: StaticString = #filePath, line: UInt = #line
    ) -> BinaryDecoder.Failure? {
        guard case .failure(let failure) = decode(bytes, with: decoder) else {
            XCTFail("expected a failure, got \(decode(bytes, with: decoder))", file: file, line: line)
            return nil
        }
        return failure
    }

    // MARK: - Formats

    func testSimpleFormatHasPriorityTenAndNoExpiry() throws {
        let bytes = BinaryEncoder.simple(token: token, payload: payload)
        let decoded = try XCTUnwrap(frame(bytes))
        XCTAssertEqual(decoded.format, .simple)
        XCTAssertEqual(decoded.identifier, 0)
        XCTAssertNil(decoded.expiration)
        XCTAssertEqual(decoded.priority, 10)
        XCTAssertEqual(Array(bytes[decoded.token]), token.bytes)
        XCTAssertEqual(Array(bytes[decoded.payload]), payload)
        XCTAssertEqual(decoded.length, bytes.count)
        XCTAssertEqual(bytes.count, 37 + payload.count)
    }

    func testEnhancedFormatCarriesIdentifierAndExpiry() throws {
        let bytes = BinaryEncoder.enhanced(identifier: 0xDEAD_BEEF, expiration: 1_700_000_000, token: token, payload: payload)
        let decoded = try XCTUnwrap(frame(bytes))
        XCTAssertEqual(decoded.format, .enhanced)
        XCTAssertEqual(decoded.identifier, 0xDEAD_BEEF)
        XCTAssertEqual(decoded.expiration, 1_700_000_000)
        XCTAssertEqual(decoded.priority, 10)
        XCTAssertEqual(bytes.count, 45 + payload.count)
    }

    func testFrameFormatCarriesEveryItem() throws {
        let bytes = BinaryEncoder.frame(token: token, payload: payload, identifier: 9, expiration: 77, priority: 5)
        let decoded = try XCTUnwrap(frame(bytes))
        XCTAssertEqual(decoded.format, .frame)
        XCTAssertEqual(decoded.identifier, 9)
        XCTAssertEqual(decoded.expiration, 77)
        XCTAssertEqual(decoded.priority, 5)
        XCTAssertEqual(Array(bytes[decoded.payload]), payload)
    }

    func testFrameItemsAreAcceptedInAnyOrder() throws {
        let bytes = BinaryEncoder.frame(items: [
            .priority(5), .identifier(3), .payload(payload), .expiration(12), .deviceToken(token),
        ])
        let decoded = try XCTUnwrap(frame(bytes))
        XCTAssertEqual(decoded.identifier, 3)
        XCTAssertEqual(decoded.expiration, 12)
        XCTAssertEqual(decoded.priority, 5)
        XCTAssertEqual(Array(bytes[decoded.token]), token.bytes)
    }

    func testFrameWithoutOptionalItemsDefaultsAsTheProtocolSays() throws {
        let decoded = try XCTUnwrap(frame(BinaryEncoder.frame(items: [.deviceToken(token), .payload(payload)])))
        XCTAssertEqual(decoded.identifier, 0)
        XCTAssertEqual(decoded.expiration, 0)
        XCTAssertEqual(decoded.priority, 10)
    }

    func testTokensFromOneToOneHundredBytesAreAccepted() throws {
        for length in [1, 8, 32, 64, 100] {
            let custom = DeviceToken(bytes: (0..<length).map { UInt8($0 & 0xFF) })
            for bytes in [
                BinaryEncoder.simple(token: custom, payload: payload),
                BinaryEncoder.enhanced(identifier: 1, token: custom, payload: payload),
                BinaryEncoder.frame(token: custom, payload: payload),
            ] {
                let decoded = try XCTUnwrap(frame(bytes), "token of \(length) bytes")
                XCTAssertEqual(decoded.token.count, length)
            }
        }
    }

    func testPayloadAtTheLimitIsAccepted() {
        let largest = [UInt8](repeating: UInt8(ascii: "a"), count: 2048)
        XCTAssertNotNil(frame(BinaryEncoder.enhanced(identifier: 1, token: token, payload: largest)))
    }

    // MARK: - Splits

    func testEveryPrefixOfACommandIsIncomplete() {
        for bytes in [
            BinaryEncoder.simple(token: token, payload: payload),
            BinaryEncoder.enhanced(identifier: 5, token: token, payload: payload),
            BinaryEncoder.frame(token: token, payload: payload, identifier: 5),
        ] {
            for cut in 0..<bytes.count {
                guard case .incomplete = decode(Array(bytes[..<cut])) else {
                    return XCTFail("a prefix of \(cut) of \(bytes.count) bytes should be incomplete, got \(decode(Array(bytes[..<cut])))")
                }
            }
        }
    }

    func testDecodesOnlyTheFirstOfSeveralCommands() throws {
        let first = BinaryEncoder.enhanced(identifier: 1, token: token, payload: payload)
        let second = BinaryEncoder.frame(token: token, payload: payload, identifier: 2)
        let decoded = try XCTUnwrap(frame(first + second))
        XCTAssertEqual(decoded.length, first.count)
        XCTAssertEqual(decoded.identifier, 1)
    }

    // MARK: - Malformed input and Apple's statuses

    func testUnknownCommandIsStatus255() throws {
        let refused = try XCTUnwrap(failure([7, 0, 0, 0]))
        XCTAssertEqual(refused.status, .unknown)
        XCTAssertTrue(refused.reason.contains("unknown command 7"), refused.reason)
    }

    func testDuplicateItemIsStatus255WithTheFramesIdentifier() throws {
        let bytes = BinaryEncoder.frame(items: [.identifier(44), .deviceToken(token), .payload(payload), .deviceToken(token)])
        let refused = try XCTUnwrap(failure(bytes))
        XCTAssertEqual(refused.status, .unknown)
        XCTAssertEqual(refused.identifier, 44)
        XCTAssertTrue(refused.reason.contains("duplicate device token"), refused.reason)
    }

    func testDuplicateItemAfterTheIdentifierStillReportsTheFirstIdentifier() throws {
        let bytes = BinaryEncoder.frame(items: [.deviceToken(token), .identifier(5), .identifier(6), .payload(payload)])
        XCTAssertEqual(try XCTUnwrap(failure(bytes)).identifier, 5)
    }

    func testMissingTokenItemIsStatus2() throws {
        let refused = try XCTUnwrap(failure(BinaryEncoder.frame(items: [.payload(payload), .identifier(8)])))
        XCTAssertEqual(refused.status, .missingDeviceToken)
        XCTAssertEqual(refused.identifier, 8)
    }

    func testEmptyTokenIsStatus2InEveryFormat() throws {
        let empty = DeviceToken(bytes: [])
        XCTAssertEqual(try XCTUnwrap(failure(BinaryEncoder.simple(token: empty, payload: payload))).status, .missingDeviceToken)
        let enhanced = try XCTUnwrap(failure(BinaryEncoder.enhanced(identifier: 3, token: empty, payload: payload)))
        XCTAssertEqual(enhanced.status, .missingDeviceToken)
        XCTAssertEqual(enhanced.identifier, 3)
        XCTAssertEqual(try XCTUnwrap(failure(BinaryEncoder.frame(token: empty, payload: payload))).status, .missingDeviceToken)
    }

    func testMissingPayloadItemIsStatus4() throws {
        let refused = try XCTUnwrap(failure(BinaryEncoder.frame(items: [.deviceToken(token), .identifier(8)])))
        XCTAssertEqual(refused.status, .missingPayload)
        XCTAssertEqual(refused.identifier, 8)
        XCTAssertEqual(refused.token, token.bytes)
    }

    func testEmptyPayloadIsStatus4() throws {
        let refused = try XCTUnwrap(failure(BinaryEncoder.enhanced(identifier: 4, token: token, payload: [])))
        XCTAssertEqual(refused.status, .missingPayload)
        XCTAssertEqual(refused.identifier, 4)
    }

    func testTokenOverOneHundredBytesIsStatus5AsSoonAsItsLengthArrives() throws {
        let long = DeviceToken(bytes: [UInt8](repeating: 1, count: 101))
        let bytes = BinaryEncoder.enhanced(identifier: 12, token: long, payload: payload)
        // Only the header has arrived: the verdict does not wait for the rest.
        let refused = try XCTUnwrap(failure(Array(bytes[..<11])))
        XCTAssertEqual(refused.status, .invalidTokenSize)
        XCTAssertEqual(refused.identifier, 12)
        XCTAssertEqual(try XCTUnwrap(failure(BinaryEncoder.frame(token: long, payload: payload, identifier: 2))).status, .invalidTokenSize)
    }

    func testPayloadOverTheLimitIsStatus7() throws {
        let big = [UInt8](repeating: UInt8(ascii: "a"), count: 2049)
        let refused = try XCTUnwrap(failure(BinaryEncoder.enhanced(identifier: 21, token: token, payload: big)))
        XCTAssertEqual(refused.status, .invalidPayloadSize)
        XCTAssertEqual(refused.identifier, 21)
        XCTAssertEqual(refused.token, token.bytes)
        let inFrame = try XCTUnwrap(failure(BinaryEncoder.frame(token: token, payload: big, identifier: 22)))
        XCTAssertEqual(inFrame.status, .invalidPayloadSize)
        XCTAssertEqual(inFrame.identifier, 22)
    }

    func testPayloadLimitIsConfigurable() throws {
        let strict = BinaryDecoder(maximumPayloadSize: 256)
        let payload257 = [UInt8](repeating: UInt8(ascii: "a"), count: 257)
        XCTAssertEqual(
            try XCTUnwrap(failure(BinaryEncoder.simple(token: token, payload: payload257), with: strict)).status,
            .invalidPayloadSize)
        let generous = BinaryDecoder(maximumPayloadSize: 4096)
        let payload4096 = [UInt8](repeating: UInt8(ascii: "a"), count: 4096)
        guard case .frame = BinaryEncoder.frame(token: token, payload: payload4096).withUnsafeBytes({ generous.decode($0) }) else {
            return XCTFail("a 4096-byte payload should pass a 4096-byte limit")
        }
    }

    func testUnknownItemIsStatus255() throws {
        let bytes = BinaryEncoder.frame(items: [.deviceToken(token), .payload(payload), .identifier(1), Item(id: 9, data: [1])])
        let refused = try XCTUnwrap(failure(bytes))
        XCTAssertEqual(refused.status, .unknown)
        XCTAssertEqual(refused.identifier, 1)
    }

    func testItemOfTheWrongSizeIsStatus255() throws {
        let bytes = BinaryEncoder.frame(items: [.deviceToken(token), .payload(payload), Item(id: 5, data: [10, 0])])
        XCTAssertEqual(try XCTUnwrap(failure(bytes)).status, .unknown)
    }

    func testPriorityOtherThanTenOrFiveIsStatus255() throws {
        let refused = try XCTUnwrap(failure(BinaryEncoder.frame(token: token, payload: payload, identifier: 6, priority: 7)))
        XCTAssertEqual(refused.status, .unknown)
        XCTAssertEqual(refused.identifier, 6)
    }

    func testItemRunningPastTheFrameEndIsStatus255() throws {
        var bytes = BinaryEncoder.frame(items: [.identifier(31), .deviceToken(token)])
        bytes[4] -= 2  // the frame now ends inside the token item
        bytes.removeLast(2)
        let refused = try XCTUnwrap(failure(bytes))
        XCTAssertEqual(refused.status, .unknown)
        XCTAssertEqual(refused.identifier, 31)
    }

    func testFrameLongerThanAnyValidFrameIsRefusedBeforeItArrives() throws {
        let refused = try XCTUnwrap(failure([2, 0x10, 0, 0, 0]))
        XCTAssertEqual(refused.status, .unknown)
    }

    func testTruncatedCommandReportsWhatItKnows() {
        let bytes = BinaryEncoder.enhanced(identifier: 99, token: token, payload: payload)
        let truncated = Array(bytes[..<20]).withUnsafeBytes { decoder.truncated($0) }
        XCTAssertEqual(truncated.status, .unknown)
        XCTAssertEqual(truncated.identifier, 99)
        XCTAssertTrue(truncated.sendsResponse)
        let frameBytes = BinaryEncoder.frame(items: [.identifier(5), .deviceToken(token), .payload(payload)])
        XCTAssertEqual(Array(frameBytes[..<20]).withUnsafeBytes { decoder.truncated($0) }.identifier, 5)
        let simple = Array(BinaryEncoder.simple(token: token, payload: payload)[..<10])
        XCTAssertFalse(simple.withUnsafeBytes { decoder.truncated($0) }.sendsResponse)
    }

    func testCommandZeroFailuresSendNoResponse() throws {
        let refused = try XCTUnwrap(failure(BinaryEncoder.simple(token: token, payload: [])))
        XCTAssertFalse(refused.sendsResponse)
    }

    // MARK: - Error response

    func testErrorResponseIsSixBytesAndRoundTrips() {
        let response = BinaryErrorResponse(status: .invalidToken, identifier: 0x0102_0304)
        XCTAssertEqual(response.bytes, [8, 8, 1, 2, 3, 4])
        XCTAssertEqual(BinaryErrorResponse(bytes: response.bytes), response)
        XCTAssertNil(BinaryErrorResponse(bytes: [7, 8, 1, 2, 3, 4]))
        XCTAssertEqual(BinaryStatus.invalidTokenSize.name, "Invalid token size")
        XCTAssertEqual(BinaryStatus.shutdown.description, "10 (Shutdown)")
    }
}

private typealias Item = BinaryEncoder.Item
