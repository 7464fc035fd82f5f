import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: PushNotification.init and ConnectionInfo.init, to make records by hand.
@testable import FakeAPNs
// Reads internals on purpose: DevicesFile, EventLog, Options and Metrics.
@testable import FakeAPNsDaemon

/// The `--devices` file's phones and apps, read by the executable and by the parser.
final class DevicesFilePhoneTests: XCTestCase {
    private let alice = "fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2"
    private let bob = "0102030405060708091011121314151617181920212223242526272829303132"
    private var file: URL!

    override func setUp() {
        file = FileManager.default.temporaryDirectory.appendingPathComponent("devices-\(UUID().uuidString).txt")
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: file)
    }

    private func write(_ text: String) throws {
        try text.write(to: file, atomically: true, encoding: .utf8)
    }

    func testTheExecutableSetsTheFilesPhonesAndAppsAndAResetKeepsThem() throws {
        try write("""
            # phones
            \(alice) com.example.app sandbox {"online": false, "apps": {"com.example.app": {"authorization": "provisional"}}}
            \(bob)
            app com.example.app {"categories": ["ORDER"], "entitlements": ["critical-alerts"]}
            """)
        let daemon = try DaemonFixture.started(["--devices", file.path, "--log", "json"], for: self)
        let web = try daemon.port("web")
        for round in ["at start", "after a reset"] {
            let phone = try curl(port: web, "GET", "/api/v1/devices/\(alice)")
            XCTAssertEqual(phone.status, 200, phone.body)
            let json = try JSONValue(parsing: phone.body)
            XCTAssertEqual(json["registered"], true, round)
            XCTAssertEqual(json["topic"], "com.example.app", round)
            XCTAssertEqual(json["settings"]?["online"], false, round)
            XCTAssertEqual(json["settings"]?["awake"], true, "\(round): what the line does not name keeps its default")
            XCTAssertEqual(json["settings"]?["apps"]?["com.example.app"]?["authorization"], "provisional", round)
            let other = try JSONValue(parsing: try curl(port: web, "GET", "/api/v1/devices/\(bob)").body)
            XCTAssertEqual(other["settings"]?["online"], true, "\(round): a line without an object leaves the phone alone")

            let app = try JSONValue(parsing: try curl(port: web, "GET", "/api/v1/apps/com.example.app").body)
            XCTAssertEqual(app["categories"], ["ORDER"], round)
            XCTAssertEqual(app["entitlements"], ["critical-alerts"], round)
            XCTAssertEqual(app["sounds"], .null, round)

            // What a test changes, a reset takes back to the file's.
            XCTAssertEqual(try curl(port: web, "PATCH", "/api/v1/devices/\(alice)", json: #"{"online":true}"#).status, 200)
            XCTAssertEqual(try curl(port: web, "PUT", "/api/v1/apps/com.example.app", json: "{}").status, 200)
            XCTAssertEqual(try curl(port: web, "POST", "/api/v1/reset").status, 200)
        }
    }

    func testTheParserReadsAPhoneAfterTheTopicAndAnAppLine() throws {
        try write("""
            \(alice) {"awake":false}
            \(bob) com.example.app production {"storage":{"seed":7}}
            app com.example.app {}
            """)
        let contents = try DevicesFile.read(file.path)
        XCTAssertEqual(contents.devices.count, 2)
        XCTAssertNil(contents.devices[0].topic)
        XCTAssertEqual(contents.devices[0].phone, PhoneSettingsChange(switches: ["awake": false]))
        XCTAssertEqual(contents.devices[1].topic, "com.example.app")
        XCTAssertEqual(contents.devices[1].environment, .production)
        XCTAssertEqual(contents.devices[1].phone?.storage, .seededRandom(7))
        XCTAssertEqual(contents.apps.map(\.bundleID), ["com.example.app"])
        XCTAssertEqual(contents.apps.first?.bundle, AppBundle())
    }

    func testBadPhoneAndAppLinesNameTheLineAndTheField() throws {
        for (text, expected) in [
            ("# c\n\(alice) {\"online\":1}", "line 2: the phone's settings: field 'online' must be true or false"),
            ("\(alice) {\"colour\":1}", "line 1: the phone's settings: unknown field 'colour'"),
            ("\(alice) {\"online\":", "line 1: the phone's settings: the request body is not valid JSON"),
            ("\(alice) {\"apps\":{\"com.x\":{\"state\":\"asleep\"}}}", "field 'apps.com.x.state' must be one of"),
            ("app com.x {\"entitlements\":[\"push\"]}", "line 1: the app: field 'entitlements' holds \"push\""),
            ("app com.x", "line 1: an app line is app BUNDLE"),
            ("app {}", "line 1: an app line is app BUNDLE"),
            ("app a b {}", "line 1: an app line is app BUNDLE"),
            ("{\"online\":true}", "line 1: the line starts with an object"),
            ("channel com.x {}", "line 1: a channel line takes no object"),
        ] {
            try write(text)
            XCTAssertThrowsError(try DevicesFile.read(file.path), text) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(error) should contain \(expected)")
            }
        }
    }

    func testABadDevicesFileStopsTheExecutableWithTheLine() throws {
        try write("\(alice) {\"online\":\"no\"}\n")
        let daemon = try DaemonFixture(arguments: DaemonFixture.freePorts + ["--devices", file.path])
        XCTAssertEqual(daemon.waitForExit(timeout: .seconds(10)), 1)
        XCTAssertTrue(daemon.standardError.contains("line 1: the phone's settings: field 'online'"), daemon.standardError)
    }
}

