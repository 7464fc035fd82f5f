import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: TLSClient and TLSStream, clients that stall mid-handshake or mid-frame, and Mailbox.init to collect the events.
@testable import FakeAPNs

#if canImport(Glibc)
import Glibc
#endif

/// What a connection may hold, and for how long: a handshake that does not finish, a frame
/// that stops arriving, an idle connection, a frame header that claims too much.
final class ConnectionTimeoutTests: XCTestCase {
    /// Short enough for a test; the checks only say "not before it, and well within 15 s".
    private static let timeout: Duration = .milliseconds(500)
    private static let generous: Duration = .seconds(15)
    /// The least a closing by `timeout` takes, as the test measures it: 10 ms short of it, since
    /// the server's timer may start a fraction of a millisecond before the test's clock does
    /// (seen once: 0.49975 s), and a closing for any other reason comes at once.
    private static let closedByTheTimeout = 0.49

    private let fixture = ServerFixture()
    private var server: FakeAPNsServer { fixture.server }
    private let events = Mailbox<ServerEvent>(noun: "event")

    private func start(handshake: Duration? = .seconds(10), frame: Duration? = .seconds(10), idle: Duration? = nil) throws {
        let events = self.events
        var configuration = FakeAPNsServer.Configuration(onEvent: { events.append($0) })
        configuration.handshakeTimeout = handshake
        configuration.frameTimeout = frame
        configuration.idleTimeout = idle
        try fixture.start(configuration, for: self)
    }

    /// Seconds since `start`.
    private func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    private func assertHandshakeFailureRecorded() throws {
        let failure = try events.pop(timeout: Self.generous, awaiting: "a handshake failure") {
            if case .handshakeFailed = $0 { true } else { false }
        }
        guard case .handshakeFailed(_, let listener, let reason) = failure else { return XCTFail("\(failure)") }
        XCTAssertEqual(listener, .gateway)
        XCTAssertTrue(reason.contains("did not finish the handshake within 0.5 s"), reason)
    }

    // MARK: - Handshake

    func testConnectionThatSendsNothingIsClosedAfterTheHandshakeTimeout() throws {
        try start(handshake: Self.timeout)
        let started = ContinuousClock.now
        let connection = try RawConnection(port: server.gatewayPort)
        XCTAssertTrue(connection.waitForClose(timeout: Self.generous))
        XCTAssertGreaterThanOrEqual(seconds(since: started), Self.closedByTheTimeout)
        try assertHandshakeFailureRecorded()
        XCTAssertTrue(eventually { self.server.openConnectionCount == 0 })
    }

    func testHalfAClientHelloIsClosedAfterTheHandshakeTimeout() throws {
        try start(handshake: Self.timeout)
        let started = ContinuousClock.now
        let connection = try RawConnection(port: server.gatewayPort)
        // A TLS record header announcing 512 bytes of ClientHello, and the first few of them.
        connection.send([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03] + [UInt8](repeating: 0, count: 40))
        XCTAssertTrue(connection.waitForClose(timeout: Self.generous))
        XCTAssertGreaterThanOrEqual(seconds(since: started), Self.closedByTheTimeout)
        try assertHandshakeFailureRecorded()
    }

    // MARK: - Frames that stop arriving

    func testBinaryNotificationThatStopsArrivingIsAnsweredAsTruncatedAndRecorded() throws {
        try start(frame: Self.timeout)
        let client = try server.connectClient(readTimeout: Self.generous)
        let whole = BinaryEncoder.enhanced(identifier: 31, token: Fixtures.token, payload: Fixtures.alert)
        let started = ContinuousClock.now
        try client.send(Array(whole[..<20]))
        let answer = try client.readToEnd()
        XCTAssertGreaterThanOrEqual(seconds(since: started), Self.closedByTheTimeout)
        XCTAssertEqual(BinaryErrorResponse(bytes: answer), BinaryErrorResponse(status: .unknown, identifier: 31))
        let rejection = try server.rejections.pop(timeout: .seconds(5))
        XCTAssertEqual(rejection.answer, .status(.unknown))
        XCTAssertEqual(rejection.identifier, 31)
        XCTAssertTrue(rejection.connectionClosed)
        XCTAssertTrue(rejection.detail.contains("no byte came for 0.5 s"), rejection.detail)
        XCTAssertEqual(server.notifications.count, 0)
    }

