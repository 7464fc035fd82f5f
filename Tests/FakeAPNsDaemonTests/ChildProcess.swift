import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// A command run to its end as a child process: the built `fake-apns` (beside the test bundle,
/// where `swift build` puts every product), a script, or a shell line.
struct ChildProcess {
    /// The built `fake-apns`.
    static var fakeAPNs: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("fake-apns")
    }

    /// The repository, for its scripts and test certificates.
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    let status: Int32
    let output: String
    let errors: String

    /// Runs `executable` with `arguments` (the environment gets `environment` on top) and
    /// waits up to `timeout` for it to exit; one still running then is killed and throws.
    @discardableResult
    static func run(
        _ arguments: [String], executable: URL = fakeAPNs, environment: [String: String] = [:],
        timeout: TimeInterval = 60
    ) throws -> ChildProcess {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        // Both pipes are read while the child runs, so a full one cannot hold it up.
        let reads = DispatchGroup()
        let printed = Collected()
        let complained = Collected()
        DispatchQueue.global().async(group: reads) { printed.data = output.fileHandleForReading.readDataToEndOfFile() }
        DispatchQueue.global().async(group: reads) { complained.data = errors.fileHandleForReading.readDataToEndOfFile() }
        guard exited.wait(timeout: .now() + timeout) == .success else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            reads.wait()
            throw Timeout(
                description: "\(executable.lastPathComponent) \(arguments) still ran after \(timeout) s; "
                    + "it wrote: \(String(decoding: complained.data, as: UTF8.self))")
        }
        reads.wait()
        return ChildProcess(
            status: process.terminationStatus, output: String(decoding: printed.data, as: UTF8.self),
            errors: String(decoding: complained.data, as: UTF8.self))
    }

    /// Runs `line` with bash, the built `fake-apns` first on the PATH.
    static func shell(_ line: String, timeout: TimeInterval = 60) throws -> ChildProcess {
        let path = fakeAPNs.deletingLastPathComponent().path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "")
        return try run(["-c", line], executable: URL(fileURLWithPath: "/bin/bash"), environment: ["PATH": path], timeout: timeout)
    }

    /// What one reader thread read; the others look only after it finished (the group's wait).
    private final class Collected: @unchecked Sendable {
        var data = Data()
    }

    struct Timeout: Error, CustomStringConvertible {
        let description: String
    }
}
