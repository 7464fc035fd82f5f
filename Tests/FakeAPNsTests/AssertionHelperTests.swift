import FakeAPNsTestSupport
import Foundation
import Testing
import XCTest
// Reads internals on purpose: Mailbox.init and TLSClient, to feed the assertion helpers by hand.
@testable import FakeAPNs
import FakeAPNsTesting

/// The helpers report under XCTest: failures reach the running test case at the caller's line.
final class AssertionHelpersUnderXCTestTests: XCTestCase {
    private var captured: [(String, Int)] = []
    private var capturing = false

    override func recordFailure(withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool) {
        if capturing {
            captured.append((description, lineNumber))
        } else {
            super.recordFailure(withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected)
        }
    }

    func testExpectPopReportsATimeoutAsAnXCTestFailureAtTheCallersLine() {
        let box = Mailbox<Int>(noun: "number")
        capturing = true
        let line = #line + 1
        let value = box.expectPop(timeout: .milliseconds(10))
        capturing = false
        XCTAssertNil(value)
        XCTAssertEqual(captured.count, 1)
        XCTAssertEqual(captured.first?.1, line)
        XCTAssertTrue(captured.first?.0.contains("Timed out") == true, "\(captured)")
    }

    func testExpectJSONReportsTheFirstDifference() {
        let payload = Payload(#"{"aps":{"alert":"Hi","badge":2}}"#)
        capturing = true
        payload.expectJSON(["aps": ["alert": "Hi", "badge": 2]])
        payload.expectJSON(["aps": ["alert": "Hi", "badge": 3]])
        capturing = false
        XCTAssertEqual(captured.count, 1)
        XCTAssertTrue(captured.first?.0.contains("$.aps.badge: expected 3, found 2") == true, "\(captured)")
    }

    func testExpectEmptyListsWhatIsQueued() {
        let box = Mailbox<Int>(noun: "number")
        box.expectEmpty()
        box.append(4)
        capturing = true
        box.expectEmpty()
        capturing = false
        XCTAssertTrue(captured.first?.0.contains("1 queued: 4") == true, "\(captured)")
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
