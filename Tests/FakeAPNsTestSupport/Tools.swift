import Foundation
@testable import FakeAPNs

/// The repository's root, for files in TestCerts/.
package let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// Runs a command-line tool to its end; its exit status, standard output and standard error.
package func runTool(_ tool: String, _ arguments: [String], timeout: Duration = .seconds(60)) throws -> (status: Int32, output: String, error: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = arguments
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = output
    process.standardError = error
    process.standardInput = FileHandle.nullDevice
    try process.run()
    // Read both pipes while the tool runs, so a chatty tool never blocks on a full pipe.
    let outputData = Mailbox<Data>(noun: "output")
    let errorData = Mailbox<Data>(noun: "output")
    Thread { outputData.append(output.fileHandleForReading.readDataToEndOfFile()) }.start()
    Thread { errorData.append(error.fileHandleForReading.readDataToEndOfFile()) }.start()
    let out = try outputData.pop(timeout: timeout)
    let err = try errorData.pop(timeout: timeout)
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
}
