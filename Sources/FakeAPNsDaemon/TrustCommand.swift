import FakeAPNs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `fake-apns trust install | uninstall | status [--cert FILE]`: puts a CA (the built-in test
/// CA by default) into the system trust store and takes it out again, as mkcert does, so that
/// clients verifying with the system's CAs trust the fake without being told. What it adds is
/// named after the CA's fingerprint (``TrustStore/name(of:)``): installing twice changes
/// nothing, and uninstalling removes that one CA only. Exits 0 when done (status: when
/// installed), 1 on a failure (status: when not installed), 64 on usage errors.
enum TrustCommand {
    /// The command line, read.
    struct Settings: CommandSettings {
        var showHelp = false
        var certificateFile: String?
    }

    enum Action: String {
        case install, uninstall, status
    }

    static func run(_ arguments: [String], output: CommandOutput = .standard, machine: TrustStore.Machine = .current) -> Int32 {
        var settings = Settings()
        let action = arguments.first.flatMap(Action.init(rawValue:))
        if action == nil, let first = arguments.first, !first.hasPrefix("-") {
            return output.usageError("trust: unknown action '\(first)': the actions are install, uninstall and status")
        }
        do {
            _ = try ClientArguments.parse(
                Array(arguments.dropFirst(action == nil ? 0 : 1)), into: &settings, table: table, command: "trust")
        } catch {
            return output.usageError("\(error)")
        }
        if settings.showHelp {
            output.line(help)
            return 0
        }
        guard let action else {
            return output.usageError("trust takes an action: install, uninstall or status (see fake-apns trust --help)")
        }
        let certificate: X509Certificate
        let store: TrustStore
        do {
            certificate = try readCertificate(settings.certificateFile)
        } catch {
            return output.usageError("\(error)")
        }
        do {
            store = try TrustStore.find(on: machine)
        } catch {
            return output.failure("trust \(action): \(error)")
        }
        let job = Job(
            action: action, certificate: certificate, certificateFile: settings.certificateFile, output: output,
            asRoot: "sudo fake-apns trust " + arguments.map(shellQuoted).joined(separator: " "))
        switch store {
        case .anchorFolder(let folder):
            switch action {
            case .install: return job.install(into: folder)
            case .uninstall: return job.uninstall(from: folder)
            case .status: return job.status(of: folder)
            }
        case .keychain(let keychain):
            switch action {
            case .install: return job.install(into: keychain)
            case .uninstall: return job.uninstall(from: keychain)
            case .status: return job.status(of: keychain)
            }
        }
    }

    /// The CA `--cert` names, or the built-in test CA: one PEM certificate that may sign others.
    static func readCertificate(_ file: String?) throws -> X509Certificate {
        guard let file else {
            return try X509Certificate.certificates(inPEM: TestCertificates.caPEM)[0]
        }
        let text = try ClientArguments.readFile("--cert", file)
        let certificates: [X509Certificate]
        do {
            certificates = try X509Certificate.certificates(inPEM: text)
        } catch {
            throw Options.UsageError(description: "--cert \(file): not a PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
        guard certificates.count == 1, let certificate = certificates.first else {
            throw Options.UsageError(
                description: "--cert \(file) holds \(certificates.count) certificates; name a file that holds the one CA to trust")
        }
        guard certificate.isCA else {
            throw Options.UsageError(
                description: "--cert \(file): \(certificate.subject) is not a CA certificate (no basic constraints CA:TRUE);"
                    + " name the CA that signed it")
        }
        return certificate
    }

    private static var table: [ClientOption<Settings>] {
        [
            ClientOption(
                flag: "--cert", argument: "FILE",
                help: "The CA to trust: a PEM file holding one CA certificate (default: the built-in test CA, which"
                    + " fake-apns ca prints and the server's default identity chains to)."
            ) { $0.certificateFile = $1 },
        ]
    }

    static var help: String {
        ClientArguments.help(
            usage: "fake-apns trust install|uninstall|status [--cert FILE]",
            about: """
                Puts a CA into the system trust store and takes it out again, as mkcert does, so that clients
                verifying with the system's CAs (curl, Python's default ssl context, OpenSSL) trust the fake
                without --cacert. The CA is the built-in test CA unless --cert names another. What it adds is
                named after the CA, fake-apns-<first 8 hex digits of the SHA-256 of its DER>: installing twice
                changes nothing, and uninstall removes that file only, never another CA.

                  install    writes the anchor file and rebuilds the system bundle
                  uninstall  removes it and rebuilds the bundle (not installed: says so, exits 0)
                  status     whether the file is there and the bundle holds the CA: exits 0 if so, 1 if not

                The store is the first one found, a folder and its tool:
                  Fedora, RHEL            /etc/pki/ca-trust/source/anchors/NAME.pem, update-ca-trust extract
                  Debian, Ubuntu, Alpine  /usr/local/share/ca-certificates/NAME.crt, update-ca-certificates
                  Arch                    /etc/ca-certificates/trust-source/anchors/NAME.crt, update-ca-trust
                                          (or trust extract-compat)
                  macOS                   the System keychain and its admin trust settings, through security
                                          add-trusted-cert -d (written from Apple's manual, untested)
                Every file written or removed is named on standard output. The store belongs to root.
                """,
            table: table,
            footer: """
                Examples:
                  sudo fake-apns trust install
                  curl --http2 -H 'apns-topic: com.example.app' -d '{"aps":{"alert":"Hi"}}' https://127.0.0.1:2197/3/device/fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2
                      no --cacert: the system trusts the test CA
                  sudo fake-apns trust uninstall

                Exits 0 when done (status: installed), 1 on a failure (status: not installed), 64 on usage
                errors (a --cert file that is not one PEM CA certificate among them).
                """)
    }

    /// `word` as a shell reads it back: as is when it is plain, single-quoted otherwise.
    static func shellQuoted(_ word: String) -> String {
        let plain = !word.isEmpty && word.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_./=:,@%+".contains($0)) }
        return plain ? word : "'" + word.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }
}

// MARK: - One run

extension TrustCommand {
    /// One action on one CA: what it prints, and how it explains a refusal.
    struct Job {
        let action: Action
        let certificate: X509Certificate
        /// The file `--cert` named, which `security` can read as it is.
        let certificateFile: String?
        let output: CommandOutput
        /// The command line again, under sudo.
        let asRoot: String

        /// The one line that explains a refusal of permission, and exit status 1.
        func denied(_ what: String) -> Int32 {
            output.failure("trust \(action): \(what); the system trust store belongs to root: run \(asRoot)")
        }

        /// The failure of a file operation: a refusal of permission explained, any other said.
        func failed(_ error: FileOperationError) -> Int32 {
            error.isPermission ? denied("\(error)") : output.failure("trust \(action): \(error)")
        }

        /// Runs a tool, naming it and showing its output; nil when it succeeded, else the exit status.
        func ran(_ command: [String]) -> Int32? {
            let tool = ToolRun.run(command)
            output.line("ran " + command.map(shellQuoted).joined(separator: " "))
            for line in tool.output.split(separator: "\n") {
                output.line("  " + line)
            }
            guard tool.status != 0 else { return nil }
            let name = URL(fileURLWithPath: command[0]).lastPathComponent
            if tool.wasDeniedPermission || geteuid() != 0 {
                return denied("\(name) was refused (exit \(tool.status))")
            }
            return output.failure("trust \(action): \(name) failed (exit \(tool.status)); its output is above")
        }

        // MARK: Anchor folder

        func install(into store: AnchorFolder) -> Int32 {
            let file = store.file(for: certificate)
            if store.hasFile(for: certificate) {
                if store.bundleHolds(certificate) {
                    output.line("already installed: \(file), and \(store.bundle) holds it; nothing changed")
                    return 0
                }
                output.line("\(file) is there, but \(store.bundle) does not hold it yet")
            } else {
                do {
                    try FileOperationError.save(certificate.pem, to: file)
                } catch {
                    return failed(error)
                }
                output.line("wrote \(file)")
            }
            if let status = ran(store.refresh) { return status }
            guard store.bundleHolds(certificate) else {
                return output.failure("trust install: \(store.bundle) does not hold \(certificate.subject) after the rebuild")
            }
            output.line("installed: \(store.bundle) holds \(certificate.subject)")
            return 0
        }

        func uninstall(from store: AnchorFolder) -> Int32 {
            let file = store.file(for: certificate)
            guard FileManager.default.fileExists(atPath: file) else {
                output.line("not installed: no \(file); nothing removed")
                return 0
            }
            do {
                try FileOperationError.remove(file)
            } catch {
                return failed(error)
            }
            output.line("removed \(file)")
            if let status = ran(store.refreshAfterRemoval) { return status }
            if store.bundleHolds(certificate) {
                output.line("uninstalled, but \(store.bundle) still holds \(certificate.subject): another anchor adds it")
            } else {
                output.line("uninstalled: \(store.bundle) no longer holds \(certificate.subject)")
            }
            return 0
        }

        func status(of store: AnchorFolder) -> Int32 {
            let file = store.file(for: certificate)
            let present = store.hasFile(for: certificate)
            let held = store.bundleHolds(certificate)
            output.line("store: \(store.folder), rebuilt by \(store.refresh.joined(separator: " ")) (\(store.systems))")
            output.line("CA: \(certificate.subject), SHA-256 \(TrustStore.hex(certificate.sha256))")
            output.line("\(file): \(present ? "present" : "absent")")
            output.line("\(store.bundle): \(held ? "holds the CA" : "does not hold the CA")")
            output.line(present && held ? "installed" : "not installed")
            return present && held ? 0 : 1
        }

        // MARK: Keychain

        /// Whether the System keychain lists the CA; nil (after saying why) when it cannot be read.
        private func listed(in keychain: SystemKeychain) -> Bool? {
            let listing = ToolRun.run(keychain.list)
            guard listing.status == 0 else {
                let said = listing.output.split(separator: "\n").first.map { ": \($0)" } ?? ""
                _ = output.failure("trust \(action): security find-certificate failed (exit \(listing.status))\(said)")
                return nil
            }
            return SystemKeychain.listing(listing.output, holds: certificate)
        }

        /// Runs `body` with a file holding the CA for `security`: `--cert`'s, or one written to the
        /// temporary folder for the while.
        private func withCertificateFile(_ body: (String) -> Int32) -> Int32 {
            if let certificateFile { return body(certificateFile) }
            let folder = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
            let file = (folder.hasSuffix("/") ? folder : folder + "/") + TrustStore.name(of: certificate) + ".pem"
            do {
                try FileOperationError.save(certificate.pem, to: file)
            } catch {
                return failed(error)
            }
            output.line("wrote \(file)")
            defer {
                if (try? FileOperationError.remove(file)) != nil { output.line("removed \(file)") }
            }
            return body(file)
        }

        func install(into keychain: SystemKeychain) -> Int32 {
            guard let listed = listed(in: keychain) else { return 1 }
            if listed {
                output.line("already installed: \(keychain.keychain) holds \(certificate.subject); nothing changed")
                return 0
            }
            return withCertificateFile { file in
                if let status = ran(keychain.add(file)) { return status }
                output.line("installed: \(keychain.keychain) holds \(certificate.subject), trusted as a root")
                return 0
            }
        }

        func uninstall(from keychain: SystemKeychain) -> Int32 {
            guard let listed = listed(in: keychain) else { return 1 }
            guard listed else {
                output.line("not installed: \(keychain.keychain) does not hold \(certificate.subject); nothing removed")
                return 0
            }
            return withCertificateFile { file in
                if let status = ran(keychain.removeTrust(file)) { return status }
                if let status = ran(keychain.delete(certificate)) { return status }
                output.line("uninstalled: \(keychain.keychain) no longer holds \(certificate.subject)")
                return 0
            }
        }

        func status(of keychain: SystemKeychain) -> Int32 {
            guard let listed = listed(in: keychain) else { return 1 }
            return withCertificateFile { file in
                let trusted = ToolRun.run(keychain.verify(file)).status == 0
                output.line("store: \(keychain.keychain), through \(keychain.security) (macOS)")
                output.line("CA: \(certificate.subject), SHA-256 \(TrustStore.hex(certificate.sha256))")
                output.line("\(keychain.keychain): \(listed ? "holds the CA" : "does not hold the CA")")
                output.line("security verify-cert: \(trusted ? "trusted" : "not trusted")")
                output.line(listed && trusted ? "installed" : "not installed")
                return listed && trusted ? 0 : 1
            }
        }
    }
}

// MARK: - Files

/// A file the trust store could not take: what was done, to which file, and the system's
/// error number.
struct FileOperationError: Error, CustomStringConvertible {
    let operation: String
    let path: String
    let code: Int32

    var description: String { "\(operation) \(path): \(String(cString: strerror(code)))" }

    /// Whether the system refused for want of permission.
    var isPermission: Bool { code == EACCES || code == EPERM }

    /// Writes `text` to `path`, readable by everyone (as the trust store's tools expect); a
    /// file left half written is removed.
    static func save(_ text: String, to path: String) throws(FileOperationError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw FileOperationError(operation: "cannot write", path: path, code: errno) }
        defer { close(descriptor) }
        _ = fchmod(descriptor, 0o644)
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                let code = errno
                if code == EINTR { continue }
                unlink(path)
                throw FileOperationError(operation: "cannot write", path: path, code: code)
            }
            written += count
        }
    }

    /// Removes the file at `path`.
    static func remove(_ path: String) throws(FileOperationError) {
        guard unlink(path) == 0 else { throw FileOperationError(operation: "cannot remove", path: path, code: errno) }
    }
}
