import FakeAPNs

#if canImport(Glibc)
import Glibc
#endif

/// Writes whole lines to a file descriptor (standard output or the log file), so lines from
/// several threads never interleave and a reader of a pipe sees each as soon as it is written.
final class OutputWriter: @unchecked Sendable {
    private let lock = ConditionLock()
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    /// The most bytes one system call is given. A blocking write to a pipe returns only once
    /// it moved everything, so pipes (and terminals, sockets) get PIPE_BUF at a time, which
    /// a pipe takes whole or not at all: what `progress` reports is then exactly what left,
    /// and a slow reader shows as progress, not as a stall. Files take any size at once.
    private let maximumWrite: Int

    /// A writer to standard output.
    convenience init() {
        self.init(standard: STDOUT_FILENO)
    }

    private init(standard descriptor: Int32) {
        self.descriptor = descriptor
        ownsDescriptor = false
        maximumWrite = Self.maximumWrite(descriptor)
    }

    /// Writes `text` to standard output at once: the command-line tools' lines.
    static func writeStandardOutput(_ text: String) {
        OutputWriter(standard: STDOUT_FILENO).write(bytes: Array(text.utf8))
    }

    /// Writes `text` to standard error at once: the messages of every command.
    static func writeStandardError(_ text: String) {
        OutputWriter(standard: STDERR_FILENO).write(bytes: Array(text.utf8))
    }

    /// A writer appending to `path`, created if needed.
    init(appendingTo path: String) throws {
        let opened = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard opened >= 0 else {
            throw Options.UsageError(description: "--log-file \(path): \(String(cString: strerror(errno)))")
        }
        descriptor = opened
        ownsDescriptor = true
        maximumWrite = Self.maximumWrite(opened)
    }

    private static func maximumWrite(_ descriptor: Int32) -> Int {
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return Int(PIPE_BUF) }
        return Int.max
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
    }

    /// Whether the output is a terminal (the log is text there by default).
    var isTerminal: Bool { isatty(descriptor) == 1 }

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
        write(bytes: bytes)
    }

    /// Writes bytes that hold whole lines, each ending in a line feed, in as few system calls
    /// as the descriptor allows: the event log hands over a few hundred kilobytes at a time.
    /// `progress` sees what each system call moved. Returns the error that stopped it, if any.
    @discardableResult
    func write(bytes: [UInt8], progress: (UnsafeRawBufferPointer) -> Void = { _ in }) -> Int32? {
        guard !bytes.isEmpty else { return nil }
        return lock.withLock {
            bytes.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = Glibc.write(
                        descriptor, buffer.baseAddress! + offset, min(buffer.count - offset, maximumWrite))
                    if written < 0 {
                        switch errno {
                        case EINTR:
                            continue
                        case EAGAIN:
                            // A descriptor another process made non-blocking: wait until it takes more.
                            var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                            _ = poll(&ready, 1, -1)
                            continue
                        default:
                            return errno
                        }
                    }
                    progress(UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + written]))
                    offset += written
                }
                return nil
            }
        }
    }
}
