import FakeAPNsTestSupport
import Foundation
import XCTest

// Reads internals on purpose: RequestValidator, TopicAuthority, UUIDBits and the request types it validates.
@testable import FakeAPNs

final class RequestValidatorTests: XCTestCase {
    private let tokenHex = "fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2"
    private let validator = RequestValidator()
    /// The topics of `TestCerts/client.pem`, a universal certificate: its UID and its extension.
    private let universalCertificate = TopicAuthority.certificate(
        topics: ["com.example.app", "com.example.app", "com.example.app.voip", "com.example.app.complication"])

    // MARK: - Helpers

    private func request(
        method: String = "POST", path: String? = nil, headers: [(name: String, value: String)] = [],
        body: [UInt8] = Fixtures.alert
    ) -> HTTP2Request {
        HTTP2Request(method: method, path: path ?? "/3/device/\(tokenHex)", headers: headers, body: body)
    }

    private func validate(
        _ request: HTTP2Request, topics: TopicAuthority = .any
    ) -> RequestValidation {
        validator.validate(request, topics: topics)
    }

    @discardableResult
    private func assertAccepted(
        _ validation: RequestValidation, file: StaticString = #filePath, line: UInt = #line
    ) -> ValidatedRequest? {
        switch validation {
        case .accepted(let fields):
            return fields
        case .rejected(let reason, let detail, _):
            XCTFail("expected acceptance, got \(reason): \(detail)", file: file, line: line)
            return nil
        }
    }

    private func assertRejected(
        _ validation: RequestValidation, _ expected: APNsReason, status: Int? = nil,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        switch validation {
        case .accepted(let fields):
            XCTFail("expected \(expected), got acceptance of \(fields.deviceToken)", file: file, line: line)
        case .rejected(let reason, let detail, _):
            XCTAssertEqual(reason, expected, "detail: \(detail)", file: file, line: line)
            XCTAssertFalse(detail.isEmpty, file: file, line: line)
            if let status {
                XCTAssertEqual(reason.status, status, file: file, line: line)
            }
        }
    }

