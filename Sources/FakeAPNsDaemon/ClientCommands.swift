import FakeAPNs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// What the client commands (`fake-apns send`, `feedback`, `token`, `ca`) share: where they
// print, how they read their options, and the connection options (host, port, certificates,
// timeout).

// MARK: - Output

/// Where a client command prints: result lines on standard output, messages on standard
/// error. Tests pass their own to capture both.
struct CommandOutput: Sendable {
    /// Writes one result line (a JSON object).
    var line: @Sendable (String) -> Void
    /// Writes one message for people (`fake-apns: …`).
    var error: @Sendable (String) -> Void

    /// Standard output and standard error.
    static let standard = CommandOutput(
        line: { OutputWriter.writeStandardOutput($0 + "\n") },
        error: { FakeAPNsCommand.printError($0) })

    /// Prints a usage error and returns 64 (EX_USAGE).
    func usageError(_ message: String) -> Int32 {
        error(message)
        return 64
    }

    /// Prints a failure (connection, TLS, refusal detail) and returns 1.
    func failure(_ message: String) -> Int32 {
        error(message)
        return 1
    }
}

// MARK: - Options

/// One option of a client command: its flag, its value's name (nil for a switch), its help
/// line, and what it sets.
struct ClientOption<Settings> {
    let flag: String
    let argument: String?
    let help: String
    let apply: (inout Settings, String) throws -> Void

    /// A switch: an option without a value.
    static func `switch`(_ flag: String, help: String, apply: @escaping (inout Settings) -> Void) -> ClientOption {
        ClientOption(flag: flag, argument: nil, help: help) { settings, _ in apply(&settings) }
    }

    /// An option whose value is a whole number in `range`; `what` names the range in the error.
    static func integer(
        _ flag: String, argument: String, help: String, in range: ClosedRange<Int>, what: String,
        apply: @escaping (inout Settings, Int) -> Void
    ) -> ClientOption {
        ClientOption(flag: flag, argument: argument, help: help) { settings, text in
            apply(&settings, try ClientArguments.integer(flag, text, in: range, what: what))
        }
    }
}

/// A command's settings: at least whether `--help` was given.
protocol CommandSettings {
    var showHelp: Bool { get set }
}

/// Settings that carry the connection options.
protocol ClientSettings: CommandSettings {
    var connection: ConnectionSettings { get set }
}

/// Reads a client command's arguments against its option table.
enum ClientArguments {
    /// Applies `arguments` (`--flag value`, `--flag=value`, switches) to `settings`; the flags
    /// given, in order, are returned for the checks between options.
    static func parse<Settings: CommandSettings>(
        _ arguments: [String], into settings: inout Settings, table: [ClientOption<Settings>], command: String
    ) throws -> [String] {
        var given: [String] = []
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            let (name, inline) = Options.splitInlineValue(argument)
            if name == "--help" || name == "-h" {
                settings.showHelp = true
                continue
            }
            guard let option = table.first(where: { $0.flag == name }) else {
                if name.hasPrefix("-") {
                    throw Options.UsageError(description: "unknown option '\(name)' (see fake-apns \(command) --help)")
                }
                throw Options.UsageError(
                    description: "unexpected argument '\(argument)' (see fake-apns \(command) --help)")
            }
            let value: String
            if option.argument == nil {
                guard inline == nil else {
                    throw Options.UsageError(description: "\(name) is a switch and takes no value")
                }
                value = ""
            } else if let inline {
                value = inline
            } else if let next = rest.popFirst() {
                value = next
            } else {
                throw Options.UsageError(description: "\(name) needs a value (\(option.argument ?? ""))")
            }
            try option.apply(&settings, value)
            given.append(name)
        }
        return given
    }

    /// Help text: the usage line, a description, every option with its help.
    static func help<Settings>(
        usage: String, about: String, table: [ClientOption<Settings>], footer: String
    ) -> String {
        let rows = table.map { ($0.flag + ($0.argument.map { " " + $0 } ?? ""), $0.help) }
            + [("--help", "Print this help and exit.")]
        let indent = String(repeating: " ", count: 32)
        var text = "Usage: \(usage)\n\n\(about)\n\nOptions:\n"
        for (left, help) in rows {
            var lines = wrap(help, width: 100 - indent.count)
            let first = lines.removeFirst()
            if left.count <= indent.count - 4 {
                text += "  " + left.padded(to: indent.count - 2) + first + "\n"
            } else {
                text += "  " + left + "\n" + indent + first + "\n"
            }
            text += lines.map { indent + $0 + "\n" }.joined()
        }
        return text + "\n" + footer
    }

    /// Splits `text` into lines of at most `width` characters, at spaces.
    private static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty && line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        return lines + [line]
    }

    // MARK: Values

    static func integer(_ name: String, _ text: String, in range: ClosedRange<Int>, what: String) throws -> Int {
        guard let number = Int(text), range.contains(number) else {
            throw Options.UsageError(description: "\(name) takes \(what), not '\(text)'")
        }
        return number
    }

    static func seconds(_ name: String, _ text: String) throws -> Double {
        guard let value = Double(text), value > 0, value.isFinite else {
            throw Options.UsageError(description: "\(name) takes a number of seconds above 0, not '\(text)'")
        }
        return value
    }

    /// The text of a file an option names; for a client, a file that cannot be read is a
    /// usage error (its exit status 1 says the server refused or could not be reached).
    static func readFile(_ name: String, _ path: String) throws -> String {
        do {
            return try Options.readFile(name, path)
        } catch {
            throw Options.UsageError(description: "\(error)")
        }
    }
}

