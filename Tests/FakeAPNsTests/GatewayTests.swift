import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: TLSClient and its stream, to write raw binary frames and read the raw answer.
@testable import FakeAPNs

#if canImport(Glibc)
import Glibc
#endif

/// The binary gateway over real TLS connections: what arrives, what is refused, and how.
final class GatewayTests: XCTestCase {
    private let fixture = ServerFixture()
    private var server: FakeAPNsServer { fixture.server }

    override func setUpWithError() throws {
        try fixture.start(for: self)
    }

    // MARK: - Arrival

    func testEnhancedNotificationArrivesWithEveryField() throws {
        let client = try server.connectClient()
        try client.send(BinaryEncoder.enhanced(identifier: 42, expiration: 1_900_000_000, token: Fixtures.token, payload: Fixtures.alert))
        let notification = try server.notifications.pop(timeout: .seconds(5))
        XCTAssertEqual(notification.deviceToken, Fixtures.token)
        XCTAssertEqual(notification.identifier, 42)
        XCTAssertEqual(notification.expiration, 1_900_000_000)
        XCTAssertEqual(notification.expirationDate, Date(timeIntervalSince1970: 1_900_000_000))
        XCTAssertEqual(notification.priority, .immediately)
        XCTAssertEqual(notification.format, .enhanced)
        XCTAssertEqual(notification.sequenceNumber, 1)
        XCTAssertEqual(notification.payload.bytes, Fixtures.alert)
        XCTAssertEqual(notification.payload.aps.alert?.body, "Hello")
        XCTAssertEqual(notification.payload.aps.badge, 3)
        XCTAssertEqual(notification.connection.id, 1)
        XCTAssertTrue(notification.connection.peer.hasPrefix("127.0.0.1:"), notification.connection.peer)
        XCTAssertNil(notification.connection.clientCertificate)
        XCTAssertLessThan(abs(notification.receivedAt.timeIntervalSinceNow), 60)
    }

    func testAllThreeFormatsArriveInOrderOnOneConnection() throws {
        let client = try server.connectClient()
        try client.send(
            BinaryEncoder.simple(token: Fixtures.token, payload: Fixtures.payload(1))
                + BinaryEncoder.enhanced(identifier: 2, token: Fixtures.token, payload: Fixtures.payload(2))
                + BinaryEncoder.frame(token: Fixtures.token, payload: Fixtures.payload(3), identifier: 3, priority: 5))
        let arrived = try server.notifications.pop(count: 3, timeout: .seconds(5))
        XCTAssertEqual(arrived.map(\.format), [.simple, .enhanced, .frame])
        XCTAssertEqual(arrived.map { $0.payload["n"]?.intValue }, [1, 2, 3])
        XCTAssertEqual(arrived.map(\.priority), [.immediately, .immediately, .consideringDevicePower])
        XCTAssertEqual(arrived.map(\.sequenceNumber), [1, 2, 3])
    }

    func testFramesSplitAtEveryByteAcrossWritesArrive() throws {
        let client = try server.connectClient()
        let bytes = (1...3).flatMap { BinaryEncoder.frame(token: Fixtures.token, payload: Fixtures.payload($0), identifier: UInt32($0)) }
        for byte in bytes {
            try client.send([byte])
        }
        let arrived = try server.notifications.pop(count: 3, timeout: .seconds(5))
        XCTAssertEqual(arrived.map(\.identifier), [1, 2, 3])
    }

    func testHundredsOfFramesInOneWriteArrive() throws {
        let client = try server.connectClient()
        try client.send((1...500).flatMap {
            BinaryEncoder.enhanced(identifier: UInt32($0), token: Fixtures.token, payload: Fixtures.payload($0))
        })
        let arrived = try server.notifications.pop(count: 500, timeout: .seconds(10))
        XCTAssertEqual(arrived.map(\.identifier), (1...500).map(UInt32.init))
    }

