import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs
// Reads internals on purpose: Daemon and ControlAPI, a daemon in this process.
@testable import FakeAPNsDaemon

/// The control API's device model (clock, phones, their log, screen and deliveries, the
/// delivery log by `apns-unique-id`) and the apps the push lint judges by: control calls by
/// curl, pushes by `curl --http2` to the daemon's provider port, both clients independent of
/// this code.
final class ControlAPIPhoneTests: XCTestCase {
    private let fixture = InProcessDaemonFixture()
    private var daemon: Daemon! { fixture.daemon }

    private let alice: DeviceToken = "fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2"
    private let bob: DeviceToken = "0102030405060708091011121314151617181920212223242526272829303132"
    private let topic = "com.example.app"

    override func setUpWithError() throws {
        try fixture.start(for: self)
    }

    // MARK: - Helpers

    /// A control call by curl; the status and the body as JSON (null when it is not JSON).
    @discardableResult
    private func control(_ method: String, _ path: String, _ body: String? = nil) throws -> (status: Int, json: JSONValue) {
        let answer = try curl(port: fixture.http.port, method, path, json: body, maxTime: 20)
        XCTAssertEqual(answer.exit, 0, answer.error)
        return (answer.status, (try? JSONValue(parsing: answer.body)) ?? .null)
    }

