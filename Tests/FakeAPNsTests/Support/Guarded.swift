@testable import FakeAPNs

/// A value the tests share between threads, behind the library's pthread lock (which the thread
/// sanitizer sees, unlike the standard library's `Mutex` under contention on Linux).
final class Guarded<Value>: @unchecked Sendable {
    private let lock = ConditionLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        try lock.withLock { try body(&value) }
    }
}
