import Foundation
@testable import FakeAPNs

/// A Python program run with Debian's `/usr/bin/python3` (where python3-h2 is installed) that
/// serves on a free port and prints that port as its first line; stopped when released.
package final class PythonPeer {
    private let process = Process()
    /// The port it printed.
    package let port: Int

    /// Starts `/usr/bin/python3 arguments` and waits for its port; `name` says which peer
    /// failed in the error.
    package init(_ arguments: [String], name: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw ProviderClientError(message: "\(name) did not start") }
            line.append(chunk)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        else { throw ProviderClientError(message: "\(name) printed no port") }
        self.port = port
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }
}
