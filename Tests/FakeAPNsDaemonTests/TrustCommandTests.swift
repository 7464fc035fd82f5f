import FakeAPNs
import FakeAPNsTestSupport
import Foundation
import XCTest

// Reads internals on purpose: TrustCommand, TrustStore and PEMBundle.
@testable import FakeAPNsDaemon

/// `fake-apns trust`: what it writes into the system trust store and takes out, and that
/// clients verifying with the system's CAs (curl, Python's default ssl context) then trust the
/// fake, and no longer after.
///
/// The machine's own store is never changed: each scenario runs in a private mount namespace
/// (`unshare -m`) where copies of `/etc/ssl`, `/usr/local/share/ca-certificates` and
/// `/etc/ca-certificates.conf` are mounted over the real ones, and an empty folder over
/// `/etc/ca-certificates/update.d` (its hooks, such as Java's keystore, reach beyond those
/// paths). The command uses the real paths; the namespace makes them private. After each test
/// the real store is checked to hold no trace of the fake.
final class TrustCommandTests: XCTestCase {
    private static let device = "fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2"
    private static let anchors = "/usr/local/share/ca-certificates"
    private static let bundle = "/etc/ssl/certs/ca-certificates.crt"
    private static let testCA = try! X509Certificate.certificates(inPEM: TestCertificates.caPEM)[0]
    /// The file `trust install` writes for the test CA.
    private static let testCAFile = "\(anchors)/fake-apns-\(TrustStore.hex(testCA.sha256.prefix(4))).crt"

    override func setUpWithError() throws {
        let probe = try runTool("/usr/bin/unshare", ["-m", "true"])
        try XCTSkipUnless(
            probe.status == 0,
            "unshare -m is not permitted here (it needs root or CAP_SYS_ADMIN), and these tests change the system"
                + " trust store only inside a private mount namespace: \(probe.error)")
    }

    override func tearDown() {
        let real = (try? FileManager.default.contentsOfDirectory(atPath: Self.anchors)) ?? []
        XCTAssertEqual(real.filter { $0.hasPrefix("fake-apns") }, [], "the machine's own \(Self.anchors) was changed")
        let links = (try? FileManager.default.contentsOfDirectory(atPath: "/etc/ssl/certs")) ?? []
        XCTAssertEqual(links.filter { $0.hasPrefix("fake-apns") }, [], "the machine's own /etc/ssl/certs was changed")
        let bundle = (try? String(contentsOfFile: Self.bundle, encoding: .utf8)) ?? ""
        XCTAssertFalse(PEMBundle.contains(Self.testCA, in: bundle), "the machine's own \(Self.bundle) holds the test CA")
    }

    // MARK: - The namespace

    /// One step of a scenario: its exit status and what it printed.
    struct Step {
        var status: Int32 = -1
        var output: [String] = []
        var errors: [String] = []
        var text: String { (output + errors).joined(separator: "\n") }
    }

