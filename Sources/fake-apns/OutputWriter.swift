import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Writes lines to standard output in batches, whole lines at a time, so lines from several
/// threads never interleave and a reader of the pipe sees each as soon as it is written.
final class OutputWriter: @unchecked Sendable {
    private let lock = NSLock()
    private var closing = false

    var isClosing: Bool { lock.withLock { closing } }

    func writeLine(_ line: String) {
        write([line])
    }

    func write(_ lines: [String]) {
        guard !lines.isEmpty else { return }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(lines.reduce(0) { $0 + $1.utf8.count + 1 })
        for line in lines {
            bytes.append(contentsOf: line.utf8)
            bytes.append(UInt8(ascii: "\n"))
        }
        lock.withLock {
            bytes.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = Glibc.write(STDOUT_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        return
                    }
                    offset += written
                }
            }
        }
    }

    func close() {
        lock.withLock { closing = true }
    }
}
