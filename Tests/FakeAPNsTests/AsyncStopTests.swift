import FakeAPNsTestSupport
import Foundation
import XCTest
@testable import FakeAPNs

/// `await server.stop()`: the blocking stop's ending, with the task suspended while connections
/// drain instead of a thread blocked.
final class AsyncStopTests: XCTestCase {
    func testAsyncStopDecodesEverythingReceivedThenAnswersStatus10AndFreesThePort() async throws {
        let server = try FakeAPNsServer.started()
        let port = server.gatewayPort
        let client = try server.connectClient()
        let frames = (1...300).flatMap { BinaryEncoder.enhanced(identifier: UInt32($0), token: Fixtures.token, payload: Fixtures.alert) }
        try client.send(frames)
        XCTAssertTrue(eventually { unsentBytes(client.stream.socket) == 0 })
        await server.stop()
        await server.stop()
        XCTAssertEqual(server.openConnectionCount, 0)
        XCTAssertEqual(try client.readToEnd(), [8, 10, 0, 0, 0x01, 0x2C], "status 10 naming identifier 300")
        XCTAssertEqual(server.notifications.count, 300, "queued notifications stay poppable")
        let again = try FakeAPNsServer.started(configuration: .init(gatewayPort: port))
        await again.stop()
    }

    /// A feedback client that reads nothing holds its connection until the stop's grace cuts
    /// it: more such stops than Swift's cooperative pool has threads are all in flight at once,
    /// which they could not be if each held a thread of the pool.
    func testAsyncStopsOfMoreServersThanThePoolHasThreadsAreAllInFlightAtOnce() async throws {
        let count = ProcessInfo.processInfo.activeProcessorCount + 1
        // 7.6 MB, more than the server's send buffer and the client's receive buffer hold
        // (about 4 MB): the feedback connection's write blocks until the stop cuts it.
        let tuples = 200_000
        var servers: [FakeAPNsServer] = []
        var readers: [TLSClient] = []
        defer { readers.forEach { $0.close() } }
        for _ in 0..<count {
            let server = try FakeAPNsServer.started()
            servers.append(server)
            for _ in 0..<tuples { server.feedback.add(Fixtures.token) }
            readers.append(try TLSClient(host: "127.0.0.1", port: server.feedbackPort!, readTimeout: .seconds(30)))
            XCTAssertTrue(eventually(timeout: .seconds(30)) { server.feedback.pendingTuples.isEmpty }, "the server took the tuples to write")
        }

        let progress = Locked((begun: 0, ended: 0))
        let clock = ContinuousClock()
        let outcome = await withTaskGroup(of: (allInFlight: Bool?, took: Duration?).self) { group in
            for server in servers {
                group.addTask {
                    progress.withLock { $0.begun += 1 }
                    let took = await clock.measure { await server.stop() }
                    progress.withLock { $0.ended += 1 }
                    return (nil, took)
                }
            }
            // On the pool too: once every stop has begun, it looks whether any has ended.
            group.addTask {
                let deadline = clock.now + .seconds(20)
                while progress.withLock({ $0.begun }) < count, clock.now < deadline { await Task.yield() }
                return (progress.withLock { $0.begun == count && $0.ended == 0 }, nil)
            }
            var allInFlight = false
            var took: [Duration] = []
            for await result in group {
                if let seen = result.allInFlight { allInFlight = seen }
                if let duration = result.took { took.append(duration) }
            }
            return (allInFlight: allInFlight, took: took)
        }
        XCTAssertTrue(
            outcome.allInFlight,
            "all \(count) stops should wait at once, with \(ProcessInfo.processInfo.activeProcessorCount) threads in the pool")
        XCTAssertEqual(outcome.took.count, count)
        for took in outcome.took {
            XCTAssertGreaterThanOrEqual(took, .milliseconds(900), "the stop waited for the grace")
        }
        for server in servers {
            XCTAssertEqual(server.openConnectionCount, 0, "the stuck connection was cut")
        }
    }
}
