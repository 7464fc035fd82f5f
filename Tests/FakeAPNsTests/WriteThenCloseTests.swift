import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

/// Binary-era senders write their notifications and close at once, without close_notify and
/// without reading anything. Every notification they wrote must arrive, exactly once, at every
/// TLS version the gateway offers, on a machine whose cores are busy (an idle machine hides
/// losses: the server reads before the client's close lands).
final class WriteThenCloseTests: XCTestCase {
    private let fixture = ServerFixture()
    private var server: FakeAPNsServer { fixture.server }

    private static let clients = repositoryRoot.appendingPathComponent("Tests/Clients")
    private static let caFile = testCertificatePath("ca.pem")

    func testPythonClientsClosingWithoutCloseNotifyLoseNothingAtAnyTLSVersion() throws {
        try fixture.start(for: self)
        try withBusyCores {
            for (version, connections) in [("1.3", 1000), ("1.2", 250), ("1.1", 100), ("1.0", 100)] {
                let sent = try run("/usr/bin/python3", [
                    Self.clients.appendingPathComponent("write_then_close.py").path, "127.0.0.1", String(server.gatewayPort),
                    Self.caFile, String(connections), version, String(connections),
                ])
                XCTAssertGreaterThanOrEqual(sent, connections * 2, "TLS \(version)")
                try expectEachExactlyOnce(sent, "Python, TLS \(version)")
            }
        }
    }

    func testPHPSenderWritingPerDeviceThenClosingLosesNothing() throws {
        try fixture.start(for: self)
        try withBusyCores {
            let sent = try run("/usr/bin/php", [
                Self.clients.appendingPathComponent("write_then_close.php").path, "127.0.0.1", String(server.gatewayPort),
                Self.caFile, "1000", "7",
            ])
            XCTAssertGreaterThanOrEqual(sent, 2000)
            try expectEachExactlyOnce(sent, "PHP")
        }
    }

    /// Runs a client to its end; the number of notifications it says it sent.
    private func run(_ tool: String, _ arguments: [String]) throws -> Int {
        let result = try runTool(tool, arguments, timeout: .seconds(240))
        XCTAssertEqual(result.status, 0, result.error)
        return Int(result.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// Pops `count` notifications and checks they are numbers 1 to `count` (the last four
    /// bytes of the token), each once, and that nothing else arrives.
    private func expectEachExactlyOnce(_ count: Int, _ label: String) throws {
        let notifications = try server.notifications.pop(count: count, timeout: .seconds(30))
        let numbers = notifications.map { notification in
            notification.deviceToken.bytes.suffix(4).reduce(0) { $0 << 8 | Int($1) }
        }
        XCTAssertEqual(Set(numbers).count, count, "\(label): a notification arrived twice")
        XCTAssertEqual(Set(numbers), Set(1...count), "\(label): the numbers sent")
        XCTAssertTrue(eventually(timeout: .seconds(20)) { server.openConnectionCount == 0 }, label)
        XCTAssertEqual(server.notifications.count, 0, "\(label): more arrived than were sent")
        XCTAssertEqual(server.rejections.snapshot().count, 0, "\(label): refusals")
    }

    /// Keeps both cores busy with CPU-bound processes while `body` runs.
    private func withBusyCores(_ body: () throws -> Void) throws {
        let burners = try (0..<2).map { _ in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "while :; do :; done"]
            try process.run()
            return process
        }
        defer {
            burners.forEach { $0.terminate() }
            burners.forEach { $0.waitUntilExit() }
        }
        try body()
    }
}
