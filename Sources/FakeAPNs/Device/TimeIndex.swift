#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Something a ``TimeIndex`` holds: it keeps when it is due and which of its entries in the
/// index is current, so that moving it costs no search.
protocol TimeIndexed: AnyObject {
    /// When it falls due, as the index has it (nil: not in the index). Only the index writes it.
    var timeIndexDue: Date? { get set }
    /// Which of its entries is current: an older one left in the heap is skipped. Only the
    /// index writes it.
    var timeIndexVersion: UInt64 { get set }
}

/// When each element next falls due, earliest first: a binary heap of dates in one array.
/// Moving an element adds an entry and leaves its old one behind, skipped when it comes to
/// the top; the heap is rebuilt without them when they outnumber the live ones. So moving,
/// adding or removing costs log n, a sift touches only the array (the elements stay where
/// they are in memory), and reading the earliest costs nothing. The device model keeps each
/// described phone's next transition here, so that a clock advance visits only the phones
/// with something due, and a change to one phone touches only its own entry.
struct TimeIndex<Element: TimeIndexed> {
    private struct Entry {
        var at: Date
        var version: UInt64
        var indexed: Element

        var isCurrent: Bool { indexed.timeIndexVersion == version }
    }

    private var heap: [Entry] = []
    /// How many elements are in the index.
    private(set) var count = 0

    /// The earliest element and when it is due (its old entries skipped on the way).
    mutating func first() -> (at: Date, indexed: Element)? {
        while let top = heap.first, !top.isCurrent { popTop() }
        return heap.first.map { ($0.at, $0.indexed) }
    }

    /// Sets when `element` falls due (nil: never, it leaves the index).
    mutating func set(_ element: Element, at date: Date?) {
        guard element.timeIndexDue != date else { return }
        if element.timeIndexDue == nil { count += 1 }
        if date == nil { count -= 1 }
        element.timeIndexVersion &+= 1
        element.timeIndexDue = date
        guard let date else { return }
        heap.append(Entry(at: date, version: element.timeIndexVersion, indexed: element))
        siftUp(heap.count - 1)
        if heap.count > 2 * count + 64 { rebuild() }
    }

    mutating func remove(_ element: Element) { set(element, at: nil) }

    mutating func removeAll() {
        for entry in heap where entry.isCurrent { entry.indexed.timeIndexDue = nil }
        heap = []
        count = 0
    }

    private mutating func popTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(0)
    }

    /// Drops the entries no longer current and restores the heap order: linear, and due only
    /// after as many moves as there are elements.
    private mutating func rebuild() {
        heap.removeAll { !$0.isCurrent }
        for start in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(start) }
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].at < heap[parent].at else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            let right = left + 1
            let child = right < heap.count && heap[right].at < heap[left].at ? right : left
            guard heap[child].at < heap[parent].at else { return }
            heap.swapAt(child, parent)
            parent = child
        }
    }
}
