import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs
// Reads internals on purpose: JSONValidator and the log lines it checks.
@testable import FakeAPNsDaemon

/// The validator behind the daemon's fast log lines agrees with the parser, and the lines it
/// makes are the notification's JSON.
final class JSONValidatorTests: XCTestCase {
    private func validates(_ text: String) -> Bool {
        Array(text.utf8).withUnsafeBufferPointer { JSONValidator.isSingleLineObject($0) }
    }

    /// What the validator must say: the parser accepts it as an object, and no raw line break.
    private func parserSays(_ bytes: [UInt8]) -> Bool {
        guard case .object = try? JSONValue.parse(bytes) else { return false }
        return !bytes.contains(0x0A) && !bytes.contains(0x0D)
    }

    func testAcceptsObjectsTheParserAccepts() {
        for text in [#"{}"#, #" {"a":[1,-2.5e3,true,false,null,"x\u00e9\n"]} "#, #"{"é":"😀","b":{"c":[]}}"#,
                     #"{"n":0}"#, #"{"n":-0.0E+1}"#] {
            XCTAssertEqual(validates(text), parserSays(Array(text.utf8)), text)
        }
        XCTAssertTrue(validates(#"{"a":1}"#))
        XCTAssertFalse(validates(#"{"s":"\ud83d\ude00"}"#), "surrogate escapes are left to the parser")
    }

    func testRefusesWhatCannotStandInALine() {
        for text in ["[1]", "\"x\"", "{\"a\":1}\n", "{\n}", #"{"a":01}"#, #"{"a":1,}"#, #"{"a"}"#, #"{"a":"\x"}"#,
                     "{\"a\":\"\u{1}\"}", #"{"a":tru}"#, #"{"a":1} x"#, ""] {
            XCTAssertFalse(validates(text), text)
        }
        XCTAssertFalse(Array([0x7B, 0x22, 0xC0, 0x80, 0x22, 0x3A, 0x31, 0x7D]).withUnsafeBufferPointer {
            JSONValidator.isSingleLineObject($0)
        }, "overlong UTF-8")
        let deep = String(repeating: "[", count: 100_000)
        XCTAssertFalse(validates("{\"a\":" + deep))
    }

    /// Plain text inside strings is stepped over eight bytes at a time: a byte that ends the
    /// run must be seen at every offset within and across those eight-byte words.
    func testSeesEveryKindOfByteAtEveryOffsetOfALongString() {
        let specials: [[UInt8]] = [[0x22], [0x5C, 0x6E], [0x5C], [0x01], [0x1F], [0x7F], [0x20], [0xC3, 0xA9], [0xFF],
                                   [0xC3], [0x80], [0x0A], [0x0D], [0x09], [0xED, 0xA0, 0x80], [0xF0, 0x9F, 0x98, 0x80]]
        for special in specials {
            for offset in 0..<40 {
                let text = Array(#"{"k":""#.utf8) + Array(repeating: UInt8(ascii: "a"), count: offset) + special
                    + Array(repeating: UInt8(ascii: "b"), count: 40 - offset) + Array(#""}"#.utf8)
                let validated = text.withUnsafeBufferPointer { JSONValidator.isSingleLineObject($0) }
                XCTAssertEqual(validated, parserSays(text), "\(special) at \(offset)")
            }
        }
    }

    func testAgreesWithTheParserOnMutatedPayloads() {
        var random = SeededRandom(seed: 0x10C_11E5)
        let seeds = [#"{"aps":{"alert":{"title":"Hi","body":"Thé"},"badge":3,"sound":"default"},"id":[1,2.5,null]}"#,
                     #"{"a":"\u0041\ud83d\ude00","b":-1e-3}"#]
        let alphabet = Array(#"{}[]":,\ "0123456789.eE+-truefalsnl"#.utf8) + [0xC3, 0xA9, 0xFF, 0x0A]
        for _ in 0..<20_000 {
            var bytes = Array(seeds[Int(random.next() % 2)].utf8)
            for _ in 0..<Int(random.next() % 3 + 1) {
                let index = Int(random.next() % UInt64(bytes.count))
                switch random.next() % 3 {
                case 0: bytes[index] = alphabet[Int(random.next() % UInt64(alphabet.count))]
                case 1: bytes.remove(at: index)
                default: bytes.insert(alphabet[Int(random.next() % UInt64(alphabet.count))], at: index)
                }
                if bytes.isEmpty { bytes = [0x7B] }
            }
            let validated = bytes.withUnsafeBufferPointer { JSONValidator.isSingleLineObject($0) }
            if validated {
                XCTAssertTrue(parserSays(bytes), String(decoding: bytes, as: UTF8.self))
            } else if parserSays(bytes) {
                // The only thing the validator leaves to the parser: \u escapes of surrogates.
                XCTAssertTrue(String(decoding: bytes, as: UTF8.self).lowercased().contains("\\ud"),
                              String(decoding: bytes, as: UTF8.self))
            }
        }
    }

    func testLogLineIsTheNotificationsJSONWithTheEventFirst() throws {
        let connection = ConnectionInfo(id: 3, peer: "127.0.0.1:9")
        for payload in [#"{"aps":{"alert":"Hi"},"n":1}"#, "not json", "{\n\"a\":1}", #"{"s":"\ud83d\ude00"}"#] {
            var notification = PushNotification(
                deviceToken: Fixtures.token, payload: Payload(payload), identifier: 7, expiration: 0,
                format: .enhanced, connection: connection)
            notification.sequenceNumber = 12
            let line = notification.jsonLine(event: "notification")
            XCTAssertFalse(line.contains("\n"), line)
            let parsed = try JSONValue(parsing: line)
            XCTAssertEqual(parsed.objectValue?.keys.first, "event")
            // The line carries lint findings only when the intake judged them; these were not.
            var expected = notification.jsonObject.objectValue.map { Array($0) }?.filter { $0.key != "lint" } ?? []
            expected.insert((key: "event", value: "notification"), at: 0)
            XCTAssertEqual(parsed, .object(JSONObject(expected)), payload)
        }
    }
}
