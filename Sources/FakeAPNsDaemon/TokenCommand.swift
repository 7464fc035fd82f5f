import FakeAPNs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `fake-apns token`: prints a provider token (an ES256 JWT, as Apple specifies it) on one
/// line, for `authorization: bearer <token>`. Signed by default with the built-in test key,
/// under the key ID and team ID `fake-apns --auth token` trusts it with. Exits 0 with a token,
/// 64 on usage errors (a key file that cannot be used among them).
enum TokenCommand {
    /// The command line, read.
    struct Settings: CommandSettings {
        var showHelp = false
        var keyFile: String?
        var keyID: String?
        var teamID: String?
        var issuedAt: Date?
    }

    static func run(_ arguments: [String], output: CommandOutput = .standard) -> Int32 {
        var settings = Settings()
        let token: String
        do {
            _ = try ClientArguments.parse(arguments, into: &settings, table: table, command: "token")
            if settings.showHelp {
                output.line(help)
                return 0
            }
            token = try sign(settings)
        } catch {
            return output.usageError("\(error)")
        }
        output.line(token)
        return 0
    }

    /// The token the settings ask for.
    private static func sign(_ settings: Settings) throws -> String {
        var kid = settings.keyID ?? TestCertificates.jwtKeyID
        var teamID = settings.teamID ?? TestCertificates.jwtTeamID
        var pem = TestCertificates.jwtSigningKeyPEM
        if let file = settings.keyFile {
            pem = try ClientArguments.readFile("--key", file)
            // Apple names the file it hands out AuthKey_<key ID>.p8; another key needs its own IDs.
            guard let id = settings.keyID ?? keyID(inFileName: file) else {
                throw Options.UsageError(
                    description: "--key \(file) needs --key-id: the file is not named AuthKey_<key ID>.p8")
            }
            guard let team = settings.teamID else {
                throw Options.UsageError(description: "--key needs --team-id: the team the key belongs to")
            }
            kid = id
            teamID = team
        }
        let issuedAt = settings.issuedAt ?? Date()
        let signed = Result { () throws(JWTKeyError) in
            try ProviderTokenSigner.sign(keyID: kid, teamID: teamID, issuedAt: issuedAt, privateKeyPEM: pem)
        }
        switch signed {
        case .success(let token): return token
        case .failure(let error): throw Options.UsageError(description: "--key \(settings.keyFile ?? ""): \(error.message)")
        }
    }

    /// `ABC123DEFG` of `…/AuthKey_ABC123DEFG.p8`.
    private static func keyID(inFileName path: String) -> String? {
        let name = URL(fileURLWithPath: path).lastPathComponent
        guard name.hasPrefix("AuthKey_"), name.hasSuffix(".p8") else { return nil }
        let id = name.dropFirst("AuthKey_".count).dropLast(".p8".count)
        return id.isEmpty ? nil : String(id)
    }

    private static var table: [ClientOption<Settings>] {
        [
            ClientOption(
                flag: "--key", argument: "FILE",
                help: "The signing key: an APNs auth key (.p8, PEM); with --team-id, and --key-id unless the file"
                    + " is named AuthKey_<key ID>.p8 (default: the built-in test key)."
            ) { $0.keyFile = $1 },
            ClientOption(
                flag: "--key-id", argument: "ID",
                help: "The key ID, the header's kid (default \(TestCertificates.jwtKeyID), the test key's)."
            ) { $0.keyID = $1 },
            ClientOption(
                flag: "--team-id", argument: "ID",
                help: "The team ID, the claims' iss (default \(TestCertificates.jwtTeamID), the test key's)."
            ) { $0.teamID = $1 },
            .integer(
                "--issued-at", argument: "SECONDS",
                help: "The claims' iat, in UNIX seconds (default: now). APNs refuses a token issued over an hour"
                    + " ago, or over a minute ahead.",
                in: 0...Int(UInt32.max), what: "UNIX seconds from 0 to 4294967295"
            ) { $0.issuedAt = Date(timeIntervalSince1970: TimeInterval($1)) },
        ]
    }

    static var help: String {
        ClientArguments.help(
            usage: "fake-apns token [options]",
            about: """
                Prints a provider token on one line: a JWT signed with ES256, header {"alg":"ES256","kid":…},
                claims {"iss":…,"iat":…}, as APNs takes it in authorization: bearer <token>. By default it
                is signed with the built-in test key (key ID \(TestCertificates.jwtKeyID), team ID \(TestCertificates.jwtTeamID)), which
                fake-apns --auth token trusts.
                """,
            table: table,
            footer: """
                Example, against fake-apns --auth token:
                  curl --http2 --cacert <(fake-apns ca) -H "authorization: bearer $(fake-apns token)" -H 'apns-topic: com.example.app' -d '{"aps":{"alert":"Hi"}}' https://127.0.0.1:2197/3/device/fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2

                Exits 0 with a token, 64 on usage errors (a key file that cannot be used among them).
                """)
    }
}
