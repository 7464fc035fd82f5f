import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

/// `ChannelRegistry.create(bundleID:storagePolicy:id:)`: a channel id a test chooses.
final class ChannelFixedIDTests: XCTestCase {
    private let fixture = ServerFixture()
    private var server: FakeAPNsServer { fixture.server }

    override func setUpWithError() throws {
        try fixture.start(for: self)
    }

    func testAFixedIDIsUsedOnceAndServedByTheProviderAPI() throws {
        let channel = try server.channels.create(bundleID: "com.example.app", storagePolicy: .mostRecentMessage, id: "Zm9v/+8=")
        XCTAssertEqual(channel.id, "Zm9v/+8=")
        XCTAssertEqual(server.channels.channel(id: "Zm9v/+8=")?.storagePolicy, .mostRecentMessage)
        XCTAssertThrowsError(try server.channels.create(bundleID: "com.example.other", storagePolicy: .noStorage, id: "Zm9v/+8=")) {
            XCTAssertEqual($0 as? ChannelRegistryError, .channelIDInUse("Zm9v/+8="))
        }
        let read = try server.connectHTTP2().send(ProviderAPIClient.Request(
            path: "/1/apps/com.example.app/channels", headers: [("apns-channel-id", "Zm9v/+8=")], method: "GET"))
        XCTAssertEqual(read.status, 200)
        XCTAssertTrue(server.channels.delete(id: "Zm9v/+8="))
        XCTAssertEqual(try server.channels.create(bundleID: "com.example.app", storagePolicy: .noStorage, id: "Zm9v/+8=").id,
                       "Zm9v/+8=", "a deleted channel's id is free again")
    }

    func testAnIDThatIsNotBase64IsRefusedAndCountsNothing() throws {
        for id in ["", "not base64!", "Zm9v/+8", String(repeating: "A", count: 1028)] {
            XCTAssertThrowsError(try server.channels.create(bundleID: "b", storagePolicy: .noStorage, id: id)) {
                XCTAssertEqual($0 as? ChannelRegistryError, .invalidChannelID(id))
            }
        }
        XCTAssertEqual(server.channels.count, 0)
        XCTAssertEqual(server.channels.list(), [])
    }

    func testFixedIDsCountTowardTheLimit() throws {
        server.channels.maximumChannelsPerBundle = 1
        try server.channels.create(bundleID: "b", storagePolicy: .noStorage, id: "AQ==")
        XCTAssertThrowsError(try server.channels.create(bundleID: "b", storagePolicy: .noStorage, id: "Ag==")) {
            XCTAssertEqual($0 as? ChannelRegistryError, .limitReached(bundleID: "b", limit: 1))
        }
        XCTAssertThrowsError(try server.channels.create(bundleID: "b", storagePolicy: .noStorage)) {
            XCTAssertEqual($0 as? ChannelRegistryError, .limitReached(bundleID: "b", limit: 1))
        }
        try server.channels.create(bundleID: "a", storagePolicy: .noStorage)
        XCTAssertEqual(server.channels.list().map(\.bundleID), ["a", "b"], "every channel, bundles in name order")
        XCTAssertEqual(server.channels.count, 2)
    }
}
