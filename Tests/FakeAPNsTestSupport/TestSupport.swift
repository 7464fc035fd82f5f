import Foundation
@testable import FakeAPNs

#if canImport(Glibc)
import Glibc
#endif

/// Tokens and payloads the tests share.
package enum Fixtures {
    package static let token: DeviceToken = "fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2"
    package static let otherToken: DeviceToken = "0102030405060708091011121314151617181920212223242526272829303132"
    package static let alert = Array(#"{"aps":{"alert":"Hello","badge":3,"sound":"default"}}"#.utf8)

    package static func payload(_ number: Int) -> [UInt8] {
        Array(#"{"aps":{"alert":"Message \#(number)"},"n":\#(number)}"#.utf8)
    }
}

extension FakeAPNsServer {
    /// A TLS client connected to this server's gateway.
    package func connectClient(identity: TLSIdentity? = nil, readTimeout: Duration = .seconds(10)) throws -> TLSClient {
        try TLSClient(
            host: configuration.host, port: gatewayPort, identity: identity, readTimeout: readTimeout)
    }
}

extension TLSIdentity {
    /// The provider certificate `TestCerts/client.pem` (topic com.example.app).
    package static let testClient = TLSIdentity(
        certificateChainPEM: TestCertificates.clientCertificatePEM, privateKeyPEM: TestCertificates.clientKeyPEM)
    package static let expiredClient = TLSIdentity(
        certificateChainPEM: TestCertificates.expiredClientCertificatePEM,
        privateKeyPEM: TestCertificates.expiredClientKeyPEM)
    package static let untrustedClient = TLSIdentity(
        certificateChainPEM: TestCertificates.untrustedClientCertificatePEM,
        privateKeyPEM: TestCertificates.untrustedClientKeyPEM)
}

/// A plain TCP connection, for clients that never speak TLS properly.
package final class RawConnection {
    package let socket: Int32

    package init(port: Int, host: String = "127.0.0.1") throws {
        socket = try Socket.connect(host: host, port: port)
    }

    package func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Waits up to `timeout` for the server to close; true when it did.
    package func waitForClose(timeout: Duration) -> Bool {
        let deadline = Deadline.after(timeout)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !deadline.hasPassed {
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 50) > 0 else { continue }
            let count = recv(socket, &buffer, buffer.count, 0)
            if count <= 0 { return true }
        }
        return false
    }

    deinit {
        close(socket)
    }
}

/// The indices of the connections in `sockets` the server closed (they read the end), waiting until `count` of
/// them are (or `timeout` passes), and no longer.
package func closedConnections(_ sockets: [Int32], count: Int, timeout: Duration = .seconds(20)) -> Set<Int> {
    var ended = Set<Int>()
    let deadline = Deadline.after(timeout)
    var byte: UInt8 = 0
    while ended.count < count && !deadline.hasPassed {
        let waiting = sockets.indices.filter { !ended.contains($0) }
        var descriptors = waiting.map { pollfd(fd: sockets[$0], events: Int16(POLLIN), revents: 0) }
        guard poll(&descriptors, nfds_t(descriptors.count), 50) > 0 else { continue }
        for (index, descriptor) in zip(waiting, descriptors) where descriptor.revents != 0 {
            if recv(descriptor.fd, &byte, 1, Int32(MSG_DONTWAIT)) <= 0 { ended.insert(index) }
        }
    }
    return ended
}

/// Bytes a socket has sent that its peer has not acknowledged yet (TIOCOUTQ): 0 means, on
/// loopback, that everything written is in the peer's socket.
package func unsentBytes(_ socket: Int32) -> Int {
    var count: Int32 = 0
    return ioctl(socket, UInt(TIOCOUTQ), &count) == 0 ? Int(count) : -1
}

/// Threads of this process, from /proc: for tests that prove nothing is left behind.
package func currentThreadCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1
}

/// Open descriptors of this process.
package func openDescriptorCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
}

/// Polls `condition` until it holds or `timeout` passes; for state that has no event to wait on.
package func eventually(timeout: Duration = .seconds(5), _ condition: () -> Bool) -> Bool {
    let deadline = Deadline.after(timeout)
    while !deadline.hasPassed {
        if condition() { return true }
        var pause = timespec(tv_sec: 0, tv_nsec: 2_000_000)
        nanosleep(&pause, nil)
    }
    return condition()
}

/// Runs `body` on a thread of its own (an ``OSThread``, detached: a body that never returns
/// holds only its thread) and returns at once; the mailbox gets what `body` returned or threw,
/// or why the thread did not start, so the test waits for it with a deadline.
///
/// ```swift
/// let answer = inBackground("next") { try http.get("/api/v1/notifications/next") }
/// try server.send(notification)
/// XCTAssertEqual(try answer.pop(timeout: .seconds(10)).get().status, 200)
/// ```
package func inBackground<T: Sendable>(
    _ name: String = "in-background", stackSize: Int = 512 * 1024, _ body: @escaping @Sendable () throws -> T
) -> Mailbox<Result<T, any Error>> {
    let result = Mailbox<Result<T, any Error>>(noun: "result of \(name)")
    do {
        try OSThread(name: name, stackSize: stackSize) { result.append(Result { try body() }) }.detach()
    } catch {
        result.append(.failure(error))
    }
    return result
}
