import FakeAPNs
import FakeAPNsTestSupport
import FakeAPNsTesting
import Testing
import XCTest

/// `expectNoSenderFindings` reports under XCTest: each finding in one failure, at the caller's
/// line; the project's own client, used correctly, gives none.
final class SenderAuditExpectationsUnderXCTestTests: FailureCapturingTestCase {
    private let fixture = ServerFixture()

    func testACorrectSenderPassesAndADuplicateFailsListingTheFinding() throws {
        try fixture.start(for: self)
        let server = fixture.server
        let client = try server.connectHTTP2()
        for body in [#"{"aps":{"alert":"one"}}"#, #"{"aps":{"alert":"two"}}"#, #"{"aps":{"alert":"three"}}"#] {
            XCTAssertEqual(try client.send(.push(body: Array(body.utf8))).status, 200)
        }
        _ = try server.notifications.pop(count: 3, timeout: .seconds(5))
        XCTAssertEqual(failures { server.expectNoSenderFindings() }.count, 0, server.senderReport.description)

        XCTAssertEqual(try client.send(.push(body: Array(#"{"aps":{"alert":"one"}}"#.utf8))).status, 200)
        _ = try server.notifications.pop(timeout: .seconds(5))
        let line = #line + 1
        let captured = failures { server.expectNoSenderFindings() }
        XCTAssertEqual(captured.count, 1)
        XCTAssertEqual(captured.first?.line, line)
        let message = captured.first?.message ?? ""
        XCTAssertTrue(message.contains("Expected no sender findings (warnings or errors); found 1:"), message)
        XCTAssertTrue(
            message.contains("warning duplicate-push by address:127.0.0.1, 1 time; first: connection"), message)
        let none = failures {
            server.expectNoSenderFindings(minimumLevel: .error)
            server.expectNoSenderFindings(sender: "token:ABCDE12345")
        }
        XCTAssertEqual(
            none.count, 0, "a warning is below errors, and another sender's findings are not counted: \(none)")
    }
}

/// `expectNoSenderFindings` reports under Swift Testing: the failure is an issue of the running test.
@Suite struct SenderAuditExpectationsUnderSwiftTesting {
    @Test(.fakeAPNs) func aPushAfter410RecordsAnIssueNamingTheRule() async throws {
        let server = try #require(FakeAPNsServer.current)
        server.devices.unregister(Fixtures.token)
        let client = try server.connectHTTP2()
        #expect(try client.send(.push(body: Array(#"{"aps":{"alert":"one"}}"#.utf8))).status == 410)
        #expect(try client.send(.push(body: Array(#"{"aps":{"alert":"two"}}"#.utf8))).status == 410)
        withKnownIssue {
            server.expectNoSenderFindings(minimumLevel: .error)
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("error push-after-unregistered by address:127.0.0.1") }
        }
    }
}
