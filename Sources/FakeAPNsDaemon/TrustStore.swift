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

/// The system trust store that `fake-apns trust` puts a CA into and takes it out of, as mkcert
/// does: on Linux a folder of anchor files and the tool that rebuilds the bundle TLS clients
/// read; on macOS the System keychain and its admin trust settings, through `security`.
enum TrustStore: Equatable {
    case anchorFolder(AnchorFolder)
    case keychain(SystemKeychain)

    // MARK: - Finding the store

    /// What the detection looks at: whether a folder exists, and where a tool is.
    struct Machine: Sendable {
        /// Whether the folder exists.
        var hasFolder: @Sendable (String) -> Bool
        /// The full path of the named tool, or nil when it is nowhere to be found.
        var tool: @Sendable (String) -> String?
        /// Whether this is macOS, where the store is the keychain.
        var isMacOS: Bool

        /// This machine: its folders, its `PATH` and the usual `sbin` folders (which the
        /// `PATH` of a user who is not root often lacks).
        static let current = Machine(
            hasFolder: { path in
                var status = stat()
                return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
            },
            tool: { name in
                let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
                let folders = path + ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]
                return folders.map { $0 + "/" + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
            },
            isMacOS: {
                #if os(macOS)
                true
                #else
                false
                #endif
            }())
    }

    /// The Linux stores, in the order they are looked for (mkcert's): a store counts when its
    /// folder exists and one of its tools is found. `afterRemoval` is added to the tool's
    /// arguments when a file was removed: Debian's `update-ca-certificates` leaves the links it
    /// made to a removed file in `/etc/ssl/certs` unless asked for a fresh start, as its manual
    /// says to after removing a CA.
    private static let linuxStores: [(
        systems: String, folder: String, fileExtension: String, bundle: String, tools: [[String]], afterRemoval: [String]
    )] = [
        ("Fedora, RHEL", "/etc/pki/ca-trust/source/anchors", "pem", "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
         [["update-ca-trust", "extract"]], []),
        ("Debian, Ubuntu, Alpine", "/usr/local/share/ca-certificates", "crt", "/etc/ssl/certs/ca-certificates.crt",
         [["update-ca-certificates"]], ["--fresh"]),
        ("Arch", "/etc/ca-certificates/trust-source/anchors", "crt", "/etc/ssl/certs/ca-certificates.crt",
         [["update-ca-trust"], ["trust", "extract-compat"]], []),
    ]

    /// A machine where no known store was found; the description names what was looked for.
    struct NotFound: Error, CustomStringConvertible {
        let description: String
    }

    /// The store of `machine`.
    static func find(on machine: Machine) throws -> TrustStore {
        if machine.isMacOS {
            guard let security = machine.tool("security") else {
                throw NotFound(description: "no system trust store found: looked for the security tool (/usr/bin/security)")
            }
            return .keychain(SystemKeychain(security: security))
        }
        for store in linuxStores where machine.hasFolder(store.folder) {
            for tool in store.tools {
                if let path = machine.tool(tool[0]) {
                    return .anchorFolder(
                        AnchorFolder(
                            systems: store.systems, folder: store.folder, fileExtension: store.fileExtension,
                            refresh: [path] + tool.dropFirst(), refreshAfterRemoval: [path] + tool.dropFirst() + store.afterRemoval,
                            bundle: store.bundle))
                }
            }
        }
        let lookedFor = linuxStores.map { store in
            "\(store.folder) with \(store.tools.map { $0.joined(separator: " ") }.joined(separator: " or ")) (\(store.systems))"
        }
        throw NotFound(description: "no system trust store found: looked for " + lookedFor.joined(separator: "; "))
    }

    /// The name of what installing `certificate` adds: `fake-apns-` and the first 8 hex digits
    /// of the SHA-256 of its DER, so each CA has its own and installing it again finds it.
    static func name(of certificate: X509Certificate) -> String {
        "fake-apns-" + hex(certificate.sha256.prefix(4))
    }

    /// Bytes as lowercase hex.
    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }
}

// MARK: - Linux

/// A folder of anchor files that a tool turns into the bundle TLS clients read (OpenSSL's
/// default file, which curl and Python use).
struct AnchorFolder: Equatable {
    /// The systems that keep their anchors here, for messages.
    let systems: String
    let folder: String
    /// `crt` where `update-ca-certificates` takes only `*.crt`; `pem` on Fedora, as mkcert writes.
    let fileExtension: String
    /// The tool (full path) and its arguments that rebuild the bundle.
    let refresh: [String]
    /// The same, after a file was removed.
    let refreshAfterRemoval: [String]
    /// The bundle the tool writes.
    let bundle: String

    /// The anchor file for `certificate`.
    func file(for certificate: X509Certificate) -> String {
        folder + "/" + TrustStore.name(of: certificate) + "." + fileExtension
    }

