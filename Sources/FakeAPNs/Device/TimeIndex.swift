#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// When each key next falls due, earliest first: a binary heap with each key's place kept, so
/// that moving, adding or removing a key costs log n and reading the earliest costs nothing.
/// The device model keeps each described phone's next transition here, so that a clock
/// advance visits only the phones with something due, and a change to one phone touches only
/// its own entry.
struct TimeIndex<Key: Hashable> {
    private var heap: [(at: Date, key: Key)] = []
    private var places: [Key: Int] = [:]

    var count: Int { heap.count }

    /// The earliest entry.
    var first: (at: Date, key: Key)? { heap.first }

    /// Sets when `key` falls due (nil: never, the key is removed).
    mutating func set(_ key: Key, at date: Date?) {
        guard let date else {
            remove(key)
            return
        }
        guard let place = places[key] else {
            heap.append((date, key))
            places[key] = heap.count - 1
            siftUp(heap.count - 1)
            return
        }
        let earlier = date < heap[place].at
        heap[place].at = date
        if earlier { siftUp(place) } else { siftDown(place) }
    }

    mutating func remove(_ key: Key) {
        guard let place = places.removeValue(forKey: key) else { return }
        let last = heap.count - 1
        guard place != last else {
            heap.removeLast()
            return
        }
        let moved = heap.removeLast()
        heap[place] = moved
        places[moved.key] = place
        siftUp(place)
        siftDown(places[moved.key] ?? place)
    }

    mutating func removeAll() {
        heap = []
        places = [:]
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].at < heap[parent].at else { return }
            swapAt(child, parent)
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
            swapAt(child, parent)
            parent = child
        }
    }

    private mutating func swapAt(_ a: Int, _ b: Int) {
        heap.swapAt(a, b)
        places[heap[a].key] = a
        places[heap[b].key] = b
    }
}
