import FakeAPNsTestSupport
import Foundation

/// A command run to its end as a child process: the built `fake-apns`, a script, or a shell line.
struct ChildProcess {
    /// The built `fake-apns`, where `swift build` puts every product.
    static var fakeAPNs: URL { DaemonFixture.executable }

    /// The repository, for its scripts and test certificates.
    static var repository: URL { repositoryRoot }

    let status: Int32
    let output: String
    let errors: String

    /// Runs `executable` with `arguments` (the environment gets `environment` on top) and
    /// waits up to `timeout` for it to exit; one still running then is killed and throws.
    @discardableResult
    static func run(
        _ arguments: [String], executable: URL = fakeAPNs, environment: [String: String] = [:],
        timeout: Duration = .seconds(60)
    ) throws -> ChildProcess {
        let result = try runTool(executable.path, arguments, environment: environment, timeout: timeout)
        return ChildProcess(status: result.status, output: result.output, errors: result.error)
    }

    /// Runs `line` with bash, the built `fake-apns` first on the PATH.
    static func shell(_ line: String, timeout: Duration = .seconds(60)) throws -> ChildProcess {
        let path = fakeAPNs.deletingLastPathComponent().path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "")
        return try run(["-c", line], executable: URL(fileURLWithPath: "/bin/bash"), environment: ["PATH": path], timeout: timeout)
    }
}
