import FakeAPNsTestSupport
import Foundation
import XCTest
@testable import FakeAPNs

/// A rejection groups what only HTTP/2 carries in `http2`, as a notification does.
final class RejectionRecordTests: XCTestCase {
    func testABinaryRefusalHasNoHTTP2Fields() throws {
        try withFakeAPNs(configuration: .init(strictDeviceRegistry: true)) { server in
            let client = try server.connectClient()
            try client.send(BinaryEncoder.enhanced(identifier: 7, token: Fixtures.token, payload: Fixtures.alert))
            let rejection = try server.rejections.pop(timeout: .seconds(5))
            XCTAssertEqual(rejection.answer, .status(.invalidToken))
            XCTAssertEqual(rejection.identifier, 7)
            XCTAssertNil(rejection.http2)
            XCTAssertNil(rejection.apnsID)
            XCTAssertNil(rejection.topic)
        }
    }

    func testAnHTTP2RefusalGroupsItsFieldsAndTheRecordReadsThem() throws {
        try withFakeAPNs(configuration: .init(strictDeviceRegistry: true)) { server in
            let apnsID = "0A9E8C7B-6D5F-4E3A-9B2C-1D0E2F3A4B5C"
            let response = try server.connectHTTP2().send(.push(extra: [("apns-id", apnsID)]))
            XCTAssertEqual(response.reason, "BadDeviceToken")
            let rejection = try server.rejections.pop(timeout: .seconds(5))
            XCTAssertEqual(rejection.answer, .reason(.badDeviceToken))
            let http2 = try XCTUnwrap(rejection.http2)
            XCTAssertEqual(http2.apnsID, apnsID)
            XCTAssertEqual(http2.topic, "com.example.app")
            XCTAssertNil(http2.channelOperation)
            XCTAssertEqual(rejection.apnsID, http2.apnsID)
            XCTAssertEqual(rejection.topic, http2.topic)
        }
    }

    func testTheGroupIsMadeForAnHTTP2FormatOrAnyHTTP2FieldAndOnlyThen() {
        let connection = ConnectionInfo(id: 1, peer: "127.0.0.1:9")
        func rejection(format: PushNotification.Format?, topic: String? = nil, operation: ChannelOperation? = nil) -> Rejection {
            Rejection(
                detail: "refused", cause: .malformed, responseSent: true, connectionClosed: false, format: format,
                topic: topic, channelOperation: operation, connection: connection)
        }
        XCTAssertNil(rejection(format: .enhanced).http2)
        XCTAssertNil(rejection(format: nil).http2, "an unknown binary command")
        XCTAssertEqual(rejection(format: .http2).http2, Rejection.HTTP2Fields())
        XCTAssertEqual(rejection(format: .broadcast).http2, Rejection.HTTP2Fields())
        XCTAssertEqual(rejection(format: nil, topic: "com.example.app").http2?.topic, "com.example.app", "a channel request's bundle")
        XCTAssertEqual(rejection(format: nil, operation: .list).channelOperation, .list)
    }
}
