import FakeAPNs
import FakeAPNsTestSupport
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

    /// The release daemon (Scripts/build-daemon's, which Scripts/install and Scripts/image take)
    /// carries the Swift runtime and FoundationEssentials: it starts and serves with the
    /// toolchain's libraries out of reach, on a machine or in an image that has no Swift.
    func testTheInstalledReleaseDaemonRunsWithoutTheSwiftToolchain() throws {
        // The release daemon Scripts/test builds first: building it from here would wait for
        // the lock on .build that this test run holds.
        let release = repositoryRoot.appendingPathComponent(".build/release/fake-apns")
        guard FileManager.default.isExecutableFile(atPath: release.path) else {
            return XCTFail("no release daemon at \(release.path); Scripts/build-daemon builds it")
        }
        guard (try? runTool("/usr/bin/unshare", ["--mount", "/usr/bin/true"]))?.status == 0 else {
            throw XCTSkip("unshare --mount is not allowed here: the toolchain cannot be hidden from the daemon")
        }
        let prefix = FileManager.default.temporaryDirectory.appendingPathComponent("fake-apns-prefix-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: prefix) }
        let install = try ChildProcess.run(["--binary", release.path, prefix.path], executable: Self.script)
        XCTAssertEqual(install.status, 0, install.errors)
        let installed = prefix.appendingPathComponent("bin/fake-apns")

        // Nothing of the toolchain in what it links or where it looks for libraries, and no
        // GnuTLS (libmicrohttpd's HTTPS, which the control API does not speak).
        let dynamic = try runTool("/usr/bin/readelf", ["--dynamic", installed.path])
        XCTAssertEqual(dynamic.status, 0, dynamic.error)
        let searched = dynamic.output.split(separator: "\n").filter { $0.contains("(RUNPATH)") || $0.contains("(RPATH)") }
        XCTAssertFalse(searched.contains { $0.contains("swift") }, searched.joined(separator: "\n"))
        let linked = try runTool("/usr/bin/ldd", [installed.path])
        XCTAssertEqual(linked.status, 0, linked.error)
        for library in ["libswift", "libFoundation", "_FoundationICU", "libicu", "libdispatch", "libgnutls"] {
            XCTAssertFalse(linked.output.contains(library), "links \(library):\n\(linked.output)")
        }

        // The toolchain's runtime folder, where the debug daemon this test run built finds
        // libswiftCore.so, hidden under an empty tmpfs in a mount namespace of the daemon's own,
        // with an empty environment (no LD_LIBRARY_PATH).
        let debugLinked = try runTool("/usr/bin/ldd", [DaemonFixture.executable.path]).output
        let core = try XCTUnwrap(
            debugLinked.split(separator: "\n").first { $0.contains("libswiftCore.so => /") }, debugLinked)
        let runtime = URL(fileURLWithPath: String(core.split(separator: " ")[2])).deletingLastPathComponent().path
        let withoutToolchain = [
            "/usr/bin/env", "-i", "/usr/bin/unshare", "--mount", "/bin/sh", "-c",
            #"/usr/bin/mount -t tmpfs none "$0" && exec "$@""#, runtime,
        ]
        // The hiding works: the debug daemon, linked to the shared runtime, cannot start.
        let hidden = try runTool(withoutToolchain[0], Array(withoutToolchain.dropFirst()) + [DaemonFixture.executable.path, "--version"])
        XCTAssertNotEqual(hidden.status, 0, hidden.output)
        XCTAssertTrue(hidden.error.contains("error while loading shared libraries: libswift"), hidden.error)

        let version = try runTool(withoutToolchain[0], Array(withoutToolchain.dropFirst()) + [installed.path, "--version"])
        XCTAssertEqual(version.status, 0, version.error)
        XCTAssertTrue(version.output.hasPrefix("fake-apns "), version.output)

        // It starts (its start line), answers the control API, takes a push over HTTP/2 from
        // curl trusting the installed CA, hands it back, and stops cleanly.
        let daemon = try DaemonFixture.started(
            launcher: withoutToolchain, executable: installed, startTimeout: .seconds(30), for: self)
        let ports = daemon.ports
        let webPort = try XCTUnwrap(ports["web"])
        let health = try curl(port: webPort, "GET", "/healthz", maxTime: 10)
        XCTAssertEqual(health.status, 200, health.error)
        let pushed = try runTool("/usr/bin/curl", [
            "--silent", "--show-error", "--http2", "--cacert", prefix.appendingPathComponent("share/fake-apns/ca.pem").path,
            "--header", "apns-topic: com.example.app", "--data", #"{"aps":{"alert":"Without Swift"}}"#,
            "--write-out", "%{http_code}", "https://localhost:\(try XCTUnwrap(ports["http2"]))/3/device/\(Fixtures.token.hex)",
        ])
        XCTAssertEqual(pushed.output, "200", pushed.error)
        let received = try curl(port: webPort, "GET", "/api/v1/notifications/next?timeout=20", maxTime: 30)
        XCTAssertEqual(received.status, 200, received.error)
        XCTAssertEqual(try JSONValue(parsing: received.body)["payload"]?["aps"]?["alert"]?.stringValue, "Without Swift")
        XCTAssertEqual(daemon.stop(timeout: .seconds(10)), 0, daemon.standardError)
    }

    func testAnUnknownOptionIsAUsageError() throws {
        let run = try ChildProcess.run(["--bogus"], executable: Self.script)
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.errors.contains("unknown option '--bogus'"), run.errors)
    }
}
