import Foundation

#if canImport(Glibc)
import Glibc
#endif
@testable import FakeAPNs

/// The repository's root, for files in TestCerts/, Fuzz/ and Tests/Clients/.
package let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// The path of a file of `TestCerts/`, the test identities `Scripts/make-test-certs.sh` writes.
package func testCertificatePath(_ name: String) -> String {
    repositoryRoot.appendingPathComponent("TestCerts").appendingPathComponent(name).path
}

/// The seed inputs of a fuzz target (`Fuzz/corpus/<target>/`), by file name; never none.
package func fuzzSeeds(_ target: String) throws -> [(name: String, bytes: [UInt8])] {
    let directory = repositoryRoot.appendingPathComponent("Fuzz/corpus/\(target)")
    let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    guard !names.isEmpty else { throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: directory.path]) }
    return try names.map { ($0, Array(try Data(contentsOf: directory.appendingPathComponent($0)))) }
}

/// Runs a command-line tool to its end, reading both pipes while it runs (so a chatty tool
/// never blocks on a full pipe); its exit status, standard output and standard error.
/// `environment` is added to the test's own. A tool still running after `timeout` is killed,
/// and the call throws saying what it wrote.
package func runTool(
    _ tool: String, _ arguments: [String], environment: [String: String] = [:], timeout: Duration = .seconds(60)
) throws -> (status: Int32, output: String, error: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = output
    process.standardError = error
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let outputData = inBackground("tool-output") { output.fileHandleForReading.readDataToEndOfFile() }
    let errorData = inBackground("tool-error") { error.fileHandleForReading.readDataToEndOfFile() }
    let out: Result<Data, any Error>
    let err: Result<Data, any Error>
    do {
        out = try outputData.pop(timeout: timeout)
        err = try errorData.pop(timeout: timeout)
    } catch {
        // The pipes stay open while the tool runs: kill it, then read what it had written.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let written = (try? errorData.pop(timeout: .seconds(5)).get()).map { String(decoding: $0, as: UTF8.self) } ?? ""
        throw ToolTimeout(description: "\(tool) \(arguments) still ran after \(timeout); it wrote: \(written)")
    }
    process.waitUntilExit()
    return (
        process.terminationStatus, String(decoding: try out.get(), as: UTF8.self),
        String(decoding: try err.get(), as: UTF8.self)
    )
}

/// A tool that ran past its timeout, with what it had written to standard error.
package struct ToolTimeout: Error, CustomStringConvertible {
    package let description: String
}
