import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

/// The web page at `/`: served from the binary under a strict policy, its live list fed by long
/// polls on the histories, and drawn in a real headless Chromium (Tests/Clients/web_page_driver.py).
final class WebPageTests: XCTestCase {
    func testThePageAndItsFilesAreServedUnderAStrictPolicy() throws {
        let ports = try DaemonFixture.started(for: self).ports
        let web = HTTPTestClient(port: try XCTUnwrap(ports["web"]))
        let page = try web.get("/")
        XCTAssertEqual(page.status, 200)
        XCTAssertEqual(page.header("Content-Type"), "text/html; charset=utf-8")
        let policy = try XCTUnwrap(page.header("Content-Security-Policy"))
        for directive in ["default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'"] {
            XCTAssertTrue(policy.contains(directive), policy)
        }
        XCTAssertFalse(policy.contains("unsafe"), policy)
        XCTAssertEqual(page.header("X-Content-Type-Options"), "nosniff")
        XCTAssertEqual(page.header("Cache-Control"), "no-store")
        XCTAssertFalse(page.text.contains("http://") || page.text.contains("https://"), "the page names no other origin")
        XCTAssertFalse(page.text.contains("<script>"), "no inline script")
        XCTAssertEqual(try web.get("/web/app.js").header("Content-Type"), "text/javascript; charset=utf-8")
        XCTAssertEqual(try web.get("/web/app.css").header("Content-Type"), "text/css; charset=utf-8")
        XCTAssertEqual(try web.get("/web/other.js").status, 404)
        XCTAssertEqual(try web.post("/").status, 405)
        XCTAssertEqual(try web.get("/?x=1").status, 400)
    }

    func testAListWithWaitAnswersWhenANotificationArrivesWithoutTakingIt() throws {
        let ports = try DaemonFixture.started(for: self).ports
        let webPort = try XCTUnwrap(ports["web"])
        let web = HTTPTestClient(port: webPort)
        let answer = Locked<HTTPTestClient.Response?>(nil)
        let poll = try OSThread(name: "long-poll") {
            answer.withLock { $0 = try? web.get("/api/v1/notifications?since=0&wait=30", timeout: .seconds(40)) }
        }
        let sent = try runTool(DaemonFixture.executable.path, [
            "send", "--port", String(try XCTUnwrap(ports["http2"])), "--token", String(repeating: "ab", count: 32),
            "--topic", "com.example.app", "--alert", "hello",
        ])
        XCTAssertEqual(sent.status, 0, sent.error)
        poll.join()
        let response = try XCTUnwrap(answer.withLock { $0 })
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.json?["notifications"]?[0]?["payload"]?["aps"]?["alert"]?.stringValue, "hello")
        XCTAssertEqual(try web.get("/api/v1/notifications/next?timeout=10").status, 200, "the long poll took nothing")

