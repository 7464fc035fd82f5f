import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

/// Broadcast send (`POST /4/broadcasts/apps/<bundle>`) over real HTTP/2 connections: each
/// broadcast is one notification on the queue and one delivery per subscribed device.
final class BroadcastTests: XCTestCase {
    private let fixture = ServerFixture()
    private var server: FakeAPNsServer { fixture.server }
    private static let bundle = "com.example.app"
    private static let payload = Array(#"{"aps":{"event":"update","timestamp":1750000000,"content-state":{"score":"2-1"}}}"#.utf8)
    private static let phones: [DeviceToken] = [
        DeviceToken(bytes: [UInt8](repeating: 1, count: 32)), DeviceToken(bytes: [UInt8](repeating: 2, count: 32)),
        DeviceToken(bytes: [UInt8](repeating: 3, count: 32)),
    ]

    override func setUpWithError() throws {
        try fixture.start(for: self)
    }

    private static func broadcast(
        _ channel: String?, pushType: String? = "LiveActivity", priority: String? = "10", extra: [(String, String)] = [],
        body: [UInt8] = payload, bundle: String = bundle
    ) -> ProviderAPIClient.Request {
        var headers: [(String, String)] = []
        if let channel { headers.append(("apns-channel-id", channel)) }
        if let pushType { headers.append(("apns-push-type", pushType)) }
        if let priority { headers.append(("apns-priority", priority)) }
        return ProviderAPIClient.Request(path: "/4/broadcasts/apps/\(bundle)", headers: headers + extra, body: body)
    }

    func testABroadcastIsOneNotificationAndOneDeliveryPerSubscriber() throws {
        let channel = try server.channels.create(bundleID: Self.bundle, storagePolicy: .noStorage)
        for phone in Self.phones { try server.channels.subscribe(phone, to: channel.id) }
        XCTAssertEqual(server.channels.subscribers(of: channel.id), Self.phones)
        let requestID = "6b0c4f1e-2a3d-4c5b-8e9f-0a1b2c3d4e5f"
        let response = try server.connectHTTP2().send(Self.broadcast(
            channel.id, pushType: "liveactivity", priority: "5",
            extra: [("apns-request-id", requestID), ("apns-expiration", "0")]))
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.body, [])
        XCTAssertEqual(response.header("apns-request-id"), requestID)
        let uniqueID = try XCTUnwrap(response.header("apns-unique-id"))
        XCTAssertNotNil(UUID(uuidString: uniqueID))

        let notification = try server.notifications.pop(timeout: .seconds(5))
        XCTAssertEqual(notification.format, .broadcast)
        XCTAssertEqual(notification.channelID, channel.id)
        XCTAssertEqual(notification.topic, Self.bundle)
        XCTAssertEqual(notification.requestID, requestID)
        XCTAssertEqual(notification.uniqueID, uniqueID)
        XCTAssertEqual(notification.pushType, .liveactivity)
        XCTAssertEqual(notification.priority, .consideringDevicePower)
        XCTAssertEqual(notification.expiration, 0)
        XCTAssertEqual(notification.payload.bytes, Self.payload)
        XCTAssertEqual(server.notificationHistory.list().map(\.sequenceNumber), [notification.sequenceNumber])

        let deliveries = try server.channels.deliveries.pop(count: 3, timeout: .seconds(5))
        XCTAssertEqual(deliveries.map(\.deviceToken), Self.phones)
        XCTAssertEqual(deliveries.map(\.sequenceNumber), [1, 2, 3])
        XCTAssertTrue(deliveries.allSatisfy { !$0.isStoredMessage && $0.channelID == channel.id })
        XCTAssertEqual(deliveries[0].notification.sequenceNumber, notification.sequenceNumber)

        server.channels.unsubscribe(Self.phones[1], from: channel.id)
        XCTAssertEqual(try server.connectHTTP2().send(Self.broadcast(channel.id)).status, 200)
        XCTAssertEqual(try server.channels.deliveries.pop(count: 2, timeout: .seconds(5)).map(\.deviceToken), [Self.phones[0], Self.phones[2]])
    }

