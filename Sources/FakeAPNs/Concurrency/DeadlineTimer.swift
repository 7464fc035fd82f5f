/// One thread for every timeout of the process's suspended waits: an async pop or an async stop
/// schedules what to do at its deadline, and cancels it when it is answered first. The
/// deadlines wait in one heap, earliest first, so ten thousand waits with a timeout cost ten
/// thousand heap entries, not ten thousand timers or threads.
///
/// ```swift
/// let timeout = DeadlineTimer.shared.schedule(after: .seconds(5)) { giveUp() }
/// // answered before then:
/// DeadlineTimer.shared.cancel(timeout)
/// ```
///
/// Actions run on the timer's thread, one after the other, outside any lock the timer holds:
/// keep them short (resuming a continuation). The thread starts with the first deadline.
package final class DeadlineTimer: @unchecked Sendable {
    /// The process's timer.
    package static let shared = DeadlineTimer()

    /// A scheduled action, to cancel it.
    package struct Entry: Hashable, Sendable {
        fileprivate let id: UInt64
    }

    private struct Scheduled {
        let deadline: UInt64
        let id: UInt64
    }

    private let lock = ConditionLock()
    // Protected by `lock`:
    /// A binary min-heap by deadline; entries whose action was cancelled stay until they come
    /// up or the heap is rebuilt.
    private var heap: [Scheduled] = []
    private var actions: [UInt64: @Sendable () -> Void] = [:]
    private var lastID: UInt64 = 0
    private var started = false

    private init() {}

    /// Runs `action` on the timer's thread once `duration` has passed, unless cancelled first.
    /// Negative and zero durations run it as soon as the thread gets to it. Without a thread
    /// to start (a thread limit), runs it at once, on the caller's.
    @discardableResult
    package func schedule(after duration: Duration, _ action: @escaping @Sendable () -> Void) -> Entry {
        schedule(at: .after(duration), action)
    }

    /// Runs `action` on the timer's thread once `deadline` has passed, unless cancelled first.
    @discardableResult
    package func schedule(at point: Deadline, _ action: @escaping @Sendable () -> Void) -> Entry {
        let deadline = point.nanoseconds
        let (entry, startFailed): (Entry, Bool) = lock.withLock {
            lastID += 1
            let id = lastID
            actions[id] = action
            push(Scheduled(deadline: deadline, id: id))
            if heap[0].id == id { lock.broadcast() }
            guard !started else { return (Entry(id: id), false) }
            do {
                try OSThread(name: "deadline-timer") { [self] in run() }.detach()
                started = true
                return (Entry(id: id), false)
            } catch {
                return (Entry(id: id), true)
            }
        }
        if startFailed, cancel(entry) { action() }
        return entry
    }

    /// Forgets a scheduled action. True when it had not run (it never will); false when it
    /// has run or was cancelled before.
    @discardableResult
    package func cancel(_ entry: Entry) -> Bool {
        lock.withLock {
            guard actions.removeValue(forKey: entry.id) != nil else { return false }
            // Cancelled entries are dropped from the heap in one pass once they outnumber the
            // live ones, so a flood of answered waits leaves no heap behind.
            if heap.count > 64 && heap.count > 2 * actions.count { rebuildHeap() }
            return true
        }
    }

    // MARK: - The timer's thread

    private func run() {
        while true {
            let due: [@Sendable () -> Void] = lock.withLock {
                while true {
                    guard let first = heap.first else {
                        lock.wait()
                        continue
                    }
                    let now = monotonicNanoseconds()
                    if first.deadline > now {
                        _ = lock.wait(until: Deadline(nanoseconds: first.deadline))
                        continue
                    }
                    var due: [@Sendable () -> Void] = []
                    while let top = heap.first, top.deadline <= now {
                        popFirst()
                        if let action = actions.removeValue(forKey: top.id) { due.append(action) }
                    }
                    if !due.isEmpty { return due }
                }
            }
            due.forEach { $0() }
        }
    }

    // MARK: - The heap, inside the lock

    private func push(_ scheduled: Scheduled) {
        heap.append(scheduled)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private func popFirst() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(from: 0)
    }

    private func siftDown(from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count && heap[left].deadline < heap[smallest].deadline { smallest = left }
            if right < heap.count && heap[right].deadline < heap[smallest].deadline { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }

    private func rebuildHeap() {
        heap.removeAll { actions[$0.id] == nil }
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) {
            siftDown(from: index)
        }
        // The earliest deadline may have changed: the thread looks again.
        lock.broadcast()
    }
}
