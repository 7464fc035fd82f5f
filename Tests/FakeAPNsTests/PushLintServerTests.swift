import FakeAPNs
import FakeAPNsTestSupport
import Foundation
import XCTest

/// The push lint on a running server: pushes sent with curl and with the project's client are
/// answered Apple's 200 and carry their findings; strict mode records error findings as
/// refusals beside the accepted push.
final class PushLintServerTests: XCTestCase {
    private let fixture = ServerFixture()
    private var server: FakeAPNsServer { fixture.server }

    override func setUpWithError() throws {
        try fixture.start(for: self)
    }

    /// curl's HTTP/2 POST of `payload` to the fixture's token with `headers`; the status.
    private func curl(_ headers: [String], _ payload: String) throws -> String {
        let result = try runTool(
            "/usr/bin/curl",
            [
                "--silent", "--show-error", "--http2", "--cacert", testCertificatePath("ca.pem"),
                "--write-out", "%{http_code}", "--output", "/dev/null", "--data", payload,
            ] + headers.flatMap { ["--header", $0] } + ["https://127.0.0.1:\(fixture.http2Port)/3/device/\(Fixtures.token.hex)"])
        XCTAssertEqual(result.status, 0, result.error)
        return result.output
    }

    func testCurlsBackgroundPushAtPriority10IsAcceptedWithTheErrorFinding() throws {
        let status = try curl(
            ["apns-topic: com.example.app", "apns-push-type: background", "apns-priority: 10"],
            #"{"aps":{"content-available":1}}"#)
        XCTAssertEqual(status, "200")
        let notification = try server.notifications.pop(timeout: .seconds(5))
        XCTAssertEqual(notification.pushType, .background)
        XCTAssertEqual(notification.priority, .immediately)
        XCTAssertEqual(notification.lintFindings.map(\.rule), [.backgroundAtPriority10])
        XCTAssertEqual(notification.lintFindings.first?.level, .error)
        XCTAssertEqual(server.rejections.count, 0, "the lint is on, not strict: nothing is refused")
    }

    func testCurlsBackgroundPushWithoutAPriorityIsAcceptedAtTheDefault10() throws {
        let status = try curl(
            ["apns-topic: com.example.app", "apns-push-type: background"], #"{"aps":{"content-available":1}}"#)
        XCTAssertEqual(status, "200")
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).lintFindings.map(\.rule), [.backgroundAtPriority10])
    }

    func testCurlsPushWithoutPushTypeAndARelativeExpirationCarriesBothFindingsErrorFirst() throws {
        let status = try curl(["apns-topic: com.example.app", "apns-expiration: 86400"], #"{"aps":{"alert":"Hi"}}"#)
        XCTAssertEqual(status, "200")
        let findings = try server.notifications.pop(timeout: .seconds(5)).lintFindings
        XCTAssertEqual(findings.map(\.rule), [.relativeExpiration, .missingPushType])
        XCTAssertTrue(findings.first?.message.hasPrefix("apns-expiration 86400 ") == true, "\(findings)")
    }

    func testCurlsPushToADescribedAppIsJudgedAgainstItsCategoriesSoundsAndEntitlements() throws {
        server.apps["com.example.app"] = AppBundle(categories: ["ORDER"], sounds: ["chime.caf"], entitlements: [])
        let status = try curl(
            ["apns-topic: com.example.app", "apns-push-type: alert", "apns-priority: 10"],
            #"{"aps":{"alert":"Hi","category":"CHAT","sound":"bell.caf","interruption-level":"time-sensitive"}}"#)
        XCTAssertEqual(status, "200")
        let findings = try server.notifications.pop(timeout: .seconds(5)).lintFindings
        XCTAssertEqual(
            findings.map(\.rule), [.unregisteredCategory, .interruptionLevelWithoutEntitlement, .unknownSound])
        XCTAssertEqual(
            findings.last?.message, #"sound "bell.caf" is not in the app's bundle; the phone plays the default sound"#)
    }

    func testCurlsLiveActivityStartWithoutAttributesIsAcceptedWithTheFinding() throws {
        server.apps["com.example.app"] = AppBundle(sounds: [])
        let status = try curl(
            [
                "apns-topic: com.example.app.push-type.liveactivity", "apns-push-type: liveactivity",
                "apns-priority: 10",
            ],
            #"{"aps":{"event":"start","timestamp":1700000000,"content-state":{},"alert":{"title":"Go"}}}"#)
        XCTAssertEqual(status, "200")
        XCTAssertEqual(
            try server.notifications.pop(timeout: .seconds(5)).lintFindings.map(\.rule), [.liveActivityStartIncomplete])
    }

    // MARK: - Strict mode

    private static var strict: FakeAPNsServer.Configuration {
        var configuration = FakeAPNsServer.Configuration()
        configuration.lint = .strict
        return configuration
    }

    func testStrictLintRecordsAnErrorFindingAsARefusalAndStillAnswers200() throws {
        try fixture.restart(Self.strict)
        let client = try server.connectHTTP2()
        let response = try client.send(.push(pushType: "background", body: Array(#"{"aps":{"content-available":1}}"#.utf8)))
        XCTAssertEqual(response.status, 200)
        let notification = try server.notifications.pop(timeout: .seconds(5))
        XCTAssertEqual(notification.lintFindings.map(\.rule), [.backgroundAtPriority10])
        let rejection = try server.rejections.pop(timeout: .seconds(5))
        XCTAssertEqual(rejection.cause, .lint)
        XCTAssertEqual(rejection.reason, "background-priority-10")
        XCTAssertEqual(rejection.apnsID, notification.apnsID)
        XCTAssertEqual(rejection.detail, notification.lintFindings.first?.message)
    }

    func testStrictLintRecordsNoRefusalForWarnings() throws {
        try fixture.restart(Self.strict)
        let response = try server.connectHTTP2().send(.push(body: Array(#"{"aps":{"alert":"Hi","orderID":7}}"#.utf8)))
        XCTAssertEqual(response.status, 200)
        let notification = try server.notifications.pop(timeout: .seconds(5))
        XCTAssertEqual(notification.lintFindings.map(\.rule), [.unknownAPSKey])
        // The intake records a push and its refusals in one step: both are there, or neither.
        XCTAssertEqual(server.rejections.count, 0)
    }

    func testLintOnRecordsNoRefusalForErrors() throws {
        let response = try server.connectHTTP2().send(.push(extra: [("apns-expiration", "3600")]))
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).lintFindings.map(\.rule), [.relativeExpiration])
        XCTAssertEqual(server.rejections.count, 0)
    }
}
