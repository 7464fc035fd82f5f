import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs
// Reads internals on purpose: JSONValidator and the log lines.
@testable import FakeAPNsDaemon

/// What the ControlAPI libFuzzer target (Fuzz/ControlAPI) found in the daemon's formats, as
/// tests, and its seeds' JSON bodies through the validator behind the daemon's log
/// (ControlAPIFuzzSeedTests replays them through the control API's decoder).
final class DaemonFuzzRegressionTests: XCTestCase {
    /// Found by the ControlAPI target: the validator behind the daemon's log accepted a number
    /// beyond Double's range, which the parser refuses, so the log copied the payload into its
    /// line unparsed and the line itself no longer parses.
    func testValidatorRefusesNumbersBeyondDouble() throws {
        for text in [#"{"":1e999}"#, #"{"n":-1e400}"#, #"{"a":[1E+309]}"#] {
            let bytes = Array(text.utf8)
            XCTAssertThrowsError(try JSONValue.parse(bytes), text)
            XCTAssertFalse(bytes.withUnsafeBufferPointer { JSONValidator.isSingleLineObject($0) }, text)
            let notification = PushNotification(
                deviceToken: DeviceToken(bytes: [0xFE, 0x15]), payload: Payload(text), format: .simple,
                connection: ConnectionInfo(id: 1, peer: "127.0.0.1:9"))
            let line = notification.jsonLine(event: "notification")
            XCTAssertNoThrow(try JSONValue(parsing: line), line)
        }
    }

    func testControlAPISeedBodies() throws {
        for (name, input) in try fuzzSeeds("ControlAPI") {
            let body = Array(input.drop { $0 != UInt8(ascii: "\n") }.dropFirst())
            let valid = body.withUnsafeBufferPointer { JSONValidator.isSingleLineObject($0) }
            let value = try? JSONValue.parse(body)
            if valid { XCTAssertNotNil(value?.objectValue, name) }
            if let value {
                let text = value.serialized()
                XCTAssertEqual(try JSONValue(parsing: text), value, name)
            }
        }
    }
}
