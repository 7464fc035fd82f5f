#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The `fake-apns` command: `serve` (the default), `send`, `channels`, `feedback`, `token`, `ca`, `trust`,
/// `healthcheck`.
public enum FakeAPNsCommand {
    /// Runs the command line and returns the exit status.
    public static func run(_ arguments: [String], environment: [String: String]) -> Int32 {
        switch arguments.first {
        case "send":
            return SendCommand.run(Array(arguments.dropFirst()))
        case "channels":
            return ChannelsCommand.run(Array(arguments.dropFirst()))
        case "feedback":
            return FeedbackCommand.run(Array(arguments.dropFirst()))
        case "token":
            return TokenCommand.run(Array(arguments.dropFirst()))
        case "ca":
            return CACommand.run(Array(arguments.dropFirst()))
        case "trust":
            return TrustCommand.run(Array(arguments.dropFirst()))
        case "healthcheck":
            return HealthcheckCommand.run(Array(arguments.dropFirst()), environment: environment)
        default:
            return ServeCommand.run(arguments, environment: environment)
        }
    }

    /// Prints `fake-apns: message` on standard error.
    static func printError(_ message: String) {
        OutputWriter.writeStandardError("fake-apns: \(message)\n")
    }

    /// Prints a usage error and returns 64 (EX_USAGE).
    static func usageError(_ message: String) -> Int32 {
        printError(message)
        return 64
    }
}
