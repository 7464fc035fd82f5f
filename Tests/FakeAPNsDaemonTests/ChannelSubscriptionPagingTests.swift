import FakeAPNs
import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: the daemon's channel registry and its devices-file channels.
@testable import FakeAPNsDaemon

/// The control API's subscriptions at Apple's sizes: a subscribe answer names the subscription
/// whatever the channel's size, and the subscribers are read page by page.
final class ChannelSubscriptionPagingTests: XCTestCase {
    private let fixture = InProcessDaemonFixture()
    private var daemon: Daemon { fixture.daemon }
    private var http: HTTPTestClient { fixture.http }
    private let channelID = "Zm9v/+8="
    private let path = "/api/v1/channels/Zm9v%2F%2B8%3D/subscriptions"

    override func setUpWithError() throws {
        let channel = DevicesFile.Channel(
            bundleID: "com.example.app", storagePolicy: .noStorage, id: channelID, subscribers: [], origin: "test")
        try fixture.start(channels: [channel], for: self)
    }

    private static func token(_ number: Int) -> DeviceToken {
        DeviceToken(bytes: (0..<32).map { UInt8(truncatingIfNeeded: number >> (8 * ($0 % 4))) ^ UInt8($0) })
    }

    /// Follows `next` from the first page, `limit` at a time (nil: the default); the tokens read.
    private func readAllPages(limit: Int?) throws -> [String] {
        var read: [String] = []
        var cursor: Int?
        var pages = 0
        repeat {
            let query = [limit.map { "limit=\($0)" }, cursor.map { "cursor=\($0)" }].compactMap { $0 }
            let response = try http.get(path + (query.isEmpty ? "" : "?" + query.joined(separator: "&")))
            XCTAssertEqual(response.status, 200, response.text)
            let page = try XCTUnwrap(response.json?["subscribers"]?.arrayValue).compactMap(\.stringValue)
            XCTAssertLessThanOrEqual(page.count, limit ?? ChannelRegistry.maximumPageSize)
            read += page
            cursor = response.json?["next"]?.intValue
            pages += 1
        } while cursor != nil && pages < 1_000
        return read
    }

    /// The answer to a subscription is the same size for the first subscriber as for one
    /// joining 20,000 others: it names the channel, the device and the count, never the list.
    func testASubscribeAnswerDoesNotGrowWithTheSubscribers() throws {
        let first = try http.post(path, #"{"token":"\#(Self.token(1).hex)"}"#)
        XCTAssertEqual(first.status, 201, first.text)
        XCTAssertEqual(first.json?["channel"]?.stringValue, channelID)
        XCTAssertEqual(first.json?["subscriberCount"]?.intValue, 1)
        try daemon.server.channels.subscribe((2...20_000).map(Self.token), to: channelID)
        let later = try http.post(path, #"{"token":"\#(Self.token(20_001).hex)"}"#)
        XCTAssertEqual(later.status, 201, later.text)
        XCTAssertEqual(later.json?["token"]?.stringValue, Self.token(20_001).hex)
        XCTAssertEqual(later.json?["subscriberCount"]?.intValue, 20_001)
        XCTAssertEqual(later.body.count, first.body.count + "20001".count - "1".count, later.text)
        let channel = try http.get("/api/v1/channels/Zm9v%2F%2B8%3D")
        XCTAssertEqual(channel.json?["subscriberCount"]?.intValue, 20_001)
        XCTAssertLessThan(channel.body.count, 400, "a channel is read without its subscribers")
    }

    /// Following `next` reads every subscriber exactly once, in order of subscription, whatever
    /// the page size; a bad page size or cursor is a 400, an unknown channel a 404.
    func testThePagedListHoldsEverySubscriberOnce() throws {
        let tokens = (0..<2_345).map(Self.token)
        try daemon.server.channels.subscribe(tokens, to: channelID)
        let expected = tokens.map(\.hex)
        for limit in [nil, 1000, 500, 77] {
            let read = try readAllPages(limit: limit)
            XCTAssertEqual(read.count, expected.count, "limit \(limit.map(String.init) ?? "default")")
            XCTAssertTrue(read == expected, "every subscriber once, in order (limit \(limit.map(String.init) ?? "default"))")
        }
        let last = try http.get(path + "?limit=1000&cursor=2000")
        XCTAssertEqual(last.json?["subscribers"]?.arrayValue?.count, 345)
        XCTAssertEqual(last.json?["next"], .null, "the last page says so")
        for query in ["limit=0", "limit=1001", "limit=x", "cursor=-1", "cursor=abc", "since=3"] {
            let refused = try http.get(path + "?" + query)
            XCTAssertEqual(refused.status, 400, "\(query): \(refused.text)")
        }
        let unknown = try http.get("/api/v1/channels/bm9uZQ%3D%3D/subscriptions")
        XCTAssertEqual(unknown.status, 404, unknown.text)
        XCTAssertEqual(unknown.error, "not_found")
    }

    /// A reset through the control API brings the `--devices` channel back with no
    /// subscriber but those of the file, at once.
    func testAResetKeepsTheDevicesFileChannels() throws {
        try daemon.server.channels.subscribe((0..<1_000).map(Self.token), to: channelID)
        XCTAssertEqual(try http.post("/api/v1/reset").status, 200)
        XCTAssertEqual(daemon.server.channels.subscriberCount(of: channelID), 0)
        XCTAssertNotNil(daemon.server.channels.channel(id: channelID))
        XCTAssertEqual(try readAllPages(limit: nil), [])
    }
}
