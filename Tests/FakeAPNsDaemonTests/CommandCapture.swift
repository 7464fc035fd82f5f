import FakeAPNs
import FakeAPNsTestSupport
import XCTest

// Reads internals on purpose: CommandOutput, to capture what a command prints.
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

/// What a command printed and returned: run in-process through a `CommandCapture`, or as the
/// built `fake-apns`.
struct CommandOutcome {
    let status: Int32
    let lines: [String]
    let errors: [String]

    /// Runs `command` (`SendCommand.run`, `FeedbackCommand.run`...) in-process on `arguments`.
    init(running command: ([String], CommandOutput) -> Int32, _ arguments: [String]) {
        let capture = CommandCapture()
        status = command(arguments, capture.output)
        lines = capture.lines
        errors = capture.errors
    }

    /// Runs the built `fake-apns` with `arguments` as a child process.
    init(executable arguments: [String]) throws {
        let result = try runTool(DaemonFixture.executable.path, arguments)
        let split = { (text: String) in text.split(separator: "\n").map(String.init) }
        status = result.status
        lines = split(result.output)
        errors = split(result.error)
    }

    /// The only output line, as JSON.
    func json(file: StaticString = #filePath, line: UInt = #line) throws -> JSONValue {
        XCTAssertEqual(lines.count, 1, "lines: \(lines), errors: \(errors)", file: file, line: line)
        return try JSONValue(parsing: XCTUnwrap(lines.first, file: file, line: line))
    }
}
