import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: Mailbox.init, to collect events by hand.
@testable import FakeAPNs
// Reads internals on purpose: EventLog and OutputWriter.
@testable import FakeAPNsDaemon

#if canImport(Glibc)
import Glibc
#endif

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
        let log = try EventLog(output: try OutputWriter(appendingTo: path), format: .json)
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
        let log = try EventLog(output: try OutputWriter(appendingTo: path), format: .text)
        for event in events() { log.record(event) }
        log.close()
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, 3 + 3002 + 1)
        XCTAssertEqual(lines.filter { $0.contains(" accepted #") }.count, 3002)
        XCTAssertTrue(lines[1].hasSuffix(#"accepted #1 enhanced token 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f id 1 payload {"aps":{"alert":"Number 1"},"id":1}"#), String(lines[1]))
    }

    func testChannelCreationAndDeletionAreOneLineEach() throws {
        let channel = Channel(
            id: "dHN0LXNyY2gtY2hubA==", bundleID: "com.example.app", environment: .sandbox, storagePolicy: .mostRecentMessage,
            createdAt: Date())
        let created = try JSONValue(parsing: XCTUnwrap(EventLog.jsonLines(.channelCreated(channel)).first))
        XCTAssertEqual(created["event"]?.stringValue, "channel-created")
        XCTAssertEqual(created["channel"]?.stringValue, channel.id)
        XCTAssertEqual(created["bundle"]?.stringValue, "com.example.app")
        XCTAssertEqual(created["storagePolicy"]?.intValue, 1)
        XCTAssertEqual(try JSONValue(parsing: XCTUnwrap(EventLog.jsonLines(.channelDeleted(channel)).first))["event"]?.stringValue, "channel-deleted")
        let text = EventLog.textLines(.channelDeleted(channel), at: Date(timeIntervalSince1970: 1_700_000_000))
        XCTAssertEqual(text.count, 1)
        XCTAssertTrue(text[0].hasSuffix(" channel dHN0LXNyY2gtY2hubA== deleted for com.example.app"), text[0])
    }

    func testMetricsCountAcceptedNotificationsByFormat() throws {
        let metrics = Metrics()
        for event in events() { metrics.record(event) }
        let server = FakeAPNsServer()
        let text = metrics.render(server: server)
        for (format, count) in [("broadcast", 0), ("enhanced", 2999), ("frame", 2), ("http2", 0), ("simple", 1)] {
            XCTAssertTrue(text.contains(#"fakeapns_notifications_accepted_total{format="\#(format)"} \#(count)"#), text)
        }
        XCTAssertTrue(text.contains(#"fakeapns_connections_open{listener="gateway"} 1"#), text)
        // Formats in the order of their names, as before.
        let formats = text.split(separator: "\n").filter { $0.hasPrefix("fakeapns_notifications_accepted_total{") }
        XCTAssertEqual(formats.map { $0.split(separator: "\"")[1] }, ["broadcast", "enhanced", "frame", "http2", "simple"])
    }

    func testRefusedConnectionsAreLoggedWithTheirReasonAndCountedByListenerAndCause() throws {
        let refusals: [ServerEvent] = [
            .connectionRefused(peer: "127.0.0.1:5003", listener: .gateway, reason: .listenerLimit(1000)),
            .connectionRefused(peer: "127.0.0.1:5004", listener: .gateway, reason: .listenerLimit(1000)),
            .connectionRefused(peer: "[::1]:5005", listener: .http2, reason: .noThread("Resource temporarily unavailable")),
        ]
        XCTAssertEqual(
            EventLog.jsonLines(refusals[0]),
            [#"{"event":"connection-refused","listener":"gateway","peer":"127.0.0.1:5003","cause":"listener-limit","reason":"too many connections on this listener (limit 1000)"}"#])
        let text = try XCTUnwrap(EventLog.textLines(refusals[2], at: Date(timeIntervalSince1970: 1_700_000_000)).first)
        XCTAssertTrue(
            text.hasSuffix(" http2 connection from [::1]:5005 refused: no thread for the connection: Resource temporarily unavailable"),
            text)
        let metrics = Metrics()
        refusals.forEach(metrics.record)
        let rendered = metrics.render(server: FakeAPNsServer())
        XCTAssertTrue(rendered.contains(#"fakeapns_connections_refused_total{listener="gateway",reason="listener-limit"} 2"#), rendered)
        XCTAssertTrue(rendered.contains(#"fakeapns_connections_refused_total{listener="http2",reason="no-thread"} 1"#), rendered)
    }

    // MARK: - Back-pressure and stop

    /// A pipe that nobody reads until the test says so, and the log writing into it.
    private final class UnreadPipe: @unchecked Sendable {
        let readEnd: Int32
        let writeEnd: Int32
        private let received = Locked<[UInt8]>([])

        init() throws {
            var ends: [Int32] = [0, 0]
            guard pipe(&ends) == 0 else { throw POSIXError(.EMFILE) }
            (readEnd, writeEnd) = (ends[0], ends[1])
        }

        /// A writer of its own to the pipe, as `--log-file` opens one.
        func writer() throws -> OutputWriter { try OutputWriter(appendingTo: "/proc/self/fd/\(writeEnd)") }

        /// Reads on a thread of its own until every writer is closed (a log's, once its writer
        /// thread ends), then closes the pipe.
        func drain() throws {
            close(writeEnd)
            try OSThread(name: "pipe-drain") { [self] in
                var chunk = [UInt8](repeating: 0, count: 65536)
                while true {
                    let count = read(readEnd, &chunk, chunk.count)
                    if count <= 0 { break }
                    received.withLock { $0 += chunk[..<count] }
                }
                close(readEnd)
            }.detach()
        }

        var lines: Int { received.withLock { $0.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) } } }
    }

    /// Records `batches` batches of 1,000 notifications on a thread of its own, waiting for
    /// room after each as the server's threads do; counts the batches recorded.
    private func produce(into log: EventLog, batches: Int) throws -> (recorded: Locked<Int>, done: Mailbox<Bool>) {
        let connection = ConnectionInfo(id: 1, peer: "127.0.0.1:5000", tlsVersion: "TLSv1.3")
        let batch = notifications(1..<1001, connection: connection)
        let recorded = Locked(0)
        let done = Mailbox<Bool>(noun: "end")
        try OSThread(name: "log-producer") {
            for _ in 0..<batches {
                log.record(.accepted(batch))
                log.waitForRoom()
                recorded.withLock { $0 += 1 }
            }
            done.append(true)
        }.detach()
        return (recorded, done)
    }

    /// Polls until `value` stops changing for a quarter of a second (within `timeout`).
    private func settles(_ value: () -> Int, timeout: Duration = .seconds(30)) -> Int? {
        let deadline = ContinuousClock.now + timeout
        var last = value()
        var since = ContinuousClock.now
        while ContinuousClock.now < deadline {
            usleep(10_000)
            let now = value()
            if now != last {
                (last, since) = (now, .now)
            } else if ContinuousClock.now - since >= .milliseconds(250) {
                return now
            }
        }
        return nil
    }

    func testProducersWaitWhileTheDestinationTakesNothingAndNothingIsDropped() throws {
        let destination = try UnreadPipe()
        let log = try EventLog(output: try destination.writer(), format: .json)
        let producer = try produce(into: log, batches: 200)
        let held = try XCTUnwrap(settles { producer.recorded.withLock { $0 } }, "the producer never settled")
        // The writer's batch and the queue: at most twice the limit, plus the batch that crossed it.
        XCTAssertLessThanOrEqual(held * 1000, 2 * EventLog.backlogLimit + 2000)
        XCTAssertLessThan(held, 200, "the producer was held back")
        try destination.drain()
        XCTAssertEqual(try producer.done.pop(timeout: .seconds(60)), true)
        XCTAssertNil(log.close())
        XCTAssertTrue(eventually(timeout: .seconds(10)) { destination.lines == 200_000 }, "\(destination.lines) lines")
    }

    func testAStoppingLogGivesUpADestinationThatTakesNothingAndCountsWhatItLost() throws {
        let destination = try UnreadPipe()
        // Reading at last lets the given-up writer finish, so its thread ends.
        defer { try? destination.drain() }
        let log = try EventLog(output: try destination.writer(), format: .json, stallLimit: .milliseconds(300))
        let producer = try produce(into: log, batches: 200)
        XCTAssertNotNil(settles { producer.recorded.withLock { $0 } }, "the producer never settled")
        log.prepareToClose()
        XCTAssertEqual(try producer.done.pop(timeout: .seconds(10)), true, "the held producer went on")
        let loss = try XCTUnwrap(log.close())
        var available: Int32 = 0
        XCTAssertEqual(ioctl(destination.readEnd, UInt(FIONREAD), &available), 0)
        let inThePipe = try XCTUnwrap(String(data: Data(readAvailable(destination.readEnd, Int(available))), encoding: .utf8))
        let written = inThePipe.split(separator: "\n", omittingEmptySubsequences: false).count - 1
        XCTAssertEqual(loss.lines + written, 200_000, "what left and what was counted lost add up")
        XCTAssertTrue(loss.description.contains("\(loss.lines) events of the log were not written"), loss.description)
    }

    private func readAvailable(_ descriptor: Int32, _ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var offset = 0
        while offset < count {
            let got = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + offset, count - offset) }
            if got <= 0 { break }
            offset += got
        }
        return Array(bytes[..<offset])
    }
}