/// The daemon's flags for the device model and the lint, its event log lines of the delivery
/// log and its metrics of them.
final class DeviceLogEventTests: XCTestCase {
    private let token: DeviceToken = "fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2"

    private func entries() -> [DeliveryLogEntry] {
        [
            DeliveryLogEntry(
                status: .storedDeviceOffline, at: Date(timeIntervalSince1970: 1_700_000_000), deviceToken: token,
                topic: "com.example.app", apnsID: "11111111-1111-1111-1111-111111111111", uniqueID: nil,
                sequenceNumber: 3),
            DeliveryLogEntry(
                status: .overwritten, at: Date(timeIntervalSince1970: 1_700_000_060.5), deviceToken: token,
                topic: "com.example.app", apnsID: "11111111-1111-1111-1111-111111111111",
                uniqueID: "22222222-2222-2222-2222-222222222222", sequenceNumber: 3, channelID: "Zm9v",
                detail: "overwritten by apns-id 3333"),
        ]
    }

    func testEachDeliveryLogEntryIsOneJSONLine() throws {
        let lines = EventLog.jsonLines(.deviceLog(entries()))
        XCTAssertEqual(lines.count, 2)
        let first = try JSONValue(parsing: lines[0])
        XCTAssertEqual(first.objectValue?.map(\.key), [
            "event", "status", "token", "topic", "apnsID", "uniqueID", "sequence", "channel", "detail", "at",
        ])
        XCTAssertEqual(first["event"], "device-log")
        XCTAssertEqual(first["status"], "Stored - Device Offline")
        XCTAssertEqual(first["token"]?.stringValue, token.hex)
        XCTAssertEqual(first["sequence"], 3)
        XCTAssertEqual(first["uniqueID"], .null)
        XCTAssertEqual(first["channel"], .null)
        XCTAssertEqual(first["at"]?.stringValue?.prefix(19), "2023-11-14T22:13:20")
        let second = try JSONValue(parsing: lines[1])
        XCTAssertEqual(second["channel"], "Zm9v")
        XCTAssertEqual(second["detail"], "overwritten by apns-id 3333")
    }

    func testEachDeliveryLogEntryIsOneTextLineAtTheServersTime() {
        let lines = EventLog.textLines(.deviceLog(entries()), at: Date(timeIntervalSince1970: 1_700_000_000))
        XCTAssertEqual(lines, [
            "2023-11-14T22:13:20.000000Z device \(token.hex) #3 Stored - Device Offline",
            "2023-11-14T22:14:20.500000Z device \(token.hex) #3 Overwritten: overwritten by apns-id 3333",
        ])
    }