    func testPayloadThatIsNotJSONIsQueuedWithTheProblemRecorded() throws {
        let client = try server.connectClient()
        try client.send(BinaryEncoder.enhanced(identifier: 1, token: Fixtures.token, payload: Array(#"{"aps":"#.utf8)))
        let notification = try server.notifications.pop(timeout: .seconds(5))
        XCTAssertNil(notification.payload.json)
        XCTAssertNotNil(notification.payload.parseError)
        XCTAssertEqual(notification.payload.text, #"{"aps":"#)
    }

    // MARK: - Refusal

    func testErrorResponseClosesConnectionAndDiscardsLaterFrames() throws {
        let client = try server.connectClient()
        let good = BinaryEncoder.enhanced(identifier: 1, token: Fixtures.token, payload: Fixtures.payload(1))
        let bad = BinaryEncoder.enhanced(identifier: 2, token: Fixtures.token, payload: [])
        let later = (3...10).flatMap {
            BinaryEncoder.enhanced(identifier: UInt32($0), token: Fixtures.token, payload: Fixtures.payload($0))
        }
        try client.send(good + bad + later)
        let answer = try client.readToEnd()
        XCTAssertEqual(BinaryErrorResponse(bytes: answer), BinaryErrorResponse(status: .missingPayload, identifier: 2))
        // The server queues before it answers, so the queue is final once the connection closed.
        XCTAssertEqual(server.notifications.snapshot().map(\.identifier), [1])
        XCTAssertEqual(server.notifications.totalArrived, 1)
    }

    func testFramesSentAfterTheErrorInLaterWritesAreDiscarded() throws {
        let client = try server.connectClient()
        try client.send(BinaryEncoder.frame(items: [.identifier(77), .payload(Fixtures.alert)]))
        try? client.send(BinaryEncoder.enhanced(identifier: 78, token: Fixtures.token, payload: Fixtures.alert))
        let answer = try client.readToEnd()
        XCTAssertEqual(BinaryErrorResponse(bytes: answer), BinaryErrorResponse(status: .missingDeviceToken, identifier: 77))
        XCTAssertEqual(server.notifications.count, 0)
    }

    func testEachMalformedInputGetsItsStatusOverTheWire() throws {
        let long = DeviceToken(bytes: [UInt8](repeating: 7, count: 101))
        let big = [UInt8](repeating: UInt8(ascii: "x"), count: 2049)
        let cases: [(String, [UInt8], BinaryErrorResponse)] = [
            ("unknown command", [9, 1, 2, 3, 4, 5, 6], .init(status: .unknown, identifier: 0)),
            ("duplicate item", BinaryEncoder.frame(items: [.identifier(3), .deviceToken(Fixtures.token), .payload(Fixtures.alert), .payload(Fixtures.alert)]),
             .init(status: .unknown, identifier: 3)),
            ("missing token", BinaryEncoder.frame(items: [.identifier(4), .payload(Fixtures.alert)]), .init(status: .missingDeviceToken, identifier: 4)),
            ("missing payload", BinaryEncoder.frame(items: [.identifier(5), .deviceToken(Fixtures.token)]), .init(status: .missingPayload, identifier: 5)),
            ("bad token size", BinaryEncoder.enhanced(identifier: 6, token: long, payload: Fixtures.alert), .init(status: .invalidTokenSize, identifier: 6)),
            ("payload over the limit", BinaryEncoder.frame(token: Fixtures.token, payload: big, identifier: 7), .init(status: .invalidPayloadSize, identifier: 7)),
        ]
        for (name, bytes, expected) in cases {
            let client = try server.connectClient()
            try client.send(bytes)
            XCTAssertEqual(BinaryErrorResponse(bytes: try client.readToEnd()), expected, name)
        }
        XCTAssertEqual(server.notifications.count, 0)
    }

    func testSimpleFormatErrorClosesWithoutResponse() throws {
        let client = try server.connectClient()
        try client.send(BinaryEncoder.simple(token: Fixtures.token, payload: Fixtures.payload(1))
            + BinaryEncoder.simple(token: Fixtures.token, payload: [])
            + BinaryEncoder.simple(token: Fixtures.token, payload: Fixtures.payload(3)))
        XCTAssertEqual(try client.readToEnd(), [])
        XCTAssertEqual(server.notifications.snapshot().map { $0.payload["n"]?.intValue }, [1])
    }

    func testTruncatedFrameAtCloseIsAnsweredAndNotQueued() throws {
        let client = try server.connectClient()
        let whole = BinaryEncoder.enhanced(identifier: 1, token: Fixtures.token, payload: Fixtures.payload(1))
        let partial = Array(BinaryEncoder.enhanced(identifier: 2, token: Fixtures.token, payload: Fixtures.payload(2)).prefix(30))
        try client.send(whole + partial)
        _ = try server.notifications.pop(timeout: .seconds(5))
        // close_notify ends the client's sending side; the server still answers before closing.
        client.stream.sendCloseNotify()
        XCTAssertEqual(BinaryErrorResponse(bytes: try client.readToEnd()), BinaryErrorResponse(status: .unknown, identifier: 2))
        XCTAssertEqual(server.notifications.count, 0)
        XCTAssertEqual(server.notifications.totalArrived, 1)
    }

    // MARK: - Misbehaving clients

    func testStalledAndGarbageClientsNeverDelayOthers() throws {
        // One that connects and never handshakes, one that sends garbage instead of TLS,
        // one that stalls in the middle of a frame.
        let silent = try RawConnection(port: server.gatewayPort)
        let garbage = try RawConnection(port: server.gatewayPort)
        garbage.send(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8) + [UInt8](repeating: 0xFF, count: 4096))
        let stalled = try server.connectClient()
        try stalled.send(Array(BinaryEncoder.enhanced(identifier: 99, token: Fixtures.token, payload: Fixtures.alert).prefix(20)))

        for round in 1...3 {
            let client = try server.connectClient()
            try client.send(BinaryEncoder.enhanced(identifier: UInt32(round), token: Fixtures.token, payload: Fixtures.payload(round)))
            XCTAssertEqual(try server.notifications.pop(timeout: .seconds(2)).identifier, UInt32(round))
        }
        XCTAssertTrue(garbage.waitForClose(timeout: .seconds(5)), "a client sending garbage is disconnected")
        XCTAssertTrue(server.openConnectionCount >= 2, "the silent and the stalled client are still connected")
        withExtendedLifetime((silent, stalled)) {}
    }

    func testManyConcurrentConnectionsLoseAndDuplicateNothing() throws {
        let connections = 8
        let perConnection = 400
        let server = self.server
        DispatchQueue.concurrentPerform(iterations: connections) { connection in
            do {
                let client = try server.connectClient()
                for chunk in stride(from: 0, to: perConnection, by: 50) {
                    try client.send((chunk..<chunk + 50).flatMap { index in
                        BinaryEncoder.frame(
                            token: Fixtures.token, payload: Fixtures.payload(index),
                            identifier: UInt32(connection * 100_000 + index))
                    })
                }
                client.close()
            } catch {
                XCTFail("connection \(connection): \(error)")
            }
        }
        let arrived = try server.notifications.pop(count: connections * perConnection, timeout: .seconds(20))
        let identifiers = arrived.map(\.identifier)
        XCTAssertEqual(Set(identifiers).count, identifiers.count, "no identifier twice")
        let expected = Set((0..<connections).flatMap { connection in
            (0..<perConnection).map { UInt32(connection * 100_000 + $0) }
        })
        XCTAssertEqual(Set(identifiers), expected)
        XCTAssertEqual(arrived.map(\.sequenceNumber), (1...UInt64(connections * perConnection)).map { $0 })
        // Per connection, order is kept.
        for connection in 0..<connections {
            let mine = identifiers.filter { $0 / 100_000 == connection }
            XCTAssertEqual(mine, mine.sorted())
        }
        XCTAssertEqual(server.notifications.count, 0)
    }
}
