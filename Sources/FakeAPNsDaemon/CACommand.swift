import FakeAPNs

/// `fake-apns ca`: prints the built-in test CA in PEM, which the built-in server identity and
/// test client certificates chain to, for clients to trust: `curl --cacert <(fake-apns ca)`.
enum CACommand {
    /// The command line, read.
    struct Settings: CommandSettings {
        var showHelp = false
    }

    static func run(_ arguments: [String], output: CommandOutput = .standard) -> Int32 {
        var settings = Settings()
        do {
            _ = try ClientArguments.parse(arguments, into: &settings, table: [], command: "ca")
        } catch {
            return output.usageError("\(error)")
        }
        if settings.showHelp {
            output.line(help)
            return 0
        }
        var pem = TestCertificates.caPEM
        while pem.hasSuffix("\n") { pem.removeLast() }
        output.line(pem)
        return 0
    }

    static var help: String {
        ClientArguments.help(
            usage: "fake-apns ca",
            about: """
                Prints the built-in test CA, PEM: the server's default identity and the test client
                certificates chain to it, so a client that verifies the server trusts it (the same text
                as TestCertificates.caPEM in Swift, and Scripts/install's PREFIX/share/fake-apns/ca.pem).
                For tests only: its private key is public.
                """,
            table: [ClientOption<Settings>](),
            footer: """
                Example, against fake-apns started with no options:
                  curl --http2 --cacert <(fake-apns ca) -H 'apns-topic: com.example.app' -d '{"aps":{"alert":"Hi"}}' https://127.0.0.1:2197/3/device/fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2
                """)
    }
}
