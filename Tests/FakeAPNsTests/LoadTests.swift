import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: TLSClient and ProviderAPIClient.exchange, clients that flood and stall on purpose.
@testable import FakeAPNs

#if canImport(Glibc)
import Glibc
#endif

/// Many clients at once, bounded in count and time, loopback only: nothing is lost or
/// duplicated, and misbehaving clients cost the others nothing.
final class LoadTests: XCTestCase {
    override func setUpWithError() throws {
        // 500 connections need about 1,000 descriptors in this process (both ends).
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < 4096 && limit.rlim_max >= 4096 {
            limit.rlim_cur = 4096
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        try XCTSkipIf(limit.rlim_cur < 2048, "needs 2048 open files, the limit is \(limit.rlim_cur)")
    }

    func testFiveHundredConnectionsOfTwoHundredNotificationsAllArriveExactlyOnce() throws {
        try withFakeAPNs { server in
            let connections = 500
            let each = 200
            // Every connection open at once, then every one sends, so the server holds them all.
            let clients = try (0..<connections).map { _ in try server.connectClient() }
            XCTAssertTrue(eventually(timeout: .seconds(20)) { server.openConnectionCount == connections })
            let frames = (0..<connections).map { connection in
                (0..<each).flatMap { index in
                    BinaryEncoder.frame(
                        token: Fixtures.token, payload: Fixtures.payload(index), identifier: UInt32(connection * 1000 + index))
                }
            }
            DispatchQueue.concurrentPerform(iterations: 4) { worker in
                for connection in stride(from: worker, to: connections, by: 4) {
                    do {
                        try clients[connection].send(frames[connection])
                    } catch {
                        XCTFail("connection \(connection): \(error)")
                    }
                }
            }
            let arrived = try server.notifications.pop(count: connections * each, timeout: .seconds(60))
            XCTAssertEqual(Set(arrived.map(\.identifier)).count, connections * each, "every identifier exactly once")
            XCTAssertEqual(server.notifications.count, 0)
            clients.forEach { $0.close() }
        }
    }

    func testManyHTTP2StreamsOverSeveralConnectionsAllArriveExactlyOnce() throws {
        try withFakeAPNs { server in
            let connections = 8
            let each = 1000
            DispatchQueue.concurrentPerform(iterations: connections) { connection in
                do {
                    let client = try server.connectHTTP2()
                    defer { client.close() }
                    for batch in stride(from: 0, to: each, by: 250) {
                        let responses = try client.exchange((batch..<batch + 250).map {
                            ProviderAPIClient.Request.push(body: Fixtures.payload(connection * 10_000 + $0))
                        })
                        XCTAssertEqual(Set(responses.map(\.status)), [200])
                    }
                } catch {
                    XCTFail("connection \(connection): \(error)")
                }
            }
            let arrived = try server.notifications.pop(count: connections * each, timeout: .seconds(60))
            XCTAssertEqual(Set(arrived.compactMap { $0.payload["n"]?.intValue }).count, connections * each)
            XCTAssertEqual(Set(arrived.compactMap(\.apnsID)).count, connections * each, "apns-ids are unique")
        }
    }

    func testMisbehavingClientsDoNotHoldUpAWellBehavedOne() throws {
        try withFakeAPNs { server in
            // Garbage over plain TCP, TLS opened and silent, half a frame then a stall, a
            // disconnect in the middle of the handshake, and a flood of handshakes.
            let garbage = try (0..<20).map { _ in try RawConnection(port: server.gatewayPort) }
            garbage.forEach { $0.send([UInt8](repeating: 0x42, count: 10_000)) }
            let silent = try (0..<20).map { _ in try server.connectClient() }
            let stalled = try (0..<20).map { _ in try server.connectClient() }
            for client in stalled {
                try client.send(Array(BinaryEncoder.enhanced(identifier: 9, token: Fixtures.token, payload: Fixtures.alert).prefix(25)))
            }
            for _ in 0..<20 {
                let half = try RawConnection(port: server.gatewayPort)
                half.send([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03])
            }
            let flooded = inBackground("connect-flood") {
                for _ in 0..<100 { _ = try? server.connectClient().close() }
            }

            let client = try server.connectClient()
            for round in 1...50 {
                let started = ContinuousClock.now
                try client.send(BinaryEncoder.enhanced(identifier: UInt32(round), token: Fixtures.token, payload: Fixtures.alert))
                let notification = try server.notifications.pop(timeout: .seconds(2)) { $0.identifier == UInt32(round) }
                XCTAssertEqual(notification.identifier, UInt32(round))
                XCTAssertLessThan(ContinuousClock.now - started, .seconds(1), "round \(round)")
            }
            let accepted = ContinuousClock.now
            let late = try server.connectClient()
            XCTAssertLessThan(ContinuousClock.now - accepted, .seconds(1), "a new client still connects at once")
            // The flood ends before the test does: a thread still running when the test process
            // exits would crash it.
            XCTAssertNoThrow(try flooded.pop(timeout: .seconds(30)).get())
            withExtendedLifetime((garbage, silent, stalled, late)) {}
        }
    }

    func testStopDuringHeavyLoadReturnsPromptlyAndLeavesNothingBehind() throws {
        // Warm up what the process opens once (Dispatch's descriptors, OpenSSL's tables, the
        // threads helpers use) before counting.
        let warmUp = try FakeAPNsServer.started()
        let warmClient = try warmUp.connectClient()
        try warmClient.send(BinaryEncoder.enhanced(identifier: 1, token: Fixtures.token, payload: Fixtures.alert))
        _ = try warmUp.notifications.pop(timeout: .seconds(5))
        warmUp.stop()
        warmClient.close()
        try inBackground("warm-up") {}.pop(timeout: .seconds(5)).get()
        let threads = currentThreadCount()
        let descriptors = openDescriptorCount()
        let server = try FakeAPNsServer.started()
        let senders = (0..<4).map { worker in
            inBackground("load-sender") {
                // A client whose writes give up soon after the server is gone.
                guard let client = try? server.connectClient(readTimeout: .seconds(2)) else { return }
                let frames = (0..<500).flatMap {
                    BinaryEncoder.enhanced(identifier: UInt32(worker * 1000 + $0), token: Fixtures.token, payload: Fixtures.alert)
                }
                while (try? client.send(frames)) != nil {}
                client.close()
            }
        }
        XCTAssertTrue(eventually { server.notifications.totalArrived > 5000 })
        let started = ContinuousClock.now
        server.stop()
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(2))
        // The senders see their connections end and close their own sockets.
        for sender in senders { XCTAssertNoThrow(try sender.pop(timeout: .seconds(10)).get()) }
        XCTAssertTrue(eventually { currentThreadCount() <= threads }, "threads: \(currentThreadCount()) after, \(threads) before")
        XCTAssertTrue(eventually { openDescriptorCount() <= descriptors }, "descriptors: \(openDescriptorCount()) after, \(descriptors) before")
    }
}
