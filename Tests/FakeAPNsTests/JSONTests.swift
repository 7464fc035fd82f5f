import FakeAPNsTestSupport
import Foundation
import XCTest

import FakeAPNs

final class JSONTests: XCTestCase {
    // MARK: - Helpers

    private func parse(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> JSONValue? {
        do {
            return try JSONValue(parsing: text)
        } catch {
            XCTFail("unexpected parse error: \(error)", file: file, line: line)
            return nil
        }
    }

    private func parseError(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line)
        -> JSONParseError?
    {
        do {
            let value = try JSONValue.parse(bytes)
            XCTFail("expected a parse error, got \(value)", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    private func parseError(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> JSONParseError? {
        parseError(Array(text.utf8), file: file, line: line)
    }

    /// Asserts that `text` is rejected at `offset` with a message containing `reason`.
    private func assertRejects(
        _ text: String, at offset: Int, saying reason: String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        assertRejects(Array(text.utf8), at: offset, saying: reason, file: file, line: line)
    }

    private func assertRejects(
        _ bytes: [UInt8], at offset: Int, saying reason: String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        guard let error = parseError(bytes, file: file, line: line) else { return }
        XCTAssertEqual(error.offset, offset, "offset of: \(error.message)", file: file, line: line)
        XCTAssertTrue(error.message.contains(reason), "message was: \(error.message)", file: file, line: line)
    }

    // MARK: - Structure

    func testParsesLiterals() {
        XCTAssertEqual(parse("null"), .null)
        XCTAssertEqual(parse("true"), .bool(true))
        XCTAssertEqual(parse("false"), .bool(false))
    }

    func testParsesEmptyArrayAndEmptyObject() {
        XCTAssertEqual(parse("[]"), .array([]))
        XCTAssertEqual(parse("{}"), .object(JSONObject()))
    }

    func testParsesNestedArraysAndObjects() {
        let value = parse(#"{"a":[1,{"b":[true,null]},[]],"c":{"d":{}}}"#)
        XCTAssertEqual(value, ["a": [1, ["b": [true, nil]], []], "c": ["d": [:]]])
    }

    func testAllowsWhitespaceAroundAndBetweenTokens() {
        let value = parse(" \t\r\n{ \"a\" :\n[ 1 ,\t2 ] , \"b\" : \"x\" }\r\n ")
        XCTAssertEqual(value, ["a": [1, 2], "b": "x"])
    }

    func testObjectKeepsKeysInWrittenOrder() {
        let object = parse(#"{"z":1,"a":2,"m":3}"#)?.objectValue
        XCTAssertEqual(object?.keys, ["z", "a", "m"])
        XCTAssertEqual(object.map { $0.map(\.key) }, ["z", "a", "m"])
    }

    func testParsesTopLevelScalars() {
        XCTAssertEqual(parse(#""hi""#), "hi")
        XCTAssertEqual(parse("42"), 42)
    }

    func testParsesBytesFromCollectionsWithoutContiguousStorage() throws {
        let bytes = #"{"a":[1,2]}"#.utf8.lazy.map { $0 }
        XCTAssertEqual(try JSONValue.parse(bytes), ["a": [1, 2]])
    }

    func testParsesArraySlicesAtTheirOwnOffsets() throws {
        let bytes = Array(#"xx[1,"é"]yy"#.utf8)
        XCTAssertEqual(try JSONValue.parse(bytes[2..<(bytes.count - 2)]), [1, "é"])
    }

    // MARK: - Numbers

    func testIntegerWithoutFractionOrExponentIsInt() {
        XCTAssertEqual(parse("123"), .int(123))
        XCTAssertEqual(parse("0"), .int(0))
    }

    func testNegativeIntegerIsInt() {
        XCTAssertEqual(parse("-17"), .int(-17))
    }

    func testIntegersAtTheLimitsOfIntStayInt() {
        XCTAssertEqual(parse("9223372036854775807"), .int(.max))
        XCTAssertEqual(parse("-9223372036854775808"), .int(.min))
    }

    func testIntegersBeyondIntBecomeDouble() {
        XCTAssertEqual(parse("9223372036854775808"), .double(9_223_372_036_854_775_808))
        XCTAssertEqual(parse("-9223372036854775809"), .double(-9.223372036854775808e18))
        XCTAssertEqual(parse("123456789012345678901234567890"), .double(1.2345678901234568e29))
    }

    func testNumberWithFractionIsDoubleEvenWhenWhole() {
        XCTAssertEqual(parse("1.0"), .double(1.0))
        XCTAssertEqual(parse("-0.5"), .double(-0.5))
    }

    func testNumbersWithExponentAreDoubles() {
        XCTAssertEqual(parse("1e2"), .double(100))
        XCTAssertEqual(parse("1E+2"), .double(100))
        XCTAssertEqual(parse("-2.5e-3"), .double(-0.0025))
        XCTAssertEqual(parse("0e0"), .double(0))
    }

    func testNegativeZeroWithFractionKeepsItsSign() throws {
        let value = try XCTUnwrap(parse("-0.0")?.doubleValue)
        XCTAssertEqual(value.sign, .minus)
        XCTAssertEqual(parse("-0"), .int(0))
    }

    func testUnderflowingNumberBecomesZero() {
        XCTAssertEqual(parse("1e-400"), .double(0))
    }

    func testRejectsNumbersBeyondDoubleRange() {
        assertRejects("[1e400]", at: 1, saying: "number is out of range for a double")
        assertRejects("-1e400", at: 0, saying: "out of range")
    }

    func testRejectsLeadingZeros() {
        assertRejects("01", at: 0, saying: "leading zeros are not allowed in numbers")
        assertRejects("-012", at: 1, saying: "leading zeros")
        assertRejects("[00]", at: 1, saying: "leading zeros")
    }

    func testRejectsIncompleteNumbers() {
        assertRejects("-", at: 1, saying: "expected a digit after '-', but the input ended")
        assertRejects("-x", at: 1, saying: "expected a digit after '-'")
        assertRejects("1.", at: 2, saying: "expected a digit after '.'")
        assertRejects("1.e5", at: 2, saying: "expected a digit after '.'")
        assertRejects("1e", at: 2, saying: "expected a digit in exponent")
        assertRejects("1e+", at: 3, saying: "expected a digit in exponent")
    }

    func testRejectsNumberFormsJSONDoesNotHave() {
        assertRejects("+1", at: 0, saying: "expected a JSON value")
        assertRejects(".5", at: 0, saying: "expected a JSON value")
        assertRejects("0x10", at: 1, saying: "unexpected data after the JSON value")
        assertRejects("NaN", at: 0, saying: "expected a JSON value")
        assertRejects("Infinity", at: 0, saying: "expected a JSON value")
    }

    // MARK: - Strings

    func testDecodesEverySingleCharacterEscape() {
        XCTAssertEqual(parse(#""\"\\\/\b\f\n\r\t""#), .string("\"\\/\u{08}\u{0C}\n\r\t"))
    }

    func testDecodesUnicodeEscapesInEitherCase() {
        XCTAssertEqual(parse(#""\u0041\u00e9\u00E9\u4e2D""#), "Aéé中")
    }

    func testDecodesEscapedNUL() {
        XCTAssertEqual(parse(#""a\u0000b""#), .string("a\u{0}b"))
    }

    func testDecodesSurrogatePairAsOneScalar() {
        XCTAssertEqual(parse(#""\uD83D\uDE00""#), "😀")
        XCTAssertEqual(parse(#""x\ud834\udd1ey""#), "x𝄞y")
    }

    func testDecodesEscapesMixedWithRawUTF8() {
        XCTAssertEqual(parse(#""é\n😀\t中""#), "é\n😀\t中")
    }

    func testAcceptsRawMultibyteUTF8() {
        XCTAssertEqual(parse(#"{"clé":"中文 😀"}"#), ["clé": "中文 😀"])
    }

    func testAcceptsRawDeleteCharacter() {
        XCTAssertEqual(parse("\"\u{7F}\""), .string("\u{7F}"))
    }

    func testRejectsLoneHighSurrogateAtEndOfString() {
        assertRejects(#""ab\uD83D""#, at: 3, saying: #"lone high surrogate \uD83D in string"#)
    }

    func testRejectsHighSurrogateFollowedByNonSurrogate() {
        assertRejects(#""\uD83D\u0041""#, at: 1, saying: "lone high surrogate")
        assertRejects(#""\uD83Dx""#, at: 1, saying: "lone high surrogate")
    }

    func testRejectsTwoHighSurrogates() {
        assertRejects(#""\uD83D\uD83D""#, at: 1, saying: "lone high surrogate")
    }

    func testRejectsLoneLowSurrogate() {
        assertRejects(#""\uDE00""#, at: 1, saying: #"lone low surrogate \uDE00 in string"#)
    }

    func testRejectsUnknownEscape() {
        assertRejects(#""a\x""#, at: 2, saying: #"invalid escape sequence '\x' in string"#)
        assertRejects(#""\U0041""#, at: 1, saying: #"invalid escape sequence '\U'"#)
    }

    func testRejectsUnicodeEscapeWithoutFourHexDigits() {
        assertRejects(#""\u12""#, at: 1, saying: "expected four hex digits")
        assertRejects(#""\u00g0""#, at: 1, saying: "expected four hex digits")
        assertRejects(#""\uD83D\u12""#, at: 7, saying: "expected four hex digits")
    }

    func testRejectsUnescapedControlCharacters() {
        assertRejects("\"a\nb\"", at: 2, saying: "unescaped control character 0x0A in string")
        assertRejects("\"\t\"", at: 1, saying: "unescaped control character 0x09")
        assertRejects([0x22, 0x00, 0x22], at: 1, saying: "unescaped control character 0x00")
        assertRejects("\"\\n\u{1F}\"", at: 3, saying: "unescaped control character 0x1F")
    }

    func testRejectsUnterminatedString() {
        assertRejects(#"{"a":"abc"#, at: 5, saying: "unterminated string")
        assertRejects(#""ab\"#, at: 3, saying: "unterminated string")
        assertRejects(#""a\n"#, at: 0, saying: "unterminated string")
    }

    // MARK: - UTF-8

    func testRejectsBytesThatNeverStartUTF8() {
        assertRejects([0x22, 0x61, 0xFF, 0x22], at: 2, saying: "invalid UTF-8 byte 0xFF in string")
        assertRejects([0x22, 0x80, 0x22], at: 1, saying: "invalid UTF-8 byte 0x80")
    }

    func testRejectsOverlongUTF8() {
        assertRejects([0x22, 0xC0, 0xAF, 0x22], at: 1, saying: "invalid UTF-8 byte 0xC0")
        assertRejects([0x22, 0xE0, 0x80, 0xAF, 0x22], at: 2, saying: "invalid UTF-8 byte 0x80")
    }

    func testRejectsUTF8EncodedSurrogates() {
        assertRejects([0x22, 0xED, 0xA0, 0x80, 0x22], at: 2, saying: "invalid UTF-8 byte 0xA0")
    }

    func testRejectsUTF8AboveU10FFFF() {
        assertRejects([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], at: 2, saying: "invalid UTF-8 byte 0x90")
        assertRejects([0x22, 0xF5, 0x80, 0x80, 0x80, 0x22], at: 1, saying: "invalid UTF-8 byte 0xF5")
    }

    func testRejectsMissingContinuationByte() {
        assertRejects([0x22, 0xE2, 0x82, 0x41, 0x22], at: 3, saying: "invalid UTF-8 byte 0x41")
    }

    func testRejectsUTF8SequenceCutOffByEndOfInput() {
        assertRejects([0x22, 0xE2, 0x82], at: 1, saying: "truncated UTF-8 sequence in string")
    }

    func testRejectsInvalidUTF8AfterAnEscape() {
        assertRejects([0x22, 0x5C, 0x6E, 0xFE, 0x22], at: 3, saying: "invalid UTF-8 byte 0xFE")
    }

    func testRejectsNonASCIIOutsideStrings() {
        assertRejects([0x5B, 0xC3, 0xA9, 0x5D], at: 1, saying: "expected a JSON value")
    }

    func testRejectsByteOrderMark() {
        assertRejects([0xEF, 0xBB, 0xBF, 0x7B, 0x7D], at: 0, saying: "byte order mark is not allowed")
    }

    // MARK: - Syntax errors

    func testRejectsEmptyInput() {
        assertRejects("", at: 0, saying: "expected a JSON value, but the input ended")
        assertRejects(" \n ", at: 3, saying: "expected a JSON value, but the input ended")
    }

    func testRejectsTrailingCommaInArray() {
        assertRejects("[1,2,]", at: 4, saying: "trailing comma in array")
        assertRejects("[1, ]", at: 2, saying: "trailing comma in array")
    }

    func testRejectsTrailingCommaInObject() {
        assertRejects(#"{"a":1,}"#, at: 6, saying: "trailing comma in object")
    }

    func testRejectsDataAfterTheValue() {
        assertRejects("{} x", at: 3, saying: "unexpected data after the JSON value")
        assertRejects("1 2", at: 2, saying: "unexpected data after the JSON value")
        assertRejects("[1]]", at: 3, saying: "unexpected data after the JSON value")
    }

    func testRejectsMissingCommaBetweenObjectMembers() {
        assertRejects(#"{"a":1 "b":2}"#, at: 7, saying: "expected ',' or '}' after object member")
    }

    func testRejectsMissingCommaBetweenArrayElements() {
        assertRejects("[1 2]", at: 3, saying: "expected ',' or ']' after array element")
    }

    func testRejectsMissingColon() {
        assertRejects(#"{"a" 1}"#, at: 5, saying: "expected ':' after object key")
    }

    func testRejectsKeysThatAreNotStrings() {
        assertRejects("{a:1}", at: 1, saying: #"expected '"' to begin an object key"#)
        assertRejects("{1:1}", at: 1, saying: "to begin an object key")
        assertRejects("{'a':1}", at: 1, saying: "to begin an object key")
    }

    func testRejectsMissingValue() {
        assertRejects(#"{"a":}"#, at: 5, saying: "expected a JSON value")
        assertRejects("[,1]", at: 1, saying: "expected a JSON value")
    }

    func testRejectsMisspelledLiterals() {
        assertRejects("tru", at: 0, saying: "invalid literal, expected 'true'")
        assertRejects("[nul]", at: 1, saying: "invalid literal, expected 'null'")
        assertRejects("fals", at: 0, saying: "expected 'false'")
        assertRejects("True", at: 0, saying: "expected a JSON value")
    }

    func testRejectsUnclosedContainers() {
        assertRejects("[1", at: 2, saying: "expected ',' or ']' after array element, but the input ended")
        assertRejects(#"{"a":1"#, at: 6, saying: "expected ',' or '}' after object member, but the input ended")
        assertRejects("[", at: 1, saying: "expected a JSON value, but the input ended")
    }

    // MARK: - Error reporting

    func testErrorMessageNamesTheProblemAndItsByteOffset() throws {
        let error = try XCTUnwrap(parseError(#"{"alert":"x" "badge":1}"#))
        XCTAssertEqual(error.offset, 13)
        XCTAssertEqual(error.message, "expected ',' or '}' after object member at byte 13")
    }

    func testErrorAtEndOfInputSaysTheInputEnded() throws {
        let error = try XCTUnwrap(parseError("[true"))
        XCTAssertEqual(error.message, "expected ',' or ']' after array element, but the input ended at byte 5")
    }

    func testErrorOffsetsCountBytesNotCharacters() throws {
        let error = try XCTUnwrap(parseError(#"["é😀" x]"#))
        XCTAssertEqual(error.offset, 10)
    }

    func testErrorDescriptionIsTheMessage() throws {
        let error = try XCTUnwrap(parseError("[1,]"))
        XCTAssertEqual(error.description, error.message)
        XCTAssertEqual("\(error)", "trailing comma in array at byte 2")
    }

    func testParseErrorsCompareByOffsetAndMessage() {
        XCTAssertEqual(JSONParseError("x", at: 1), JSONParseError("x", at: 1))
        XCTAssertNotEqual(JSONParseError("x", at: 1), JSONParseError("x", at: 2))
    }

    // MARK: - Nesting depth

    func testAcceptsNestingUpToTheLimit() throws {
        let depth = JSONValue.maximumNestingDepth
        let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        var value = try XCTUnwrap(parse(text))
        var levels = 0
        while let inner = value.arrayValue {
            levels += 1
            guard let first = inner.first else { break }
            value = first
        }
        XCTAssertEqual(levels, 512)
    }

    func testDeepestAcceptedValueParsesSerializesComparesAndFreesOnA1MBStack() {
        let depth = JSONValue.maximumNestingDepth
        let text = String(repeating: "[", count: depth) + "1" + String(repeating: "]", count: depth)
        let serialized = inBackground("deep-json", stackSize: 1 << 20) { () -> String? in
            guard let value = try? JSONValue(parsing: text), value == (try? JSONValue(parsing: text)) else { return nil }
            var hasher = Hasher()
            value.hash(into: &hasher)
            return value.serialized()
        }
        XCTAssertEqual(try serialized.pop(timeout: .seconds(10)).get(), text)
    }

    func testRejectsNestingOneLevelBeyondTheLimit() {
        let text = String(repeating: "[", count: 513) + String(repeating: "]", count: 513)
        assertRejects(text, at: 512, saying: "nesting deeper than 512 levels")
    }

    func testRejectsDeepObjectNesting() {
        let text = String(repeating: #"{"a":"#, count: 600) + "1" + String(repeating: "}", count: 600)
        assertRejects(text, at: 512 * 5, saying: "nesting deeper than 512 levels")
    }

    func testRejectsHundredThousandOpenBracketsWithoutCrashing() {
        assertRejects(String(repeating: "[", count: 100_000), at: 512, saying: "nesting deeper than 512 levels")
    }

    func testRejectsHundredThousandNestedArraysWithoutCrashing() {
        let text = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        assertRejects(text, at: 512, saying: "nesting deeper")
    }

    // MARK: - Duplicate keys

    func testDuplicateKeyLookupSeesTheFirstValue() {
        let object = parse(#"{"a":1,"b":2,"a":3}"#)?.objectValue
        XCTAssertEqual(object?["a"], 1)
        XCTAssertEqual(object?.count, 2)
        XCTAssertEqual(object?.keys, ["a", "b"])
    }

    func testDuplicateKeysAreRecordedOnceEachInOrderOfRepetition() {
        let object = parse(#"{"a":1,"b":2,"b":3,"a":4,"a":5}"#)?.objectValue
        XCTAssertEqual(object?.duplicateKeys, ["b", "a"])
    }

    func testDuplicateKeysAreRecordedInLargeObjects() throws {
        let members = (0..<40).map { #""k\#($0)":\#($0)"# } + [#""k7":"again""#]
        let object = try XCTUnwrap(parse("{" + members.joined(separator: ",") + "}")?.objectValue)
        XCTAssertEqual(object.duplicateKeys, ["k7"])
        XCTAssertEqual(object["k7"], 7)
        XCTAssertEqual(object.count, 40)
    }

    func testObjectWithoutRepeatedKeysHasNoDuplicateKeys() {
        XCTAssertEqual(parse(#"{"a":1,"b":{"a":2}}"#)?.objectValue?.duplicateKeys, [])
    }

    func testDuplicateKeysInNestedObjectsAreRecordedThere() {
        let value = parse(#"{"aps":{"badge":1,"badge":2}}"#)
        XCTAssertEqual(value?.objectValue?.duplicateKeys, [])
        XCTAssertEqual(value?["aps"]?.objectValue?.duplicateKeys, ["badge"])
    }

    // MARK: - JSONObject

    func testObjectsWithTheSameMembersInAnotherOrderAreEqual() {
        let first: JSONObject = ["a": 1, "b": [true]]
        let second: JSONObject = ["b": [true], "a": 1]
        XCTAssertEqual(first, second)
        XCTAssertEqual(first.hashValue, second.hashValue)
        XCTAssertEqual(Set<JSONValue>([.object(first), .object(second)]).count, 1)
    }

    func testObjectsWithDifferentValuesOrKeysAreNotEqual() {
        let object: JSONObject = ["a": 1, "b": 2]
        XCTAssertNotEqual(object, ["a": 1, "b": 3])
        XCTAssertNotEqual(object, ["a": 1, "c": 2])
        XCTAssertNotEqual(object, ["a": 1])
    }

    func testLargeObjectsLookUpEveryKey() {
        let object = JSONObject((0..<100).map { (key: "key\($0)", value: JSONValue.int($0)) })
        XCTAssertEqual(object.count, 100)
        XCTAssertTrue((0..<100).allSatisfy { object["key\($0)"] == .int($0) })
        XCTAssertNil(object["key100"])
    }

    func testObjectFromPairsKeepsOrderAndIterates() {
        let object = JSONObject([(key: "z", value: 1), (key: "a", value: "x")])
        XCTAssertEqual(object.keys, ["z", "a"])
        XCTAssertEqual(object.map(\.value), [1, "x"])
        XCTAssertFalse(object.isEmpty)
        XCTAssertTrue(JSONObject().isEmpty)
    }

    func testMissingKeyIsNil() {
        let object: JSONObject = ["a": nil]
        XCTAssertNil(object["b"])
        XCTAssertEqual(object["a"], .null)
    }

    // MARK: - Accessors and literals

    func testTypedAccessorsAnswerOnlyForTheirOwnCase() {
        let string: JSONValue = "x"
        XCTAssertEqual(string.stringValue, "x")
        XCTAssertNil(string.intValue)
        XCTAssertNil(string.boolValue)
        XCTAssertNil(string.arrayValue)
        XCTAssertNil(string.objectValue)
        XCTAssertNil(string.doubleValue)
        XCTAssertEqual(JSONValue.bool(false).boolValue, false)
        XCTAssertEqual(JSONValue.array([1]).arrayValue, [1])
        XCTAssertEqual(JSONValue.object(["a": 1]).objectValue, ["a": 1])
        XCTAssertTrue(JSONValue.null.isNull)
        XCTAssertFalse(JSONValue.int(0).isNull)
    }

    func testDoubleValueConvertsIntegers() {
        XCTAssertEqual(JSONValue.int(3).doubleValue, 3.0)
        XCTAssertEqual(JSONValue.double(0.25).doubleValue, 0.25)
    }

    func testIntValueDoesNotConvertDoubles() {
        XCTAssertNil(JSONValue.double(1.0).intValue)
        XCTAssertEqual(JSONValue.int(1).intValue, 1)
    }

    func testIntAndDoubleWithTheSameValueAreDistinct() {
        XCTAssertNotEqual(JSONValue.int(1), JSONValue.double(1.0))
    }

    func testSubscriptsChainThroughNestedValues() {
        let value: JSONValue = ["aps": ["alert": ["title": "Hi"]], "list": [10, 20]]
        XCTAssertEqual(value["aps"]?["alert"]?["title"]?.stringValue, "Hi")
        XCTAssertEqual(value["list"]?[1], 20)
        XCTAssertNil(value["aps"]?["missing"])
        XCTAssertNil(value["list"]?["key"])
    }

    func testIndexSubscriptIsNilOutOfRangeOrOnNonArrays() {
        let value: JSONValue = [1, 2]
        XCTAssertNil(value[2])
        XCTAssertNil(value[-1])
        XCTAssertNil(JSONValue.string("ab")[0])
    }

    func testLiteralsBuildTheMatchingCases() {
        let value: JSONValue = ["n": nil, "b": true, "i": 1, "d": 1.5, "s": "x", "a": [1], "o": ["k": 2]]
        let expected = JSONValue.object(
            JSONObject([
                (key: "n", value: .null), (key: "b", value: .bool(true)), (key: "i", value: .int(1)),
                (key: "d", value: .double(1.5)), (key: "s", value: .string("x")),
                (key: "a", value: .array([.int(1)])),
                (key: "o", value: .object(JSONObject([(key: "k", value: .int(2))]))),
            ])
        )
        XCTAssertEqual(value, expected)
    }

    // MARK: - Serialization

    func testSerializesCompactlyInWrittenOrder() {
        let value: JSONValue = ["b": [1, 2.5, "x", true, nil], "a": [:], "c": []]
        XCTAssertEqual(value.serialized(), #"{"b":[1,2.5,"x",true,null],"a":{},"c":[]}"#)
    }

    func testSortedKeysSortsEveryObjectByCodePoint() {
        let value: JSONValue = ["b": 1, "a": ["z": 1, "é": 2, "Z": 3], "B": 2]
        XCTAssertEqual(value.serialized(sortedKeys: true), #"{"B":2,"a":{"Z":3,"z":1,"é":2},"b":1}"#)
    }

    func testEscapesQuoteBackslashAndNamedControlCharacters() {
        let value = JSONValue.string("\"\\\u{08}\u{0C}\n\r\t")
        XCTAssertEqual(value.serialized(), #""\"\\\b\f\n\r\t""#)
    }

    func testEscapesOtherControlCharactersAsUnicodeEscapes() {
        XCTAssertEqual(JSONValue.string("\u{0}\u{1}\u{1F}").serialized(), #""\u0000\u0001\u001f""#)
    }

    func testEscapesCarriageReturnLineFeedAsTwoEscapes() {
        XCTAssertEqual(JSONValue.string("a\r\nb").serialized(), #""a\r\nb""#)
    }

    func testWritesSlashDeleteAndNonASCIIUnescaped() {
        XCTAssertEqual(JSONValue.string("a/b\u{7F}é😀").serialized(), "\"a/b\u{7F}é😀\"")
    }

    func testEscapesObjectKeys() {
        XCTAssertEqual(JSONValue.object(["a\"b\n": 1]).serialized(), #"{"a\"b\n":1}"#)
    }

    func testWholeDoublesKeepTheirFraction() {
        XCTAssertEqual(JSONValue.double(1.0).serialized(), "1.0")
        XCTAssertEqual(JSONValue.double(-2.0).serialized(), "-2.0")
    }

    func testLargeAndSmallDoublesUseAPlainExponent() {
        XCTAssertEqual(JSONValue.double(1e20).serialized(), "1e20")
        XCTAssertEqual(JSONValue.double(1e-7).serialized(), "1e-7")
        XCTAssertEqual(JSONValue.double(1.5e300).serialized(), "1.5e300")
        XCTAssertEqual(JSONValue.double(-2.5e-10).serialized(), "-2.5e-10")
    }

    func testDoublesRoundTripExactlyAndStayDoubles() throws {
        let doubles: [Double] = [
            0.1, 0.1 + 0.2, 1.0 / 3.0, 1e20, 1e16, 1e15, 123_456.789, -0.0, .leastNonzeroMagnitude,
            .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 2.2250738585072014e-308, 9_007_199_254_740_992,
        ]
        for double in doubles {
            let text = JSONValue.double(double).serialized()
            let parsed = try JSONValue(parsing: text)
            guard case .double(let back) = parsed else {
                XCTFail("\(double) serialized as \(text) parsed as \(parsed)")
                continue
            }
            XCTAssertEqual(back.bitPattern, double.bitPattern, "\(double) serialized as \(text)")
        }
    }

    func testIntegersSerializeWithoutFraction() {
        XCTAssertEqual(JSONValue.int(Int.min).serialized(), "-9223372036854775808")
        XCTAssertEqual(JSONValue.int(0).serialized(), "0")
        XCTAssertEqual(JSONValue.int(-17).serialized(), "-17")
        XCTAssertEqual(JSONValue.int(Int.max).serialized(), "9223372036854775807")
    }

    func testNonFiniteDoublesSerializeAsNull() {
        let value: JSONValue = [.double(.nan), .double(.infinity), .double(-.infinity)]
        XCTAssertEqual(value.serialized(), "[null,null,null]")
    }

    func testQuotedWrapsAndEscapesAString() {
        XCTAssertEqual(JSONValue.quoted(#"say "hi"\"#), #""say \"hi\"\\""#)
        XCTAssertEqual(JSONValue.quoted(""), #""""#)
        XCTAssertEqual(JSONValue.quoted("BadDeviceToken"), #""BadDeviceToken""#)
    }

    func testDescriptionIsCompactJSON() {
        let value: JSONValue = ["a": [1, "b"]]
        XCTAssertEqual(value.description, #"{"a":[1,"b"]}"#)
        XCTAssertEqual(value.objectValue?.description, #"{"a":[1,"b"]}"#)
    }

    // MARK: - Round trip

    func testParseSerializeParseGivesTheSameValue() throws {
        let text = """
            {"aps":{"alert":{"title":"Caf\\u00e9 \\"Ole\\"","body":"line1\\nline2\\t\\u0001",
            "loc-args":["😀","\\uD83D\\uDE00"]},"badge":0,"sound":{"critical":1,"volume":0.75}},
            "n":[-0,-1.5e-7,12345678901234567890,1e300,true,false,null,{}],"slash":"a\\/b","e":""}
            """
        let first = try JSONValue(parsing: text)
        let second = try JSONValue(parsing: first.serialized())
        XCTAssertEqual(first, second)
        XCTAssertEqual(first.serialized(), second.serialized())
    }

    func testSerializingAParsedCompactDocumentReproducesIt() throws {
        let text = #"{"aps":{"alert":"Hi","badge":3,"content-available":1},"list":[1.5,"x",null],"d":{}}"#
        XCTAssertEqual(try JSONValue(parsing: text).serialized(), text)
    }

    func testRoundTripKeepsIntAndDoubleApart() throws {
        let value: JSONValue = [1, 1.0, 100.0, 1e100]
        XCTAssertEqual(try JSONValue(parsing: value.serialized()), value)
    }
}
