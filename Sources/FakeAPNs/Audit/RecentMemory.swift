#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the sender audit remembers of recent events, by key: at most `limit` entries, the
/// oldest forgotten first, and those older than a window forgotten as time goes on. Every
/// operation costs a dictionary look-up and, now and then, the removal of what fell out of
/// the window or the bound: no scan per request.
struct RecentMemory<Key: Hashable, Value> {
    private struct Entry {
        var value: Value
        var time: Date
        var stamp: UInt64
    }

    private var entries: [Key: Entry] = [:]
    /// Keys in the order they were set, with the stamp each got; a key set again has a newer
    /// stamp, and its older places are skipped when they come up.
    private var order: [(key: Key, stamp: UInt64)] = []
    private var head = 0
    private var lastStamp: UInt64 = 0
    /// The most entries kept.
    let limit: Int

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// How many entries are kept.
    var count: Int { entries.count }
    /// Whether nothing is kept: the check a push pays when nothing was remembered.
    var isEmpty: Bool { entries.isEmpty }

    /// What `key` was set to, and when.
    subscript(key: Key) -> (value: Value, time: Date)? {
        entries[key].map { ($0.value, $0.time) }
    }

    /// Remembers `value` for `key` at `time`, forgetting the oldest entry beyond the limit.
    mutating func set(_ key: Key, _ value: Value, at time: Date) {
        lastStamp += 1
        entries[key] = Entry(value: value, time: time, stamp: lastStamp)
        order.append((key, lastStamp))
        while entries.count > limit, head < order.count {
            forgetHead()
        }
        compactIfSparse()
    }

    /// Forgets `key`.
    mutating func remove(_ key: Key) {
        entries[key] = nil
    }

    /// Forgets, oldest first, the entries set before `date` (entries are set in time order,
    /// except when a test moves the clock back, which only keeps some longer).
    mutating func forget(before date: Date) {
        while head < order.count {
            let (key, stamp) = order[head]
            if let entry = entries[key], entry.stamp == stamp, entry.time >= date { break }
            forgetHead()
        }
        compactIfSparse()
    }

    /// Forgets everything.
    mutating func removeAll() {
        entries.removeAll()
        order.removeAll()
        head = 0
    }

    private mutating func forgetHead() {
        let (key, stamp) = order[head]
        head += 1
        if entries[key]?.stamp == stamp { entries[key] = nil }
    }

    /// Drops the places already passed or overtaken, once they are most of `order`: a key set
    /// again and again (one token flooded with one payload) leaves one live place, not millions.
    private mutating func compactIfSparse() {
        if head > 64, head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
        let places = order.count - head
        guard places > 64, places > 2 * entries.count else { return }
        order = order[head...].filter { entries[$0.key]?.stamp == $0.stamp }
        head = 0
    }
}