    func testHTTP2PrefaceThatStopsArrivingClosesTheConnection() throws {
        try start(frame: Self.timeout)
        let tls = try TLSClient(host: "127.0.0.1", port: fixture.http2Port, readTimeout: Self.generous, offerHTTP2: true)
        defer { tls.close() }
        let started = ContinuousClock.now
        try tls.send(Array("PRI * HTTP/2.0\r\n".utf8))
        _ = try tls.readToEnd()
        XCTAssertGreaterThanOrEqual(seconds(since: started), Self.closedByTheTimeout)
        XCTAssertTrue(eventually { self.server.openConnectionCount == 0 })
    }

    func testHTTP2FrameThatStopsArrivingClosesTheConnection() throws {
        try start(frame: Self.timeout)
        let connection = try IdleHTTP2Connection(port: fixture.http2Port)
        defer { connection.close() }
        let started = ContinuousClock.now
        // A HEADERS frame header announcing 100 bytes on stream 1, and 3 of them.
        try connection.tls.send([0, 0, 100, 0x01, 0x04, 0, 0, 0, 1, 0x82, 0x87, 0x84])
        try connection.readToEnd()
        XCTAssertGreaterThanOrEqual(seconds(since: started), Self.closedByTheTimeout)
        XCTAssertNil(connection.goAwayDebugData, "a stalled frame is not an idle connection")
        XCTAssertEqual(server.rejections.count, 0)
    }

    // MARK: - Idle connections

    func testIdleConnectionsStayOpenByDefault() throws {
        try start(frame: .milliseconds(300))
        let client = try server.connectClient()
        try client.send(BinaryEncoder.enhanced(identifier: 1, token: Fixtures.token, payload: Fixtures.alert))
        _ = try server.notifications.pop(timeout: .seconds(5))
        let http2 = try IdleHTTP2Connection(port: fixture.http2Port)
        defer { http2.close() }
        var buffer = [UInt8](repeating: 0, count: 4096)
        for stream in [client.stream, http2.tls.stream] {
            let deadline = ContinuousClock.now + .seconds(1.5)
            var outcome = TLSStream.DeadlineRead.bytes(0)
            // What the server still had to say (a SETTINGS acknowledgement), then silence.
            while case .bytes = outcome {
                outcome = try buffer.withUnsafeMutableBytes { try stream.read(into: $0, until: deadline) }
            }
            XCTAssertEqual(outcome, .timedOut, "an idle connection stays open past the frame timeout")
        }
        XCTAssertEqual(server.openConnectionCount, 2)
    }

    func testIdleTimeoutClosesABinaryConnectionAfterItsLastNotification() throws {
        try start(idle: Self.timeout)
        let client = try server.connectClient(readTimeout: Self.generous)
        try client.send(BinaryEncoder.enhanced(identifier: 5, token: Fixtures.token, payload: Fixtures.alert))
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).identifier, 5)
        let started = ContinuousClock.now
        XCTAssertEqual(try client.readToEnd(), [], "closed without an error response")
        XCTAssertGreaterThanOrEqual(seconds(since: started), 0.4)
        XCTAssertEqual(server.rejections.count, 0)
    }

    func testIdleTimeoutSaysGoodbyeToAnHTTP2ConnectionWithIdleTimeout() throws {
        try start(idle: Self.timeout)
        let connection = try IdleHTTP2Connection(port: fixture.http2Port)
        defer { connection.close() }
        let started = ContinuousClock.now
        try connection.readToEnd()
        XCTAssertGreaterThanOrEqual(seconds(since: started), Self.closedByTheTimeout)
        let debugData = try XCTUnwrap(connection.goAwayDebugData, "GOAWAY before closing")
        XCTAssertEqual(String(decoding: debugData, as: UTF8.self), #"{"reason":"IdleTimeout"}"#)
    }

    // MARK: - Hostile lengths

    func testFrameHeaderClaimingMoreThanAnyValidFrameIsRefusedAtOnce() throws {
        // A minute of frame timeout: an answer within it comes from the header alone.
        try start(frame: .seconds(60))
        let client = try server.connectClient(readTimeout: .seconds(10))
        let started = ContinuousClock.now
        // 300,000 bytes: five items could carry that much, but not with a token of at most 100
        // bytes and a payload within the limit.
        try client.send([2, 0x00, 0x04, 0x93, 0xE0])
        let answer = try client.readToEnd()
        XCTAssertLessThan(seconds(since: started), 10)
        XCTAssertEqual(BinaryErrorResponse(bytes: answer), BinaryErrorResponse(status: .unknown, identifier: 0))
        let rejection = try server.rejections.pop(timeout: .seconds(5))
        XCTAssertTrue(rejection.detail.contains("frame length 300000 is longer than any valid frame (2172 bytes"), rejection.detail)
    }
}
