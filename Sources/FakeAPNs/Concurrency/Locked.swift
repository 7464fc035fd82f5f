/// A value behind a mutex, for state that threads share but never wait on (for waiting, own a
/// ``ConditionLock`` beside the state). The mutex is the pthread one of ``ConditionLock``, not
/// the standard library's `Mutex`, whose contended hand-over on Linux the thread sanitizer
/// cannot see: with it, the sanitizer run would report races that are not there.
package final class Locked<Value>: @unchecked Sendable {
    private let lock = ConditionLock()
    private var value: Value

    /// A lock around `value`.
    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value, holding the lock; keep it short.
    package func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        try lock.withLock { try body(&value) }
    }
}
