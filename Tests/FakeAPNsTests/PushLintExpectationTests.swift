import FakeAPNs
import FakeAPNsTestSupport
import FakeAPNsTesting
import Testing
import XCTest

/// A push as the HTTP/2 decoder makes it, for the lint helpers to judge.
private func push(_ payload: String, pushType: PushType? = .alert, sequenceNumber: UInt64 = 1) -> PushNotification {
    PushNotification(
        deviceToken: Fixtures.token, payload: Payload(payload), format: .http2,
        connection: ConnectionInfo(id: 1, peer: "127.0.0.1:9"), sequenceNumber: sequenceNumber,
        http2: PushNotification.HTTP2Fields(
            apnsID: "e621e1f8-c36c-495a-93fc-0c247a3e6e5f", topic: "com.example.app", pushType: pushType,
            collapseID: nil, providerToken: nil))
}

/// `expectNoLintFindings` reports under XCTest: each finding in the failure, at the caller's line.
final class PushLintExpectationsUnderXCTestTests: FailureCapturingTestCase {
    private let fixture = ServerFixture()

    func testAPushWithFindingsFailsWithEachFindingAtTheCallersLine() {
        let flagged = push(#"{"aps":{"content-available":1,"badge":1}}"#, pushType: .background, sequenceNumber: 3)
        let line = #line + 1
        let captured = failures { flagged.expectNoLintFindings() }
        XCTAssertEqual(captured.count, 1)
        XCTAssertEqual(captured.first?.line, line)
        let message = captured.first?.message ?? ""
        XCTAssertTrue(message.contains("push #3 (apns-id e621e1f8-c36c-495a-93fc-0c247a3e6e5f"), message)
        XCTAssertTrue(message.contains("found 2: error background-priority-10: apns-priority 10"), message)
        XCTAssertTrue(message.contains("; error background-with-alert: a background push carries aps.badge"), message)
    }

    func testACleanPushOrOneBelowTheLevelAskedPasses() {
        let none = failures {
            push(#"{"aps":{"alert":"Hi"}}"#).expectNoLintFindings(minimumLevel: .info)
            push(#"{"aps":{"alert":"Hi","orderID":7}}"#).expectNoLintFindings(minimumLevel: .error)
        }
        XCTAssertEqual(none.count, 0, "\(none)")
        let warned = failures { push(#"{"aps":{"alert":"Hi","orderID":7}}"#).expectNoLintFindings() }
        XCTAssertTrue(warned.first?.message.contains("warning unknown-aps-key") == true, "\(warned)")
    }

    func testTheServersHistoryFailsOnceListingEachFlaggedPush() throws {
        try fixture.start(for: self)
        let server = fixture.server
        let client = try server.connectHTTP2()
        for request in [
            .push(body: Array(#"{"aps":{"alert":"clean"}}"#.utf8)),
            .push(pushType: "background", body: Array(#"{"aps":{"content-available":1}}"#.utf8)),
            .push(pushType: nil),
        ] as [ProviderAPIClient.Request] {
            XCTAssertEqual(try client.send(request).status, 200)
        }
        let received = try server.notifications.pop(count: 3, timeout: .seconds(5))
        let captured = failures {
            server.expectNoLintFindings(minimumLevel: .warning)
            server.expectNoLintFindings(minimumLevel: .warning, since: received[2].sequenceNumber)
        }
        XCTAssertEqual(captured.count, 1, "nothing after the last push: \(captured)")
        let message = captured.first?.message ?? ""
        XCTAssertTrue(message.contains("2 pushes have some:"), message)
        let background = "push #2 (apns-id \(received[1].apnsID ?? ""), topic com.example.app): 1: error background-priority-10"
        XCTAssertTrue(message.contains(background), message)
        let untyped = "push #3 (apns-id \(received[2].apnsID ?? ""), topic com.example.app): 1: warning missing-push-type"
        XCTAssertTrue(message.contains(untyped), message)
        XCTAssertFalse(message.contains("push #1 "), message)
        let errorsOnly = failures { server.expectNoLintFindings(minimumLevel: .error, since: received[1].sequenceNumber) }
        XCTAssertEqual(errorsOnly.count, 0, "#3's warning is below the level asked: \(errorsOnly)")
    }
}

/// `expectNoLintFindings` reports under Swift Testing: the failure is an issue of the running test.
@Suite struct PushLintExpectationsUnderSwiftTesting {
    @Test func aPushWithAFindingRecordsAnIssueNamingIt() {
        withKnownIssue {
            push(#"{"aps":{"alert":"Hi"}}"#, pushType: nil).expectNoLintFindings()
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("warning missing-push-type: no apns-push-type") }
        }
    }

    @Test func aCleanPushRecordsNoIssue() {
        push(#"{"aps":{"alert":"Hi","badge":1}}"#).expectNoLintFindings(minimumLevel: .info)
    }

    @Test(.fakeAPNs) func theServersHistoryRecordsAnIssueForAFlaggedPush() async throws {
        let server = try #require(FakeAPNsServer.current)
        server.apps["com.example.app"] = AppBundle(sounds: ["chime.caf"])
        let client = try server.connectHTTP2()
        _ = try client.send(.push(body: Array(#"{"aps":{"alert":"Hi","sound":"bell.caf"}}"#.utf8)))
        _ = try await server.notifications.next(timeout: .seconds(5))
        withKnownIssue {
            server.expectNoLintFindings()
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains(#"warning unknown-sound: sound "bell.caf""#) }
        }
    }
}