        let quiet = try web.get("/api/v1/notifications?since=1&wait=0.2")
        XCTAssertEqual(quiet.status, 200)
        XCTAssertEqual(quiet.json?["notifications"]?.arrayValue?.count, 0, "nothing new: an empty page once the time is up")
        XCTAssertEqual(try web.get("/api/v1/rejections?wait=61").status, 400)
    }

    /// Opens the page in headless Chromium, then sends over both protocols and reads the DOM.
    func testThePageShowsWhatArrivesLiveInChromium() throws {
        try Self.requireChromium()
        let ports = try DaemonFixture.started(for: self).ports
        let screenshot = ProcessInfo.processInfo.environment["FAKEAPNS_WEB_SCREENSHOT"]
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("fake-apns-web-\(getpid()).png").path
        let run = try runTool("/usr/bin/python3", [
            repositoryRoot.appendingPathComponent("Tests/Clients/web_page_driver.py").path,
            "--fake-apns", DaemonFixture.executable.path, "--web", String(try XCTUnwrap(ports["web"])),
            "--http2", String(try XCTUnwrap(ports["http2"])), "--gateway", String(try XCTUnwrap(ports["gateway"])),
            "--screenshot", screenshot,
        ], timeout: .seconds(400))
        guard run.status == 0 else { return XCTFail("the driver failed: \(run.error)") }
        let report = try JSONValue(parsing: run.output.trimmingCharacters(in: .whitespacesAndNewlines))
        print("web page figures: \(run.output)")

        XCTAssertEqual(report["bulkShown"]?.stringValue, "10000")
        XCTAssertEqual(report["bulkCards"]?.intValue, 100, "a page of cards, not 10,000")
        XCTAssertEqual(report["bulkFirstCard"]?.stringValue, "Bulk 9999", "newest first")
        let firstRender = try XCTUnwrap(report["firstRenderMilliseconds"]?.doubleValue)
        XCTAssertLessThan(firstRender, 5000, "the first render with 10,000 stored (under 1 s on an idle machine)")
        XCTAssertEqual(report["clearedOnServer"]?.boolValue, true)

        XCTAssertEqual(report["liveCards"]?.intValue, 5)
        let http2 = try XCTUnwrap(report["http2Card"])
        XCTAssertEqual(http2["app"]?.stringValue, "com.example.<i>topic</i>")
        XCTAssertEqual(http2["title"]?.stringValue, "<script>window.__xss='script'</script>Title")
        XCTAssertEqual(http2["body"]?.stringValue, "<img src=x onerror=\"window.__xss='img'\"> body <b>bold</b>")
        XCTAssertTrue(http2["tags"]?.stringValue?.contains("badge 7") == true)
        XCTAssertTrue(http2["tags"]?.stringValue?.contains("HTTP/2") == true)
        let binary = try XCTUnwrap(report["binaryCard"])
        XCTAssertEqual(binary["subtitle"]?.stringValue, "<a href=\"javascript:window.__xss='link'\">click</a>")
        XCTAssertTrue(binary["tags"]?.stringValue?.contains("binary command 2") == true)
        XCTAssertEqual(report["kinds"]?.arrayValue?.compactMap(\.stringValue).sorted(), ["Live Activity", "Silent"])

        let rejection = try XCTUnwrap(report["rejectionCard"])
        XCTAssertEqual(rejection["reason"]?.stringValue, "BadDeviceToken")
        XCTAssertEqual(rejection["meaning"]?.stringValue, "the token is not valid for this environment or app")
        XCTAssertEqual(report["rejectedCount"]?.stringValue, "1")

        let inert = try XCTUnwrap(report["inert"])
        XCTAssertEqual(inert["xss"], .null, "no payload ran")
        XCTAssertEqual(inert["scripts"]?.intValue, 1, "only the page's own script")
        XCTAssertEqual(inert["markupInList"]?.intValue, 0, "no payload became an element")
        XCTAssertEqual(inert["literalScript"]?.boolValue, true, "the markup is shown as text")

        let apns = try XCTUnwrap(report["apnsFile"])
        XCTAssertEqual(apns["Simulator Target Bundle"]?.stringValue, "com.example.<i>topic</i>")
        XCTAssertEqual(apns["aps"]?["badge"]?.intValue, 7)

        XCTAssertEqual(report["strictFromPage"]?.boolValue, true)
        let device = try XCTUnwrap(report["deviceFromPage"]?[0])
        XCTAssertEqual(device["token"]?.stringValue, String(repeating: "d4", count: 32))
        XCTAssertEqual(device["topic"]?.stringValue, "com.example.app")
        XCTAssertNotEqual(device["unregisteredAt"], .null, "unregistered from the page")
        XCTAssertTrue(
            report["faultsFromPage"]?.arrayValue?.contains { $0.stringValue?.contains("com.example.never") == true } == true,
            "the rule added from the page's form")
        XCTAssertEqual(report["faultsAfterRemove"]?.intValue, 1, "the rule removed from the page")
        XCTAssertEqual(
            report["senderRows"]?.intValue, report["senderFindings"]?.intValue, "the panel lists each sender finding")

        XCTAssertEqual(report["tokenFilter"]?.boolValue, true)
        XCTAssertEqual(report["filters"]?.boolValue, true)
        XCTAssertEqual(report["pausedCards"]?.intValue, 5, "paused: what arrives is not drawn")
        let stream = try XCTUnwrap(report["stream"])
        XCTAssertLessThan(try XCTUnwrap(stream["evaluateMaxMilliseconds"]?.doubleValue), 2000, "the page answers during a stream of 1,000/s")
        XCTAssertTrue(FileManager.default.fileExists(atPath: screenshot))
    }
}

extension WebPageTests {
    /// Skips, loudly, when headless Chromium or its DevTools client is not installed.
    static func requireChromium() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"),
            (try? runTool("/usr/bin/python3", ["-c", "import websocket"]).status) == 0
        else {
            let message = "CHROMIUM IS MISSING: the web page test did not run; Scripts/install-dependencies.sh installs chromium and python3-websocket"
            print(message)
            throw XCTSkip(message)
        }
    }
}
