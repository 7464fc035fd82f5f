import FakeAPNsTestSupport
import FakeAPNs
import Foundation
import XCTest

/// The daemon that cannot start says why in words, naming the option and the file or port,
/// and exits 1; a command line that is wrong in itself exits 64.
final class StartupFailureTests: XCTestCase {
    /// Runs the daemon with free ports and `arguments`; checks it exits `status` at once with
    /// one line on standard error that contains `message`, and prints nothing on standard output.
    private func assertFails(
        _ arguments: [String], status: Int32 = 1, saying message: String,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let run = try ChildProcess.run(DaemonFixture.freePorts + arguments, timeout: .seconds(30))
        XCTAssertEqual(run.status, status, "\(arguments): \(run.errors)", file: file, line: line)
        XCTAssertEqual(run.output, "", "\(arguments)", file: file, line: line)
        XCTAssertTrue(run.errors.hasPrefix("fake-apns: "), "\(arguments): \(run.errors)", file: file, line: line)
        XCTAssertEqual(run.errors.split(separator: "\n").count, 1, "\(arguments): \(run.errors)", file: file, line: line)
        XCTAssertTrue(run.errors.contains(message), "\(arguments): \(run.errors)", file: file, line: line)
        XCTAssertFalse(run.errors.contains("NSCocoaErrorDomain"), "\(arguments): \(run.errors)", file: file, line: line)
    }

    private func temporaryFile(_ contents: Data) throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("fake-apns-\(UUID().uuidString)")
        try contents.write(to: file)
        addTeardownBlock { try? FileManager.default.removeItem(at: file) }
        return file
    }

    func testAServerIdentityThatCannotBeUsedNamesItsOptionAndFile() throws {
        let (pem, key, client) = (testCertificatePath("server.pem"), testCertificatePath("server.key"), testCertificatePath("client.key"))
        try assertFails(["--cert", "/nonexistent.pem", "--key", key], saying: "--cert /nonexistent.pem: no such file")
        try assertFails(["--cert", pem, "--key", "/nonexistent.key"], saying: "--key /nonexistent.key: no such file")
        let folder = ChildProcess.repository.appendingPathComponent("TestCerts").path
        try assertFails(["--cert", folder, "--key", key], saying: "--cert \(folder): a folder, not a file")
        let binary = try temporaryFile(Data([0x30, 0x82, 0xff, 0xfe, 0x00, 0xc3]))
        try assertFails(["--cert", binary.path, "--key", key], saying: "--cert \(binary.path): not text")
        try assertFails(["--cert", key, "--key", key], saying: "--cert \(key): not a PEM certificate chain")
        try assertFails(["--cert", pem, "--key", pem], saying: "--key \(pem): not a PEM private key")
        try assertFails(
            ["--cert", pem, "--key", client],
            saying: "--key \(client) is not the private key of the certificate in --cert \(pem)")
    }

    func testAnEncryptedKeyWithoutItsPassphraseSaysSo() throws {
        let (pem, encrypted) = (testCertificatePath("server.pem"), testCertificatePath("server-encrypted.key"))
        try assertFails(
            ["--cert", pem, "--key", encrypted],
            saying: "--key \(encrypted): the key is encrypted; give its passphrase with --key-passphrase")
        try assertFails(
            ["--cert", pem, "--key", encrypted, "--key-passphrase", "wrong"],
            saying: "--key \(encrypted): --key-passphrase does not decrypt the key")
        try assertFails(["--key-passphrase", "fake-apns"], status: 64, saying: "--key-passphrase needs --cert and --key")
    }

    func testTrustedCAsThatCannotBeUsedNameTheirOptionAndFile() throws {
        let key = testCertificatePath("server.key")
        try assertFails(
            ["--client-certificates", "required", "--trusted-ca", "/nonexistent.pem"],
            saying: "--trusted-ca /nonexistent.pem: no such file")
        try assertFails(
            ["--client-certificates", "optional", "--trusted-ca", key],
            saying: "--trusted-ca \(key): not PEM CA certificates")
        // --auth certificate asks HTTP/2 clients for certificates, checked against these CAs.
        try assertFails(["--auth", "certificate", "--trusted-ca", key], saying: "--trusted-ca \(key): not PEM CA certificates")
        try assertFails(
            ["--trusted-ca", testCertificatePath("ca.pem")], status: 64,
            saying: "--trusted-ca applies only with --client-certificates optional or required, or --auth certificate")
    }

    func testJWTKeysDevicesAndLogFilesThatCannotBeUsedNameTheirOptionAndFile() throws {
        let ca = testCertificatePath("ca.pem")
        try assertFails(["--jwt-key", "ABC123DEFG:DEF123GHIJ:/nonexistent.p8"], saying: "--jwt-key /nonexistent.p8: no such file")
        try assertFails(["--jwt-key", "ABC123DEFG:DEF123GHIJ:\(ca)"], saying: "--jwt-key \(ca): not a PEM private key")
        try assertFails(["--devices", "/nonexistent.txt"], saying: "--devices /nonexistent.txt: no such file")
        try assertFails(["--devices", "/tmp"], saying: "--devices /tmp: a folder, not a file")
        try assertFails(["--log-file", "/nonexistent/events.log"], saying: "--log-file /nonexistent/events.log: No such file or directory")
    }

    func testAPortInUseNamesTheListenerItsOptionAndThePort() throws {
        try withFakeAPNs(configuration: .init(feedbackPort: nil, http2Port: nil)) { busy in
            let port = String(busy.gatewayPort)
            for (flag, listener) in [
                ("--gateway-port", "the gateway listener"), ("--feedback-port", "the feedback listener"),
                ("--http2-port", "the HTTP/2 listener"), ("--web-port", "control API"),
            ] {
                // The last value of an option wins.
                let run = try ChildProcess.run(DaemonFixture.freePorts + [flag, port], timeout: .seconds(30))
                XCTAssertEqual(run.status, 1, "\(flag): \(run.errors)")
                XCTAssertTrue(run.errors.contains("fake-apns: \(flag) \(port): \(listener)"), run.errors)
                XCTAssertTrue(run.errors.contains("Address already in use (another process listens there"), run.errors)
            }
        }
    }

    func testAnAddressOfAnotherMachineNamesTheHostOption() throws {
        // 192.0.2.1 is TEST-NET-1: documentation only, never an address of this machine.
        try assertFails(["--host", "192.0.2.1"], saying: "--host 192.0.2.1: binding 192.0.2.1:0: Cannot assign requested address")
    }

    func testTwoListenersOnOnePortIsAUsageError() throws {
        try assertFails(
            ["--gateway-port", "2290", "--http2-port", "2290"], status: 64,
            saying: "--gateway-port and --http2-port both name port 2290; each listener needs its own")
    }

    func testAWordThatIsNoCommandNamesTheCommands() throws {
        try assertFails(["sned"], status: 64, saying: "unexpected argument 'sned': the commands are serve, send, channels, feedback, token, ca, trust and healthcheck")
    }
}
