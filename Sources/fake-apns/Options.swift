import FakeAPNs

/// The daemon's command line, parsed by hand (no outside packages here): every option, its
/// default, and the help text that lists them.
struct Options {
    var host = "127.0.0.1"
    var gatewayPort = 2195
    var feedbackPort = 2196
    var http2Port = 2197
    var authentication: String?
    var jwtKeys: [(keyID: String, teamID: String, path: String)] = []
    var environment = APNsEnvironment.sandbox
    var devicesFile: String?
    var strict = false
    var certificateFile: String?
    var keyFile: String?
    var keyPassphrase: String?
    var clientCertificates = ClientCertificatePolicy.Mode.off
    var trustedCAFile: String?
    var maximumPayloadSize = 2048
    var showHelp = false
    var showVersion = false

    static let version = "0.1.0"

    static let help = """
        fake-apns: a fake Apple Push Notification service for tests.

        Listens like APNs (binary gateway, feedback service, HTTP/2 provider API), accepts what a
        provider sends, and prints one JSON object per accepted or refused notification on
        standard output.
        The first line names every listener with its bound port, so a script can start it with
        port 0 and read where it listens.

        Usage: fake-apns [serve] [options]

        Options:
          --host HOST                  Address to bind (default 127.0.0.1; ::1 for IPv6,
                                       0.0.0.0 for every interface).
          --gateway-port PORT          Binary gateway port (default 2195; 0 picks a free one).
          --feedback-port PORT         Feedback service port (default 2196; 0 picks a free one).
          --http2-port PORT            HTTP/2 provider API port (default 2197; 0 picks a free one).
          --auth MODE                  HTTP/2 authentication: none (default), certificate or
                                       token. --jwt-key alone implies token.
          --jwt-key KEYID:TEAMID:FILE  A key trusted for token authentication: its 10-character
                                       key ID, team ID and .p8 (or public key PEM) file.
                                       Repeatable. With --auth token and no --jwt-key, the
                                       built-in test key (ABC123DEFG:DEF123GHIJ) is trusted.
          --environment ENV            sandbox (default) or production: the environment played;
                                       tokens registered for the other one are refused.
          --devices FILE               Pre-registers devices, one a line: hex token, then
                                       optionally a topic and sandbox or production; blank
                                       lines and lines starting with # are skipped.
          --strict                     Refuse tokens that are not registered (status 8).
          --cert FILE                  Server certificate chain, PEM (default: the built-in
                                       test identity, TestCerts/server.pem; clients trust
                                       TestCerts/ca.pem).
          --key FILE                   Server private key, PEM (with --cert).
          --key-passphrase TEXT        Passphrase of an encrypted --key.
          --client-certificates MODE   off (default), optional or required: ask clients for a
                                       provider certificate.
          --trusted-ca FILE            CA certificates, PEM, that client certificates must chain
                                       to (default: the built-in test CA, TestCerts/ca.pem).
          --max-payload-size BYTES     Largest payload accepted (default 2048, as Apple's).
          --version                    Print the version and exit.
          --help                       Print this help and exit.

        Stops on SIGINT or SIGTERM, exiting 0. Usage errors exit 64.
        """

    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    /// Reads options and their values one at a time.
    private struct Reader {
        var rest: ArraySlice<String>
        var name = ""
        var inlineValue: String?

        /// The next option's name, with an inline `--name=value` split off.
        mutating func next() -> String? {
            guard let argument = rest.popFirst() else { return nil }
            name = argument
            inlineValue = nil
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            return name
        }

        mutating func value() throws -> String {
            if let inlineValue { return inlineValue }
            guard let next = rest.popFirst() else { throw UsageError(description: "\(name) needs a value") }
            return next
        }

        mutating func port() throws -> Int {
            let text = try value()
            guard let number = Int(text), (0...65535).contains(number) else {
                throw UsageError(description: "\(name) takes a port from 0 to 65535, not '\(text)'")
            }
            return number
        }
    }

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var reader = Reader(rest: arguments[...])
        if reader.rest.first == "serve" { reader.rest = reader.rest.dropFirst() }
        while let name = reader.next() {
            switch name {
            case "--help", "-h": options.showHelp = true
            case "--version": options.showVersion = true
            case "--host": options.host = try reader.value()
            case "--gateway-port": options.gatewayPort = try reader.port()
            case "--feedback-port": options.feedbackPort = try reader.port()
            case "--http2-port": options.http2Port = try reader.port()
            case "--auth":
                let text = try reader.value()
                guard ["none", "certificate", "token"].contains(text) else {
                    throw UsageError(description: "--auth takes none, certificate or token, not '\(text)'")
                }
                options.authentication = text
            case "--jwt-key":
                let text = try reader.value()
                let parts = text.split(separator: ":", maxSplits: 2).map(String.init)
                guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty, !parts[2].isEmpty else {
                    throw UsageError(description: "--jwt-key takes KEYID:TEAMID:FILE, not '\(text)'")
                }
                options.jwtKeys.append((parts[0], parts[1], parts[2]))
            case "--devices": options.devicesFile = try reader.value()
            case "--strict": options.strict = true
            case "--environment":
                let text = try reader.value()
                guard let environment = APNsEnvironment(rawValue: text) else {
                    throw UsageError(description: "--environment takes sandbox or production, not '\(text)'")
                }
                options.environment = environment
            case "--cert": options.certificateFile = try reader.value()
            case "--key": options.keyFile = try reader.value()
            case "--key-passphrase": options.keyPassphrase = try reader.value()
            case "--trusted-ca": options.trustedCAFile = try reader.value()
            case "--client-certificates":
                let text = try reader.value()
                guard let mode = ClientCertificatePolicy.Mode(rawValue: text) else {
                    throw UsageError(description: "--client-certificates takes off, optional or required, not '\(text)'")
                }
                options.clientCertificates = mode
            case "--max-payload-size":
                let text = try reader.value()
                guard let size = Int(text), (1...65_535).contains(size) else {
                    throw UsageError(description: "--max-payload-size takes a byte count from 1 to 65535, not '\(text)'")
                }
                options.maximumPayloadSize = size
            default:
                throw UsageError(description: "unknown option '\(name)' (see fake-apns --help)")
            }
        }
        if !options.jwtKeys.isEmpty && options.authentication != nil && options.authentication != "token" {
            throw UsageError(description: "--jwt-key needs --auth token (or no --auth)")
        }
        if (options.certificateFile == nil) != (options.keyFile == nil) {
            throw UsageError(description: options.certificateFile == nil ? "--key needs --cert" : "--cert needs --key")
        }
        return options
    }
}