    /// A push by curl over HTTP/2: the status and the response headers, lowercased.
    @discardableResult
    private func push(
        to token: DeviceToken, _ payload: String, headers: [String: String] = [:]
    ) throws -> (status: Int, headers: [String: String]) {
        var arguments = [
            "--silent", "--show-error", "--http2", "--cacert", testCertificatePath("ca.pem"), "--max-time", "20",
            "--dump-header", "-", "--output", "/dev/null", "--header", "apns-topic: \(topic)",
        ]
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { arguments += ["--header", "\(name): \(value)"] }
        arguments += ["--data", payload, "https://127.0.0.1:\(daemon.server.http2Port!)/3/device/\(token.hex)"]
        let result = try runTool("/usr/bin/curl", arguments)
        XCTAssertEqual(result.status, 0, result.error)
        var status = 0
        var fields: [String: String] = [:]
        for line in result.output.split(separator: "\r\n") {
            if line.hasPrefix("HTTP/2 ") {
                status = Int(line.split(separator: " ")[1]) ?? 0
            } else if let colon = line.firstIndex(of: ":") {
                fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return (status, fields)
    }

    private func statuses(_ log: JSONValue) -> [String] {
        log["entries"]?.arrayValue?.compactMap { $0["status"]?.stringValue } ?? []
    }

    // MARK: - Clock

    func testTheClockReadsRealTimeThenAdvancesIsSetAndReturnsToRealTime() throws {
        let before = Date().timeIntervalSince1970
        let real = try control("GET", "/api/v1/clock")
        XCTAssertEqual(real.status, 200)
        XCTAssertEqual(real.json["manual"], false)
        let unix = try XCTUnwrap(real.json["unix"]?.doubleValue)
        XCTAssertEqual(unix, before, accuracy: 5)
        XCTAssertEqual(real.json["now"]?.stringValue?.last, "Z", "RFC 3339, UTC")

        let advanced = try control("POST", "/api/v1/clock", #"{"advance":3600}"#)
        XCTAssertEqual(advanced.status, 200)
        XCTAssertEqual(advanced.json["manual"], true)
        XCTAssertEqual(try XCTUnwrap(advanced.json["unix"]?.doubleValue), before + 3600, accuracy: 5)
        XCTAssertTrue(daemon.server.clock.isManual)

        let set = try control("POST", "/api/v1/clock", #"{"set":1700000000}"#)
        XCTAssertEqual(set.json["unix"], 1_700_000_000)
        XCTAssertEqual(set.json["now"]?.stringValue?.prefix(19), "2023-11-14T22:13:20")
        XCTAssertEqual(try control("GET", "/api/v1/clock").json["unix"], 1_700_000_000, "a manual clock stands still")
        XCTAssertEqual(try control("POST", "/api/v1/clock", #"{"advance":0.5}"#).json["unix"], 1_700_000_000.5)

        let back = try control("POST", "/api/v1/clock", #"{"real":true}"#)
        XCTAssertEqual(back.json["manual"], false)
        XCTAssertEqual(try XCTUnwrap(back.json["unix"]?.doubleValue), Date().timeIntervalSince1970, accuracy: 5)

        try control("POST", "/api/v1/clock", #"{"set":1700000000}"#)
        XCTAssertEqual(try control("POST", "/api/v1/reset").status, 200)
        XCTAssertEqual(try control("GET", "/api/v1/clock").json["manual"], false, "a reset gives the clock back")
    }

    // MARK: - Phones

    func testAPatchSetsEverySettingAndAnswersTheDevice() throws {
        let body = #"""
            {"online":false,"powerRestricted":true,"awake":false,"lowPowerMode":true,"backgroundAppRefresh":false,
             "debuggerAttached":true,"backgroundPushesPerHour":7,"backgroundPushesPerDay":20,"liveActivityUpdatesPerHour":4,
             "frequentLiveActivityUpdates":true,"storage":{"seed":42},"expirationGrace":1.5,"replacementPresentsAgain":false,
             "apps":{"com.example.app":{"installed":true,"authorization":"provisional","state":"force-quit",
                     "foregroundPresentation":["sound","banner"]}}}
            """#
        let patched = try control("PATCH", "/api/v1/devices/\(alice.hex)", body)
        XCTAssertEqual(patched.status, 200, "\(patched.json)")
        XCTAssertEqual(patched.json["token"]?.stringValue, alice.hex)
        XCTAssertEqual(patched.json["registered"], false)
        let settings = try XCTUnwrap(patched.json["settings"])
        let expected: JSONValue = [
            "online": false, "powerRestricted": true, "awake": false, "lowPowerMode": true, "backgroundAppRefresh": false,
            "debuggerAttached": true, "backgroundPushesPerHour": 7, "backgroundPushesPerDay": 20,
            "liveActivityUpdatesPerHour": 4, "frequentLiveActivityUpdates": true, "storage": ["seed": 42],
            "expirationGrace": 1.5, "replacementPresentsAgain": false,
            "apps": ["com.example.app": [
                "installed": true, "authorization": "provisional", "state": "force-quit",
                "foregroundPresentation": ["banner", "sound"],
            ]],
        ]
        XCTAssertEqual(settings, expected)
        XCTAssertEqual(settings.objectValue?.map(\.key), PhoneJSON.settingKeys, "every setting, in the documented order")

        let phone = daemon.server.device(alice).settings
        XCTAssertFalse(phone.isOnline)
        XCTAssertEqual(phone.storage, .seededRandom(42))
        XCTAssertEqual(phone.expirationGrace, .milliseconds(1500))
        XCTAssertEqual(phone[app: "com.example.app"].state, .forceQuit)
        XCTAssertEqual(phone[app: "com.example.app"].foregroundPresentation, [.banner, .sound])

        // A later patch changes only what it names; null lifts the daily budget.
        let again = try control(
            "PATCH", "/api/v1/devices/\(alice.hex)",
            #"{"online":true,"backgroundPushesPerDay":null,"storage":"latest","apps":{"com.example.app":{"state":"background"}}}"#)
        XCTAssertEqual(again.json["settings"]?["online"], true)
        XCTAssertEqual(again.json["settings"]?["awake"], false)
        XCTAssertEqual(again.json["settings"]?["backgroundPushesPerDay"], .null)
        XCTAssertEqual(again.json["settings"]?["storage"], "latest")
        XCTAssertEqual(again.json["settings"]?["apps"]?["com.example.app"]?["state"], "background")
        XCTAssertEqual(again.json["settings"]?["apps"]?["com.example.app"]?["authorization"], "provisional")

        XCTAssertEqual(try control("GET", "/api/v1/devices/\(alice.hex)").json["settings"], again.json["settings"])
        let list = try control("GET", "/api/v1/devices")
        XCTAssertEqual(list.json["phones"], [.string(alice.hex)])
        XCTAssertEqual(list.json["devices"], [], "the registry's list is its own")
        XCTAssertEqual(try control("GET", "/api/v1/phones").json, ["phones": [.string(alice.hex)]])
        XCTAssertEqual(try control("POST", "/api/v1/phones").status, 405)
    }

    func testLaunchForceQuitAndReleaseBurstsAnswerTheDevice() throws {
        for (path, body) in [("launch", #"{"app":"com.example.app"}"#), ("force-quit", #"{"app":"com.example.app"}"#),
                             ("release-bursts", nil)]
        {
            let answer = try control("POST", "/api/v1/devices/\(bob.hex)/\(path)", body)
            XCTAssertEqual(answer.status, 200, "\(path): \(answer.json)")
            XCTAssertEqual(answer.json["token"]?.stringValue, bob.hex, path)
            XCTAssertNotNil(answer.json["screen"]?["notificationCenter"]?.arrayValue, path)
        }
    }

    func testAnOfflinePhoneStoresOverwritesAndDeliversOnlyTheLastPushFromStorage() throws {
        XCTAssertEqual(try control("PATCH", "/api/v1/devices/\(alice.hex)", #"{"online":false}"#).status, 200)
        let ids = ["11111111-1111-1111-1111-111111111111", "22222222-2222-2222-2222-222222222222",
                   "33333333-3333-3333-3333-333333333333"]
        for (index, id) in ids.enumerated() {
            let answer = try push(to: alice, #"{"aps":{"alert":"push \#(index + 1)"}}"#,
                                  headers: ["apns-id": id, "apns-push-type": "alert"])
            XCTAssertEqual(answer.status, 200, "Apple's 200 whatever the phone does")
        }
        let stored = try control("GET", "/api/v1/devices/\(alice.hex)/log?apns-id=\(ids[0])")
        XCTAssertEqual(statuses(stored.json), ["Received", "Stored - Device Offline", "Overwritten"])
        XCTAssertEqual(try control("GET", "/api/v1/devices/\(alice.hex)/deliveries/next?timeout=0.2").status, 408,
                       "nothing reaches an offline phone")

        XCTAssertEqual(try control("PATCH", "/api/v1/devices/\(alice.hex)", #"{"online":true}"#).status, 200)
        let last = try control("GET", "/api/v1/devices/\(alice.hex)/log?apns-id=\(ids[2])")
        XCTAssertEqual(statuses(last.json), ["Received", "Stored - Device Offline", "Delivered to Device (From Storage)"])
        let entry = try XCTUnwrap(last.json["entries"]?[2])
        XCTAssertEqual(entry["token"]?.stringValue, alice.hex)
        XCTAssertEqual(entry["topic"]?.stringValue, topic)
        XCTAssertEqual(entry["apnsID"]?.stringValue?.lowercased(), ids[2])
        XCTAssertNotNil(entry["sequence"]?.intValue)
        XCTAssertNotNil(entry["at"]?.stringValue)
        let whole = try control("GET", "/api/v1/devices/\(alice.hex)/log")
        XCTAssertEqual(whole.json["entries"]?.arrayValue?.count, 9, "three steps for each of three pushes")

        let delivery = try control("GET", "/api/v1/devices/\(alice.hex)/deliveries/next?timeout=5")
        XCTAssertEqual(delivery.status, 200, "\(delivery.json)")
        XCTAssertEqual(delivery.json["fromStorage"], true)
        XCTAssertEqual(delivery.json["token"]?.stringValue, alice.hex)
        XCTAssertEqual(delivery.json["notification"]?["apnsID"]?.stringValue?.lowercased(), ids[2])
        XCTAssertEqual(delivery.json["notification"]?["payload"]?["aps"]?["alert"], "push 3")
        XCTAssertEqual(try control("GET", "/api/v1/devices/\(alice.hex)/deliveries/next?timeout=0.2").status, 408,
                       "the overwritten pushes never arrive")
    }

    func testDeliveriesNextWaitsForThePushToReachThePhone() throws {
        let port = fixture.http.port
        let path = "/api/v1/devices/\(alice.hex)/deliveries/next?timeout=10"
        let waiter = inBackground { try curl(port: port, "GET", path, maxTime: 20) }
        XCTAssertTrue(eventually { self.daemon.server.device(self.alice).deliveries.waitingCount == 1 })
        XCTAssertEqual(try push(to: alice, #"{"aps":{"alert":"awaited"}}"#, headers: ["apns-push-type": "alert"]).status, 200)
        let answer = try waiter.pop(timeout: .seconds(15)).get()
        XCTAssertEqual(answer.status, 200, answer.body)
        let delivery = try JSONValue(parsing: answer.body)
        XCTAssertEqual(delivery["fromStorage"], false)
        XCTAssertEqual(delivery["notification"]?["payload"]?["aps"]?["alert"], "awaited")
        XCTAssertEqual(delivery["channel"], .null)
        XCTAssertNotNil(delivery["deliveredAt"]?.stringValue)
    }

    func testTheScreenShowsOneEntryAfterACollapse() throws {
        let first = "44444444-4444-4444-4444-444444444444"
        let second = "55555555-5555-5555-5555-555555555555"
        for (id, body) in [(first, "Score 1-0"), (second, "Score 2-0")] {
            try push(to: alice, #"{"aps":{"alert":{"title":"Match","body":"\#(body)"}}}"#,
                     headers: ["apns-id": id, "apns-collapse-id": "match-7", "apns-push-type": "alert"])
        }
        let screen = try control("GET", "/api/v1/devices/\(alice.hex)/screen")
        XCTAssertEqual(screen.status, 200)
        let entries = try XCTUnwrap(screen.json["notificationCenter"]?.arrayValue)
        XCTAssertEqual(entries.count, 1, "\(screen.json)")
        XCTAssertEqual(entries.first?["identifier"], "match-7")
        XCTAssertEqual(entries.first?["bundle"]?.stringValue, topic)
        XCTAssertEqual(entries.first?["title"], "Match")
        XCTAssertEqual(entries.first?["body"], "Score 2-0")
        XCTAssertEqual(entries.first?["apnsID"]?.stringValue?.lowercased(), second)
        XCTAssertEqual(entries.first?["replaced"]?.arrayValue?.compactMap { $0.stringValue?.lowercased() }, [first])
        XCTAssertEqual(try control("GET", "/api/v1/devices/\(alice.hex)").json["screen"], screen.json)
    }

    func testTheDeliveryLogIsReadByTheAPNsUniqueIDAcrossPhones() throws {
        let answer = try push(to: bob, #"{"aps":{"alert":"Hi"}}"#, headers: ["apns-push-type": "alert"])
        XCTAssertEqual(answer.status, 200)
        let uniqueID = try XCTUnwrap(answer.headers["apns-unique-id"], "a sandbox push is answered an apns-unique-id")
        let log = try control("GET", "/api/v1/delivery-log/\(uniqueID)")
        XCTAssertEqual(log.status, 200)
        XCTAssertEqual(statuses(log.json), ["Received", "Delivered to Device"])
        for entry in log.json["entries"]?.arrayValue ?? [] {
            XCTAssertEqual(entry["uniqueID"]?.stringValue?.lowercased(), uniqueID.lowercased())
            XCTAssertEqual(entry["token"]?.stringValue, bob.hex)
        }
        XCTAssertEqual(try control("GET", "/api/v1/devices/\(bob.hex)/log?unique-id=\(uniqueID)").json, log.json)
        XCTAssertEqual(try control("GET", "/api/v1/delivery-log/nobody").json, ["entries": []])
    }

    // MARK: - Apps and the lint

    func testAnAppIsDescribedReadBackAndItsCategoriesJudgeANotification() throws {
        let undescribed = try control("GET", "/api/v1/apps/\(topic)")
        XCTAssertEqual(undescribed.status, 200)
        XCTAssertEqual(undescribed.json["described"], false)
        XCTAssertEqual(undescribed.json["categories"], .null)

        let put = try control(
            "PUT", "/api/v1/apps/\(topic)",
            #"{"categories":["ORDER","SHIP"],"sounds":["chime.caf"],"entitlements":["time-sensitive"]}"#)
        XCTAssertEqual(put.status, 200, "\(put.json)")
        let expected: JSONValue = [
            "bundle": .string(topic), "described": true, "categories": ["ORDER", "SHIP"], "sounds": ["chime.caf"],
            "entitlements": ["time-sensitive"], "liveActivityTypes": .null, "websiteURLFormat": .null,
        ]
        XCTAssertEqual(put.json, expected)
        XCTAssertEqual(try control("GET", "/api/v1/apps/\(topic)").json, expected)
        XCTAssertEqual(daemon.server.apps[topic]?.entitlements, [.timeSensitive])

        XCTAssertEqual(try push(to: alice, #"{"aps":{"alert":"Hi","category":"REFUND"}}"#,
                                headers: ["apns-push-type": "alert"]).status, 200)
        let notification = try control("GET", "/api/v1/notifications/next?timeout=5")
        let lint = try XCTUnwrap(notification.json["lint"]?.arrayValue, "\(notification.json)")
        let finding = try XCTUnwrap(lint.first { $0["rule"] == "unregistered-category" }, "\(lint)")
        XCTAssertEqual(finding["level"], "warning")
        XCTAssertNotNil(finding["message"]?.stringValue)
        XCTAssertNotNil(finding["source"]?.stringValue)
        XCTAssertEqual(try control("GET", "/api/v1/notifications").json["notifications"]?[0]?["lint"], .array(lint))
        let metrics = try curl(port: fixture.http.port, "GET", "/metrics").body
        XCTAssertTrue(metrics.contains(#"fakeapns_lint_findings_total{rule="unregistered-category",level="warning"} 1"#), metrics)
    }

    /// A Safari website push ID is described like an app, with its push package's URL format.
    func testAWebsiteIsDescribedWithItsURLFormat() throws {
        let website = "web.com.example.news"
        let put = try control("PUT", "/api/v1/apps/\(website)", #"{"websiteURLFormat":"https://news.example.com/%@"}"#)
        XCTAssertEqual(put.status, 200, "\(put.json)")
        XCTAssertEqual(put.json["websiteURLFormat"], "https://news.example.com/%@")
        XCTAssertEqual(put.json["categories"], .null)
        XCTAssertEqual(daemon.server.apps[website]?.websiteURLFormat, "https://news.example.com/%@")
        let wrong = try control("PUT", "/api/v1/apps/\(website)", #"{"websiteURLFormat":["https://x/%@"]}"#)
        XCTAssertEqual(wrong.status, 400)
        XCTAssertEqual(daemon.server.apps[website]?.websiteURLFormat, "https://news.example.com/%@", "unchanged")
    }

    func testStrictLintRecordsARejectionWithCauseLintWhileTheClientGets200() throws {
        try fixture.start(["--lint", "strict"], for: self)
        // A background push that would alert: Apple takes it, the phone neither shows nor wakes.
        let answer = try push(
            to: alice, #"{"aps":{"content-available":1,"alert":"Hi"}}"#,
            headers: ["apns-push-type": "background", "apns-priority": "5"])
        XCTAssertEqual(answer.status, 200, "Apple answers 200; the lint's refusal is the fake's record only")
        let rejection = try control("GET", "/api/v1/rejections/next?timeout=5&reason=background-with-alert")
        XCTAssertEqual(rejection.status, 200, "\(rejection.json)")
        XCTAssertEqual(rejection.json["cause"], "lint")
        XCTAssertEqual(rejection.json["token"]?.stringValue, alice.hex)
        let notification = try control("GET", "/api/v1/notifications/next?timeout=5")
        XCTAssertEqual(notification.status, 200, "the notification is accepted as well")
        XCTAssertEqual(notification.json["lint"]?[0]?["rule"], "background-with-alert")
        XCTAssertEqual(notification.json["lint"]?[0]?["level"], "error")
    }

    // MARK: - Refusals

    func testBadPhoneClockAndAppRequestsAreRefusedClearly() throws {
        let device = "/api/v1/devices/\(alice.hex)"
        let cases: [(String, String, String?, Int, String)] = [
            ("PATCH", device, #"{"online":"#, 400, "invalid_json"),
            ("PATCH", device, "[]", 400, "wrong_type"),
            ("PATCH", device, #"{"colour":"red"}"#, 400, "unknown_field"),
            ("PATCH", device, #"{"online":"yes"}"#, 400, "wrong_type"),
            ("PATCH", device, #"{"online":true,"online":false}"#, 400, "duplicate_field"),
            ("PATCH", device, #"{"backgroundPushesPerHour":-1}"#, 400, "invalid_value"),
            ("PATCH", device, #"{"backgroundPushesPerDay":"many"}"#, 400, "wrong_type"),
            ("PATCH", device, #"{"storage":"oldest"}"#, 400, "invalid_value"),
            ("PATCH", device, #"{"storage":{"seed":1,"salt":2}}"#, 400, "unknown_field"),
            ("PATCH", device, #"{"expirationGrace":-5}"#, 400, "invalid_value"),
            ("PATCH", device, #"{"apps":[]}"#, 400, "wrong_type"),
            ("PATCH", device, #"{"apps":{"com.x":{"state":"asleep"}}}"#, 400, "invalid_value"),
            ("PATCH", device, #"{"apps":{"com.x":{"installed":1}}}"#, 400, "wrong_type"),
            ("PATCH", device, #"{"apps":{"com.x":{"foregroundPresentation":["alert"]}}}"#, 400, "invalid_value"),
            ("PATCH", device, #"{"apps":{"com.x":{"volume":3}}}"#, 400, "unknown_field"),
            ("PATCH", device, #"{"apps":{"":{}}}"#, 400, "invalid_value"),
            ("PATCH", "/api/v1/devices/xyz", #"{"online":true}"#, 400, "invalid_token"),
            ("PATCH", device + "?x=1", #"{"online":true}"#, 400, "unknown_parameter"),
            ("POST", device + "/launch", "{}", 400, "missing_field"),
            ("POST", device + "/force-quit", #"{"app":7}"#, 400, "wrong_type"),
            ("POST", device + "/release-bursts", #"{"now":true}"#, 400, "unknown_field"),
            ("GET", device + "/log?apns-id=a&unique-id=b", nil, 400, "invalid_parameter"),
            ("GET", device + "/log?seq=1", nil, 400, "unknown_parameter"),
            ("GET", device + "/deliveries/next?timeout=61", nil, 400, "invalid_parameter"),
            ("GET", "/api/v1/devices/zz/screen", nil, 400, "invalid_token"),
            ("POST", "/api/v1/clock", "{}", 400, "missing_field"),
            ("POST", "/api/v1/clock", #"{"advance":1,"set":2}"#, 400, "invalid_value"),
            ("POST", "/api/v1/clock", #"{"advance":-1}"#, 400, "invalid_value"),
            ("POST", "/api/v1/clock", #"{"advance":"1h"}"#, 400, "wrong_type"),
            ("POST", "/api/v1/clock", #"{"real":false}"#, 400, "invalid_value"),
            ("POST", "/api/v1/clock", #"{"rewind":1}"#, 400, "unknown_field"),
            ("PUT", "/api/v1/apps/com.x", #"{"categories":"ORDER"}"#, 400, "wrong_type"),
            ("PUT", "/api/v1/apps/com.x", #"{"sounds":[1]}"#, 400, "wrong_type"),
            ("PUT", "/api/v1/apps/com.x", #"{"entitlements":["push"]}"#, 400, "invalid_value"),
            ("PUT", "/api/v1/apps/com.x", #"{"actions":[]}"#, 400, "unknown_field"),
            ("PUT", "/api/v1/clock", "{}", 405, "method_not_allowed"),
            ("POST", device, "{}", 405, "method_not_allowed"),
            ("GET", device + "/launch", nil, 405, "method_not_allowed"),
            ("POST", device + "/screen", "{}", 405, "method_not_allowed"),
            ("DELETE", "/api/v1/apps/com.x", nil, 405, "method_not_allowed"),
            ("POST", "/api/v1/delivery-log/abc", "{}", 405, "method_not_allowed"),
            ("GET", device + "/reboot", nil, 404, "not_found"),
            ("GET", device + "/deliveries", nil, 404, "not_found"),
            ("GET", "/api/v1/apps", nil, 404, "not_found"),
        ]
        for (method, path, body, status, code) in cases {
            let answer = try control(method, path, body)
            XCTAssertEqual(answer.status, status, "\(method) \(path) \(body ?? ""): \(answer.json)")
            XCTAssertEqual(answer.json["error"]?.stringValue, code, "\(method) \(path) \(body ?? ""): \(answer.json)")
            XCTAssertFalse(answer.json["message"]?.stringValue?.isEmpty ?? true, "\(method) \(path)")
        }
        let named = try control("PATCH", device, #"{"apps":{"com.x":{"state":"asleep"}}}"#)
        XCTAssertTrue(named.json["message"]?.stringValue?.contains("apps.com.x.state") == true, "\(named.json)")
        XCTAssertEqual(daemon.server.describedDevices, [], "no refused request described a phone")
        XCTAssertFalse(daemon.server.clock.isManual, "no refused request moved the clock")
        XCTAssertTrue(daemon.server.apps.isEmpty, "no refused request described an app")
    }
}