// MARK: - Connection

/// Where a client connects and how it proves and checks identities.
struct ConnectionSettings {
    var host = "127.0.0.1"
    var port: Int?
    var certificateFile: String?
    var keyFile: String?
    var keyPassphrase: String?
    var caFile: String?
    var insecure = false
    var timeout = 10.0

    /// The options every client command takes.
    static func options<Settings: ClientSettings>(defaultPort: String) -> [ClientOption<Settings>] {
        [
            ClientOption(flag: "--host", argument: "HOST", help: "Server name or address (default 127.0.0.1).") {
                $0.connection.host = $1
            },
            .integer(
                "--port", argument: "PORT", help: "Server port (default \(defaultPort)).",
                in: 1...65535, what: "a port from 1 to 65535"
            ) { $0.connection.port = $1 },
            ClientOption(flag: "--cert", argument: "FILE", help: "Client (provider) certificate, PEM; with --key.") {
                $0.connection.certificateFile = $1
            },
            ClientOption(flag: "--key", argument: "FILE", help: "Private key of --cert, PEM.") {
                $0.connection.keyFile = $1
            },
            ClientOption(flag: "--key-passphrase", argument: "TEXT", help: "Passphrase of an encrypted --key.") {
                $0.connection.keyPassphrase = $1
            },
            ClientOption(
                flag: "--ca", argument: "FILE",
                help: "CA certificates, PEM, the server must chain to (default: the built-in test CA, which"
                    + " fake-apns ca prints; for Apple's servers, the system bundle such as"
                    + " /etc/ssl/certs/ca-certificates.crt)."
            ) {
                $0.connection.caFile = $1
            },
            .switch("--insecure", help: "Do not verify the server's certificate.") { $0.connection.insecure = true },
            ClientOption(
                flag: "--timeout", argument: "SECONDS",
                help: "How long the handshake and the answer may take (default 10)."
            ) {
                $0.connection.timeout = try ClientArguments.seconds("--timeout", $1)
            },
        ]
    }

    /// Checks between the connection options.
    func check() throws {
        if (certificateFile == nil) != (keyFile == nil) {
            throw Options.UsageError(description: certificateFile == nil ? "--key needs --cert" : "--cert needs --key")
        }
        if keyPassphrase != nil && keyFile == nil {
            throw Options.UsageError(description: "--key-passphrase needs --cert and --key")
        }
        if insecure && caFile != nil {
            throw Options.UsageError(description: "--insecure and --ca contradict each other: pick one")
        }
    }

    /// The CAs to trust: `--ca`'s, none with `--insecure`, the test CA otherwise.
    func trustedCAsPEM() throws -> String? {
        if insecure { return nil }
        return try caFile.map { try ClientArguments.readFile("--ca", $0) } ?? TestCertificates.caPEM
    }

    /// The client certificate of `--cert` and `--key`, when given.
    func identity() throws -> TLSIdentity? {
        guard let certificateFile, let keyFile else { return nil }
        return TLSIdentity(
            certificateChainPEM: try ClientArguments.readFile("--cert", certificateFile),
            privateKeyPEM: try ClientArguments.readFile("--key", keyFile),
            passphrase: keyPassphrase)
    }

    /// Connects to the HTTP/2 provider API on `port` as these settings say, sends one request
    /// and closes.
    func send(_ request: ProviderAPIClient.Request, port: Int) throws -> ProviderAPIClient.Response {
        let client = try ProviderAPIClient(
            host: host, port: port, trustedCAsPEM: try trustedCAsPEM(), identity: try identity(),
            timeout: timeoutDuration)
        defer { client.close() }
        return try client.send(request)
    }

    /// The timeout as a duration.
    var timeoutDuration: Duration { .milliseconds(Int64((timeout * 1000).rounded())) }

    /// The timeout as people say it: "1 second", "10 seconds", "0.5 seconds".
    var timeoutPhrase: String { timeoutDuration.secondsPhrase }
}

// MARK: - Token authentication

/// Settings of a command that can sign a provider token (`--jwt-key`).
protocol TokenAuthSettings: ClientSettings {
    var jwtKey: JWTKey? { get set }
}

/// A `--jwt-key KEYID:TEAMID:FILE`: the .p8 key a client command signs its provider token with.
struct JWTKey {
    let keyID: String
    let teamID: String
    let path: String

    /// The `--jwt-key` option; `help` says when it applies.
    static func option<Settings: TokenAuthSettings>(help: String) -> ClientOption<Settings> {
        ClientOption(flag: "--jwt-key", argument: "KEYID:TEAMID:FILE", help: help) {
            let parts = $1.split(separator: ":", maxSplits: 2).map(String.init)
            guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty }) else {
                throw Options.UsageError(description: "--jwt-key takes KEYID:TEAMID:FILE, not '\($1)'")
            }
            $0.jwtKey = JWTKey(keyID: parts[0], teamID: parts[1], path: parts[2])
        }
    }

    /// A provider token signed with the file's key.
    func sign() throws -> String {
        let pem = try ClientArguments.readFile("--jwt-key", path)
        let signed = Result { () throws(JWTKeyError) in
            try ProviderTokenSigner.sign(keyID: keyID, teamID: teamID, privateKeyPEM: pem)
        }
        switch signed {
        case .success(let token): return token
        case .failure(let error): throw Options.UsageError(description: "--jwt-key \(path): \(error)")
        }
    }
}
