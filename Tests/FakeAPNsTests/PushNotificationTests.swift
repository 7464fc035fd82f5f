import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

/// `PushNotification` keeps its fields in shared storage; it must still behave as a value.
final class PushNotificationTests: XCTestCase {
    private func notification() -> PushNotification {
        PushNotification(
            deviceToken: Fixtures.token, payload: Payload(#"{"aps":{"alert":"Hi"}}"#), identifier: 7,
            expiration: 0, format: .enhanced, connection: ConnectionInfo(id: 1, peer: "127.0.0.1:9"))
    }

    func testChangingACopyLeavesTheOriginalAlone() {
        let original = notification()
        var copy = original
        copy.identifier = 8
        copy.sequenceNumber = 3
        copy.payload = Payload(#"{"aps":{"alert":"Bye"}}"#)
        copy.expiration = nil
        copy.priority = .consideringDevicePower
        XCTAssertEqual(original.identifier, 7)
        XCTAssertEqual(original.sequenceNumber, 0)
        XCTAssertEqual(original.payload.aps.alert?.body, "Hi")
        XCTAssertEqual(original.expiration, 0)
        XCTAssertEqual(original.priority, .immediately)
        XCTAssertEqual(copy.identifier, 8)
        XCTAssertEqual(copy.sequenceNumber, 3)
        XCTAssertEqual(copy.payload.aps.alert?.body, "Bye")
        XCTAssertNil(copy.expiration)
        XCTAssertEqual(copy.priority, .consideringDevicePower)
    }

    func testCopiesHeldInTwoArraysStayApartWhenOneChanges() {
        var stored = [notification(), notification()]
        let kept = stored
        stored[0].identifier = 99
        XCTAssertEqual(kept.map(\.identifier), [7, 7])
        XCTAssertEqual(stored.map(\.identifier), [99, 7])
    }
}