    /// Whether the anchor file for `certificate` is there and holds it.
    func hasFile(for certificate: X509Certificate) -> Bool {
        guard let text = try? String(contentsOfFile: file(for: certificate), encoding: .utf8) else { return false }
        return PEMBundle.contains(certificate, in: text)
    }

    /// Whether the bundle holds `certificate`.
    func bundleHolds(_ certificate: X509Certificate) -> Bool {
        guard let text = try? String(contentsOfFile: bundle, encoding: .utf8) else { return false }
        return PEMBundle.contains(certificate, in: text)
    }
}

/// Reads the certificates of a PEM bundle by their armour and base64 alone: a bundle of a few
/// hundred CAs is searched without parsing each one, and a block OpenSSL would refuse does not
/// hide the others.
enum PEMBundle {
    static func contains(_ certificate: X509Certificate, in text: String) -> Bool {
        let begin = "-----BEGIN CERTIFICATE-----"
        let end = "-----END CERTIFICATE-----"
        var rest = text[...]
        while let start = rest.firstRange(of: begin), let stop = rest[start.upperBound...].firstRange(of: end) {
            let body = rest[start.upperBound..<stop.lowerBound]
            if let der = Data(base64Encoded: String(body), options: .ignoreUnknownCharacters), Array(der) == certificate.der {
                return true
            }
            rest = rest[stop.upperBound...]
        }
        return false
    }
}

// MARK: - macOS

/// macOS's System keychain, changed through `security` as its manual (security(1)) describes:
/// `add-trusted-cert -d -r trustRoot -k KEYCHAIN FILE` adds the certificate to the keychain and
/// to the admin trust settings as a root; `remove-trusted-cert -d FILE` takes it out of those
/// settings, and `delete-certificate -Z SHA-256 KEYCHAIN` out of the keychain;
/// `find-certificate -a -Z KEYCHAIN` lists every certificate with its SHA-256 hash, and
/// `verify-cert -c FILE -l -L -q` checks it against the system's anchors and trust settings.
struct SystemKeychain: Equatable {
    /// The `security` tool, full path.
    let security: String
    let keychain = "/Library/Keychains/System.keychain"

    func add(_ file: String) -> [String] {
        [security, "add-trusted-cert", "-d", "-r", "trustRoot", "-k", keychain, file]
    }

    func removeTrust(_ file: String) -> [String] {
        [security, "remove-trusted-cert", "-d", file]
    }

    func delete(_ certificate: X509Certificate) -> [String] {
        [security, "delete-certificate", "-Z", TrustStore.hex(certificate.sha256).uppercased(), keychain]
    }

    var list: [String] { [security, "find-certificate", "-a", "-Z", keychain] }

    func verify(_ file: String) -> [String] {
        [security, "verify-cert", "-c", file, "-l", "-L", "-q"]
    }

    /// Whether `find-certificate -a -Z` printed `certificate`'s SHA-256 hash.
    static func listing(_ output: String, holds certificate: X509Certificate) -> Bool {
        output.uppercased().contains(TrustStore.hex(certificate.sha256).uppercased())
    }
}

// MARK: - Running the tools

/// A system tool run to its end, its standard output and error together.
struct ToolRun {
    let status: Int32
    let output: String

    /// Runs `command` (a full path and its arguments), its input empty, its output and errors
    /// read through one pipe (`posix_spawn`: the daemon's Foundation has no `Process`).
    static func run(_ command: [String]) -> ToolRun {
        var pipe: [Int32] = [-1, -1]
        guard Glibc.pipe(&pipe) == 0 else {
            return ToolRun(status: 127, output: "\(command[0]): no pipe: \(String(cString: strerror(errno)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 2)
        posix_spawn_file_actions_addclose(&actions, pipe[0])
        posix_spawn_file_actions_addclose(&actions, pipe[1])
        var arguments = command.map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, command[0], &actions, nil, &arguments, environ)
        close(pipe[1])
        defer { close(pipe[0]) }
        guard spawned == 0 else {
            return ToolRun(status: 127, output: "\(command[0]): \(String(cString: strerror(spawned)))")
        }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(pipe[0], $0.baseAddress, $0.count) }
            if count > 0 {
                output += buffer[0..<count]
            } else if count == 0 || errno != EINTR {
                break
            }
        }
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        // The exit status, or 128 and the signal's number, as a shell says it.
        let exited = status & 0x7f == 0
        return ToolRun(
            status: exited ? (status >> 8) & 0xff : 128 + (status & 0x7f), output: String(decoding: output, as: UTF8.self))
    }

    /// Whether the tool said it was refused permission.
    var wasDeniedPermission: Bool {
        output.contains("Permission denied") || output.contains("Operation not permitted")
    }
}
