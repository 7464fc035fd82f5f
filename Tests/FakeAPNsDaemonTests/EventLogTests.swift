import Foundation
import XCTest
@testable import FakeAPNs
@testable import FakeAPNsDaemon

/// The event log as written to a file: every event's lines, in the order the events came,
/// whether notification lines went through the batch writer or other events through their
/// own lines, across the chunks the log writes at a time.
final class EventLogTests: XCTestCase {
    private var path = ""

    override func setUp() {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("event-log-\(UUID().uuidString).log").path
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: path)
    }

    private func notifications(_ range: Range<Int>, connection: ConnectionInfo, format: PushNotification.Format = .enhanced)
        -> [PushNotification]
    {
        range.map { number in
            var notification = PushNotification(
                deviceToken: DeviceToken(bytes: (0..<32).map { UInt8(truncatingIfNeeded: $0 &* number) }),
                payload: Payload(#"{"aps":{"alert":"Number \#(number)"},"id":\#(number)}"#),
                identifier: UInt32(number), expiration: 0, format: format, connection: connection,
                receivedAt: Date(timeIntervalSince1970: 1_795_914_309 + Double(number) / 3000))
            notification.sequenceNumber = UInt64(number)
            return notification
        }
    }

    private func events() -> [ServerEvent] {
        let first = ConnectionInfo(id: 1, peer: "127.0.0.1:5000", tlsVersion: "TLSv1.3")
        let second = ConnectionInfo(id: 2, peer: "127.0.0.1:5001", tlsVersion: "TLSv1.3")
        return [
            .connectionOpened(first, listener: .gateway),
            .accepted(notifications(1..<4, connection: first)),
            .connectionOpened(second, listener: .gateway),
            // More than one chunk of lines in one batch.
            .accepted(notifications(4..<3000, connection: first)),
            .accepted(notifications(3000..<3002, connection: second, format: .frame)),
            .handshakeFailed(peer: "127.0.0.1:5002", listener: .http2, reason: "no \"ALPN\""),
            .accepted(notifications(3002..<3003, connection: first, format: .simple)),
            .connectionClosed(first, listener: .gateway),
            .accepted([]),
        ]
    }

    func testJSONLinesAreEachEventsLinesInOrder() throws {
        let log = EventLog(output: try OutputWriter(appendingTo: path), format: .json)
        var expected = ""
        for event in events() {
            log.record(event)
            if case .accepted(let batch) = event {
                for notification in batch { expected += notification.jsonLine(event: "notification") + "\n" }
            } else {
                for line in EventLog.jsonLines(event) { expected += line + "\n" }
            }
        }
        log.close()
        let written = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertEqual(written.count, expected.count)
        XCTAssertTrue(written == expected)
    }

    func testTextLogStillHasALinePerNotification() throws {
        let log = EventLog(output: try OutputWriter(appendingTo: path), format: .text)
        for event in events() { log.record(event) }
        log.close()
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, 3 + 3002 + 1)
        XCTAssertEqual(lines.filter { $0.contains(" accepted #") }.count, 3002)
        XCTAssertTrue(lines[1].hasSuffix(#"accepted #1 enhanced token 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f id 1 payload {"aps":{"alert":"Number 1"},"id":1}"#), String(lines[1]))
    }

    func testMetricsCountAcceptedNotificationsByFormat() throws {
        let metrics = Metrics()
        for event in events() { metrics.record(event) }
        let server = FakeAPNsServer()
        let text = metrics.render(server: server)
        for (format, count) in [("enhanced", 2999), ("frame", 2), ("http2", 0), ("simple", 1)] {
            XCTAssertTrue(text.contains(#"fakeapns_notifications_accepted_total{format="\#(format)"} \#(count)"#), text)
        }
        XCTAssertTrue(text.contains(#"fakeapns_connections_open{listener="gateway"} 1"#), text)
        // Formats in the order of their names, as before.
        let formats = text.split(separator: "\n").filter { $0.hasPrefix("fakeapns_notifications_accepted_total{") }
        XCTAssertEqual(formats.map { $0.split(separator: "\"")[1] }, ["enhanced", "frame", "http2", "simple"])
    }
}
