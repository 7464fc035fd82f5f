import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs
// Reads internals on purpose: ControlCommand, ControlJSON and HTTPRequest, the parsers the fuzz target drives.
@testable import FakeAPNsDaemon

/// Every seed of the ControlAPI fuzz target (Fuzz/corpus/ControlAPI/, "METHOD TARGET" then the
/// body) decoded by ControlCommand(request:) as the target does: it decodes or throws a
/// ControlError (400, 404, or 405 with the methods allowed), and a fault rule, as the API lists
/// it, decodes back to the same rule.
final class ControlAPIFuzzSeedTests: XCTestCase {
    func testControlAPISeeds() throws {
        var decoded = 0
        for (name, input) in try fuzzSeeds("ControlAPI") {
            let line = input.prefix { $0 != UInt8(ascii: "\n") }
            let parts = line.split(separator: UInt8(ascii: " "), maxSplits: 1, omittingEmptySubsequences: false)
            let method = String(decoding: parts[0], as: UTF8.self)
            let target = parts.count > 1 ? String(decoding: parts[1], as: UTF8.self) : ""
            let body = Array(input.dropFirst(line.count + 1))
            do {
                let command = try ControlCommand(request: HTTPRequest(method: method, target: target, body: body))
                decoded += 1
                if case .addFault(let rule) = command {
                    let listed: JSONValue = [
                        "match": ControlJSON.match(rule.match), "action": ControlJSON.action(rule.action),
                        "times": ControlJSON.times(rule.times),
                    ]
                    let again = try FaultRuleDecoder.decode(Array(listed.serialized().utf8))
                    XCTAssertEqual(again.match, rule.match, name)
                    XCTAssertEqual(again.action, rule.action, name)
                    XCTAssertEqual(again.times, rule.times, name)
                }
            } catch let error as ControlError {
                XCTAssert([400, 404, 405].contains(error.status), "\(name): \(error)")
                if error.status == 405 { XCTAssertFalse(error.allow?.contains(method) ?? true, name) }
            }
        }
        XCTAssertGreaterThan(decoded, 0, "no seed decodes")
    }
}
