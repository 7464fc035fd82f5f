import FakeAPNs

@testable import FakeAPNsDaemon

/// Collects what a command (`send`, `token`, `ca`...) prints, from whichever thread prints it.
final class CommandCapture: Sendable {
    private let printed = Locked((lines: [String](), errors: [String]()))

    /// The output to run the command with.
    var output: CommandOutput {
        CommandOutput(
            line: { line in self.printed.withLock { $0.lines.append(line) } },
            error: { message in self.printed.withLock { $0.errors.append(message) } })
    }

    /// The lines printed so far, in order.
    var lines: [String] { printed.withLock { $0.lines } }
    /// The error messages printed so far, in order.
    var errors: [String] { printed.withLock { $0.errors } }
}
