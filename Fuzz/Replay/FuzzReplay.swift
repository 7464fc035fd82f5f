// What a fuzz target's program does when it is not built for libFuzzer: it replays inputs.

import Foundation

/// Runs each input named in `arguments` through `target` (a target's `LLVMFuzzerTestOneInput`)
/// and exits: 0 when every input went through, 2 when an argument names nothing readable. A
/// folder's files run in the order of their names. An input that breaks an invariant stops the
/// program there, as under libFuzzer.
package func replayFuzzInputs(
    _ arguments: some Collection<String>, through target: (UnsafeRawPointer?, Int) -> CInt
) -> Never {
    guard !arguments.isEmpty else {
        fail("usage: \(CommandLine.arguments.first ?? "fuzz-target") FILE_OR_FOLDER...")
    }
    var replayed = 0
    for argument in arguments {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: argument, isDirectory: &isFolder) else {
            fail("no file or folder \(argument)")
        }
        var paths = [argument]
        if isFolder.boolValue {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: argument) else {
                fail("cannot list \(argument)")
            }
            paths = names.sorted().map { argument + "/" + $0 }
        }
        for path in paths {
            guard let data = FileManager.default.contents(atPath: path) else { fail("cannot read \(path)") }
            let bytes = [UInt8](data)
            _ = bytes.withUnsafeBytes { target($0.baseAddress, $0.count) }
            replayed += 1
        }
    }
    print("replayed \(replayed) input\(replayed == 1 ? "" : "s")")
    exit(0)
}

private func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("\(message)\n".utf8))
    exit(2)
}
