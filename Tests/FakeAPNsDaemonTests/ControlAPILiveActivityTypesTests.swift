import FakeAPNs
import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: Daemon and DevicesFile, a daemon in this process.
@testable import FakeAPNsDaemon

/// An app's Live Activity types through `PUT /api/v1/apps/<bundle>` and the `--devices` file,
/// their bounds, and `start-live-activity`, by curl.
final class ControlAPILiveActivityTypesTests: XCTestCase {
    private let fixture = InProcessDaemonFixture()
    private var daemon: Daemon! { fixture.daemon }
    private let token: DeviceToken = "fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2"
    private let bundle = "com.example.food"
    private let types =
        #"{"liveActivityTypes":{"DeliveryAttributes":{"attributes":{"orderID":"string"},"#
        + #""contentState":{"status":"string","eta":"date","courier":"string?"}},"MatchAttributes":{}}}"#

    @discardableResult
    private func control(
        _ method: String, _ path: String, _ body: String? = nil
    ) throws -> (status: Int, json: JSONValue) {
        let answer = try curl(port: fixture.http.port, method, path, json: body, maxTime: 20)
        XCTAssertEqual(answer.exit, 0, answer.error)
        return (answer.status, (try? JSONValue(parsing: answer.body)) ?? .null)
    }

    /// A Live Activity push by curl over HTTP/2; its status.
    private func push(_ aps: String, apnsID: String) throws -> Int {
        let result = try runTool("/usr/bin/curl", [
            "--silent", "--show-error", "--http2", "--cacert", testCertificatePath("ca.pem"), "--max-time", "20",
            "--write-out", "%{http_code}", "--output", "/dev/null",
            "--header", "apns-topic: \(bundle).push-type.liveactivity", "--header", "apns-push-type: liveactivity",
            "--header", "apns-id: \(apnsID)", "--data", #"{"aps":{\#(aps)}}"#,
            "https://127.0.0.1:\(daemon.server.http2Port!)/3/device/\(token.hex)",
        ])
        XCTAssertEqual(result.status, 0, result.error)
        return Int(result.output) ?? 0
    }

    func testAnAppsTypesAreDescribedAndReadBack() throws {
        try fixture.start(for: self)
        let put = try control("PUT", "/api/v1/apps/\(bundle)", types)
        XCTAssertEqual(put.status, 200, "\(put.json)")
        let expected: JSONValue = [
            "DeliveryAttributes": [
                "attributes": ["orderID": "string"],
                "contentState": ["courier": "string?", "eta": "date", "status": "string"],
            ],
            "MatchAttributes": ["attributes": [:], "contentState": [:]],
        ]
        XCTAssertEqual(put.json["liveActivityTypes"], expected)
        XCTAssertEqual(try control("GET", "/api/v1/apps/\(bundle)").json["liveActivityTypes"], expected)
        XCTAssertEqual(
            daemon.server.apps[bundle]?.liveActivityTypes?["DeliveryAttributes"]?.contentState["courier"],
            .string.optional)
    }