    func testANotificationLineCarriesItsLintFindings() throws {
        let notification = PushNotification(
            deviceToken: token, payload: Payload(#"{"aps":{"alert":"Hi"}}"#), identifier: 1, expiration: 0,
            format: .enhanced, connection: ConnectionInfo(id: 1, peer: "127.0.0.1:5000", tlsVersion: "TLSv1.3"),
            receivedAt: Date(timeIntervalSince1970: 1_700_000_000))
        // Binary: no push type. The control API judges it when asked; the log line carries only
        // what the intake judged (an app described, or strict mode).
        XCTAssertEqual(notification.jsonObject["lint"], PhoneJSON.lint(notification.lintFindings))
        XCTAssertNil(try JSONValue(parsing: notification.jsonLine(event: "notification"))["lint"])
        var judged = notification
        judged.judgedLintFindings = [LintFinding(.unknownSound, "judged")]
        let line = try JSONValue(parsing: judged.jsonLine(event: "notification"))
        XCTAssertEqual(line["lint"]?[0]?["message"], "judged")
        XCTAssertEqual(line.objectValue?.map(\.key).firstIndex(of: "lint"), line.objectValue?.map(\.key).firstIndex(of: "receivedAt").map { $0 - 1 })
        XCTAssertEqual(judged.jsonObject["lint"], line["lint"], "the control API writes the same member")
        let text = EventLog.textLines(.accepted([notification, judged]), at: Date(timeIntervalSince1970: 1_700_000_000))
        XCTAssertFalse(text[0].contains(" lint "), text[0])
        XCTAssertTrue(text[1].contains(" lint warning unknown-sound payload "), text[1])
        let finding = LintFinding(.unknownSound, #"sound "chime.caf" is not in the app"#)
        XCTAssertEqual(PhoneJSON.lint([finding]), [[
            "rule": "unknown-sound", "level": "warning", "message": #"sound "chime.caf" is not in the app"#,
            "source": .string(LintRule.unknownSound.source),
        ]])
    }

    /// A push whose device findings the device model wrote beside the request's: the control
    /// API's record (its list, and a phone's delivery), the JSON and text log lines and the
    /// metrics all show both, errors first, alike.
    func testEveryReaderShowsTheDeviceModelsFindingsWithTheRequests() throws {
        let fixture = InProcessDaemonFixture()
        try fixture.start(for: self)
        var notification = PushNotification(
            deviceToken: token, payload: Payload(#"{"aps":{"alert":"Hi"}}"#), identifier: 1, expiration: 3600,
            format: .enhanced, connection: ConnectionInfo(id: 1, peer: "127.0.0.1:5000", tlsVersion: "TLSv1.3"),
            receivedAt: Date(timeIntervalSince1970: 1_700_000_000), sequenceNumber: 1)
        notification.deviceLintFindings = [
            LintFinding(.offlineBurst, "a burst"), LintFinding(.liveActivityTimestamp, "a stale \"timestamp\""),
        ]
        let expected = PhoneJSON.lint([
            notification.lintFindings[0], notification.deviceLintFindings[1], notification.deviceLintFindings[0],
        ])
        XCTAssertEqual(expected[0]?["rule"], "relative-expiration", "the request's, judged now")
        XCTAssertEqual(notification.jsonObject["lint"], expected)

        // The log line, fast or not, writes the record the tree does.
        let line = try JSONValue(parsing: notification.jsonLine(event: "notification"))
        var tree = notification.jsonObject.objectValue.map(Array.init) ?? []
        tree.insert((key: "event", value: "notification"), at: 0)
        XCTAssertEqual(line, .object(JSONObject(tree)))
        XCTAssertEqual(try EventLog.jsonLines(.accepted([notification])).map { try JSONValue(parsing: $0)["lint"] }, [expected])
        let text = EventLog.textLines(.accepted([notification]), at: notification.receivedAt)
        XCTAssertTrue(
            text[0].contains(" lint error relative-expiration, error live-activity-timestamp, warning offline-burst payload "),
            text[0])

        let metrics = Metrics()
        metrics.record(.accepted([notification]))
        let rendered = metrics.render(server: fixture.daemon.server)
        for (rule, level) in [("relative-expiration", "error"), ("live-activity-timestamp", "error"), ("offline-burst", "warning")] {
            XCTAssertTrue(rendered.contains(#"fakeapns_lint_findings_total{rule="\#(rule)",level="\#(level)"} 1"#), rendered)
        }

        fixture.daemon.server.notificationHistory.append(contentsOf: [notification])
        let listed = try fixture.http.get("/api/v1/notifications")
        XCTAssertEqual(listed.json?["notifications"]?[0]?["lint"], expected, String(decoding: listed.body, as: UTF8.self))
        fixture.daemon.server.device(token).deliveries.putBack([
            DeviceDelivery(
                notification: notification, deviceToken: token, deliveredAt: Date(timeIntervalSince1970: 1_700_000_001),
                fromStorage: false)
        ])
        let delivered = try fixture.http.get("/api/v1/devices/\(token.hex)/deliveries/next?timeout=1")
        XCTAssertEqual(delivered.json?["notification"]?["lint"], expected, String(decoding: delivered.body, as: UTF8.self))
    }

    func testTheLintAndDeviceLogFlagsAreParsedAndChecked() throws {
        XCTAssertEqual(try Options.parse([]).lint, .on)
        XCTAssertEqual(try Options.parse([]).deviceLogLimit, 1000)
        XCTAssertEqual(try Options.parse(["--lint", "strict"]).lint, .strict)
        XCTAssertEqual(try Options.parse(["--device-log-limit=5"]).deviceLogLimit, 5)
        XCTAssertEqual(try Options.parse([], environment: ["FAKE_APNS_LINT": "strict"]).lint, .strict)
        XCTAssertThrowsError(try Options.parse(["--lint", "loud"])) { error in
            XCTAssertEqual("\(error)", "--lint takes on or strict, not 'loud'")
        }
        XCTAssertThrowsError(try Options.parse(["--device-log-limit", "0"])) { error in
            XCTAssertTrue("\(error)".contains("--device-log-limit takes a positive count"), "\(error)")
        }
        XCTAssertTrue(Options.help.contains("--lint MODE"))
        XCTAssertTrue(Options.help.contains("--device-log-limit COUNT"))
    }

    func testTheMetricsCountDeliveryLogEntriesByStatus() throws {
        let fixture = InProcessDaemonFixture()
        try fixture.start(for: self)
        let metrics = Metrics()
        metrics.record(.deviceLog(entries()))
        metrics.record(.deviceLog(Array(entries().prefix(1))))
        let text = metrics.render(server: fixture.daemon.server)
        XCTAssertTrue(text.contains(#"fakeapns_device_log_entries_total{status="Stored - Device Offline"} 2"#), text)
        XCTAssertTrue(text.contains(#"fakeapns_device_log_entries_total{status="Overwritten"} 1"#), text)
        XCTAssertTrue(text.contains("# TYPE fakeapns_device_log_entries_total counter"), text)
    }
}
