import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: QuickClientPolling, TLSStream and TLSContext.
@testable import FakeAPNs

#if canImport(Glibc)
import Glibc
#endif

/// A connection whose client answers quickly polls its socket for a few microseconds before
/// it sleeps. The polling is bounded: one connection of the process at a time, none while
/// another connection is working, and a connection never stays counted as working once it is
/// back at its wait or closed, whatever the client did.
final class QuickClientPollingTests: XCTestCase {
    private let fixture = ServerFixture()
    private var server: FakeAPNsServer { fixture.server }

    /// A stream over one end of a socket pair (no handshake), and the other end.
    private func streamWithPeer() throws -> (TLSStream, Int32) {
        var pair: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair), 0)
        let stream = try TLSStream(
            connectedSocket: pair[0], context: TLSContext.client(trustedCAsPEM: nil, identity: nil), serverName: nil)
        return (stream, pair[1])
    }

    func testOneConnectionOfTheProcessPollsAtATime() throws {
        try XCTSkipUnless(QuickClientPolling.isOn, "this process may use one CPU only: no connection polls")
        XCTAssertTrue(eventually { QuickClientPolling.workingCount == 0 })
        XCTAssertTrue(QuickClientPolling.begin())
        XCTAssertFalse(QuickClientPolling.begin(), "a second connection polled while the first did")
        QuickClientPolling.end()
        XCTAssertTrue(QuickClientPolling.begin(), "the polling place was not given back")
        QuickClientPolling.end()
    }

    func testNoConnectionPollsWhileAnotherIsWorking() throws {
        try XCTSkipUnless(QuickClientPolling.isOn, "this process may use one CPU only: no connection polls")
        let (stream, peer) = try streamWithPeer()
        defer {
            stream.close(notifyPeer: false)
            Glibc.close(peer)
        }
        QuickClientPolling.startWorking(&stream.polling)
        QuickClientPolling.startWorking(&stream.polling)
        XCTAssertEqual(QuickClientPolling.workingCount, 1, "one connection counted twice")
        XCTAssertFalse(QuickClientPolling.begin(), "a connection polled while another was working")
        QuickClientPolling.stopWorking(&stream.polling)
        XCTAssertEqual(QuickClientPolling.workingCount, 0)
        XCTAssertTrue(QuickClientPolling.begin())
        QuickClientPolling.end()
        QuickClientPolling.startWorking(&stream.polling)
        stream.close(notifyPeer: false)
        XCTAssertEqual(QuickClientPolling.workingCount, 0, "a closed connection still counts as working")
    }

    func testPollingEndsAtItsDeadlineOrWhenBytesArrive() throws {
        let (stream, peer) = try streamWithPeer()
        defer {
            stream.close(notifyPeer: false)
            Glibc.close(peer)
        }
        let started = monotonicNanoseconds()
        XCTAssertFalse(stream.pollUntilReadable(until: started + 2_000_000), "readable with nothing sent")
        XCTAssertGreaterThanOrEqual(monotonicNanoseconds() - started, 2_000_000, "gave up before its deadline")
        XCTAssertEqual(Glibc.write(peer, "x", 1), 1)
        XCTAssertTrue(stream.pollUntilReadable(until: monotonicNanoseconds() + 10_000_000_000))
    }

    func testAQuickClientsNotificationsArriveAndItsConnectionEndsUpWaiting() throws {
        try fixture.start(for: self)
        let client = try server.connectClient()
        for number in 1...200 {
            try client.send(BinaryEncoder.enhanced(identifier: UInt32(number), token: Fixtures.token, payload: Fixtures.payload(number)))
            XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).identifier, UInt32(number))
        }
        XCTAssertTrue(eventually { QuickClientPolling.workingCount == 0 }, "a connection back at its wait still counts as working")
        client.close()
    }

    func testClientsThatCloseMidFrameLeaveNoConnectionCountedAsWorking() throws {
        try fixture.start(for: self)
        let frame = BinaryEncoder.enhanced(identifier: 7, token: Fixtures.token, payload: Fixtures.alert)
        for _ in 0..<20 {
            let client = try server.connectClient()
            try client.send(Array(frame.prefix(frame.count / 2)))
            client.close()
        }
        XCTAssertTrue(eventually(timeout: .seconds(10)) { server.openConnectionCount == 0 })
        XCTAssertTrue(eventually { QuickClientPolling.workingCount == 0 }, "a closed connection still counts as working")
        XCTAssertTrue(server.notifications.isEmpty)
    }
}
