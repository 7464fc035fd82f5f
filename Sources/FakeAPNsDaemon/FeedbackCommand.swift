import FakeAPNs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `fake-apns feedback`: reads the pending tuples of a feedback service (FakeAPNs, or any
/// server that speaks Apple's protocol) and prints one JSON line per tuple. Exits 0 when the
/// read succeeded, with or without tuples; 1 when the connection failed; 64 on usage errors.
enum FeedbackCommand {
    /// The command line, read.
    struct Settings: ClientSettings {
        var connection = ConnectionSettings()
        var showHelp = false
    }

    static func run(_ arguments: [String], output: CommandOutput = .standard) -> Int32 {
        var settings = Settings()
        let trusted: String?
        let identity: TLSIdentity?
        do {
            _ = try ClientArguments.parse(arguments, into: &settings, table: table, command: "feedback")
            if settings.showHelp {
                output.line(help)
                return 0
            }
            try settings.connection.check()
            trusted = try settings.connection.trustedCAsPEM()
            identity = try settings.connection.identity()
        } catch {
            return output.usageError("\(error)")
        }
        let tuples: [FeedbackTuple]
        let started = ContinuousClock.now
        do {
            tuples = try FeedbackClient.read(
                host: settings.connection.host, port: settings.connection.port ?? 2196, trustedCAsPEM: trusted,
                identity: identity, timeout: settings.connection.timeoutDuration)
        } catch {
            // A read that gives up on its timeout surfaces as an OpenSSL "want read" error; the
            // clock tells it from a real failure.
            if ContinuousClock.now - started >= settings.connection.timeoutDuration - .milliseconds(50) {
                return output.failure(
                    "the feedback service did not close the connection within \(settings.connection.timeoutPhrase)"
                        + " (\(error))")
            }
            return output.failure("\(error)")
        }
        for tuple in tuples {
            let line: JSONValue = [
                "token": .string(tuple.deviceToken.hex), "timestamp": .int(Int(tuple.timestamp)),
                "time": .string(Timestamp.rfc3339(tuple.date)),
            ]
            output.line(line.serialized())
        }
        return 0
    }

    private static var table: [ClientOption<Settings>] {
        ConnectionSettings.options(defaultPort: "2196")
    }

    static var help: String {
        ClientArguments.help(
            usage: "fake-apns feedback [options]",
            about: """
                Reads the feedback service's pending tuples (devices that no longer take notifications
                for the app) and prints one JSON line per tuple. The service hands each tuple out once.
                """,
            table: table,
            footer: """
                Output, one line per tuple (<token>: the device token in hex):
                  {"token":"<token>","timestamp":1700000000,"time":"2023-11-14T22:13:20.000000Z"}

                Example, against fake-apns started with no options: queue a tuple through its control
                API, then read it.
                  curl -d '{"token":"fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2"}' http://127.0.0.1:8195/api/v1/feedback
                  fake-apns feedback

                Exits 0 when the read succeeded (with or without tuples), 1 when the connection fails
                (message on standard error), 64 on usage errors.
                """)
    }
}
