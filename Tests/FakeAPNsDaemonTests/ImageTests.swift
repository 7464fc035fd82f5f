import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: Socket.listen and TLSClient.
@testable import FakeAPNs

#if canImport(Glibc)
import Glibc
#endif

/// The container image of Scripts/image, as far as a machine that cannot start containers
/// allows: built, its filesystem exported, its entrypoint run under chroot with its own
/// environment only, as PID 1 of a PID namespace (as in a container) with /proc mounted in a
/// mount namespace that ends with it, so nothing stays mounted.
final class ImageTests: XCTestCase {
    /// The first of podman and docker that answers, or nil.
    private static let tool: String? = ["/usr/bin/podman", "/usr/local/bin/docker", "/usr/bin/docker"].first { path in
        FileManager.default.isExecutableFile(atPath: path) && (try? runTool(path, ["info"], timeout: .seconds(60)))?.status == 0
    }

    func testImageServesEachProtocolAndStopsOnSIGTERMAsPIDOne() throws {
        guard let tool = Self.tool else {
            let message = "SKIPPED ImageTests: neither podman nor docker works here; Scripts/install-dependencies.sh installs podman"
            FileHandle.standardError.write(Data("\n*** \(message) ***\n\n".utf8))
            throw XCTSkip(message)
        }
        let tag = "localhost/fake-apns-test:\(UUID().uuidString.lowercased())"
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("fake-apns-image-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        // The release daemon Scripts/test builds first: building it from here would wait for
        // the lock on .build that this test run holds.
        let release = repositoryRoot.appendingPathComponent(".build/release/fake-apns").path
        guard FileManager.default.isExecutableFile(atPath: release) else {
            return XCTFail("no release daemon at \(release); Scripts/build-daemon builds it")
        }
        let built = try runTool(
            repositoryRoot.appendingPathComponent("Scripts/image").path, ["--tag", tag, "--binary", release],
            environment: ["FAKEAPNS_CONTAINER_TOOL": URL(fileURLWithPath: tool).lastPathComponent], timeout: .seconds(600))
        defer { _ = try? runTool(tool, ["rmi", "--force", tag]) }
        XCTAssertEqual(built.status, 0, built.error)
        print("ImageTests: \(built.output.trimmingCharacters(in: .whitespacesAndNewlines))")
        // "Built NAME with TOOL: 26 MB (26505736 bytes)": a fake that one CI job pulls for
        // itself stays small (the README names the figure).
        let bytes = built.output.split(separator: "(").last.flatMap { Int($0.prefix { $0.isNumber }) }
        XCTAssertLessThanOrEqual(try XCTUnwrap(bytes, built.output), 30_000_000, built.output)

        let inspected = try runTool(tool, ["image", "inspect", "--format", "{{json .Config}}", tag])
        XCTAssertEqual(inspected.status, 0, inspected.error)
        let config = try JSONValue(parsing: inspected.output)
        let entrypoint = (config["Entrypoint"]?.arrayValue ?? []).compactMap(\.stringValue)
        XCTAssertEqual(entrypoint, ["/usr/bin/fake-apns"])
        let exposed = Set(config["ExposedPorts"]?.objectValue?.keys ?? [])
        XCTAssertEqual(exposed, ["2195/tcp", "2196/tcp", "2197/tcp", "2198/tcp", "8195/tcp"])
        var environment = [String: String]()
        for pair in (config["Env"]?.arrayValue ?? []).compactMap(\.stringValue) {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            environment[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        XCTAssertEqual(environment["FAKE_APNS_HOST"], "0.0.0.0")
        XCTAssertEqual(environment["FAKE_APNS_WEB_HOST"], "0.0.0.0")

        let created = try runTool(tool, ["create", tag])
        XCTAssertEqual(created.status, 0, created.error)
        let container = created.output.trimmingCharacters(in: .whitespacesAndNewlines)
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let exported = try runTool(
            "/bin/sh", ["-c", "\"$0\" export \"$1\" | tar -x -C \"$2\"", tool, container, root], timeout: .seconds(120))
        _ = try? runTool(tool, ["rm", "--force", container])
        XCTAssertEqual(exported.status, 0, exported.error)
        let files = try FileManager.default.subpathsOfDirectory(atPath: root)
        XCTAssertFalse(files.contains { $0.hasSuffix("/sh") || $0 == "bin/sh" }, "the image holds a shell")
        XCTAssertFalse(files.contains("usr/share/fake-apns/ca.key"))
        // The Swift runtime and Foundation are in the binary; no ICU data, no second TLS stack.
        let libraries = files.filter { $0.contains(".so") }
        for library in ["libswift", "libFoundation", "_FoundationICU", "libgnutls"] {
            XCTAssertFalse(libraries.contains { $0.contains(library) }, "the image holds \(library): \(libraries)")
        }
        let caPath = root + "/usr/share/fake-apns/ca.pem"
        XCTAssertEqual(try String(contentsOfFile: caPath, encoding: .utf8), TestCertificates.caPEM)
        try FileManager.default.createDirectory(atPath: root + "/proc", withIntermediateDirectories: true)

        // The image's environment and nothing else, with every port left to the system, so
        // parallel tests do not collide.
        for name in ["GATEWAY", "FEEDBACK", "HTTP2", "CHANNELS", "WEB"] { environment["FAKE_APNS_\(name)_PORT"] = "0" }
        // The Swift runtime reads its arguments from /proc/self/cmdline.
        func isolated(_ environment: [String: String]) -> [String] {
            ["/usr/bin/env", "-i"] + environment.map { "\($0)=\($1)" }.sorted()
                + ["/usr/bin/unshare", "--mount", "--pid", "--fork", "--mount-proc=\(root)/proc", "/usr/sbin/chroot", root]
        }
        let daemon = try DaemonFixture.started(
            onFreePorts: false, environment: ["PATH": "/usr/bin"], launcher: isolated(environment),
            executable: URL(fileURLWithPath: entrypoint.first ?? "/usr/bin/fake-apns"), root: root,
            startTimeout: .seconds(30), for: self)
        var daemonPID: pid_t = 0
        defer { if daemonPID > 0 { kill(daemonPID, SIGKILL) } }
        let ports = daemon.ports
        let unsharePID = daemon.process.processIdentifier
        XCTAssertTrue(eventually(timeout: .seconds(10)) {
            let children = (try? String(contentsOfFile: "/proc/\(unsharePID)/task/\(unsharePID)/children", encoding: .utf8)) ?? ""
            daemonPID = pid_t(children.split(separator: " ").first ?? "") ?? 0
            return daemonPID > 0
        })
        // PID 1 in its namespace: the kernel gives it no default action for SIGTERM.
        let status = (try? String(contentsOfFile: "/proc/\(daemonPID)/status", encoding: .utf8)) ?? ""
        XCTAssertTrue(status.split(separator: "\n").contains { $0.hasPrefix("NSpid:") && $0.hasSuffix("\t1") }, status)
        let webPort = try XCTUnwrap(ports["web"])

        // The health check as the image declares it, in the image's root and environment.
        var healthEnvironment = environment
        healthEnvironment["FAKE_APNS_WEB_PORT"] = String(webPort)
        let healthcheck = isolated(healthEnvironment) + ["/usr/bin/fake-apns", "healthcheck"]
        let health = try runTool(healthcheck[0], Array(healthcheck.dropFirst()), timeout: .seconds(30))
        XCTAssertEqual(health.status, 0, health.error)

        // The binary gateway, then HTTP/2 with curl trusting the image's CA, each read back
        // through the control API.
        let binary = try TLSClient(host: "127.0.0.1", port: try XCTUnwrap(ports["gateway"]))
        try binary.send(BinaryEncoder.enhanced(identifier: 7, token: Fixtures.token, payload: Fixtures.alert))
        let viaBinary = try curl(port: webPort, "GET", "/api/v1/notifications/next?timeout=20", maxTime: 30)
        XCTAssertEqual(viaBinary.status, 200, viaBinary.error)
        XCTAssertEqual(try JSONValue(parsing: viaBinary.body)["format"]?.stringValue, "enhanced", viaBinary.body)
        let http2 = try runTool("/usr/bin/curl", [
            "--silent", "--show-error", "--http2", "--cacert", caPath, "--header", "apns-topic: com.example.app",
            "--data", #"{"aps":{"alert":"From the image"}}"#, "--write-out", "%{http_code}",
            "https://localhost:\(try XCTUnwrap(ports["http2"]))/3/device/\(Fixtures.token.hex)",
        ])
        XCTAssertEqual(http2.output, "200", http2.error)
        let viaHTTP2 = try curl(port: webPort, "GET", "/api/v1/notifications/next?timeout=20", maxTime: 30)
        XCTAssertEqual(viaHTTP2.status, 200, viaHTTP2.error)
        let notification = try JSONValue(parsing: viaHTTP2.body)
        XCTAssertEqual(notification["format"]?.stringValue, "http2", viaHTTP2.body)
        XCTAssertEqual(notification["payload"]?["aps"]?["alert"]?.stringValue, "From the image")

        // SIGTERM as a container runtime sends it to PID 1: a clean stop, exit 0.
        kill(daemonPID, SIGTERM)
        XCTAssertEqual(daemon.waitForExit(timeout: .seconds(20)), 0, daemon.standardError)
        daemonPID = 0
    }

    /// The modules linked into `fake-apns` import FoundationEssentials, not Foundation (macOS,
    /// which has no FoundationEssentials, aside): with the Swift runtime linked statically, one
    /// `import Foundation` brings FoundationInternationalization and 40 MB of ICU data into the
    /// binary and the image. Tests and FakeAPNsTesting, not linked into it, may import Foundation.
    func testTheDaemonsModulesImportNoFoundationBeyondEssentials() throws {
        var offenders: [String] = []
        for module in ["FakeAPNs", "FakeAPNsDaemon", "fake-apns"] {
            let folder = repositoryRoot.appendingPathComponent("Sources/\(module)")
            let files = try XCTUnwrap(FileManager.default.subpathsOfDirectory(atPath: folder.path)).filter { $0.hasSuffix(".swift") }
            XCTAssertFalse(files.isEmpty, folder.path)
            for file in files {
                let lines = try String(contentsOfFile: folder.appendingPathComponent(file).path, encoding: .utf8)
                    .split(separator: "\n", omittingEmptySubsequences: false)
                for (index, line) in lines.enumerated() where line.hasSuffix("import Foundation") {
                    let guarded = index >= 3 && lines[index - 3] == "#if canImport(FoundationEssentials)" && lines[index - 1] == "#else"
                    if !guarded { offenders.append("Sources/\(module)/\(file):\(index + 1)") }
                }
            }
        }
        XCTAssertEqual(offenders, [], "import FoundationEssentials there (#if canImport(FoundationEssentials) … #else import Foundation #endif)")
    }

    func testHealthcheckFailsWhenNothingAnswers() throws {
        let listener = try Socket.listen(host: "127.0.0.1", port: 0)
        close(listener.socket)
        let result = try runTool(DaemonFixture.executable.path, ["healthcheck", "--web-port", String(listener.port)])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.error.contains("/healthz did not answer 200"), result.error)
    }

    func testHealthcheckPassesAgainstARunningDaemon() throws {
        let daemon = try DaemonFixture.started(for: self)
        let webPort = try daemon.port("web")
        let result = try runTool(DaemonFixture.executable.path, ["healthcheck"], environment: ["FAKE_APNS_WEB_PORT": String(webPort)])
        XCTAssertEqual(result.status, 0, result.error)
        XCTAssertEqual(daemon.stop(), 0)
    }
}
