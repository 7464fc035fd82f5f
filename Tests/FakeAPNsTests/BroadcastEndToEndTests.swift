import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

/// The project's provider client against the project's server, on the separate
/// channel-management listener and the provider listener: each half was first tested against
/// another implementation (python3-h2's test server, curl); here they must agree with each other.
final class BroadcastEndToEndTests: XCTestCase {
    private static let bundle = "com.example.app"
    private static let payload = Array(#"{"aps":{"event":"update","timestamp":1750000000,"content-state":{"score":"2-1"}}}"#.utf8)

    func testAChannelMadeByTheClientCarriesABroadcastToEverySubscriber() throws {
        var configuration = FakeAPNsServer.Configuration()
        configuration.channelsPort = 0
        try withFakeAPNs(configuration: configuration) { server in
            let management = try ProviderAPIClient(host: "127.0.0.1", port: XCTUnwrap(server.channelsPort))
            defer { management.close() }
            let created = try management.createChannel(bundleID: Self.bundle, storagePolicy: 1)
            XCTAssertEqual(created.status, 201, "\(created.reason ?? "")")
            let channelID = try XCTUnwrap(created.channelID)
            XCTAssertNotNil(created.requestID)

            let read = try management.readChannel(bundleID: Self.bundle, channelID: channelID)
            XCTAssertEqual(read.status, 200)
            XCTAssertEqual(read.storagePolicy, 1)
            XCTAssertEqual(read.pushType, "LiveActivity")
            XCTAssertEqual(try management.listChannels(bundleID: Self.bundle).channels, [channelID])

            let phone = DeviceToken(bytes: [UInt8](repeating: 7, count: 32))
            try server.channels.subscribe(phone, to: channelID)
            let provider = try ProviderAPIClient(host: "127.0.0.1", port: XCTUnwrap(server.http2Port))
            defer { provider.close() }
            let sent = try provider.broadcast(
                bundleID: Self.bundle, channelID: channelID, payload: Self.payload, priority: 5, expiration: 1_900_000_000)
            XCTAssertEqual(sent.status, 200, "\(sent.reason ?? "")")
            let uniqueID = try XCTUnwrap(sent.uniqueID)

            let notification = try server.notifications.pop(timeout: .seconds(10))
            XCTAssertEqual(notification.format, .broadcast)
            XCTAssertEqual(notification.channelID, channelID)
            XCTAssertEqual(notification.uniqueID, uniqueID)
            XCTAssertEqual(notification.topic, Self.bundle)
            let delivery = try server.channels.deliveries.pop(timeout: .seconds(10))
            XCTAssertEqual(delivery.deviceToken, phone)
            XCTAssertEqual(delivery.channelID, channelID)
            XCTAssertFalse(delivery.isStoredMessage)

            XCTAssertEqual(try management.deleteChannel(bundleID: Self.bundle, channelID: channelID).status, 204)
            let gone = try management.readChannel(bundleID: Self.bundle, channelID: channelID)
            XCTAssertEqual(gone.status, 400)
            XCTAssertEqual(gone.reason, "ChannelNotRegistered")
        }
    }
}
