import FakeAPNs
import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: Daemon and DevicesFile, a daemon in this process.
@testable import FakeAPNsDaemon

/// The bounds of `PUT /api/v1/apps/<bundle>` and of the `--devices` file's app lines (issue
/// 32): at the bound kept, one past it 400 `limit_reached` (or the file refused, naming the
/// line), by curl.
final class ControlAPIAppBoundsTests: XCTestCase {
    private let fixture = InProcessDaemonFixture()
    private var daemon: Daemon! { fixture.daemon }

    /// `count` distinct names of exactly `length` bytes, as a JSON array.
    private func names(_ count: Int, length: Int, prefix: String) -> String {
        let items = (0..<count).map { index in
            let head = "\(prefix)\(index)-"
            return "\"" + head + String(repeating: "x", count: length - head.utf8.count) + "\""
        }
        return "[" + items.joined(separator: ",") + "]"
    }

    private func put(_ bundle: String, _ body: String) throws -> (status: Int, json: JSONValue) {
        let answer = try curl(port: fixture.http.port, "PUT", "/api/v1/apps/\(bundle)", json: body, maxTime: 20)
        XCTAssertEqual(answer.exit, 0, answer.error)
        return (answer.status, (try? JSONValue(parsing: answer.body)) ?? .null)
    }

    func testADescriptionAtTheBoundsIsKeptAndOnePastThemIsRefused() throws {
        try fixture.start(for: self)
        // 128 categories and 128 sounds of 32 bytes: every count's bound and 8 KiB of names.
        let full = #"{"categories":\#(names(128, length: 32, prefix: "C")),"sounds":\#(names(128, length: 32, prefix: "S"))}"#
        let kept = try put("com.example.app", full)
        XCTAssertEqual(kept.status, 200, "\(kept.json)")
        XCTAssertEqual(daemon.server.apps["com.example.app"]?.categories?.count, 128)
        XCTAssertEqual(daemon.server.apps["com.example.app"]?.sounds?.count, 128)
        let longest = String(repeating: "a", count: 255)
        XCTAssertEqual(try put(longest, #"{"sounds":["\#(longest)"]}"#).status, 200)

        // One byte over 8 KiB of names: 255 names of 32 bytes and one of 33.
        let thirtyThree = "S-last-" + String(repeating: "y", count: 26)
        let refusals: [(bundle: String, body: String, message: String)] = [
            ("com.example.app", #"{"categories":\#(names(129, length: 8, prefix: "C"))}"#,
             "field 'categories': app \"com.example.app\" is not described: the description lists 129 categories; "
                + "an app description lists at most 128"),
            ("com.example.app", #"{"sounds":["\#(longest)b"]}"#,
             "field 'sounds': app \"com.example.app\" is not described: one of its sounds is 256 bytes long; "
                + "a name is at most 255 bytes"),
            ("com.example.app", #"{"categories":\#(names(128, length: 32, prefix: "C")),"sounds":\#(names(127, length: 32, prefix: "S").dropLast()),"\#(thirtyThree)"]}"#,
             "its names take 8193 bytes in all"),
            (longest + "b", "{}", "the bundle ID is 256 bytes long; at most 255 are allowed"),
        ]
        for refusal in refusals {
            let answer = try put(refusal.bundle, refusal.body)
            XCTAssertEqual(answer.status, 400, refusal.message)
            XCTAssertEqual(answer.json["error"], "limit_reached", "\(answer.json)")
            let message = answer.json["message"]?.stringValue ?? ""
            XCTAssertTrue(message.contains(refusal.message), message)
        }
        XCTAssertEqual(daemon.server.apps["com.example.app"]?.categories?.count, 128, "a refusal changes nothing")
        XCTAssertEqual(daemon.server.apps.count, 2)
    }

    func testTheThousandthAppIsKeptAndTheNextRefusedUntilAReset() throws {
        try fixture.start(for: self)
        // 999 described by the library, the thousandth through the API.
        for index in 1..<AppCatalog.maximumApps {
            try daemon.server.apps.describe("com.example.app\(index)", as: AppBundle())
        }
        XCTAssertEqual(try put("com.example.app1000", #"{"categories":["ORDER"]}"#).status, 200)
        let refused = try put("com.example.one-more", #"{"categories":["ORDER"]}"#)
        XCTAssertEqual(refused.status, 400)
        XCTAssertEqual(refused.json, [
            "error": "limit_reached",
            "message": .string("app \"com.example.one-more\" is not described: 1000 apps are described already, "
                + "the most a server keeps; describe fewer, or reset between tests"),
        ])
        let unknown = try JSONValue(parsing: try curl(port: fixture.http.port, "GET", "/api/v1/apps/com.example.one-more").body)
        XCTAssertEqual(unknown["described"], false)
        XCTAssertEqual(try put("com.example.app1", #"{"sounds":["chime.caf"]}"#).status, 200, "an app described already")
        XCTAssertEqual(try curl(port: fixture.http.port, "POST", "/api/v1/reset").status, 200)
        XCTAssertEqual(try put("com.example.one-more", "{}").status, 200)
    }

    func testTheDevicesFilesAppLinesHaveTheSameBounds() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("devices-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: file) }
        let lines = (1...AppCatalog.maximumApps).map { #"app com.example.app\#($0) {"sounds":["chime.caf"]}"# }
        // Two lines for one app count once.
        try (lines + [#"app com.example.app1.voip {}"#]).joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        XCTAssertEqual(try DevicesFile.read(file.path).apps.count, 1_001)

        let over: [(text: String, message: String)] = [
            ((lines + ["app com.example.one-more {}"]).joined(separator: "\n"),
             "line 1001: app \"com.example.one-more\" is not described: 1000 apps are described already"),
            (#"app com.example.app {"categories":\#(names(129, length: 8, prefix: "C"))}"#,
             "line 1: app \"com.example.app\" is not described: the description lists 129 categories"),
            ("# a comment\napp \(String(repeating: "a", count: 256)) {}", "line 2: app \"aaaa"),
        ]
        for (text, message) in over {
            try text.write(to: file, atomically: true, encoding: .utf8)
            XCTAssertThrowsError(try DevicesFile.read(file.path)) { error in
                XCTAssertTrue("\(error)".contains(message), "\(error)")
            }
        }
    }
}
