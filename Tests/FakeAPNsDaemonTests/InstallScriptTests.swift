import FakeAPNs
import Foundation
import XCTest

/// `Scripts/install PREFIX` puts a working `fake-apns` in PREFIX/bin and the test certificates
/// in PREFIX/share/fake-apns.
final class InstallScriptTests: XCTestCase {
    private static let script = ChildProcess.repository.appendingPathComponent("Scripts/install")

    func testInstallsTheDaemonAndTheCertificatesInAPrefix() throws {
        let prefix = FileManager.default.temporaryDirectory.appendingPathComponent("fake-apns-prefix-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: prefix) }
        // The binary this test run built: the swift test running this holds the build folder,
        // so a build from here would wait for it.
        let install = try ChildProcess.run(
            ["--binary", ChildProcess.fakeAPNs.path, prefix.appendingPathComponent("usr").path], executable: Self.script)
        XCTAssertEqual(install.status, 0, install.errors)
        let usr = prefix.appendingPathComponent("usr")
        let installed = usr.appendingPathComponent("bin/fake-apns")
        XCTAssertTrue(install.output.contains("Installed \(installed.path)"), install.output)
        XCTAssertTrue(install.output.contains("Check it: "), install.output)

        let version = try ChildProcess.run(["--version"], executable: installed)
        XCTAssertEqual(version.status, 0, version.errors)
        XCTAssertTrue(version.output.hasPrefix("fake-apns "), version.output)

        let share = usr.appendingPathComponent("share/fake-apns")
        XCTAssertEqual(try String(contentsOf: share.appendingPathComponent("ca.pem"), encoding: .utf8), TestCertificates.caPEM)
        for name in ["client.pem", "client.key", "server.pem", "server.key", "AuthKey_ABC123DEFG.p8", "AuthKey_ABC123DEFG.pub.pem"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: share.appendingPathComponent(name).path), name)
        }
        XCTAssertFalse(
            FileManager.default.fileExists(atPath: share.appendingPathComponent("ca.key").path),
            "the CA's key signs certificates; no recipe needs it")

        // The installed certificates serve the recipes: a token from the installed key.
        let token = try ChildProcess.run(
            ["token", "--key", share.appendingPathComponent("AuthKey_ABC123DEFG.p8").path, "--team-id", "DEF123GHIJ"],
            executable: installed)
        XCTAssertEqual(token.status, 0, token.errors)
        let verified = ProviderTokenVerifier(keys: [.test]).verify(
            authorization: "bearer " + token.output.trimmingCharacters(in: .newlines), now: Date())
        XCTAssertNoThrow(try verified.get())
    }

    func testAnUnknownOptionIsAUsageError() throws {
        let run = try ChildProcess.run(["--bogus"], executable: Self.script)
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.errors.contains("unknown option '--bogus'"), run.errors)
    }
}
