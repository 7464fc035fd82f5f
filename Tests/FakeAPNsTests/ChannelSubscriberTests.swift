import FakeAPNsTestSupport
import XCTest

@testable import FakeAPNs

/// A channel's subscribers at Apple's sizes: kept in order of subscription, each device once,
/// and read page by page.
final class ChannelSubscriberTests: XCTestCase {
    private let fixture = ServerFixture()

    override func setUpWithError() throws {
        try fixture.start(for: self)
    }

    private static func token(_ number: Int) -> DeviceToken {
        DeviceToken(bytes: (0..<32).map { UInt8(truncatingIfNeeded: number >> (8 * ($0 % 4))) ^ UInt8($0) })
    }

    /// Reads every page of a channel's subscribers, `limit` at a time; `between` runs after each page.
    private func readAllPages(
        _ channelID: String, limit: Int, between: (Int) throws -> Void = { _ in }
    ) throws -> [DeviceToken] {
        let channels = fixture.server.channels
        var read: [DeviceToken] = []
        var cursor: SubscriberPage.Cursor?
        var pages = 0
        repeat {
            let page = try XCTUnwrap(channels.subscribers(of: channelID, after: cursor, limit: limit))
            XCTAssertLessThanOrEqual(page.subscribers.count, min(limit, ChannelRegistry.maximumPageSize))
            XCTAssertTrue(page.next == nil || !page.subscribers.isEmpty, "a page before the last is not empty")
            read += page.subscribers
            cursor = page.next
            pages += 1
            try between(pages)
        } while cursor != nil && pages < 10_000
        return read
    }

    func testThePagesHoldEverySubscriberOnceInOrderOfSubscription() throws {
        let channels = fixture.server.channels
        let channel = try channels.create(bundleID: "com.example.app", storagePolicy: .noStorage)
        let tokens = (0..<2_500).map(Self.token)
        try channels.subscribe(tokens, to: channel.id)
        try channels.subscribe(tokens[7], to: channel.id)
        XCTAssertEqual(channels.subscriberCount(of: channel.id), 2_500, "a device subscribed twice counts once")
        XCTAssertTrue(channels.isSubscribed(tokens[2_499], to: channel.id))

        XCTAssertTrue(try readAllPages(channel.id, limit: 100) == tokens)
        XCTAssertTrue(try readAllPages(channel.id, limit: 2_500) == tokens, "a page holds at most the maximum")
        XCTAssertTrue(try readAllPages(channel.id, limit: 7) == tokens)
        XCTAssertEqual(channels.subscribers(of: channel.id, after: nil, limit: 5_000)?.subscribers.count, 1_000)
        XCTAssertTrue(channels.subscribers(of: channel.id) == tokens)
        XCTAssertNil(channels.subscribers(of: "bm9uZQ==", after: nil, limit: 10), "no such channel")
    }

    /// Devices leaving and joining between pages: each device subscribed from first page to last
    /// is read once; one that joined meanwhile comes last; one that left before its page is not
    /// read. Enough leave that the order is compacted under the reader's cursor.
    func testDevicesComingAndGoingBetweenPagesAreNeverReadTwice() throws {
        let channels = fixture.server.channels
        let channel = try channels.create(bundleID: "com.example.app", storagePolicy: .noStorage)
        let tokens = (0..<3_000).map(Self.token)
        try channels.subscribe(tokens, to: channel.id)
        var left = Set<DeviceToken>()
        var joined: [DeviceToken] = []
        let read = try readAllPages(channel.id, limit: 250) { page in
            guard page <= 5 else { return }
            // Four devices in five of the first 2,500 leave, read or not; one new device joins.
            for index in (page - 1) * 500..<page * 500 where index % 5 != 0 {
                XCTAssertTrue(channels.unsubscribe(tokens[index], from: channel.id))
                left.insert(tokens[index])
            }
            let newcomer = Self.token(10_000 + page)
            try channels.subscribe(newcomer, to: channel.id)
            joined.append(newcomer)
        }
        XCTAssertEqual(read.count, Set(read).count, "no device is read twice")
        let readSet = Set(read)
        for token in tokens where !left.contains(token) {
            XCTAssertTrue(readSet.contains(token), "a device subscribed throughout is read")
        }
        XCTAssertTrue(Array(read.suffix(joined.count)) == joined, "devices that joined meanwhile come last")
        XCTAssertFalse(channels.unsubscribe(tokens[1], from: channel.id), "it had left")
        XCTAssertEqual(channels.subscriberCount(of: channel.id), 3_000 - left.count + joined.count)
        let again = try readAllPages(channel.id, limit: 1000)
        XCTAssertTrue(again == tokens.filter { !left.contains($0) } + joined, "read again, in order of subscription")
    }

    /// A broadcast reaches each subscriber once, in order of subscription, and a reset forgets
    /// the subscribers with their channel.
    func testABroadcastReachesEachSubscriberOnceInOrder() throws {
        let server = fixture.server
        let channel = try server.channels.create(bundleID: "com.example.app", storagePolicy: .noStorage)
        let tokens = (0..<300).map(Self.token)
        try server.channels.subscribe(tokens, to: channel.id)
        for token in tokens[100..<200] { server.channels.unsubscribe(token, from: channel.id) }
        var batch = [PushNotification(
            deviceToken: DeviceToken(bytes: []), payload: Payload(bytes: Fixtures.alert), format: .broadcast,
            connection: ConnectionInfo(id: 1, peer: "127.0.0.1:9"),
            http2: PushNotification.HTTP2Fields(
                apnsID: "A0000000-0000-4000-8000-000000000000", topic: "com.example.app", pushType: .liveactivity,
                collapseID: nil, providerToken: nil, channelID: channel.id))]
        server.intake.append(notifications: &batch, broadcasts: true)
        let deliveries = try server.channels.deliveries.pop(count: 200, timeout: .seconds(5))
        XCTAssertTrue(deliveries.map(\.deviceToken) == Array(tokens[..<100] + tokens[200...]), "in order of subscription")
        XCTAssertEqual(deliveries.map(\.sequenceNumber), Array(1...200))
        XCTAssertEqual(server.channels.deliveryCount, 200)
        server.reset()
        XCTAssertEqual(server.channels.subscriberCount(of: channel.id), 0)
        XCTAssertEqual(server.channels.deliveryCount, 200, "numbering goes on across resets")
    }
}