    func testBadOrOversizedDeclarationsAreRefusedAndChangeNothing() throws {
        try fixture.start(for: self)
        let fields = (0...LiveActivityType.maximumFields).map { #""f\#($0)":"string""# }.joined(separator: ",")
        let types = (0...LiveActivityType.maximumTypesPerApp).map { #""T\#($0)":{}"# }.joined(separator: ",")
        let refusals: [(body: String, code: String, message: String)] = [
            (#"{"liveActivityTypes":{"T":{"contentState":{\#(fields)}}}}"#, "limit_reached",
             "one of its Live Activity types declares 129 fields; a type declares at most 128"),
            (#"{"liveActivityTypes":{\#(types)}}"#, "limit_reached",
             "the description lists 33 liveActivityTypes; an app description lists at most 32"),
            (#"{"liveActivityTypes":{"T":{"contentState":{"eta":"Date"}}}}"#, "invalid_value",
             #"field 'liveActivityTypes.T.contentState.eta' must be one of "string""#),
            (#"{"liveActivityTypes":{"T":{"state":{}}}}"#, "unknown_field",
             "unknown field 'liveActivityTypes.T.state'"),
            (#"{"liveActivityTypes":["T"]}"#, "wrong_type", "field 'liveActivityTypes' must be an object"),
        ]
        for refusal in refusals {
            let answer = try control("PUT", "/api/v1/apps/\(bundle)", refusal.body)
            XCTAssertEqual(answer.status, 400, refusal.message)
            XCTAssertEqual(answer.json["error"]?.stringValue, refusal.code, "\(answer.json)")
            let message = answer.json["message"]?.stringValue ?? ""
            XCTAssertTrue(message.contains(refusal.message), message)
        }
        XCTAssertNil(daemon.server.apps[bundle], "a refusal describes nothing")
    }

    func testAnActivityStartedThroughTheAPIDecodesItsUpdatesWithItsType() throws {
        try fixture.start(for: self)
        XCTAssertEqual(try control("PUT", "/api/v1/apps/\(bundle)", types).status, 200)
        let started = try control(
            "POST", "/api/v1/devices/\(token.hex)/start-live-activity",
            #"{"app":"\#(bundle)","attributesType":"DeliveryAttributes"}"#)
        XCTAssertEqual(started.status, 200, "\(started.json)")
        XCTAssertEqual(started.json["screen"]?["liveActivities"]?[0]?["state"], "active")

        let now = Int(daemon.server.clock.currentDate.timeIntervalSince1970)
        let apnsID = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
        let unixETA = #""event":"update","timestamp":\#(now),"content-state":{"status":"cooking","eta":\#(now)}"#
        XCTAssertEqual(try push(unixETA, apnsID: apnsID), 200)
        let log = try control("GET", "/api/v1/devices/\(token.hex)/log?apns-id=\(apnsID)")
        let statuses = log.json["entries"]?.arrayValue?.compactMap { $0["status"]?.stringValue }
        XCTAssertEqual(statuses, ["Received", "Ignored (Live Activity)"])
        let notification = try control("GET", "/api/v1/notifications/next?timeout=5")
        let rules = notification.json["lint"]?.arrayValue?.compactMap { $0["rule"]?.stringValue }
        XCTAssertEqual(rules, ["live-activity-unix-date"], "\(notification.json)")

        let tooLong = try control(
            "POST", "/api/v1/devices/\(token.hex)/start-live-activity",
            #"{"app":"\#(bundle)","attributesType":"\#(String(repeating: "T", count: 256))"}"#)
        XCTAssertEqual(tooLong.status, 400)
        XCTAssertEqual(tooLong.json["error"], "limit_reached")
        XCTAssertEqual(try control("POST", "/api/v1/devices/\(token.hex)/start-live-activity", "{}").status, 400)
        XCTAssertEqual(try control("GET", "/api/v1/devices/\(token.hex)/start-live-activity").status, 405)
    }

    func testTheDevicesFilesAppLineDeclaresTypes() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("devices-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: file) }
        try "app \(bundle) \(types)\n".write(to: file, atomically: true, encoding: .utf8)
        let contents = try DevicesFile.read(file.path)
        let declared = try XCTUnwrap(contents.apps.first?.bundle.liveActivityTypes)
        XCTAssertEqual(declared.keys.sorted(), ["DeliveryAttributes", "MatchAttributes"])
        XCTAssertEqual(declared["DeliveryAttributes"]?.attributes, ["orderID": .string])

        try #"app \#(bundle) {"liveActivityTypes":{"T":{"attributes":{"at":"when"}}}}"#
            .write(to: file, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try DevicesFile.read(file.path)) { error in
            XCTAssertTrue("\(error)".contains("line 1: the app: field 'liveActivityTypes.T.attributes.at'"), "\(error)")
        }
    }
}
