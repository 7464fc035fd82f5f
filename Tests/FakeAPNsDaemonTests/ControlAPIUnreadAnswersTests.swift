import FakeAPNsTestSupport
import Foundation
import XCTest
@testable import FakeAPNs

#if canImport(Glibc)
import Glibc
#endif

/// What a large answer nobody reads costs the daemon: a list is made as its client reads it,
/// so a client that stops reading holds a piece of it, not the whole answer.
final class ControlAPIUnreadAnswersTests: XCTestCase {
    private static let stored = 5_000
    private static let clients = 50
    /// Resident memory the silent clients may add in all: half a megabyte each. Before lists were
    /// made as they are read, each held its whole answer (here about 10 MB of JSON, twice).
    private static let limitKB = clients * 512

    private let token: DeviceToken = "fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2"

    func testClientsThatNeverReadALargeListHoldLittleAndAReaderGetsItWhole() throws {
        for runtime in ["__asan_init", "__tsan_init"] {
            try XCTSkipIf(dlsym(nil, runtime) != nil, "resident memory under a sanitizer measures the sanitizer")
        }
        let daemon = try DaemonFixture.started(["--log-file", "/dev/null"], for: self)
        let web = try daemon.port("web")
        let http = HTTPTestClient(port: web)
        let pid = daemon.process.processIdentifier

        // 5,000 notifications of about 2 KB (the binary gateway's largest payload).
        let padding = String(repeating: "p", count: 1_900)
        let client = try TLSClient(host: "127.0.0.1", port: try daemon.port("gateway"))
        for index in 1...Self.stored {
            let payload = #"{"aps":{"alert":"n\#(index)"},"pad":"\#(padding)"}"#
            try client.send(BinaryEncoder.enhanced(identifier: UInt32(index), token: token, payload: Array(payload.utf8)))
        }
        XCTAssertTrue(eventually(timeout: .seconds(60)) {
            (try? http.get("/api/v1/notifications?since=\(Self.stored - 1)").json?["last"]) == .int(Self.stored)
        }, "every notification stored")
        client.close()

        let target = "/api/v1/notifications?since=0&limit=\(Self.stored)"
        let before = settledResidentKB(pid)
        var silent: [Int32] = []
        defer { silent.forEach { close($0) } }
        for _ in 0..<Self.clients {
            silent.append(try silentClient(port: web, target: target))
        }
        // The daemon writes until each socket is full, then holds what is left unmade.
        let after = settledResidentKB(pid)
        print("unread answers: \(Self.clients) clients of a \(Self.stored)-item list add \(after - before) KB resident")
        XCTAssertLessThan(after - before, Self.limitKB, "resident KB added by \(Self.clients) clients that do not read")

        let page = try http.get(target, timeout: .seconds(60))
        XCTAssertEqual(page.status, 200)
        let json = try XCTUnwrap(page.json, "a valid JSON answer of \(page.body.count) bytes")
        let notifications = try XCTUnwrap(json["notifications"]?.arrayValue)
        XCTAssertEqual(notifications.count, Self.stored)
        XCTAssertEqual(notifications.first?["sequence"], 1)
        XCTAssertEqual(notifications.last?["sequence"], .int(Self.stored))
        XCTAssertEqual(json["last"], .int(Self.stored))
        XCTAssertEqual(json["dropped"], 0)
        XCTAssertEqual(daemon.stop(), 0)
    }

    /// A connection with a small receive buffer that asks for `target` and reads nothing.
    private func silentClient(port: Int, target: String) throws -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(socket, 0)
        var size: Int32 = 4096
        setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        XCTAssertEqual(connected, 0)
        let request = Array("GET \(target) HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        XCTAssertEqual(request.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }, request.count)
        return socket
    }

    /// The daemon's resident memory once it has stopped moving (less than 256 KB in 200 ms).
    private func settledResidentKB(_ pid: Int32) -> Int {
        var last = residentKB(pid)
        for _ in 0..<100 {
            var pause = timespec(tv_sec: 0, tv_nsec: 200_000_000)
            nanosleep(&pause, nil)
            let now = residentKB(pid)
            if abs(now - last) < 256 { return now }
            last = now
        }
        XCTFail("resident memory did not settle")
        return last
    }

    private func residentKB(_ pid: Int32) -> Int { processStatus(pid, "VmRSS") }
}
