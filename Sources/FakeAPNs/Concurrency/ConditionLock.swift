#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

import Synchronization

/// A mutex with a condition variable, for state that threads wait on with a deadline.
/// The protected state lives in the owner; every access goes through `withLock`.
package final class ConditionLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    /// The threads in ``withLock(_:)`` that wait for the mutex: a long task done in slices
    /// lets them have it between slices (``yieldToWaiters()``), as the mutex itself would
    /// hand it straight back to the thread that just left it.
    private let waiting = Atomic<Int>(0)

    package init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    package func withLock<T>(_ body: () throws -> T) rethrows -> T {
        waiting.add(1, ordering: .relaxed)
        pthread_mutex_lock(mutex)
        waiting.subtract(1, ordering: .relaxed)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Inside `withLock` only: waits for a broadcast or the deadline.
    /// Returns false once the deadline has passed.
    package func wait(until deadline: Deadline) -> Bool {
        if deadline.hasPassed { return false }
        var target = deadline.time
        return pthread_cond_timedwait(condition, mutex, &target) == 0 || !deadline.hasPassed
    }

    /// Inside `withLock` only: waits for a broadcast, with no deadline.
    package func wait() {
        pthread_cond_wait(condition, mutex)
    }

    /// Outside `withLock` only: returns once every thread that was waiting for the mutex has
    /// taken it (or more keep coming: at most a few milliseconds), so that a task done in
    /// slices under the lock holds no other thread up for more than one slice.
    package func yieldToWaiters() {
        let start = ContinuousClock.now
        while waiting.load(ordering: .relaxed) > 0, ContinuousClock.now - start < .milliseconds(5) {
            sched_yield()
        }
    }

    /// Wakes every waiter.
    package func broadcast() {
        pthread_cond_broadcast(condition)
    }
}

/// A point on the monotonic clock, for waits that must not follow wall-clock jumps.
package struct Deadline: Sendable {
    package let time: timespec

    /// Now plus `duration` (negative durations are now; durations beyond a century are a
    /// century, so that no timeout overflows the clock).
    package static func after(_ duration: Duration) -> Deadline {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let (seconds, attoseconds) = duration.components
        let extraNanoseconds = max(0, attoseconds / 1_000_000_000)
        var total = timespec(
            tv_sec: now.tv_sec + Int(min(max(0, seconds), Self.longest)),
            tv_nsec: now.tv_nsec + Int(seconds < 0 ? 0 : extraNanoseconds))
        if total.tv_nsec >= 1_000_000_000 {
            total.tv_sec += 1
            total.tv_nsec -= 1_000_000_000
        }
        return Deadline(time: total)
    }

    /// A century, in seconds: the farthest deadline.
    private static let longest: Int64 = 100 * 365 * 24 * 3600

    /// The point `nanoseconds` after the monotonic clock's origin (see `monotonicNanoseconds()`).
    package init(nanoseconds: UInt64) {
        time = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
    }

    private init(time: timespec) {
        self.time = time
    }

    /// The point in nanoseconds on the monotonic clock, as `monotonicNanoseconds()` reads it.
    package var nanoseconds: UInt64 {
        UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    package var hasPassed: Bool {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return now.tv_sec > time.tv_sec || (now.tv_sec == time.tv_sec && now.tv_nsec >= time.tv_nsec)
    }
}

/// The monotonic clock in nanoseconds, for measuring waits of microseconds.
package func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
}