    func testALateSubscriberGetsTheStoredMessageUnderEightHoursOld() throws {
        let now = Locked(Date(timeIntervalSince1970: 1_800_000_000))
        try fixture.restart(.init(clock: { now.withLock { $0 } }))
        let stored = try server.channels.create(bundleID: Self.bundle, storagePolicy: .mostRecentMessage)
        let unstored = try server.channels.create(bundleID: Self.bundle, storagePolicy: .noStorage)
        let client = try server.connectHTTP2()
        XCTAssertEqual(try client.send(Self.broadcast(stored.id, body: Array(#"{"aps":{"event":"start"}}"#.utf8))).status, 200)
        XCTAssertEqual(try client.send(Self.broadcast(stored.id)).status, 200)
        XCTAssertEqual(try client.send(Self.broadcast(unstored.id)).status, 200)
        _ = try server.notifications.pop(count: 3, timeout: .seconds(5))

        now.withLock { $0 += 7 * 3600 }
        try server.channels.subscribe(Self.phones[0], to: stored.id)
        try server.channels.subscribe(Self.phones[0], to: unstored.id)
        let late = try server.channels.deliveries.pop(timeout: .seconds(5))
        XCTAssertTrue(late.isStoredMessage)
        XCTAssertEqual(late.deviceToken, Self.phones[0])
        XCTAssertEqual(late.notification.payload.bytes, Self.payload, "the most recent message")
        XCTAssertEqual(late.deliveredAt, now.withLock { $0 })
        XCTAssertEqual(server.channels.deliveries.count, 0, "a policy-0 channel stores nothing")

        now.withLock { $0 += 3600 + 1 }
        try server.channels.subscribe(Self.phones[1], to: stored.id)
        XCTAssertEqual(server.channels.deliveries.count, 0, "over 8 hours old")
        XCTAssertThrowsError(try server.channels.subscribe(Self.phones[1], to: "bm9uZQ==")) { error in
            XCTAssertEqual(error as? ChannelRegistryError, .unknownChannel("bm9uZQ=="))
        }
    }

    func testEveryRefusalHasItsStatusReasonAndRequestID() throws {
        let open = try server.channels.create(bundleID: Self.bundle, storagePolicy: .mostRecentMessage).id
        let unstored = try server.channels.create(bundleID: Self.bundle, storagePolicy: .noStorage).id
        let unknown = Data((0..<16).map { UInt8($0) }).base64EncodedString()
        let cases: [(ProviderAPIClient.Request, Int, String)] = [
            (Self.broadcast(nil), 400, "MissingChannelId"),
            (Self.broadcast("%%%"), 400, "BadChannelId"),
            (Self.broadcast(open, pushType: nil), 400, "MissingPushType"),
            (Self.broadcast(open, pushType: "alert"), 400, "InvalidPushType"),
            (Self.broadcast(open, extra: [("apns-id", "nope")]), 400, "BadMessageId"),
            (Self.broadcast(open, extra: [("apns-expiration", "tomorrow")]), 400, "BadExpirationDate"),
            (Self.broadcast(unstored, extra: [("apns-expiration", "1900000000")]), 400, "BadExpirationDate"),
            (Self.broadcast(open, priority: nil), 400, "BadPriority"),
            (Self.broadcast(open, priority: "7"), 400, "BadPriority"),
            (Self.broadcast(unknown), 400, "ChannelNotRegistered"),
            (Self.broadcast(open, bundle: "com.example.other"), 400, "ChannelNotRegistered"),
            (Self.broadcast(open, bundle: "com.example.app.push-type.liveactivity"), 400, "TopicDisallowed"),
            (Self.broadcast(open, body: []), 400, "PayloadEmpty"),
            (Self.broadcast(open, body: [UInt8](repeating: 0x20, count: 5121)), 413, "PayloadTooLarge"),
            (Self.broadcast(open, body: Array("score 2-1".utf8)), 400, "BadRequestPayload"),
            (ProviderAPIClient.Request(path: "/4/broadcasts/apps/\(Self.bundle)", method: "GET"), 405, "MethodNotAllowed"),
            (ProviderAPIClient.Request(path: "/4/broadcasts/\(Self.bundle)", body: Self.payload), 404, "BadPath"),
        ]
        let client = try fixture.http2Client()
        let responses = try cases.map { try client.send($0.0) }
        for ((request, status, reason), response) in zip(cases, responses) {
            let label = "\(request.method) \(request.path) \(request.headers): \(reason)"
            XCTAssertEqual(response.status, status, label)
            XCTAssertEqual(response.reason, reason, label)
            XCTAssertEqual(response.header("content-type"), "application/json", label)
            XCTAssertTrue(response.header("apns-request-id") != nil || response.header("apns-id") != nil, label)
        }
        XCTAssertEqual(server.notifications.count, 0)
    }

    func testAPolicyOneChannelTakesAnExpirationAndTheLimitIs5120Bytes() throws {
        let channel = try server.channels.create(bundleID: Self.bundle, storagePolicy: .mostRecentMessage)
        let body = Array(#"{"aps":{}}"#.utf8) + [UInt8](repeating: 0x20, count: 5110)
        XCTAssertEqual(body.count, 5120)
        let response = try server.connectHTTP2().send(Self.broadcast(
            channel.id,
            extra: [
                ("apns-expiration", "1900000000"), ("apns-id", "6B0C4F1E-2A3D-4C5B-8E9F-0A1B2C3D4E5F"),
                ("apns-request-id", "0F3C8A52-7D7E-4B8E-9E4F-2A1D6C5B4A39"),
            ],
            body: body))
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("apns-request-id"), "0F3C8A52-7D7E-4B8E-9E4F-2A1D6C5B4A39", "as sent")
        let notification = try server.notifications.pop(timeout: .seconds(5))
        XCTAssertEqual(notification.expiration, 1_900_000_000)
        XCTAssertEqual(notification.apnsID, "6B0C4F1E-2A3D-4C5B-8E9F-0A1B2C3D4E5F", "as sent")
        XCTAssertEqual(notification.requestID, "0F3C8A52-7D7E-4B8E-9E4F-2A1D6C5B4A39", "as sent")
    }

    func testCurlBroadcastsToAChannel() throws {
        let channel = try server.channels.create(bundleID: Self.bundle, storagePolicy: .noStorage)
        try server.channels.subscribe(Self.phones[0], to: channel.id)
        let result = try runTool("/usr/bin/curl", [
            "--silent", "--show-error", "--http2", "--cacert", testCertificatePath("ca.pem"), "--dump-header", "-",
            "--header", "apns-channel-id: \(channel.id)", "--header", "apns-push-type: LiveActivity",
            "--header", "apns-priority: 10", "--data", String(decoding: Self.payload, as: UTF8.self),
            "https://127.0.0.1:\(fixture.http2Port)/4/broadcasts/apps/\(Self.bundle)",
        ])
        XCTAssertEqual(result.status, 0, result.error)
        XCTAssertTrue(result.output.hasPrefix("HTTP/2 200"), result.output)
        XCTAssertTrue(result.output.contains("apns-unique-id: "), result.output)
        XCTAssertTrue(result.output.contains("apns-request-id: "), result.output)
        XCTAssertEqual(try server.channels.deliveries.pop(timeout: .seconds(5)).deviceToken, Self.phones[0])
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).channelID, channel.id)
    }
}
