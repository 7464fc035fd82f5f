import FakeAPNsTestSupport
import Foundation
import XCTest

import FakeAPNs

/// `ProviderAPIClient`'s channel management and broadcast requests against python3-h2's
/// `apns_broadcast_server.py`: what goes on the wire, and how each answer is read.
final class BroadcastClientTests: XCTestCase {
    private static let bundle = "com.example.app"
    private static let payload = #"{"aps":{"event":"update","content-state":{"score":"2-1"},"timestamp":1700000000}}"#

    private var server: BroadcastTestServer!
    private var client: ProviderAPIClient!

    override func setUpWithError() throws {
        server = try BroadcastTestServer()
        client = try ProviderAPIClient(host: "127.0.0.1", port: server.port)
    }

    override func tearDown() {
        client?.close()
        client = nil
        server = nil
    }

    private func lastRequest() throws -> BroadcastTestServer.Recorded {
        try XCTUnwrap(server.requests().last)
    }

    func testCreateSendsApplesBodyAndReadsTheChannelID() throws {
        let requestID = "5b7b2a0e-3f5c-4d1e-9a3b-2c1d0e9f8a7b"
        let created = try client.createChannel(bundleID: Self.bundle, storagePolicy: 1, requestID: requestID)
        XCTAssertEqual(created.status, 201)
        XCTAssertEqual(created.requestID, requestID)
        XCTAssertNil(created.reason)
        let channelID = try XCTUnwrap(created.channelID)
        XCTAssertNotNil(Data(base64Encoded: channelID), channelID)

        let sent = try lastRequest()
        XCTAssertEqual(sent.method, "POST")
        XCTAssertEqual(sent.path, "/1/apps/com.example.app/channels")
        XCTAssertEqual(sent.header("apns-request-id"), requestID)
        XCTAssertNil(sent.header("apns-channel-id"))
        XCTAssertEqual(sent.body, #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#)
    }

    func testReadListAndDeleteCarryTheChannelAndReadTheirBodies() throws {
        let first = try XCTUnwrap(client.createChannel(bundleID: Self.bundle, storagePolicy: 0).channelID)
        let second = try XCTUnwrap(client.createChannel(bundleID: Self.bundle, storagePolicy: 1).channelID)
        _ = try client.createChannel(bundleID: "com.example.other", storagePolicy: 0)

        let read = try client.readChannel(bundleID: Self.bundle, channelID: second)
        XCTAssertEqual(read.status, 200)
        XCTAssertEqual(read.storagePolicy, 1)
        XCTAssertEqual(read.pushType, "LiveActivity")
        XCTAssertNotNil(read.requestID, "the server makes one up")
        var sent = try lastRequest()
        XCTAssertEqual(sent.method, "GET")
        XCTAssertEqual(sent.path, "/1/apps/com.example.app/channels")
        XCTAssertEqual(sent.header("apns-channel-id"), second)
        XCTAssertEqual(sent.body, "")

        let listed = try client.listChannels(bundleID: Self.bundle)
        XCTAssertEqual(listed.status, 200)
        XCTAssertEqual(listed.channels, [first, second])
        sent = try lastRequest()
        XCTAssertEqual(sent.method, "GET")
        XCTAssertEqual(sent.path, "/1/apps/com.example.app/all-channels")
        XCTAssertNil(sent.header("apns-channel-id"))

        let deleted = try client.deleteChannel(bundleID: Self.bundle, channelID: first)
        XCTAssertEqual(deleted.status, 204)
        XCTAssertNil(deleted.reason)
        sent = try lastRequest()
        XCTAssertEqual(sent.method, "DELETE")
        XCTAssertEqual(sent.header("apns-channel-id"), first)
        XCTAssertEqual(try client.listChannels(bundleID: Self.bundle).channels, [second])

        let gone = try client.readChannel(bundleID: Self.bundle, channelID: first)
        XCTAssertEqual(gone.status, 400)
        XCTAssertEqual(gone.reason, "ChannelNotRegistered")
        XCTAssertNil(gone.storagePolicy)
    }

    func testBroadcastSendsApplesHeadersAndReadsTheUniqueID() throws {
        let channelID = try XCTUnwrap(client.createChannel(bundleID: Self.bundle, storagePolicy: 1).channelID)
        let jwt = try ProviderTokenSigner.sign(keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
        let sent = try client.broadcast(
            bundleID: Self.bundle, channelID: channelID, payload: Array(Self.payload.utf8), expiration: 1_700_003_600,
            apnsID: "00000000-0000-4000-8000-000000000001", providerToken: jwt)
        XCTAssertEqual(sent.status, 200)
        XCTAssertNotNil(UUID(uuidString: try XCTUnwrap(sent.uniqueID)))
        XCTAssertNotNil(sent.requestID)
        XCTAssertNil(sent.reason)

        let request = try lastRequest()
        XCTAssertEqual(request.method, "POST")
        XCTAssertEqual(request.path, "/4/broadcasts/apps/com.example.app")
        XCTAssertEqual(request.header("apns-channel-id"), channelID)
        XCTAssertEqual(request.header("apns-push-type"), "LiveActivity")
        XCTAssertEqual(request.header("apns-priority"), "10")
        XCTAssertEqual(request.header("apns-expiration"), "1700003600")
        XCTAssertEqual(request.header("apns-id"), "00000000-0000-4000-8000-000000000001")
        XCTAssertEqual(request.header("authorization"), "bearer \(jwt)")
        XCTAssertEqual(request.body, Self.payload)
    }

    func testBroadcastWithoutExpirationOmitsTheHeader() throws {
        let channelID = try XCTUnwrap(client.createChannel(bundleID: Self.bundle, storagePolicy: 0).channelID)
        let sent = try client.broadcast(
            bundleID: Self.bundle, channelID: channelID, payload: Array(Self.payload.utf8), priority: 5)
        XCTAssertEqual(sent.status, 200)
        let request = try lastRequest()
        XCTAssertNil(request.header("apns-expiration"))
        XCTAssertEqual(request.header("apns-priority"), "5")
    }

    func testRefusalsForAMissingOrUnknownChannelAreRead() throws {
        let missing = ChannelResponse(
            try client.send(
                ProviderAPIClient.Request(path: "/1/apps/com.example.app/channels", method: "GET")))
        XCTAssertEqual(missing.status, 400)
        XCTAssertEqual(missing.reason, "MissingChannelId")
        XCTAssertNotNil(missing.requestID)

        let unknown = try client.broadcast(
            bundleID: Self.bundle, channelID: "dHN0LXNyY2gtY2hubA==", payload: Array(Self.payload.utf8))
        XCTAssertEqual(unknown.status, 400)
        XCTAssertEqual(unknown.reason, "ChannelNotRegistered")
        XCTAssertNil(unknown.uniqueID)

        let deleted = try client.deleteChannel(bundleID: Self.bundle, channelID: "dHN0LXNyY2gtY2hubA==")
        XCTAssertEqual(deleted.status, 400)
        XCTAssertEqual(deleted.reason, "ChannelNotRegistered")
    }

    func testAStoragePolicyGivenAsADigitInAStringIsRead() {
        let response = ChannelResponse(
            ProviderAPIClient.Response(status: 200, body: Array(#"{"message-storage-policy":"1","push-type":"LiveActivity"}"#.utf8)))
        XCTAssertEqual(response.storagePolicy, 1)
        XCTAssertNil(response.channels)
    }
}

private typealias ChannelResponse = ProviderAPIClient.ChannelResponse
