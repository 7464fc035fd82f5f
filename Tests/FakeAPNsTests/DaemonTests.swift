import Foundation
import XCTest
@testable import FakeAPNs

#if canImport(Glibc)
import Glibc
#endif

/// The `fake-apns` executable as a user runs it: start line, one JSON line per notification,
/// clean stop on signals, usage errors.
final class DaemonTests: XCTestCase {
    private func startedDaemon(_ arguments: [String] = []) throws -> (DaemonProcess, Int) {
        let daemon = try DaemonProcess(arguments: ["--gateway-port", "0"] + arguments)
        let start = try daemon.nextJSON()
        XCTAssertEqual(start["event"]?.stringValue, "listening")
        let gateway = try XCTUnwrap(start["listeners"]?[0])
        XCTAssertEqual(gateway["name"]?.stringValue, "gateway")
        XCTAssertEqual(gateway["host"]?.stringValue, "127.0.0.1")
        let port = try XCTUnwrap(gateway["port"]?.intValue)
        XCTAssertGreaterThan(port, 0)
        return (daemon, port)
    }

    func testPrintsOneJSONLinePerAcceptedNotification() throws {
        let (daemon, port) = try startedDaemon()
        let client = try TLSClient(host: "127.0.0.1", port: port)
        try client.send(
            BinaryEncoder.enhanced(identifier: 42, expiration: 1_900_000_000, token: Fixtures.token, payload: Fixtures.alert)
                + BinaryEncoder.simple(token: Fixtures.otherToken, payload: Array("not json".utf8)))
        let first = try daemon.nextJSON()
        XCTAssertEqual(first["event"]?.stringValue, "notification")
        XCTAssertEqual(first["token"]?.stringValue, Fixtures.token.hex)
        XCTAssertEqual(first["identifier"]?.intValue, 42)
        XCTAssertEqual(first["expiration"]?.intValue, 1_900_000_000)
        XCTAssertEqual(first["priority"]?.intValue, 10)
        XCTAssertEqual(first["format"]?.stringValue, "enhanced")
        XCTAssertEqual(first["payload"]?["aps"]?["alert"]?.stringValue, "Hello")
        XCTAssertNotNil(first["receivedAt"]?.stringValue)
        let second = try daemon.nextJSON()
        XCTAssertEqual(second["format"]?.stringValue, "simple")
        XCTAssertEqual(second["payload"], .null)
        XCTAssertEqual(second["payloadText"]?.stringValue, "not json")
        XCTAssertNotNil(second["payloadError"]?.stringValue)
        XCTAssertEqual(daemon.stop(), 0)
    }

    func testSIGTERMWithClientsConnectedExitsZeroWithinASecondAndFreesThePort() throws {
        let (daemon, port) = try startedDaemon()
        let idle = try RawConnection(port: port)
        let stalled = try TLSClient(host: "127.0.0.1", port: port)
        try stalled.send([1, 0, 0])
        XCTAssertEqual(daemon.stop(signal: SIGTERM, timeout: .seconds(1)), 0)
        let again = try FakeAPNsServer.started(configuration: .init(gatewayPort: port))
        again.stop()
        withExtendedLifetime((idle, stalled)) {}
    }

    func testSIGINTExitsZero() throws {
        let (daemon, _) = try startedDaemon()
        XCTAssertEqual(daemon.stop(signal: SIGINT, timeout: .seconds(1)), 0)
    }

    func testClientCertificatesCanBeRequired() throws {
        let (daemon, port) = try startedDaemon(["--client-certificates", "required"])
        let client = try TLSClient(host: "127.0.0.1", port: port, identity: .testClient)
        try client.send(BinaryEncoder.frame(token: Fixtures.token, payload: Fixtures.alert, identifier: 3))
        let line = try daemon.nextJSON()
        XCTAssertEqual(line["clientTopic"]?.stringValue, "com.example.app")
        XCTAssertEqual(daemon.stop(), 0)
    }

    func testHelpListsEveryOption() throws {
        let daemon = try DaemonProcess(arguments: ["--help"])
        XCTAssertEqual(daemon.waitForExit(timeout: .seconds(10)), 0)
        let help = try daemon.lines.pop(count: 5, timeout: .seconds(5)).joined(separator: "\n") + "\n"
            + daemon.lines.removeAll().joined(separator: "\n")
        for option in ["--host", "--gateway-port", "--cert", "--key", "--key-passphrase", "--client-certificates",
                       "--trusted-ca", "--max-payload-size", "--version", "--help"] {
            XCTAssertTrue(help.contains(option), "help mentions \(option)")
        }
    }

    func testUnknownOptionExits64NamingIt() throws {
        let daemon = try DaemonProcess(arguments: ["--gateway-prot", "1"])
        XCTAssertEqual(daemon.waitForExit(timeout: .seconds(10)), 64)
        XCTAssertTrue(daemon.standardError.contains("--gateway-prot"), daemon.standardError)
    }

    func testBadPortExits64() throws {
        let daemon = try DaemonProcess(arguments: ["--gateway-port", "70000"])
        XCTAssertEqual(daemon.waitForExit(timeout: .seconds(10)), 64)
        XCTAssertTrue(daemon.standardError.contains("--gateway-port"), daemon.standardError)
    }

    func testMissingCertificateFileIsAClearError() throws {
        let daemon = try DaemonProcess(arguments: ["--gateway-port", "0", "--cert", "/nonexistent.pem", "--key", "/nonexistent.key"])
        XCTAssertEqual(daemon.waitForExit(timeout: .seconds(10)), 1)
        XCTAssertTrue(daemon.standardError.contains("nonexistent.pem"), daemon.standardError)
    }
}
