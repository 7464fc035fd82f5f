import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif
@testable import FakeAPNs

/// The built `fake-apns` executable, run as a child process, with its output lines in a queue.
///
/// `started(…, for: test)` starts a daemon the way every test that needs one running does: every
/// listener on a port the system picks (then `arguments`), the start line awaited and its ports
/// read, the daemon stopped when the test ends. `init(arguments:…)` only launches it, for runs
/// that end by themselves (usage errors, `--help`).
///
/// ```swift
/// let daemon = try DaemonFixture.started(["--auth", "token"], for: self)
/// let client = try ProviderAPIClient(host: "127.0.0.1", port: try daemon.port("http2"))
/// ```
package final class DaemonFixture: @unchecked Sendable {
    package let process = Process()
    /// Standard output, a line at a time (after the start line, when the daemon was started).
    package let lines = Mailbox<String>(noun: "output line")
    /// Standard error, whole.
    private let errorPipe = Pipe()
    private let outputPipe = Pipe()
    /// The start line (`"event":"listening"`) of a daemon `started(…)`.
    package private(set) var startLine: JSONValue = .null
    /// The ports of the start line, by listener name (`gateway`, `feedback`, `http2`, …).
    package private(set) var ports: [String: Int] = [:]

    /// The built executable, in the products directory that holds the test bundle: the daemon's
    /// test target depends on `fake-apns`, so building the tests builds it there.
    package static var executable: URL {
        Bundle.main.bundleURL.appendingPathComponent("fake-apns")
    }

    /// Every listener on a port the system picks, so tests can run in parallel.
    package static let freePorts = [
        "--gateway-port", "0", "--feedback-port", "0", "--http2-port", "0", "--channels-port", "0", "--web-port", "0",
    ]

    /// A test run without the executable it runs, which `swift build --build-tests` builds.
    package struct NotBuilt: Error, CustomStringConvertible {
        package let path: String
        package var description: String { "no executable at \(path); swift build --build-tests builds fake-apns there" }
    }

    /// A daemon that ended, or wrote something else, before its start line.
    package struct DidNotStart: Error, CustomStringConvertible {
        package let description: String
    }

    /// Starts `fake-apns` with every listener on a free port (unless `onFreePorts` is false: the
    /// ports come from `arguments` or `environment`) and then `arguments` (a later option wins),
    /// waits up to `startTimeout` for its start line and reads the ports from it; the daemon is
    /// stopped when `test` ends (SIGTERM, then SIGKILL if it is still running 5 s later).
    /// `environment`, `launcher`, `executable`, `root` and `descriptorLimit` are as for
    /// `init(arguments:…)`.
    package static func started(
        _ arguments: [String] = [], onFreePorts: Bool = true, environment: [String: String] = [:],
        launcher: [String] = [], executable: URL = DaemonFixture.executable, root: String = "",
        descriptorLimit: Int? = nil, startTimeout: Duration = .seconds(10), for test: XCTestCase
    ) throws -> DaemonFixture {
        let daemon = try DaemonFixture(
            arguments: (onFreePorts ? freePorts : []) + arguments, environment: environment, launcher: launcher,
            executable: executable, root: root, descriptorLimit: descriptorLimit)
        test.addTeardownBlock { daemon.stopIfRunning() }
        // A daemon that exits instead (a usage error, a port in use) fails the start at once.
        let deadline = ContinuousClock.now + startTimeout
        var first: String?
        while first == nil && ContinuousClock.now < deadline {
            let running = daemon.process.isRunning
            first = try? daemon.lines.pop(timeout: .milliseconds(100))
            if first == nil && !running { break }
        }
        guard let line = first else {
            let ended = daemon.process.isRunning ? "" : " (it exited with status \(daemon.process.terminationStatus))"
            daemon.stopIfRunning()
            throw DidNotStart(
                description: "no start line within \(startTimeout)\(ended); standard error: \(daemon.standardError)")
        }
        guard let start = try? JSONValue(parsing: line), start["event"]?.stringValue == "listening" else {
            daemon.stopIfRunning()
            throw DidNotStart(description: "the first line is not the start line: \(line)")
        }
        daemon.startLine = start
        daemon.ports = Dictionary(
            (start["listeners"]?.arrayValue ?? []).compactMap { listener in
                listener["name"]?.stringValue.map { ($0, listener["port"]?.intValue ?? 0) }
            }, uniquingKeysWith: { first, _ in first })
        return daemon
    }

    /// Launches `executable` with `arguments`, waiting for nothing; with a `launcher` (a command
    /// and its arguments, such as `setpriv --reuid=… --`), runs the launcher with the
    /// executable's path and arguments after its own; `descriptorLimit` sets the daemon's
    /// RLIMIT_NOFILE (soft and hard). `root` is the folder a launcher that changes root (chroot)
    /// makes `/`, where the executable must be.
    package init(
        arguments: [String], environment: [String: String] = [:], launcher: [String] = [],
        executable: URL = DaemonFixture.executable, root: String = "", descriptorLimit: Int? = nil
    ) throws {
        guard FileManager.default.isExecutableFile(atPath: root + executable.path) else {
            throw NotBuilt(path: root + executable.path)
        }
        var launcher = launcher
        if let descriptorLimit {
            launcher = ["/usr/bin/prlimit", "--nofile=\(descriptorLimit):\(descriptorLimit)", "--"] + launcher
        }
        if let command = launcher.first {
            process.executableURL = URL(fileURLWithPath: command)
            process.arguments = launcher.dropFirst() + [executable.path] + arguments
        } else {
            process.executableURL = executable
            process.arguments = arguments
        }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardOutput = outputPipe
        process.standardError = errorPipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let handle = outputPipe.fileHandleForReading
        let lines = self.lines
        try OSThread(name: "daemon-output") {
            var pending = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    lines.append(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                    pending.removeSubrange(pending.startIndex...newline)
                }
            }
        }.detach()
    }

    /// The port of the listener `name` in the start line; throws when the line names no such listener.
    package func port(_ name: String) throws -> Int {
        guard let port = ports[name] else {
            throw DidNotStart(description: "no \(name) listener in the start line: \(startLine)")
        }
        return port
    }

    /// The next output line parsed as JSON.
    package func nextJSON(timeout: Duration = .seconds(10)) throws -> JSONValue {
        try JSONValue(parsing: lines.pop(timeout: timeout))
    }

    /// The next JSON line of one of these events (`notification`, `rejected`, …), skipping others.
    package func next(_ events: Set<String> = ["notification", "rejected"], timeout: Duration = .seconds(10)) throws
        -> JSONValue
    {
        let line = try lines.pop(timeout: timeout, awaiting: "an event in \(events.sorted())") { line in
            guard let event = try? JSONValue(parsing: line)["event"]?.stringValue else { return false }
            return events.contains(event)
        }
        return try JSONValue(parsing: line)
    }

    /// Sends `signal` and waits up to `timeout` for the process to exit; its status, or nil.
    package func stop(signal: Int32 = SIGTERM, timeout: Duration = .seconds(5)) -> Int32? {
        if process.isRunning { kill(process.processIdentifier, signal) }
        return waitForExit(timeout: timeout)
    }

    /// Waits up to `timeout` for the process to exit; its status, or nil if it is still running.
    package func waitForExit(timeout: Duration) -> Int32? {
        guard eventually(timeout: timeout, { !process.isRunning }) else { return nil }
        return process.terminationStatus
    }

    /// Where each thread of the running daemon is, from gdb's backtraces (frames only), for the
    /// message of a test whose daemon does not stop; nil when it is not running or there is no
    /// gdb to ask.
    package func threadDump() -> String? {
        let gdb = "/usr/bin/gdb"
        guard process.isRunning, FileManager.default.isExecutableFile(atPath: gdb) else { return nil }
        let arguments = ["-p", String(process.processIdentifier), "-batch", "-ex", "thread apply all bt"]
        guard let dump = try? runTool(gdb, arguments, timeout: .seconds(60)) else { return nil }
        return dump.output.split(separator: "\n")
            .filter { $0.hasPrefix("Thread ") || $0.hasPrefix("#") }
            .joined(separator: "\n")
    }

    /// Everything the process wrote to standard error (after it exited: until then this waits),
    /// the same text however often it is asked for.
    package var standardError: String {
        errorText.withLock { text in
            if let text { return text }
            let read = String(decoding: errorPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            text = read
            return read
        }
    }
    /// Standard error once read to its end.
    private let errorText = Locked<String?>(nil)

    /// Stops a daemon still running: SIGTERM, then SIGKILL when it has not exited within 5 s.
    private func stopIfRunning() {
        guard process.isRunning else { return }
        if stop() == nil {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