    private func body(size: Int) -> [UInt8] {
        let prefix = Array(#"{"aps":{"alert":""#.utf8)
        let suffix = Array(#""}}"#.utf8)
        return prefix + [UInt8](repeating: UInt8(ascii: "x"), count: size - prefix.count - suffix.count) + suffix
    }

    // MARK: - Accepted requests

    func testMinimalRequestIsAcceptedWithDefaults() {
        guard let fields = assertAccepted(validate(request())) else { return }
        XCTAssertEqual(fields.deviceToken.hex, tokenHex)
        XCTAssertTrue(fields.apnsIDWasGenerated)
        XCTAssertNil(fields.expiration)
        XCTAssertEqual(fields.priority, .immediately)
        XCTAssertNil(fields.topic)
        XCTAssertNil(fields.pushType)
        XCTAssertNil(fields.collapseID)
        XCTAssertNil(fields.authorization)
        XCTAssertEqual(fields.payload.bytes, Fixtures.alert)
    }

    func testFieldsResetForTheStreamsNextRequestKeepNothingOfTheLast() {
        var fields = RequestHeaderFields([
            (":method", "POST"), (":path", "/3/device/" + tokenHex), ("apns-id", "a"), ("apns-id", "b"),
            ("apns-expiration", "0"), ("apns-priority", "5"), ("apns-push-type", "alert"),
            ("apns-collapse-id", "c"), ("apns-topic", "com.example.app"), ("authorization", "bearer x"),
            ("apns-request-id", "r"), ("apns-channel-id", "h"), ("x-other", "1"),
        ])
        XCTAssertEqual(fields.firstDuplicate, "apns-id")
        fields.reset()
        for (name, value) in [
            ("method", fields.method), ("path", fields.path), ("apns-id", fields.apnsID),
            ("expiration", fields.expiration), ("priority", fields.priority), ("push type", fields.pushType),
            ("collapse id", fields.collapseID), ("topic", fields.topic), ("authorization", fields.authorization),
            ("request id", fields.requestID), ("channel id", fields.channelID),
        ] {
            XCTAssertNil(value, "\(name) kept after a reset")
        }
        XCTAssertFalse(fields.pathIsDeviceToken)
        XCTAssertNil(fields.pathDeviceToken)
        XCTAssertNil(fields.firstDuplicate)
        XCTAssertEqual(fields.apnsIDCount, 0)
        // The names seen before count for nothing now: each once is no duplicate.
        for (name, value) in [("x-other", "2"), ("apns-id", "d"), (":path", "/3/device/ab")] {
            var name = name
            var value = value
            name.withUTF8 { name in value.withUTF8 { value in fields.add(name: name, value: value) } }
        }
        XCTAssertNil(fields.firstDuplicate)
        XCTAssertEqual(fields.apnsID, "d")
        XCTAssertEqual(fields.path, "/3/device/ab")
        XCTAssertEqual(fields.pathDeviceToken?.hex, "ab")
        XCTAssertNil(fields.topic)
    }

    func testEveryHeaderIsCarriedIntoTheValidatedRequest() {
        let headers: [(name: String, value: String)] = [
            (":authority", "api.sandbox.push.apple.com"),
            ("authorization", "bearer eyJhbGciOiJFUzI1NiJ9.e30.sig"),
            ("apns-id", "7BF53274-A04B-4D2B-9C8A-1F2E3D4C5B6A"),
            ("apns-expiration", "1700000000"),
            ("apns-priority", "5"),
            ("apns-topic", "com.example.app.voip"),
            ("apns-push-type", "voip"),
            ("apns-collapse-id", "call-42"),
        ]
        guard let fields = assertAccepted(validate(request(headers: headers), topics: universalCertificate)) else {
            return
        }
        XCTAssertEqual(fields.apnsID, "7BF53274-A04B-4D2B-9C8A-1F2E3D4C5B6A", "as sent")
        XCTAssertFalse(fields.apnsIDWasGenerated)
        XCTAssertEqual(fields.expiration, 1_700_000_000)
        XCTAssertEqual(fields.priority, .consideringDevicePower)
        XCTAssertEqual(fields.topic, "com.example.app.voip")
        XCTAssertEqual(fields.pushType, .voip)
        XCTAssertEqual(fields.collapseID, "call-42")
        XCTAssertEqual(fields.authorization, "bearer eyJhbGciOiJFUzI1NiJ9.e30.sig")
    }

    /// APNs makes its `apns-id`s in capitals (`ACDFB3EB-105B-…`).
    func testMissingApnsIDIsGeneratedAsNewUpperCaseUUID() {
        let first = assertAccepted(validate(request()))
        let second = assertAccepted(validate(request()))
        guard let first, let second else { return }
        XCTAssertTrue(first.apnsIDWasGenerated)
        XCTAssertNotNil(RequestValidator.canonicalUUID(first.apnsID), "canonical")
        XCTAssertEqual(first.apnsID, first.apnsID.uppercased())
        XCTAssertNotEqual(first.apnsID, first.apnsID.lowercased(), "a UUID has letters, almost surely")
        XCTAssertEqual(first.apnsIDBits.text, first.apnsID)
        XCTAssertNotEqual(first.apnsID, second.apnsID)
    }

    /// APNs answers "the same value found in" the request's `apns-id`: clients match answers by
    /// it, so capitals stay capitals (node-apn's README sends upper-case ids).
    func testClientApnsIDIsKeptAsSentInAnyCase() {
        for id in [
            "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "e621e1f8-C36C-495a-93FC-0c247a3e6e5f",
            "ABCDEFAB-CDEF-4BCD-ABCD-EFABCDEFABCD", "e621e1f8-c36c-495a-93fc-0c247a3e6e5f",
        ] {
            let fields = assertAccepted(validate(request(headers: [("apns-id", id)])))
            XCTAssertEqual(fields?.apnsID, id)
            XCTAssertEqual(fields?.apnsIDBits.text, id)
            XCTAssertEqual(fields?.apnsIDWasGenerated, false)
        }
    }

    func testUUIDBitsKeepTheCaseOfEveryDigitAndCompareByIt() throws {
        let upper = try XCTUnwrap(UUIDBits(text: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        let lower = try XCTUnwrap(UUIDBits(text: "e621e1f8-c36c-495a-93fc-0c247a3e6e5f"))
        XCTAssertEqual(upper.high, lower.high)
        XCTAssertEqual(upper.low, lower.low)
        XCTAssertEqual(lower.capitals, 0, "lowercase text: no capitals to write")
        XCTAssertNotEqual(upper, lower, "a different value to a client that matches by text")
        XCTAssertEqual(upper.withText { String(decoding: $0, as: UTF8.self) }, "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
        // Every digit position, alone in capitals, comes back in its place.
        let digits = Array("abcdefab-cdef-abcd-efab-cdefabcdefab")
        for offset in digits.indices where digits[offset] != "-" {
            var text = digits
            text[offset] = Character(text[offset].uppercased())
            XCTAssertEqual(UUIDBits(text: String(text))?.text, String(text))
        }
        XCTAssertNil(UUIDBits(text: "E621E1F8-C36C-495A-93FC-0C247A3E6E5G"))
    }

    func testUpperCasedBitsWriteEveryDigitInCapitalsAndReadBackEqual() throws {
        let lower = try XCTUnwrap(UUIDBits(text: "e621e1f8-c36c-495a-93fc-0c247a3e6e5f"))
        let upper = lower.upperCased
        XCTAssertEqual(upper.text, "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
        XCTAssertEqual(upper.withText { String(decoding: $0, as: UTF8.self) }, upper.text)
        XCTAssertEqual(UUIDBits(text: upper.text), upper, "read back, the same value")
        XCTAssertEqual(lower.text, "e621e1f8-c36c-495a-93fc-0c247a3e6e5f", "the lowercase form is untouched")
    }

    func testUppercaseHexTokenIsAccepted() {
        let fields = assertAccepted(validate(request(path: "/3/device/\(tokenHex.uppercased())")))
        XCTAssertEqual(fields?.deviceToken.hex, tokenHex)
    }

    func testEveryByteInEveryPlaceOfATokenIsJudgedAsAHexDigitWouldBe() {
        // The path's token is decoded eight digits at a time: each of 256 bytes in each of
        // the places of a 64-digit token (and of a 10-digit one, past the words) must give
        // what a digit-by-digit reading gives, in the token and in the path the fields report.
        for length in [64, 10] {
            let base = Array(tokenHex.utf8.prefix(length))
            for place in 0..<length {
                for byte in 0...255 {
                    var digits = base
                    digits[place] = UInt8(byte)
                    let text = String(decoding: digits, as: UTF8.self)
                    let expected = HexDigit.value(UInt8(byte)).map { _ in try? DeviceToken(hex: text) } ?? nil
                    let fields = RequestHeaderFields([(":method", "POST"), (":path", "/3/device/" + text)])
                    let isLowercaseDigit = (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte)
                    XCTAssertEqual(
                        fields.pathIsDeviceToken ? fields.pathToken : nil, isLowercaseDigit ? expected : nil,
                        "byte \(byte) at \(place)")
                    XCTAssertEqual(fields.path, "/3/device/" + text, "byte \(byte) at \(place)")
                    XCTAssertEqual(fields.pathDeviceToken, expected, "byte \(byte) at \(place)")
                    if byte == 0x30 + place % 10 { XCTAssertNotNil(expected) }
                }
            }
        }
    }

    func testTokensOfEveryLengthDecodeAlikeInEitherCase() {
        for digits in 1...RequestValidator.maximumDeviceTokenHexDigits + 2 {
            let hex = String(String(repeating: tokenHex, count: 4).prefix(digits))
            for text in [hex, hex.uppercased()] {
                let validation = validate(request(path: "/3/device/\(text)"))
                if digits % 2 == 0, digits <= RequestValidator.maximumDeviceTokenHexDigits {
                    XCTAssertEqual(assertAccepted(validation)?.deviceToken.hex, hex, "\(digits) digits")
                } else {
                    assertRejected(validation, .badDeviceToken)
                }
            }
        }
    }

    func testTokenOfMaximumLengthIsAcceptedAndOneByteMoreIsNot() {
        let longest = String(repeating: "ab", count: RequestValidator.maximumDeviceTokenHexDigits / 2)
        XCTAssertEqual(assertAccepted(validate(request(path: "/3/device/\(longest)")))?.deviceToken.bytes.count, 100)
        assertRejected(validate(request(path: "/3/device/\(longest)ab")), .badDeviceToken)
        XCTAssertEqual(assertAccepted(validate(request(path: "/3/device/00")))?.deviceToken.bytes, [0])
    }

    func testUnknownHeadersAreIgnored() {
        let headers: [(name: String, value: String)] = [
            ("user-agent", "pushy"), ("x-whatever", "\u{1}\u{2}"), ("apns-unknown", "1"), ("host", "localhost"),
        ]
        assertAccepted(validate(request(headers: headers)))
    }

    func testHeaderNamesAreMatchedIgnoringASCIICase() {
        let fields = assertAccepted(validate(request(headers: [("APNS-Priority", "5"), ("Apns-Topic", "com.x")])))
        XCTAssertEqual(fields?.priority, .consideringDevicePower)
        XCTAssertEqual(fields?.topic, "com.x")
    }

    func testEachAllowedPriorityIsAccepted() {
        for (text, priority) in [
            ("10", Priority.immediately), ("5", .consideringDevicePower),
            ("1", .prioritizingPowerEfficiency),
        ] {
            XCTAssertEqual(assertAccepted(validate(request(headers: [("apns-priority", text)])))?.priority, priority)
        }
    }

    func testExpirationBoundsAreAccepted() {
        for (text, value) in [("0", UInt32(0)), ("4294967295", UInt32.max), ("000042", UInt32(42))] {
            XCTAssertEqual(assertAccepted(validate(request(headers: [("apns-expiration", text)])))?.expiration, value)
        }
    }

    func testEveryKnownPushTypeIsAcceptedWithItsTopic() {
        for pushType in PushType.known {
            let topic = "com.example.app" + (pushType.topicSuffix ?? "")
            let priority = pushType == .background ? "5" : "10"
            let headers: [(name: String, value: String)] = [
                ("apns-push-type", pushType.rawValue), ("apns-topic", topic), ("apns-priority", priority),
            ]
            let fields = assertAccepted(validate(request(headers: headers), topics: .token))
            XCTAssertEqual(fields?.pushType, pushType)
            XCTAssertEqual(fields?.topic, topic)
        }
    }

    func testMdmPushTypeAcceptsAnyTopic() {
        let headers: [(name: String, value: String)] = [
            ("apns-push-type", "mdm"), ("apns-topic", "com.apple.mgmt.External.0c6e0a9d.voip"),
        ]
        assertAccepted(validate(request(headers: headers), topics: .token))
    }

    func testBackgroundPushAtPriority5IsAccepted() {
        let headers: [(name: String, value: String)] = [("apns-push-type", "background"), ("apns-priority", "5")]
        XCTAssertEqual(assertAccepted(validate(request(headers: headers)))?.priority, .consideringDevicePower)
    }

    func testInvalidJSONBodyIsAcceptedAndRecordsItsParseError() {
        let fields = assertAccepted(validate(request(body: Array("{not json".utf8))))
        XCTAssertNotNil(fields?.payload.parseError)
    }

    // MARK: - Topics and authentication

    func testNoAuthenticationAllowsAnyTopicOrNone() {
        XCTAssertNil(assertAccepted(validate(request(), topics: .any))?.topic)
        XCTAssertEqual(
            assertAccepted(validate(request(headers: [("apns-topic", "org.other")]), topics: .any))?.topic,
            "org.other")
    }

    func testNoAuthenticationTakesASingleTopicCertificatesTopicWhenNoneIsSent() {
        let single = TopicAuthority.anyWithCertificate(topics: ["com.example.sandbox", "com.example.sandbox"])
        XCTAssertEqual(assertAccepted(validate(request(), topics: single))?.topic, "com.example.sandbox")
        XCTAssertNil(assertAccepted(validate(request(), topics: universalCertificateTopics))?.topic)
        XCTAssertEqual(
            assertAccepted(validate(request(headers: [("apns-topic", "org.other")]), topics: single))?.topic,
            "org.other", "any topic sent is allowed")
    }

    private var universalCertificateTopics: TopicAuthority {
        .anyWithCertificate(topics: ["com.example.app", "com.example.app.voip", "com.example.app.complication"])
    }

    func testTokenAuthenticationWithoutTopicIsRejectedWithMissingTopic() {
        assertRejected(validate(request(), topics: .token), .missingTopic, status: 400)
    }

    func testTokenAuthenticationAllowsAnyTopic() {
        let fields = assertAccepted(validate(request(headers: [("apns-topic", "org.anything")]), topics: .token))
        XCTAssertEqual(fields?.topic, "org.anything")
    }

    func testSingleTopicCertificateSuppliesTheDefaultTopic() {
        let fields = assertAccepted(validate(request(), topics: .certificate(topics: ["com.example.sandbox"])))
        XCTAssertEqual(fields?.topic, "com.example.sandbox")
    }

    func testCertificateTopicRepeatedByUIDAndExtensionCountsOnce() {
        let fields = assertAccepted(validate(request(), topics: .certificate(topics: ["com.x", "com.x"])))
        XCTAssertEqual(fields?.topic, "com.x")
    }

    func testMultiTopicCertificateWithoutTopicIsRejectedWithMissingTopic() {
        assertRejected(validate(request(), topics: universalCertificate), .missingTopic, status: 400)
    }

    func testCertificateWithoutTopicsAndNoTopicIsRejectedWithMissingTopic() {
        assertRejected(validate(request(), topics: .certificate(topics: [])), .missingTopic)
    }

    func testUniversalCertificateAllowsEachListedTopic() {
        for (topic, pushType) in [
            ("com.example.app", "alert"), ("com.example.app.voip", "voip"),
            ("com.example.app.complication", "complication"),
        ] {
            let headers: [(name: String, value: String)] = [("apns-topic", topic), ("apns-push-type", pushType)]
            XCTAssertEqual(
                assertAccepted(validate(request(headers: headers), topics: universalCertificate))?.topic, topic)
        }
    }

    func testTopicNotListedInCertificateIsRejectedWithTopicDisallowed() {
        for topic in ["com.other", "com.example", "com.example.app.location-query", "COM.EXAMPLE.APP"] {
            assertRejected(
                validate(request(headers: [("apns-topic", topic)]), topics: universalCertificate), .topicDisallowed,
                status: 400)
        }
    }

    // MARK: - One rule per reason

    func testNonPostMethodIsRejectedWithMethodNotAllowed() {
        for method in ["GET", "PUT", "post", ""] {
            assertRejected(validate(request(method: method)), .methodNotAllowed, status: 405)
        }
    }

    func testPathOutsideDeviceIsRejectedWithBadPath() {
        for path in [
            "/", "", "/3/devices/\(tokenHex)", "/2/device/\(tokenHex)", "/3/device\(tokenHex)",
            "/3/device/\(tokenHex)/", "/3/device/\(tokenHex)/extra", "/4/broadcasts/apps/com.x", "3/device/ab",
        ] {
            assertRejected(validate(request(path: path)), .badPath, status: 404)
        }
    }

    func testPathWithoutTokenIsRejectedWithMissingDeviceToken() {
        for path in ["/3/device", "/3/device/"] {
            assertRejected(validate(request(path: path)), .missingDeviceToken, status: 400)
        }
    }

    func testMalformedTokenIsRejectedWithBadDeviceToken() {
        for token in ["abc", "zz", "fe15 a27d", "<fe15a27d>", "fe15a27d%20", "fe15a27d?x=1", "0x12", "é0", "\u{0}0"] {
            assertRejected(validate(request(path: "/3/device/\(token)")), .badDeviceToken, status: 400)
        }
    }

    func testRepeatedHeaderIsRejectedWithDuplicateHeaders() {
        let headers: [(name: String, value: String)] = [("apns-topic", "com.x"), ("apns-topic", "com.x")]
        assertRejected(validate(request(headers: headers)), .duplicateHeaders, status: 400)
    }

    func testRepeatedPseudoHeaderIsRejectedWithDuplicateHeaders() {
        assertRejected(validate(request(headers: [(":path", "/3/device/\(tokenHex)")])), .duplicateHeaders)
        assertRejected(validate(request(headers: [(":method", "POST")])), .duplicateHeaders)
    }

    func testRepeatedUnknownHeaderIsRejectedWithDuplicateHeaders() {
        assertRejected(validate(request(headers: [("x-trace", "1"), ("x-trace", "2")])), .duplicateHeaders)
    }

    func testHeaderRepeatedInAnotherCaseIsRejectedWithDuplicateHeaders() {
        assertRejected(validate(request(headers: [("apns-id", "a"), ("APNS-ID", "b")])), .duplicateHeaders)
    }

    func testMalformedApnsIDIsRejectedWithBadMessageId() {
        for id in [
            "", "not-a-uuid", "e621e1f8c36c495a93fc0c247a3e6e5f", "{e621e1f8-c36c-495a-93fc-0c247a3e6e5f}",
            "e621e1f8-c36c-495a-93fc-0c247a3e6e5g", "e621e1f8-c36c-495a-93fc-0c247a3e6e5f ",
            "e621e1f8_c36c_495a_93fc_0c247a3e6e5f", "e621e1f8-c36c-495a-93fc0-c247a3e6e5f",
        ] {
            assertRejected(validate(request(headers: [("apns-id", id)])), .badMessageId, status: 400)
        }
    }

    func testMalformedExpirationIsRejectedWithBadExpirationDate() {
        for value in ["", "-1", "+5", " 5", "5 ", "1.5", "1e9", "4294967296", "99999999999999999999", "soon"] {
            assertRejected(validate(request(headers: [("apns-expiration", value)])), .badExpirationDate, status: 400)
        }
    }

    func testPriorityOtherThan10Or5Or1IsRejectedWithBadPriority() {
        for value in ["", "0", "2", "05", "010", "10 ", "high", "-5"] {
            assertRejected(validate(request(headers: [("apns-priority", value)])), .badPriority, status: 400)
        }
    }

    func testUnknownPushTypeIsRejectedWithInvalidPushType() {
        for value in ["", "Alert", "silent", "voip "] {
            assertRejected(validate(request(headers: [("apns-push-type", value)])), .invalidPushType, status: 400)
        }
    }

    func testVoipPushTypeToTopicWithoutVoipSuffixIsRejectedWithInvalidPushType() {
        for topic in ["com.example.app", ".voip", "com.example.app.voip-ptt"] {
            let headers: [(name: String, value: String)] = [("apns-push-type", "voip"), ("apns-topic", topic)]
            assertRejected(validate(request(headers: headers), topics: .token), .invalidPushType)
        }
    }

    func testLiveActivityPushToATopicWithoutItsSuffixIsDeviceTokenNotForTopic() {
        for topic in ["com.example.app", "com.example.app.push-type.widgets", ".push-type.liveactivity"] {
            let headers: [(name: String, value: String)] = [("apns-push-type", "liveactivity"), ("apns-topic", topic)]
            assertRejected(validate(request(headers: headers), topics: .token), .deviceTokenNotForTopic, status: 400)
        }
        let headers: [(name: String, value: String)] = [
            ("apns-push-type", "liveactivity"), ("apns-topic", "com.example.app.push-type.liveactivity"),
        ]
        guard case .accepted = validate(request(headers: headers), topics: .token) else {
            return XCTFail("a Live Activity push to its own topic is accepted")
        }
    }

    func testAlertPushTypeToAnotherTypesTopicIsRejectedWithInvalidPushType() {
        for topic in ["com.example.app.voip", "com.example.app.complication", "com.example.app.push-type.widgets"] {
            for pushType in ["alert", "background"] {
                let headers: [(name: String, value: String)] = [
                    ("apns-push-type", pushType), ("apns-topic", topic), ("apns-priority", "5"),
                ]
                assertRejected(validate(request(headers: headers), topics: .token), .invalidPushType)
            }
        }
    }

    func testPushTypeTopicMismatchDetailNamesBoth() {
        let headers: [(name: String, value: String)] = [("apns-push-type", "alert"), ("apns-topic", "com.x.voip")]
        guard case .rejected(_, let detail, _) = validate(request(headers: headers), topics: .token) else {
            return XCTFail("expected a rejection")
        }
        XCTAssertTrue(detail.contains("alert") && detail.contains("com.x.voip"), detail)
    }

    /// Apple calls it an error, but APNs is seen to answer it 200: the lint reports it instead.
    func testBackgroundPushAtPriority10IsAccepted() {
        let headers: [(name: String, value: String)] = [("apns-push-type", "background"), ("apns-priority", "10")]
        guard case .accepted(let fields) = validate(request(headers: headers)) else { return XCTFail("refused") }
        XCTAssertEqual(fields.pushType, .background)
        XCTAssertEqual(fields.priority, .immediately)
    }

    func testBackgroundPushWithoutPriorityIsAcceptedAtTheDefault10() {
        guard case .accepted(let fields) = validate(request(headers: [("apns-push-type", "background")])) else {
            return XCTFail("refused")
        }
        XCTAssertEqual(fields.priority, .immediately)
    }

    func testCollapseIDOver64BytesIsRejectedWithBadCollapseId() {
        assertRejected(
            validate(request(headers: [("apns-collapse-id", String(repeating: "c", count: 65))])), .badCollapseId,
            status: 400)
        // 33 characters, 66 bytes: the limit counts UTF-8 bytes.
        assertRejected(
            validate(request(headers: [("apns-collapse-id", String(repeating: "é", count: 33))])), .badCollapseId)
    }

    func testCollapseIDOf64BytesIsAccepted() {
        let collapseID = String(repeating: "é", count: 32)
        XCTAssertEqual(
            assertAccepted(validate(request(headers: [("apns-collapse-id", collapseID)])))?.collapseID, collapseID)
    }

    func testEmptyTopicIsRejectedWithBadTopic() {
        assertRejected(validate(request(headers: [("apns-topic", "")]), topics: .token), .badTopic, status: 400)
    }

    func testTopicWithSpaceOrControlCharacterIsRejectedWithBadTopic() {
        for topic in [
            "com.example app", " com.example.app", "com.example.app\t", "com.example\u{7F}", "com.\u{0}x",
            "com.x\u{85}", "com.x\u{3000}",
        ] {
            assertRejected(
                validate(request(headers: [("apns-topic", topic)]), topics: universalCertificate), .badTopic)
        }
    }

    func testEmptyBodyIsRejectedWithPayloadEmpty() {
        assertRejected(validate(request(body: [])), .payloadEmpty, status: 400)
    }

    // MARK: - Payload limits

    func testPayloadOf4096BytesIsAcceptedAnd4097IsTooLarge() {
        assertAccepted(validate(request(body: body(size: 4096))))
        assertRejected(validate(request(body: body(size: 4097))), .payloadTooLarge, status: 413)
    }

    func testVoipPayloadOf5120BytesIsAcceptedAnd5121IsTooLarge() {
        let headers: [(name: String, value: String)] = [("apns-push-type", "voip"), ("apns-topic", "com.x.voip")]
        assertAccepted(validate(request(headers: headers, body: body(size: 5120))))
        assertRejected(validate(request(headers: headers, body: body(size: 5121))), .payloadTooLarge, status: 413)
    }

    func testNonVoipPushTypesKeepThe4096Limit() {
        let headers: [(name: String, value: String)] = [
            ("apns-push-type", "complication"), ("apns-topic", "com.x.complication"),
        ]
        assertRejected(validate(request(headers: headers, body: body(size: 4097))), .payloadTooLarge)
    }

    func testVoipTopicWithoutPushTypeGetsTheVoipLimit() {
        let headers: [(name: String, value: String)] = [("apns-topic", "com.x.voip")]
        assertAccepted(validate(request(headers: headers, body: body(size: 5120))))
        assertRejected(validate(request(headers: headers, body: body(size: 5121))), .payloadTooLarge)
    }

    func testPayloadLimitsAreConfigurable() {
        let small = RequestValidator(maximumPayloadSize: 100, maximumVoIPPayloadSize: 200)
        let voip: [(name: String, value: String)] = [("apns-push-type", "voip"), ("apns-topic", "com.x.voip")]
        assertAccepted(small.validate(request(body: body(size: 100)), topics: .any))
        assertRejected(small.validate(request(body: body(size: 101)), topics: .any), .payloadTooLarge)
        assertAccepted(small.validate(request(headers: voip, body: body(size: 200)), topics: .any))
        assertRejected(small.validate(request(headers: voip, body: body(size: 201)), topics: .any), .payloadTooLarge)
    }

    // MARK: - Order of checks

    /// Starts with a request where every check fails, then fixes one fault at a time: each
    /// answer must be the next check of the documented order.
    func testChecksRunInTheDocumentedOrder() {
        var method = "GET"
        var path = "/3/elsewhere"
        var headers: [(name: String, value: String)] = [
            ("x-repeated", "1"), ("x-repeated", "2"), ("apns-id", "nope"), ("apns-expiration", "-1"),
            ("apns-priority", "7"), ("apns-push-type", "nope"), ("apns-collapse-id", String(repeating: "c", count: 65)),
            ("apns-topic", "bad topic"),
        ]
        var body: [UInt8] = []
        let authority = TopicAuthority.certificate(topics: ["com.x", "com.x.voip"])
        func replace(_ name: String, with value: String) {
            headers = headers.map { $0.name == name ? (name: name, value: value) : $0 }
        }
        func next(_ expected: APNsReason, line: UInt = #line) {
            let request = HTTP2Request(method: method, path: path, headers: headers, body: body)
            assertRejected(validator.validate(request, topics: authority), expected, line: line)
        }

        next(.methodNotAllowed)
        method = "POST"
        next(.badPath)
        path = "/3/device/"
        next(.missingDeviceToken)
        path = "/3/device/not-hex"
        next(.duplicateHeaders)
        headers.removeFirst()
        next(.badDeviceToken)
        path = "/3/device/\(tokenHex)"
        next(.badMessageId)
        replace("apns-id", with: "e621e1f8-c36c-495a-93fc-0c247a3e6e5f")
        next(.badExpirationDate)
        replace("apns-expiration", with: "0")
        next(.badPriority)
        replace("apns-priority", with: "10")
        next(.invalidPushType)
        replace("apns-push-type", with: "background")
        next(.badCollapseId)
        replace("apns-collapse-id", with: "c")
        next(.badTopic)
        replace("apns-topic", with: "com.y")
        next(.topicDisallowed)
        replace("apns-topic", with: "com.x.voip")
        next(.invalidPushType)
        replace("apns-topic", with: "com.x")
        next(.payloadEmpty)
        body = self.body(size: 4097)
        next(.payloadTooLarge)
        body = Fixtures.alert
        assertAccepted(
            validator.validate(
                HTTP2Request(method: method, path: path, headers: headers, body: body),
                topics: authority))
    }

    // MARK: - The request type

    func testRequestReadsMethodAndPathFromItsPseudoHeaders() {
        let request = HTTP2Request(
            headers: [(":scheme", "https"), (":path", "/3/device/00"), (":method", "POST"), (":path", "/other")],
            body: [])
        XCTAssertEqual(request.method, "POST")
        XCTAssertEqual(request.path, "/3/device/00")
        XCTAssertEqual(HTTP2Request(headers: [], body: []).method, "")
    }

    func testRequestWithoutPseudoHeadersIsRejectedWithMethodNotAllowed() {
        assertRejected(
            validate(HTTP2Request(headers: [("apns-topic", "com.x")], body: Fixtures.alert)), .methodNotAllowed)
    }

    func testClientAPNsIDForErrorResponsesIsTheCanonicalSingleOneAsSent() {
        XCTAssertEqual(
            request(headers: [("apns-id", "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")]).clientAPNsID,
            "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
        XCTAssertNil(request().clientAPNsID)
        XCTAssertNil(request(headers: [("apns-id", "bad")]).clientAPNsID)
        let repeated: [(name: String, value: String)] = [
            ("apns-id", "e621e1f8-c36c-495a-93fc-0c247a3e6e5f"), ("apns-id", "e621e1f8-c36c-495a-93fc-0c247a3e6e5f"),
        ]
        XCTAssertNil(request(headers: repeated).clientAPNsID)
    }

    // MARK: - Robustness

    func testRandomRequestsNeverCrashAndAcceptedOnesKeepTheRules() {
        var random = SeededRandom(seed: 0x5EED_A9A5)
        let names = [
            ":method", ":path", ":scheme", ":authority", "apns-id", "apns-expiration", "apns-priority",
            "apns-push-type", "apns-topic", "apns-collapse-id", "authorization", "APNS-TOPIC", "x-other", "",
        ]
        let values = [
            "", "POST", "10", "5", "1", "0", "4294967295", "4294967296", "voip", "background", "alert", "mdm",
            "com.x", "com.x.voip", "com.x.complication", "e621e1f8-c36c-495a-93fc-0c247a3e6e5f", "/3/device/",
            "/3/device/\(tokenHex)", "bearer x", " ", "\u{0}", "é", "\u{FFFD}",
        ]
        let paths = ["/3/device/\(tokenHex)", "/3/device/", "/3/device", "/", "/3/device/abc", "/3/device/AbCd"]
        let authorities: [TopicAuthority] = [.any, .token, .certificate(topics: ["com.x"]), universalCertificate]
        var acceptedCount = 0
        var reasonsSeen: Set<String> = []

        func randomText() -> String {
            if random.next() % 2 == 0, let value = values.randomElement(using: &random) { return value }
            let bytes = (0..<Int(random.next() % 40)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            return String(decoding: bytes, as: UTF8.self)
        }

        for _ in 0..<10_000 {
            var headers: [(name: String, value: String)] = []
            if random.next() % 8 != 0 { headers.append((":method", random.next() % 4 == 0 ? randomText() : "POST")) }
            if random.next() % 8 != 0 {
                headers.append(
                    (":path", random.next() % 4 == 0 ? randomText() : paths.randomElement(using: &random) ?? ""))
            }
            for _ in 0..<Int(random.next() % 10) {
                let name = random.next() % 5 == 0 ? randomText() : names.randomElement(using: &random) ?? ""
                headers.insert((name, randomText()), at: Int(random.next() % UInt64(headers.count + 1)))
            }
            // Only the body's size matters before acceptance; its bytes just have to be any.
            let body = [UInt8](repeating: UInt8(truncatingIfNeeded: random.next()), count: Int(random.next() % 6000))
            let authority = authorities.randomElement(using: &random) ?? .any

            switch validator.validate(HTTP2Request(headers: headers, body: body), topics: authority) {
            case .accepted(let fields):
                acceptedCount += 1
                XCTAssertFalse(body.isEmpty)
                XCTAssertLessThanOrEqual(body.count, 5120)
                XCTAssertTrue([1, 5, 10].contains(fields.priority.rawValue))
                XCTAssertEqual(RequestValidator.canonicalUUID(fields.apnsID), fields.apnsID)
                XCTAssertFalse(fields.deviceToken.bytes.isEmpty)
            case .rejected(let reason, let detail, _):
                reasonsSeen.insert(reason.rawValue)
                XCTAssertTrue([400, 404, 405, 413].contains(reason.status), "\(reason)")
                XCTAssertLessThan(detail.utf8.count, 2000)
            }
        }
        XCTAssertGreaterThan(acceptedCount, 0, "the generator should reach acceptance sometimes")
        XCTAssertGreaterThanOrEqual(
            reasonsSeen.count, 12, "the generator should reach most checks: \(reasonsSeen.sorted())")
    }

    func testHugeRequestIsAnsweredWithoutTrouble() {
        let manyHeaders = (0..<50_000).map { (name: "x-header-\($0)", value: "v") }
        let huge = String(repeating: "a", count: 1_000_000)
        assertAccepted(validate(request(headers: manyHeaders)))
        assertRejected(validate(request(headers: [("apns-topic", huge + " ")])), .badTopic)
        assertRejected(validate(request(path: "/3/device/" + huge)), .badDeviceToken)
        assertRejected(validate(request(body: [UInt8](repeating: 0x20, count: 1_000_000))), .payloadTooLarge)
    }
}

