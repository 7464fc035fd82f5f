import FakeAPNsTestSupport
import Foundation
@testable import FakeAPNs

#if canImport(Glibc)
import Glibc
#endif

/// The built `fake-apns` executable, run as a child process, with its output lines in a queue.
final class DaemonProcess: @unchecked Sendable {
    let process = Process()
    /// Standard output, a line at a time.
    let lines = Mailbox<String>(noun: "output line")
    /// Standard error, whole.
    private let errorPipe = Pipe()
    private let outputPipe = Pipe()

    /// The built executable, in the products directory that holds the test bundle: this test
    /// target depends on `fake-apns`, so building the tests builds it there.
    static var executable: URL {
        Bundle.main.bundleURL.appendingPathComponent("fake-apns")
    }

    /// A test run without the executable it runs, which `swift build --build-tests` builds.
    struct NotBuilt: Error, CustomStringConvertible {
        let path: String
        var description: String { "no executable at \(path); swift build --build-tests builds fake-apns there" }
    }

    /// Runs `executable` with `arguments`; with a `launcher` (a command and its arguments, such
    /// as `setpriv --reuid=… --`), runs the launcher with the executable's path and arguments
    /// after its own; `descriptorLimit` sets the daemon's RLIMIT_NOFILE (soft and hard).
    /// `root` is the folder a launcher that changes root (chroot) makes `/`, where the
    /// executable must be.
    init(
        arguments: [String], environment: [String: String] = [:], launcher: [String] = [],
        executable: URL = DaemonProcess.executable, root: String = "", descriptorLimit: Int? = nil
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

    /// Every listener on a port the system picks, so tests can run in parallel.
    static let freePorts = ["--gateway-port", "0", "--feedback-port", "0", "--http2-port", "0", "--channels-port", "0", "--web-port", "0",
    ]

    /// The ports of the start line (the next output line), by listener name.
    func listeningPorts(timeout: Duration = .seconds(10)) throws -> [String: Int] {
        let start = try nextJSON(timeout: timeout)
        return Dictionary(
            uniqueKeysWithValues: (start["listeners"]?.arrayValue ?? []).compactMap { listener in
                listener["name"]?.stringValue.map { ($0, listener["port"]?.intValue ?? 0) }
            })
    }

    /// The next output line parsed as JSON.
    func nextJSON(timeout: Duration = .seconds(10)) throws -> JSONValue {
        try JSONValue(parsing: lines.pop(timeout: timeout))
    }

    /// The next JSON line of one of these events (`notification`, `rejected`, …), skipping others.
    func next(_ events: Set<String> = ["notification", "rejected"], timeout: Duration = .seconds(10)) throws -> JSONValue {
        let line = try lines.pop(timeout: timeout, awaiting: "an event in \(events.sorted())") { line in
            guard let event = try? JSONValue(parsing: line)["event"]?.stringValue else { return false }
            return events.contains(event)
        }
        return try JSONValue(parsing: line)
    }

    /// Sends `signal` and waits up to `timeout` for the process to exit; its status, or nil.
    func stop(signal: Int32 = SIGTERM, timeout: Duration = .seconds(5)) -> Int32? {
        kill(process.processIdentifier, signal)
        return waitForExit(timeout: timeout)
    }

    /// Waits up to `timeout` for the process to exit; its status, or nil if it is still running.
    func waitForExit(timeout: Duration) -> Int32? {
        guard eventually(timeout: timeout, { !process.isRunning }) else { return nil }
        return process.terminationStatus
    }

    /// Everything the process wrote to standard error (after it exited).
    var standardError: String {
        String(decoding: errorPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// One control API request by curl, a client independent of this code: curl's exit status, the
/// HTTP status (0 when no answer came), the body, and what curl wrote to standard error.
/// `maxTime` bounds curl's wait for the answer.
func curl(
    port: Int, _ method: String, _ path: String, json body: String? = nil, maxTime: Int? = nil
) throws -> (exit: Int32, status: Int, body: String, error: String) {
    var arguments = ["--silent", "--show-error", "--request", method, "--write-out", "\n%{http_code}"]
    if let body { arguments += ["--header", "content-type: application/json", "--data", body] }
    if let maxTime { arguments += ["--max-time", String(maxTime)] }
    let result = try runTool("/usr/bin/curl", arguments + ["http://127.0.0.1:\(port)\(path)"])
    let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false)
    return (result.status, Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"), result.error)
}
