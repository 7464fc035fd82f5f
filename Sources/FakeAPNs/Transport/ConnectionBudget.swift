import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The connections one server may hold at once: at most `perListener` on each listener,
/// `total` over all of them, and none that would leave fewer than `reservedDescriptors`
/// descriptors free in the process, so the rest of it (a test's own clients, the daemon's
/// control API) can still open sockets and files while the APNs listeners are full. Each
/// listener asks once per accepted connection; a connection refused is closed at once.
///
/// The descriptors left for connections are shared: each listener keeps a share of them, half
/// of an equal part, that a flood on another listener cannot take. A listener takes more than
/// its share only while every other listener's unused share stays free; so with a tight
/// descriptor limit, idle connections by the thousand on the gateway leave the HTTP/2 listener
/// its share, and its pushes are answered.
final class ConnectionBudget: @unchecked Sendable {
    let perListener: Int
    let total: Int
    let reservedDescriptors: Int

    private let lock = ConditionLock()
    /// Connections held by each listener, by the number `join()` gave it. Protected by `lock`.
    private var heldByListener: [Int] = []

    /// Connection descriptors held by every server of the process.
    private static let heldInProcess = Atomic<Int>(0)

    init(perListener: Int, total: Int, reservedDescriptors: Int) {
        self.perListener = perListener
        self.total = total
        self.reservedDescriptors = reservedDescriptors
    }

    /// Counts a listener in; its number, for `admit` and `release`.
    func join() -> Int {
        lock.withLock {
            heldByListener.append(0)
            return heldByListener.count - 1
        }
    }

    /// Takes a place for the connection just accepted on `descriptor` by `listener` (its
    /// number from `join()`), or says why there is none.
    func admit(_ descriptor: Int32, listener: Int) -> ConnectionRefusal? {
        lock.withLock {
            if heldByListener[listener] >= perListener { return .listenerLimit(perListener) }
            // A lower bound of the descriptors open, without counting them: the system hands
            // out the lowest free descriptor, so every one below `descriptor` is open; and the
            // connections' own count covers those whose closing left gaps below.
            let open = max(Int(descriptor), Self.heldInProcess.load(ordering: .relaxed)) + 1
            let limit = DescriptorLimit.current
            if limit - open < reservedDescriptors {
                return .descriptorReserve(reserve: reservedDescriptors, limit: limit)
            }
            let held = heldByListener.reduce(0, +)
            guard held < total else { return .totalLimit(total) }
            if limit != Int.max, heldByListener.count > 1 {
                // What connections may still take after this one, and what they could hold in
                // all: each listener's share is half of an equal part of it.
                let free = limit - open - reservedDescriptors
                let share = (held + free) / (2 * heldByListener.count)
                var owed = 0
                for (other, count) in heldByListener.enumerated() where other != listener {
                    owed += max(0, share - count)
                }
                if free < owed { return .descriptorShare(share: share, keptForOthers: owed) }
            }
            heldByListener[listener] += 1
            Self.heldInProcess.add(1, ordering: .relaxed)
            return nil
        }
    }

    /// Gives back the place of a connection that `admit` let in for `listener`.
    func release(listener: Int) {
        lock.withLock { heldByListener[listener] -= 1 }
        Self.heldInProcess.subtract(1, ordering: .relaxed)
    }

}

/// The process's descriptor limit (the soft RLIMIT_NOFILE).
package enum DescriptorLimit {
    /// The limit now; `Int.max` when there is none.
    package static var current: Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return Int.max }
        return limit.rlim_cur >= UInt64(Int.max) ? Int.max : Int(limit.rlim_cur)
    }

    /// Raises the limit to the hard one, as servers do: the usual soft limit of 1024 would
    /// otherwise bound a daemon's connections long before its connection limits.
    package static func raiseToHardLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}
