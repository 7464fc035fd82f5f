import FakeAPNsTestSupport
import Foundation
import Testing
import XCTest
// Reads internals on purpose: Mailbox.init and TLSClient, to feed the assertion helpers by hand.
@testable import FakeAPNs
import FakeAPNsTesting

/// The helpers report under XCTest: failures reach the running test case at the caller's line.
final class AssertionHelpersUnderXCTestTests: FailureCapturingTestCase {
    func testExpectPopReportsATimeoutAsAnXCTestFailureAtTheCallersLine() {
        let box = Mailbox<Int>(noun: "number")
        var value: Int? = 0
        let line = #line + 1
        let captured = failures { value = box.expectPop(timeout: .milliseconds(10)) }
        XCTAssertNil(value)
        XCTAssertEqual(captured.count, 1)
        XCTAssertEqual(captured.first?.line, line)
        XCTAssertTrue(captured.first?.message.contains("Timed out") == true, "\(captured)")
    }

    func testExpectJSONReportsTheFirstDifference() {
        let payload = Payload(#"{"aps":{"alert":"Hi","badge":2}}"#)
        let captured = failures {
            payload.expectJSON(["aps": ["alert": "Hi", "badge": 2]])
            payload.expectJSON(["aps": ["alert": "Hi", "badge": 3]])
        }
        XCTAssertEqual(captured.count, 1)
        XCTAssertTrue(captured.first?.message.contains("$.aps.badge: expected 3, found 2") == true, "\(captured)")
    }

    func testExpectEmptyListsWhatIsQueued() {
        let box = Mailbox<Int>(noun: "number")
        box.expectEmpty()
        box.append(4)
        let captured = failures { box.expectEmpty() }
        XCTAssertTrue(captured.first?.message.contains("1 queued: 4") == true, "\(captured)")
    }

    func testExpectPopReturnsWhatArrived() {
        let box = Mailbox<Int>(noun: "number")
        box.append(5)
        XCTAssertEqual(box.expectPop(timeout: .zero), 5)
    }
}

/// The helpers report under Swift Testing: failures become issues of the running test.
@Suite struct AssertionHelpersUnderSwiftTesting {
    @Test func expectNextRecordsAnIssueOnTimeout() async {
        let box = Mailbox<Int>(noun: "number")
        await withKnownIssue {
            let value = await box.expectNext(timeout: .milliseconds(10))
            #expect(value == nil)
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("Timed out") }
        }
    }

    @Test func expectJSONRecordsAnIssueOnDifference() {
        withKnownIssue {
            Payload(#"{"aps":{"alert":"Hi"},"extra":1}"#).expectJSON(["aps": ["alert": "Hi"]])
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("$.extra: unexpected 1") }
        }
    }

    @Test func expectNextReturnsWhatArrived() async {
        let box = Mailbox<Int>(noun: "number")
        box.append(3)
        let value = await box.expectNext(timeout: .seconds(1))
        #expect(value == 3)
    }
}

/// The way a Swift Testing user writes a test against the server: async pops, no blocking.
@Suite struct SwiftTestingUsage {
    @Test func notificationArrivesThroughTheAsyncPop() async throws {
        try await withFakeAPNs { server in
            let client = try server.connectClient()
            try client.send(BinaryEncoder.frame(token: Fixtures.token, payload: Fixtures.alert, identifier: 11))
            let notification = try await server.notifications.next(timeout: .seconds(5))
            #expect(notification.identifier == 11)
            #expect(notification.payload.aps.alert?.body == "Hello")
            #expect(notification.deviceToken.hex == "fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2")
        }
    }

    @Test func waitingForAMatchingNotificationSkipsOthers() async throws {
        try await withFakeAPNs { server in
            let client = try server.connectClient()
            try client.send(
                BinaryEncoder.enhanced(identifier: 1, token: Fixtures.otherToken, payload: Fixtures.payload(1))
                    + BinaryEncoder.enhanced(identifier: 2, token: Fixtures.token, payload: Fixtures.payload(2)))
            let wanted = Fixtures.token
            let notification = try await server.notifications.next(timeout: .seconds(5), awaiting: "a notification for token \(wanted)") {
                $0.deviceToken == wanted
            }
            #expect(notification.identifier == 2)
            #expect(server.notifications.snapshot().map(\.identifier) == [1])
        }
    }
}
