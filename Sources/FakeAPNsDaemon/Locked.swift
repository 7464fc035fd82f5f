import Foundation

/// A value behind a lock. A pthread mutex (through NSLock) rather than the standard library's
/// `Mutex`, whose contended hand-over on Linux the thread sanitizer cannot see: with it, the
/// sanitizer run in CI would report races that are not there.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
