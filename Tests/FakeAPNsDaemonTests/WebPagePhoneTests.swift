import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

/// The web page's phone view, drawn in a real headless Chromium (Tests/Clients/web_page_phone_driver.py):
/// a phone described offline gets pushes, comes online from the page, and the page shows what its
/// screen holds, the selected push's delivery log and the stream's lint marks.
final class WebPagePhoneTests: XCTestCase {
    func testThePhoneViewShowsAStoredPushDeliveredOnceOnlineWithItsLogAndTheStreamMarksLint() throws {
        try WebPageTests.requireChromium()
        let ports = try DaemonFixture.started(for: self).ports
        let screenshot = ProcessInfo.processInfo.environment["FAKEAPNS_WEB_PHONE_SCREENSHOT"]
        let run = try runTool("/usr/bin/python3", [
            repositoryRoot.appendingPathComponent("Tests/Clients/web_page_phone_driver.py").path,
            "--fake-apns", DaemonFixture.executable.path, "--web", String(try XCTUnwrap(ports["web"])),
            "--http2", String(try XCTUnwrap(ports["http2"])), "--gateway", String(try XCTUnwrap(ports["gateway"])),
        ] + (screenshot.map { ["--screenshot", $0] } ?? []), timeout: .seconds(300))
        guard run.status == 0 else { return XCTFail("the driver failed: \(run.error)") }
        let report = try JSONValue(parsing: run.output.trimmingCharacters(in: .whitespacesAndNewlines))
        print("web page phone view: \(run.output)")
        if let skipped = report["skipped"]?.stringValue {
            let message = "THE PHONE VIEW WAS NOT CHECKED: \(skipped)"
            print(message)
            throw XCTSkip(message)
        }

        XCTAssertTrue(report["hint"]?.stringValue?.contains("PATCH /api/v1/devices/<token>") == true, "how to describe a phone")
        XCTAssertEqual(report["hintHidden"]?.boolValue, true, "no hint once a phone is described")

        let offline = try XCTUnwrap(report["offline"])
        XCTAssertEqual(offline["status"]?[0]?.stringValue, "offline")
        XCTAssertEqual(offline["entries"]?.arrayValue?.count, 0, "nothing on the screen of an offline phone")
        XCTAssertTrue(strings(offline["log"]).contains("Stored - Device Offline"), "the selected push's log, offline")
        XCTAssertEqual(report["cardPressed"]?.stringValue, "true")

        let online = try XCTUnwrap(report["online"])
        XCTAssertEqual(report["onlineOnServer"]?.boolValue, true, "the page's button brought the phone online")
        XCTAssertEqual(online["status"]?[0]?.stringValue, "online")
        let entries = try XCTUnwrap(online["entries"]?.arrayValue)
        XCTAssertEqual(entries.count, 1, "the stored push, and not the one storage overwrote")
        XCTAssertEqual(entries.first?["app"]?.stringValue, "com.example.app")
        XCTAssertEqual(entries.first?["title"]?.stringValue, "Second <i>two</i>", "drawn as text")
        XCTAssertEqual(entries.first?["body"]?.stringValue, "the one kept")
        XCTAssertTrue(strings(entries.first?["tags"]).contains("presented"))
        XCTAssertEqual(entries.first?["pressed"]?.stringValue, "true", "the selected push is marked on the phone")
        XCTAssertEqual(report["markupInPhone"]?.intValue, 0)
        XCTAssertTrue(strings(online["log"]).contains("Delivered to Device (From Storage)"), "the selected push's log, online")
        XCTAssertEqual(strings(online["log"]), strings(report["secondLogFromAPI"]), "every step the daemon logged, in its order")
        XCTAssertTrue(online["heading"]?.stringValue?.contains("11111111-2222-4333-8444-000000000002") == true)
        XCTAssertEqual(strings(report["reselected"]), strings(online["log"]), "selected again from the phone")
        XCTAssertTrue(strings(report["firstLog"]).contains("Overwritten"), "the first push's log")
        XCTAssertEqual(strings(report["firstLog"]), strings(report["firstLogFromAPI"]))

        let screen = try XCTUnwrap(report["screen"])
        XCTAssertEqual(screen["activities"]?[0]?["contentState"]?["score"]?.stringValue, "0-0", "the Live Activity's content-state")
        XCTAssertEqual(screen["activities"]?[0]?["state"]?.stringValue, "active")
        XCTAssertEqual(screen["badges"]?["com.example.app"]?.intValue, 3)
        XCTAssertEqual(screen["titles"]?[0]?.stringValue, "Badge", "newest first")
        XCTAssertEqual(screen, report["screenFromAPI"], "the phone draws the daemon's screen: activities, badges, wakes, entries")

        let fromAPI = try XCTUnwrap(report["lintFromAPI"]?.arrayValue)
        XCTAssertTrue(
            fromAPI.contains { $0["rule"]?.stringValue == "background-priority-10" && $0["level"]?.stringValue == "error" },
            "the daemon flags a background push at priority 10")
        let marks = try XCTUnwrap(report["lintMarks"]?.arrayValue)
        for level in ["error", "warning", "info"] {
            let found = fromAPI.filter { $0["level"]?.stringValue == level }
            let mark = marks.first { $0["level"]?.stringValue == level }
            XCTAssertEqual(mark != nil, !found.isEmpty, "a \(level) badge exactly when the push has \(level) findings")
            if let mark {
                XCTAssertTrue(mark["summary"]?.stringValue?.hasPrefix("\(found.count) \(level)") == true)
                XCTAssertEqual(strings(mark["rules"]).sorted(), found.compactMap { $0["rule"]?.stringValue }.sorted())
                XCTAssertTrue(mark["title"]?.stringValue?.contains(found.first?["message"]?.stringValue ?? "?") == true, "the message on hover")
            }
        }
        XCTAssertEqual(marks.count, Set(fromAPI.compactMap { $0["level"]?.stringValue }).count, "one badge per level found")
        XCTAssertEqual(report["error"]?.stringValue, "", "the page showed no error")

        let burst = try XCTUnwrap(report["burst"])
        let seconds = try XCTUnwrap(burst["seconds"]?.doubleValue)
        let reads = try XCTUnwrap(burst["phoneReads"]?.intValue)
        XCTAssertGreaterThan(reads, 0, "the phones are read again while pushes arrive")
        XCTAssertLessThanOrEqual(Double(reads), seconds.rounded(.up) + 1, "at most one read of the phones a second")
    }

    private func strings(_ value: JSONValue?) -> [String] {
        value?.arrayValue?.compactMap(\.stringValue) ?? []
    }
}