    /// Runs `scenario`, bash, in a private mount namespace with copies of the trust store
    /// mounted over the real one. In it, `step NAME COMMAND...` runs a command and records
    /// it, and `$FAKE_APNS_TMP` is a folder the test may use; the built `fake-apns` is first on
    /// the PATH. Returns every step by name.
    private func inPrivateTrustStore(_ scenario: String, prepare: (URL) throws -> Void = { _ in }) throws -> [String: Step] {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("fake-apns-trust-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        // Removed from here, once the namespace is gone: no mount of it is left then.
        defer { try? FileManager.default.removeItem(at: work) }
        try prepare(work)
        let script = """
            set -u
            W=\(work.path)
            export FAKE_APNS_TMP="$W"
            mkdir "$W/store" "$W/store/hooks" &&
              cp -a /etc/ssl "$W/store/ssl" &&
              cp -a \(Self.anchors) "$W/store/anchors" &&
              cp -a /etc/ca-certificates.conf "$W/store/ca-certificates.conf" || exit 90
            mount --bind "$W/store/ssl" /etc/ssl &&
              mount --bind "$W/store/anchors" \(Self.anchors) &&
              mount --bind "$W/store/ca-certificates.conf" /etc/ca-certificates.conf || exit 91
            if [ -d /etc/ca-certificates/update.d ]; then mount --bind "$W/store/hooks" /etc/ca-certificates/update.d || exit 92; fi
            # The clients' defaults, not a bundle named in the environment.
            unset SSL_CERT_FILE SSL_CERT_DIR CURL_CA_BUNDLE REQUESTS_CA_BUNDLE
            step() {
              local name=$1; shift
              "$@" >"$W/step.out" 2>"$W/step.err"
              local status=$?
              printf '\\n@@step %s %d\\n' "$name" "$status"; cat "$W/step.out"
              printf '\\n@@stderr\\n'; cat "$W/step.err"
            }
            \(scenario)
            """
        let path = ChildProcess.fakeAPNs.deletingLastPathComponent().path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "")
        let run = try ChildProcess.run(
            ["-m", "--propagation", "private", "/bin/bash", "-c", script], executable: URL(fileURLWithPath: "/usr/bin/unshare"),
            environment: ["PATH": path], timeout: .seconds(120))
        XCTAssertEqual(run.status, 0, "the namespace's set-up failed: \(run.errors)")
        var steps: [String: Step] = [:]
        var current: String?
        var inErrors = false
        for line in run.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("@@step ") {
                let fields = line.split(separator: " ")
                current = String(fields[1])
                steps[String(fields[1])] = Step(status: Int32(fields[2]) ?? -1)
                inErrors = false
            } else if line == "@@stderr" {
                inErrors = true
            } else if let name = current, !line.isEmpty {
                if inErrors { steps[name]?.errors.append(line) } else { steps[name]?.output.append(line) }
            }
        }
        return steps
    }

    /// The named step, failing the test when the scenario did not run it.
    private func step(_ steps: [String: Step], _ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> Step {
        try XCTUnwrap(steps[name], "no step \(name) ran; steps: \(steps.keys.sorted())", file: file, line: line)
    }

    /// A push by curl, verifying the server with the system's CAs only: prints the HTTP status.
    private static func curlPush(_ port: Int) -> String {
        "curl -sS --http2 -H 'apns-topic: com.example.app' -d '{\"aps\":{\"alert\":\"Hi\"}}' -w '%{http_code}'"
            + " https://127.0.0.1:\(port)/3/device/\(device)"
    }

    /// A push by Debian's python3-h2 over a TLS socket from `ssl.create_default_context()`.
    private static func pythonPush(_ port: Int) -> String {
        "/usr/bin/python3 \(repositoryRoot.path)/Tests/Clients/h2_client.py pipeline --port \(port) --count 1"
    }

    /// The status of the one request of `pythonPush`'s report.
    private func pythonStatus(_ step: Step, file: StaticString = #filePath, line: UInt = #line) throws -> Int? {
        let report = try JSONValue(parsing: XCTUnwrap(step.output.last, step.text, file: file, line: line))
        return report["requests"]?.arrayValue?.first?["status"]?.intValue
    }

    // MARK: - Against clients

    func testInstallLetsCurlAndPythonVerifyTheFakeWithTheSystemsCAsAndUninstallUndoesIt() throws {
        // The fake, run as the built daemon outside the namespace.
        let daemon = try DaemonFixture.started(for: self)
        let port = try daemon.port("http2")
        let steps = try inPrivateTrustStore(
            """
            step curl-before \(Self.curlPush(port))
            step status-before fake-apns trust status
            step install fake-apns trust install
            step status-installed fake-apns trust status
            step links-installed ls /etc/ssl/certs
            step curl-installed \(Self.curlPush(port))
            step python-installed \(Self.pythonPush(port))
            step uninstall fake-apns trust uninstall
            step status-after fake-apns trust status
            step links-after ls /etc/ssl/certs \(Self.anchors)
            step curl-after \(Self.curlPush(port))
            step python-after \(Self.pythonPush(port))
            """)
        let curlBefore = try step(steps, "curl-before")
        XCTAssertEqual(curlBefore.status, 60, "curl trusts the fake before install: \(curlBefore.text)")

        let statusBefore = try step(steps, "status-before")
        XCTAssertEqual(statusBefore.status, 1, statusBefore.text)
        XCTAssertEqual(statusBefore.output.last, "not installed")
        XCTAssertTrue(statusBefore.output.contains("\(Self.testCAFile): absent"), statusBefore.text)

        let install = try step(steps, "install")
        XCTAssertEqual(install.status, 0, install.text)
        XCTAssertEqual(install.output.first, "wrote \(Self.testCAFile)")
        XCTAssertTrue(install.output.contains("ran /usr/sbin/update-ca-certificates"), install.text)
        XCTAssertEqual(install.output.last, "installed: \(Self.bundle) holds \(Self.testCA.subject)")
        XCTAssertEqual(install.errors, [])

        let statusInstalled = try step(steps, "status-installed")
        XCTAssertEqual(statusInstalled.status, 0, statusInstalled.text)
        XCTAssertTrue(statusInstalled.output.contains("\(Self.testCAFile): present"), statusInstalled.text)
        XCTAssertTrue(statusInstalled.output.contains("\(Self.bundle): holds the CA"), statusInstalled.text)
        XCTAssertEqual(statusInstalled.output.last, "installed")
        XCTAssertTrue(try step(steps, "links-installed").output.contains { $0.hasPrefix("fake-apns-") })

        let curlInstalled = try step(steps, "curl-installed")
        XCTAssertEqual(curlInstalled.status, 0, curlInstalled.text)
        XCTAssertEqual(curlInstalled.output, ["200"])
        let pythonInstalled = try step(steps, "python-installed")
        XCTAssertEqual(pythonInstalled.status, 0, pythonInstalled.text)
        XCTAssertEqual(try pythonStatus(pythonInstalled), 200, pythonInstalled.text)
        for _ in 0..<2 {
            XCTAssertEqual(try daemon.next(["notification"])["token"]?.stringValue, Self.device)
        }

        let uninstall = try step(steps, "uninstall")
        XCTAssertEqual(uninstall.status, 0, uninstall.text)
        XCTAssertEqual(uninstall.output.first, "removed \(Self.testCAFile)")
        XCTAssertTrue(uninstall.output.contains("ran /usr/sbin/update-ca-certificates --fresh"), uninstall.text)
        XCTAssertEqual(uninstall.output.last, "uninstalled: \(Self.bundle) no longer holds \(Self.testCA.subject)")

        let statusAfter = try step(steps, "status-after")
        XCTAssertEqual(statusAfter.status, 1, statusAfter.text)
        XCTAssertEqual(statusAfter.output.last, "not installed")
        XCTAssertFalse(try step(steps, "links-after").output.contains { $0.hasPrefix("fake-apns-") })

        let curlAfter = try step(steps, "curl-after")
        XCTAssertEqual(curlAfter.status, 60, curlAfter.text)
        XCTAssertTrue(curlAfter.text.contains("SSL certificate problem"), curlAfter.text)
        let pythonAfter = try step(steps, "python-after")
        XCTAssertNotEqual(pythonAfter.status, 0, pythonAfter.text)
        XCTAssertTrue(pythonAfter.text.contains("CERTIFICATE_VERIFY_FAILED"), pythonAfter.text)
    }

    // MARK: - Idempotence and what is removed

    func testASecondInstallSaysAlreadyInstalledAndChangesNothing() throws {
        let steps = try inPrivateTrustStore(
            """
            step install fake-apns trust install
            step before \(Self.listing)
            step again fake-apns trust install
            step after \(Self.listing)
            step status fake-apns trust status
            step uninstall fake-apns trust uninstall
            step uninstall-again fake-apns trust uninstall
            """)
        XCTAssertEqual(try step(steps, "install").status, 0)
        let again = try step(steps, "again")
        XCTAssertEqual(again.status, 0, again.text)
        XCTAssertEqual(
            again.output, ["already installed: \(Self.testCAFile), and \(Self.bundle) holds it; nothing changed"])
        XCTAssertEqual(again.errors, [])
        let before = try step(steps, "before")
        XCTAssertEqual(before.status, 0, before.text)
        XCTAssertTrue(before.output.contains { $0.hasPrefix(Self.testCAFile + " ") }, before.text)
        XCTAssertEqual(try step(steps, "after").output, before.output, "the second install changed files")
        XCTAssertEqual(try step(steps, "status").status, 0)
        XCTAssertEqual(try step(steps, "uninstall").status, 0)
        let uninstallAgain = try step(steps, "uninstall-again")
        XCTAssertEqual(uninstallAgain.status, 0, uninstallAgain.text)
        XCTAssertEqual(uninstallAgain.output, ["not installed: no \(Self.testCAFile); nothing removed"])
    }

    /// Every file and link of the trust store with its modification time (nanoseconds) and size.
    private static let listing = "find /etc/ssl \(anchors) /etc/ca-certificates.conf -printf '%p %T@ %s\\n'"

    /// Writes another CA and a server identity for 127.0.0.1 that it signed, with openssl.
    private static func makeOtherCA(in folder: URL) throws {
        let made = try ChildProcess.shell(
            """
            set -e
            cd '\(folder.path)'
            openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout other-ca.key -out other-ca.pem \
              -days 2 -subj '/CN=Other Test CA' 2>/dev/null
            openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key -out server.csr \
              -subj '/CN=localhost' 2>/dev/null
            printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\nextendedKeyUsage=serverAuth\\n' > server.ext
            openssl x509 -req -in server.csr -CA other-ca.pem -CAkey other-ca.key -CAcreateserial -days 2 \
              -extfile server.ext -out server.pem 2>/dev/null
            """)
        XCTAssertEqual(made.status, 0, made.errors)
    }

    func testCertInstallsAnotherCAUnderItsOwnNameAndUninstallRemovesThatOneOnly() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fake-apns-other-ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Self.makeOtherCA(in: folder)
        let otherCA = try X509Certificate.certificates(inPEM: String(contentsOf: folder.appendingPathComponent("other-ca.pem"), encoding: .utf8))[0]
        let otherFile = "\(Self.anchors)/fake-apns-\(TrustStore.hex(otherCA.sha256.prefix(4))).crt"
        let testPort = try DaemonFixture.started(for: self).port("http2")
        let otherPort = try DaemonFixture.started([
            "--cert", folder.appendingPathComponent("server.pem").path, "--key", folder.appendingPathComponent("server.key").path,
        ], for: self).port("http2")
        let cert = folder.appendingPathComponent("other-ca.pem").path
        let steps = try inPrivateTrustStore(
            """
            step install-other fake-apns trust install --cert \(cert)
            step curl-other \(Self.curlPush(otherPort))
            step curl-test-without \(Self.curlPush(testPort))
            step install-test fake-apns trust install
            step uninstall-other fake-apns trust uninstall --cert \(cert)
            step anchors ls \(Self.anchors)
            step curl-other-after \(Self.curlPush(otherPort))
            step curl-test-after \(Self.curlPush(testPort))
            step status-other fake-apns trust status --cert \(cert)
            step status-test fake-apns trust status
            """)
        let install = try step(steps, "install-other")
        XCTAssertEqual(install.status, 0, install.text)
        XCTAssertEqual(install.output.first, "wrote \(otherFile)")
        XCTAssertEqual(install.output.last, "installed: \(Self.bundle) holds CN=Other Test CA")
        XCTAssertEqual(try step(steps, "curl-other").output, ["200"])
        XCTAssertEqual(try step(steps, "curl-test-without").status, 60, "installing another CA trusted the test CA")

        XCTAssertEqual(try step(steps, "install-test").status, 0)
        let uninstall = try step(steps, "uninstall-other")
        XCTAssertEqual(uninstall.status, 0, uninstall.text)
        XCTAssertEqual(uninstall.output.first, "removed \(otherFile)")
        let anchors = try step(steps, "anchors").output
        XCTAssertTrue(anchors.contains(URL(fileURLWithPath: Self.testCAFile).lastPathComponent), "\(anchors)")
        XCTAssertFalse(anchors.contains(URL(fileURLWithPath: otherFile).lastPathComponent), "\(anchors)")
        // The machine's own CAs, copied into the namespace, are all still there.
        let own = try FileManager.default.contentsOfDirectory(atPath: Self.anchors)
        XCTAssertEqual(Set(anchors), Set(own + [URL(fileURLWithPath: Self.testCAFile).lastPathComponent]))

        XCTAssertEqual(try step(steps, "curl-other-after").status, 60)
        XCTAssertEqual(try step(steps, "curl-test-after").output, ["200"])
        XCTAssertEqual(try step(steps, "status-other").status, 1)
        XCTAssertEqual(try step(steps, "status-test").status, 0)
    }

    // MARK: - Refusals

    func testABadCertFileIsAUsageErrorThatChangesNothing() throws {
        let server = repositoryRoot.appendingPathComponent("TestCerts/server.pem").path
        let key = repositoryRoot.appendingPathComponent("TestCerts/ca.key").path
        let steps = try inPrivateTrustStore(
            """
            printf 'not a certificate\\n' > "$FAKE_APNS_TMP/garbage.pem"
            cat \(repositoryRoot.path)/TestCerts/ca.pem \(repositoryRoot.path)/TestCerts/untrusted-ca.pem > "$FAKE_APNS_TMP/two.pem"
            step missing fake-apns trust install --cert /nonexistent/ca.pem
            step garbage fake-apns trust install --cert "$FAKE_APNS_TMP/garbage.pem"
            step key fake-apns trust install --cert \(key)
            step leaf fake-apns trust install --cert \(server)
            step two fake-apns trust install --cert "$FAKE_APNS_TMP/two.pem"
            step no-value fake-apns trust install --cert
            step anchors ls \(Self.anchors)
            """)
        for (name, saying) in [
            ("missing", "--cert /nonexistent/ca.pem: no such file"),
            ("garbage", "garbage.pem: not a PEM certificate"),
            ("key", "--cert \(key): not a PEM certificate"),
            ("leaf", "--cert \(server): CN=localhost is not a CA certificate"),
            ("two", "two.pem holds 2 certificates"),
            ("no-value", "--cert needs a value"),
        ] {
            let run = try step(steps, name)
            XCTAssertEqual(run.status, 64, "\(name): \(run.text)")
            XCTAssertEqual(run.output, [], name)
            XCTAssertEqual(run.errors.count, 1, "\(name): \(run.errors)")
            XCTAssertTrue(run.errors.first?.contains(saying) == true, "\(name): \(run.errors)")
        }
        let anchors = try step(steps, "anchors").output
        XCTAssertEqual(Set(anchors), Set(try FileManager.default.contentsOfDirectory(atPath: Self.anchors)))
    }

    func testWithoutPermissionOneLineSaysToRunItAsRoot() throws {
        let unprivileged = "setpriv --reuid=65534 --regid=65534 --clear-groups --"
        let steps = try inPrivateTrustStore(
            """
            step install-denied \(unprivileged) fake-apns trust install
            step status-unprivileged \(unprivileged) fake-apns trust status
            step install fake-apns trust install
            step uninstall-denied \(unprivileged) fake-apns trust uninstall
            step still-installed fake-apns trust status
            step uninstall fake-apns trust uninstall
            """)
        let install = try step(steps, "install-denied")
        XCTAssertEqual(install.status, 1, install.text)
        XCTAssertEqual(install.output, [])
        XCTAssertEqual(
            install.errors,
            [
                "fake-apns: trust install: cannot write \(Self.testCAFile): Permission denied; the system trust store belongs"
                    + " to root: run sudo fake-apns trust install"
            ])
        // Reading needs no privilege.
        XCTAssertEqual(try step(steps, "status-unprivileged").status, 1)
        XCTAssertEqual(try step(steps, "install").status, 0)
        let uninstall = try step(steps, "uninstall-denied")
        XCTAssertEqual(uninstall.status, 1, uninstall.text)
        XCTAssertEqual(uninstall.errors.count, 1, "\(uninstall.errors)")
        XCTAssertTrue(uninstall.errors.first?.hasSuffix("run sudo fake-apns trust uninstall") == true, "\(uninstall.errors)")
        XCTAssertEqual(try step(steps, "still-installed").status, 0, "a refused uninstall removed the CA")
        XCTAssertEqual(try step(steps, "uninstall").status, 0)
    }

    func testAToolRefusedPermissionIsExplainedInOneLineAndInstallingAgainFinishes() throws {
        // The anchor folder (the namespace's copy) open to everyone, /etc/ssl/certs still root's:
        // the file is written, the tool is refused.
        let steps = try inPrivateTrustStore(
            """
            chmod 777 \(Self.anchors)
            step install-denied setpriv --reuid=65534 --regid=65534 --clear-groups -- fake-apns trust install
            step status-half fake-apns trust status
            step install fake-apns trust install
            step uninstall fake-apns trust uninstall
            """)
        let denied = try step(steps, "install-denied")
        XCTAssertEqual(denied.status, 1, denied.text)
        XCTAssertEqual(denied.output.first, "wrote \(Self.testCAFile)")
        XCTAssertTrue(denied.output.contains("ran /usr/sbin/update-ca-certificates"), denied.text)
        XCTAssertEqual(denied.errors.count, 1, "\(denied.errors)")
        let line = try XCTUnwrap(denied.errors.first)
        XCTAssertTrue(line.hasPrefix("fake-apns: trust install: update-ca-certificates was refused"), line)
        XCTAssertTrue(line.hasSuffix("the system trust store belongs to root: run sudo fake-apns trust install"), line)

        let half = try step(steps, "status-half")
        XCTAssertEqual(half.status, 1, half.text)
        XCTAssertTrue(half.output.contains("\(Self.testCAFile): present"), half.text)
        XCTAssertTrue(half.output.contains("\(Self.bundle): does not hold the CA"), half.text)

        let install = try step(steps, "install")
        XCTAssertEqual(install.status, 0, install.text)
        XCTAssertEqual(install.output.first, "\(Self.testCAFile) is there, but \(Self.bundle) does not hold it yet")
        XCTAssertEqual(install.output.last, "installed: \(Self.bundle) holds \(Self.testCA.subject)")
        XCTAssertEqual(try step(steps, "uninstall").status, 0)
    }

    func testAMachineWithoutAKnownStoreIsToldInOneLineWhatWasLookedFor() throws {
        // /usr/local/share without ca-certificates: no store of any kind is left to find.
        let steps = try inPrivateTrustStore(
            """
            mkdir "$FAKE_APNS_TMP/share" && mount --bind "$FAKE_APNS_TMP/share" /usr/local/share || exit 93
            step install fake-apns trust install
            step status fake-apns trust status
            """)
        for name in ["install", "status"] {
            let run = try step(steps, name)
            XCTAssertEqual(run.status, 1, run.text)
            XCTAssertEqual(run.output, [])
            XCTAssertEqual(run.errors.count, 1, "\(run.errors)")
            let line = try XCTUnwrap(run.errors.first)
            XCTAssertTrue(line.hasPrefix("fake-apns: trust \(name): no system trust store found: looked for"), line)
            for lookedFor in [
                "/usr/local/share/ca-certificates with update-ca-certificates", "/etc/pki/ca-trust/source/anchors with update-ca-trust extract",
                "/etc/ca-certificates/trust-source/anchors with update-ca-trust or trust extract-compat",
            ] {
                XCTAssertTrue(line.contains(lookedFor), "\(lookedFor): \(line)")
            }
        }
    }

    // MARK: - In-process: no store is touched

    /// A machine with no store: a run that got as far as the store would stop there.
    private static let bareMachine = TrustStore.Machine(hasFolder: { _ in false }, tool: { _ in nil }, isMacOS: false)

    private func trust(_ arguments: [String]) -> CommandOutcome {
        CommandOutcome(running: { TrustCommand.run($0, output: $1, machine: Self.bareMachine) }, arguments)
    }

    func testUsageErrorsExit64() {
        for (arguments, saying) in [
            ([], "trust takes an action: install, uninstall or status"),
            (["trust"], "unknown action 'trust'"),
            (["remove"], "unknown action 'remove'"),
            (["install", "--bogus"], "unknown option '--bogus'"),
            (["install", "extra"], "unexpected argument 'extra'"),
            (["status", "--cert"], "--cert needs a value"),
        ] {
            let outcome = trust(arguments)
            XCTAssertEqual(outcome.status, 64, "\(arguments)")
            XCTAssertEqual(outcome.lines, [], "\(arguments)")
            XCTAssertTrue(outcome.errors.joined().contains(saying), "\(arguments): \(outcome.errors)")
        }
    }

    func testHelpListsTheActionsTheOptionAndTheStores() {
        XCTAssertTrue(Options.help.contains("fake-apns trust ACTION"))
        for arguments in [["--help"], ["install", "--help"]] {
            let outcome = trust(arguments)
            XCTAssertEqual(outcome.status, 0)
            let help = outcome.lines.joined(separator: "\n")
            for text in [
                "Usage: fake-apns trust install|uninstall|status [--cert FILE]", "--cert FILE", "update-ca-certificates",
                "update-ca-trust extract", "trust extract-compat", "add-trusted-cert -d", "sudo fake-apns trust install",
            ] {
                XCTAssertTrue(help.contains(text), "\(arguments): \(text)")
            }
        }
    }

    func testTheStoreIsTheFirstWhoseFolderAndToolAreFound() throws {
        func machine(folders: Set<String>, tools: Set<String>, macOS: Bool = false) -> TrustStore.Machine {
            TrustStore.Machine(
                hasFolder: { folders.contains($0) }, tool: { tools.contains($0) ? "/usr/bin/\($0)" : nil }, isMacOS: macOS)
        }
        let debian = try TrustStore.find(on: machine(folders: ["/usr/local/share/ca-certificates"], tools: ["update-ca-certificates"]))
        guard case .anchorFolder(let folder) = debian else { return XCTFail("\(debian)") }
        XCTAssertEqual(folder.refresh, ["/usr/bin/update-ca-certificates"])
        XCTAssertEqual(folder.refreshAfterRemoval, ["/usr/bin/update-ca-certificates", "--fresh"])
        XCTAssertEqual(folder.file(for: Self.testCA), Self.testCAFile)
        XCTAssertEqual(folder.bundle, Self.bundle)

        let fedora = try TrustStore.find(
            on: machine(folders: ["/etc/pki/ca-trust/source/anchors", "/usr/local/share/ca-certificates"], tools: ["update-ca-trust"]))
        guard case .anchorFolder(let anchors) = fedora else { return XCTFail("\(fedora)") }
        XCTAssertEqual(anchors.refresh, ["/usr/bin/update-ca-trust", "extract"])
        XCTAssertEqual(anchors.refreshAfterRemoval, anchors.refresh)
        XCTAssertEqual(anchors.file(for: Self.testCA), "/etc/pki/ca-trust/source/anchors/fake-apns-\(TrustStore.hex(Self.testCA.sha256.prefix(4))).pem")
        XCTAssertEqual(anchors.bundle, "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem")

        let arch = try TrustStore.find(on: machine(folders: ["/etc/ca-certificates/trust-source/anchors"], tools: ["trust"]))
        guard case .anchorFolder(let archAnchors) = arch else { return XCTFail("\(arch)") }
        XCTAssertEqual(archAnchors.refresh, ["/usr/bin/trust", "extract-compat"])

        // A folder without its tool is no store.
        XCTAssertThrowsError(try TrustStore.find(on: machine(folders: ["/usr/local/share/ca-certificates"], tools: ["update-ca-trust"])))

        let macOS = try TrustStore.find(on: machine(folders: [], tools: ["security"], macOS: true))
        XCTAssertEqual(macOS, .keychain(SystemKeychain(security: "/usr/bin/security")))
    }

    func testTheNameIsTheFirstEightHexDigitsOfTheSHA256OfTheDER() throws {
        let openssl = try ChildProcess.shell("fake-apns ca | openssl x509 -outform DER | sha256sum")
        XCTAssertEqual(openssl.status, 0, openssl.errors)
        let digest = String(openssl.output.prefix(64))
        XCTAssertEqual(TrustStore.hex(Self.testCA.sha256), digest)
        XCTAssertEqual(TrustStore.name(of: Self.testCA), "fake-apns-" + digest.prefix(8))
        XCTAssertTrue(Self.testCA.isCA)
        XCTAssertEqual(try X509Certificate.certificates(inPEM: Self.testCA.pem), [Self.testCA])
    }

    /// The `security` command lines as Apple's manual (security(1)) gives them; they cannot
    /// run here.
    func testTheKeychainCommandsAreTheManualsOnes() {
        let keychain = SystemKeychain(security: "/usr/bin/security")
        let sha256 = TrustStore.hex(Self.testCA.sha256).uppercased()
        XCTAssertEqual(
            keychain.add("ca.pem"),
            ["/usr/bin/security", "add-trusted-cert", "-d", "-r", "trustRoot", "-k", "/Library/Keychains/System.keychain", "ca.pem"])
        XCTAssertEqual(keychain.removeTrust("ca.pem"), ["/usr/bin/security", "remove-trusted-cert", "-d", "ca.pem"])
        XCTAssertEqual(
            keychain.delete(Self.testCA),
            ["/usr/bin/security", "delete-certificate", "-Z", sha256, "/Library/Keychains/System.keychain"])
        XCTAssertEqual(keychain.list, ["/usr/bin/security", "find-certificate", "-a", "-Z", "/Library/Keychains/System.keychain"])
        let listing = """
            SHA-256 hash: \(sha256)
            SHA-1 hash: \(TrustStore.hex(Self.testCA.sha1).uppercased())
            keychain: "/Library/Keychains/System.keychain"
            """
        XCTAssertTrue(SystemKeychain.listing(listing, holds: Self.testCA))
        XCTAssertFalse(SystemKeychain.listing("SHA-256 hash: " + String(repeating: "0", count: 64), holds: Self.testCA))
    }
}
