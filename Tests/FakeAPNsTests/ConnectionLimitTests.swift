import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

#if canImport(Glibc)
import Glibc
#endif

/// Connections beyond a limit, or without a descriptor to take, are closed as soon as they are
/// accepted (a `connectionRefused` event says why), and cost every other connection and
/// listener nothing.
final class ConnectionLimitTests: XCTestCase {
    private let fixture = ServerFixture()

    /// A server whose refusals are collected, by cause, stopped when the test ends.
    private func started(_ configure: (inout FakeAPNsServer.Configuration) -> Void) throws
        -> (FakeAPNsServer, Locked<[(ListenerKind, ConnectionRefusal)]>)
    {
        let refusals = Locked<[(ListenerKind, ConnectionRefusal)]>([])
        var configuration = FakeAPNsServer.Configuration(onEvent: { event in
            if case .connectionRefused(let peer, let listener, let reason) = event {
                XCTAssertTrue(peer.hasPrefix("127.0.0.1:"), peer)
                refusals.withLock { $0.append((listener, reason)) }
            }
        })
        configure(&configuration)
        return (try fixture.start(configuration, for: self), refusals)
    }

    func testConnectionsBeyondTheListenersLimitAreClosedAtOnceAndTheOthersGoOn() throws {
        let (server, refusals) = try started { $0.maximumConnectionsPerListener = 20 }
        var flood = try (0..<40).map { _ in try RawConnection(port: server.gatewayPort) }
        XCTAssertEqual(closedConnections(flood.map(\.socket), count: 20), Set(20..<40), "the connections beyond the limit see the end")
        XCTAssertTrue(eventually(timeout: .seconds(10)) { refusals.withLock { $0.count } == 20 })
        XCTAssertEqual(server.openConnectionCount, 20, "the first 20 are held")
        for (listener, reason) in refusals.withLock({ $0 }) {
            XCTAssertEqual(listener, .gateway)
            XCTAssertEqual(reason, .listenerLimit(20))
            XCTAssertEqual(reason.description, "too many connections on this listener (limit 20)")
        }

        // The other listeners answer while the gateway is full.
        let http2 = try server.connectHTTP2()
        XCTAssertEqual(try http2.send(.push()).status, 200)
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(10)).format, .http2)

        // Released, the gateway serves again.
        flood.removeAll()
        XCTAssertTrue(eventually(timeout: .seconds(20)) { server.openConnectionCount <= 1 }, "the flood's connections end")
        let client = try fixture.binaryClient()
        try client.send(BinaryEncoder.enhanced(identifier: 7, token: Fixtures.token, payload: Fixtures.alert))
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(10)).identifier, 7)
        XCTAssertEqual(refusals.withLock { $0.count }, 20, "nothing else was refused")
    }

    func testTheTotalLimitCountsEveryListener() throws {
        let (server, refusals) = try started { $0.maximumConnections = 10 }
        let gateway = try (0..<6).map { _ in try RawConnection(port: server.gatewayPort) }
        XCTAssertTrue(eventually(timeout: .seconds(10)) { server.openConnectionCount == 6 })
        let http2 = try (0..<6).map { _ in try RawConnection(port: fixture.http2Port) }
        XCTAssertEqual(closedConnections(http2.map(\.socket), count: 2), [4, 5], "the 11th and 12th connections are closed")
        XCTAssertTrue(eventually(timeout: .seconds(10)) { refusals.withLock { $0.count } == 2 })
        for (listener, reason) in refusals.withLock({ $0 }) {
            XCTAssertEqual(listener, .http2)
            XCTAssertEqual(reason, .totalLimit(10))
        }
        XCTAssertEqual(server.openConnectionCount, 10)
        XCTAssertEqual(gateway.count + http2.count, 12)
    }

    func testConnectionsThatWouldEatTheDescriptorReserveAreRefused() throws {
        // Only about 30 more descriptors may be taken: each connection here takes two (both
        // ends are in this process), so about 15 connections are served.
        let headroom = 30
        let limit = DescriptorLimit.current
        try XCTSkipIf(limit > 1 << 24, "no useful descriptor limit")
        let (server, refusals) = try started { $0.reservedDescriptors = limit - openDescriptorCount() - headroom }
        // One at a time, each served or refused before the next, so the descriptors in use
        // grow by two per connection served.
        var flood: [RawConnection] = []
        for count in 1...40 {
            flood.append(try RawConnection(port: server.gatewayPort))
            XCTAssertTrue(eventually(timeout: .seconds(10)) { refusals.withLock { $0.count } + server.openConnectionCount == count })
        }
        let refused = refusals.withLock { $0.count }
        XCTAssertGreaterThan(refused, 10, "connections beyond the reserve are refused")
        XCTAssertLessThan(refused, 40, "connections within the reserve are served")
        XCTAssertEqual(closedConnections(flood.map(\.socket), count: refused).count, refused, "the refused see the end")
        for (_, reason) in refusals.withLock({ $0 }) {
            // The gateway meets the other listeners' share of what is left before the reserve.
            XCTAssertTrue(["descriptor-reserve", "descriptor-share"].contains(reason.cause), reason.description)
        }
        flood.removeAll()
        XCTAssertTrue(eventually(timeout: .seconds(20)) { server.openConnectionCount == 0 })
        let client = try fixture.binaryClient()
        try client.send(BinaryEncoder.enhanced(identifier: 8, token: Fixtures.token, payload: Fixtures.alert))
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(10)).identifier, 8)
    }

    /// With no descriptor left in the process, the listener takes a waiting connection with its
    /// spare descriptor and closes it, instead of leaving it in the backlog.
    func testWithNoDescriptorLeftWaitingConnectionsAreClosedNotLeftWaiting() throws {
        try assertWaitingConnectionsAreClosedWithNoDescriptorLeft(whileAnotherThreadOpensDescriptors: false)
    }

    /// Another thread that opens and closes descriptors meanwhile may take the number the
    /// listener frees for a refusal, and the spare with it; the listener gets a spare back as
    /// soon as a descriptor is free and goes on draining.
    func testWaitingConnectionsAreClosedWhileAnotherThreadTakesDescriptorsForAMoment() throws {
        try assertWaitingConnectionsAreClosedWithNoDescriptorLeft(whileAnotherThreadOpensDescriptors: true)
    }

    private func assertWaitingConnectionsAreClosedWithNoDescriptorLeft(
        whileAnotherThreadOpensDescriptors takingDescriptors: Bool
    ) throws {
        let (server, refusals) = try started { $0.reservedDescriptors = 0 }
        let port = server.gatewayPort
        // One whole connection first, so whatever the process opens once, lazily (OpenSSL's
        // random sources, the runtime's own), is open before descriptors run out.
        let warmUp = try fixture.binaryClient()
        try warmUp.send(BinaryEncoder.enhanced(identifier: 1, token: Fixtures.token, payload: Fixtures.alert))
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(10)).identifier, 1)
        warmUp.close()
        XCTAssertTrue(eventually { server.openConnectionCount == 0 })
        // The clients' sockets are made first, so only the server's accepts need descriptors.
        let sockets = (0..<30).map { _ in socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        defer { sockets.forEach { close($0) } }
        XCTAssertTrue(sockets.allSatisfy { $0 >= 0 })
        Self.warmUpDispatchTimers()
        var saved = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved)
        var lowered = saved
        lowered.rlim_cur = rlim_t(Self.limitLeaving(free: 5))
        XCTAssertEqual(setrlimit(Int32(RLIMIT_NOFILE.rawValue), &lowered), 0)
        var accounted = false
        var refused = 0
        var ended = 0
        do {
            defer { setrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved) }
            let stopTaking = Locked(false)
            let taker = takingDescriptors ? try OSThread(name: "descriptor-taker") {
                while !stopTaking.withLock({ $0 }) {
                    let taken = open("/dev/null", O_RDONLY | O_CLOEXEC)
                    if taken >= 0 { close(taken) }
                }
            } : nil
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            for socket in sockets {
                let connected = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
                XCTAssertEqual(connected, 0, String(cString: strerror(errno)))
            }
            // Other threads of the process may hold a descriptor for a moment meanwhile (a new
            // thread's first allocation reads a file), so how many are served is not exact;
            // what is, is that none is left waiting: each is served or refused.
            accounted = eventually(timeout: .seconds(10)) {
                refusals.withLock { $0.count } + server.openConnectionCount == sockets.count
            }
            refused = refusals.withLock { $0.count }
            ended = closedConnections(sockets, count: refused, timeout: .seconds(10)).count
            stopTaking.withLock { $0 = true }
            taker?.join()
        }
        XCTAssertTrue(
            accounted,
            "every connection is served or refused: \(refused) refused, \(server.openConnectionCount) open; "
                + "descriptors: \(accounted ? "" : Self.openDescriptorTargets())")
        XCTAssertGreaterThanOrEqual(refused, 20, "about 5 descriptors were free, so most connections are refused")
        XCTAssertEqual(ended, refused, "each refused connection sees the end")
        for (_, reason) in refusals.withLock({ $0 }) {
            XCTAssertEqual(reason.cause, "no-descriptor", "\(reason)")
            XCTAssertEqual(reason, .noDescriptor(String(cString: strerror(EMFILE))))
        }
        let client = try fixture.binaryClient()
        try client.send(BinaryEncoder.enhanced(identifier: 9, token: Fixtures.token, payload: Fixtures.alert))
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(10)).identifier, 9)
    }

    /// Has Dispatch run a timer, so that the descriptor its timer thread opens for the first one
    /// is open before descriptors run out: XCTest arms a timer as each test starts, but that
    /// thread opens the descriptor only when it gets to run, on a busy machine well into the
    /// test.
    private static func warmUpDispatchTimers() {
        let fired = DispatchSemaphore(value: 0)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(1)) { fired.signal() }
        XCTAssertEqual(fired.wait(timeout: .now() + .seconds(10)), .success, "a Dispatch timer fires")
    }

    /// What each open descriptor of this process is, for a failure message.
    private static func openDescriptorTargets() -> String {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.compactMap(Int.init).sorted().map { number in
            "\(number)=\((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(number)")) ?? "?")"
        }.joined(separator: " ")
    }

    /// The descriptor limit under which exactly `free` descriptor numbers are not in use.
    private static func limitLeaving(free: Int) -> Int {
        var limit = 0
        var unused = 0
        while unused < free {
            if fcntl(Int32(limit), F_GETFD) < 0 { unused += 1 }
            limit += 1
        }
        return limit
    }
}
