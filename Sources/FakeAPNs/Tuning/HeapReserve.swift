internal import CPOSIXShims
#if canImport(Glibc)
import Glibc
#endif

/// Room made in a connection thread's malloc arena ahead of a flood of notifications, and its
/// first pages mapped ahead on a background thread.
///
/// glibc grows a thread's arena by the page or two a request lacks, with an `mprotect` each
/// time, which also holds every other thread's page faults; a block of ``size`` allocated and
/// freed grows it in one step and leaves the room free at its top (the first time, glibc maps
/// the block on its own instead, and from then on keeps blocks of that size in the arenas).
/// The first ``ahead`` bytes of the room are then mapped by a background thread (`madvise`
/// `MADV_POPULATE_WRITE`, which writes nothing), so that the connection, filling them, does
/// not stop on a page fault for each page; at most ``waitingRanges`` ranges wait, the oldest
/// dropped. The thread ends after a quarter of a second without work.
///
/// Serves the `binary ingest` rows of `Scripts/bench.sh`. Measured 2026-12-03 (Performance.md,
/// FakeAPNs / reference, medians over 8 rounds on a busy machine): all on, 41.0% (1
/// connection) and 48.9% (8 connections); `reserve` off, 37.1% and 37.3% (+11% and +31% on);
/// `prefault` off, 37.8% and 42.8% (+8% and +14% on). Switches: `reserve` (off: no room made
/// and nothing mapped ahead) and `prefault` (off: room made, nothing mapped ahead).
package enum HeapReserve {
    /// Room made each time.
    static let size = 4 << 20
    /// How much of the room is mapped ahead each time, a little more than is used until the
    /// next time: mapping further ahead also makes resident early the spare capacity of the
    /// queue's and the history's arrays, which the arena hands out from the same room.
    static let ahead = 768 << 10
    /// About how much a connection allocates between two reserves.
    static let interval = 512 << 10
    /// What a notification allocates besides its payload, about (its record, its fields, its
    /// place in the queue and the history).
    static let notificationBytes = 320
    /// How many ranges may wait for the background thread.
    static let waitingRanges = 8
    /// How much the background thread maps at a time; a release waits for at most one step.
    static let step = 256 * 1024

    private static let isOn = SpeedUp.reserve.isOn
    private static let prefaultOn = SpeedUp.prefault.isOn

    /// Counts what one connection's thread allocates for its notifications and makes room
    /// every ``interval`` of it. Owned by the thread.
    struct Pacer {
        private var sinceReserve = 0

        /// Counts a notification whose payload has `payloadBytes`.
        mutating func allocated(_ payloadBytes: Int) {
            sinceReserve += payloadBytes + HeapReserve.notificationBytes
            if sinceReserve >= HeapReserve.interval {
                sinceReserve = 0
                HeapReserve.reserve()
            }
        }
    }

    /// Makes room in the calling thread's arena, and has its first pages mapped ahead.
    static func reserve() {
        guard isOn else { return }
        let block = UInt(fakeapns_grow_heap(size))
        guard block != 0 else { return }
        // A block glibc mapped on its own (the first time, while its threshold is lower)
        // starts 16 bytes into a page: freeing it unmapped it, so it is no room of the
        // arena's, and nothing is mapped ahead for it. A block of the arena's there too is
        // merely not mapped ahead.
        guard block & (pageSize - 1) != UInt(2 * MemoryLayout<Int>.size) else { return }
        ThreadMark.set()
        guard prefaultOn, let pages = innerPages(of: block, count: ahead) else { return }
        Prefaulter.shared.add(pages)
    }

    /// Gives back the pages of the calling thread's room that it did not fill, and stops their
    /// mapping ahead: for a thread whose flood ended (a connection closing).
    package static func release() {
        guard ThreadMark.take() else { return }
        Prefaulter.shared.drop(owner: pthread_self())
        // The free room at the arena's top, taken for a moment: its pages can be dropped.
        guard let block = malloc(size) else { return }
        if let pages = innerPages(of: UInt(bitPattern: block), count: size) {
            madvise(UnsafeMutableRawPointer(bitPattern: pages.start), pages.count, MADV_DONTNEED)
        }
        free(block)
    }

    /// Whether the mapping-ahead thread runs now.
    static var isMappingAhead: Bool { Prefaulter.shared.isRunning }

    /// Whether the calling thread holds room it has not given back.
    static var threadHoldsReserve: Bool { ThreadMark.isSet }

    private static let pageSize = UInt(sysconf(Int32(_SC_PAGESIZE)))

    /// The whole pages inside `count` bytes at `address`.
    private static func innerPages(of address: UInt, count: Int) -> Pages? {
        let first = (address + pageSize - 1) & ~(pageSize - 1)
        let end = (address + UInt(count)) & ~(pageSize - 1)
        return end > first ? Pages(start: first, count: Int(end - first), owner: pthread_self()) : nil
    }

    fileprivate struct Pages {
        let start: UInt
        let count: Int
        let owner: pthread_t
    }

    /// Whether the calling thread has room made that it has not given back.
    private enum ThreadMark {
        private static let key: pthread_key_t = {
            var key = pthread_key_t()
            pthread_key_create(&key, nil)
            return key
        }()

        static func set() {
            pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1))
        }

        static var isSet: Bool { pthread_getspecific(key) != nil }

        /// Whether the mark was set; clears it.
        static func take() -> Bool {
            guard pthread_getspecific(key) != nil else { return false }
            pthread_setspecific(key, nil)
            return true
        }
    }

    /// The background thread mapping ranges ahead, and the ranges waiting for it. A generation
    /// that every ``drop(owner:)`` moves on stops a range being mapped in steps.
    private final class Prefaulter: @unchecked Sendable {
        static let shared = Prefaulter()

        // Under `lock`.
        private let lock = ConditionLock()
        private var waiting: [Pages] = []
        private var generation = 0
        private var mapping = false
        private var running = false

        var isRunning: Bool { lock.withLock { running } }

        /// Queues `pages` for mapping, starting the thread unless it runs.
        func add(_ pages: Pages) {
            lock.withLock {
                if !running {
                    guard let thread = try? OSThread(name: "heap-prefault", stackSize: 64 * 1024, { self.run() }) else {
                        return
                    }
                    thread.detach()
                    running = true
                }
                if waiting.count == HeapReserve.waitingRanges { waiting.removeFirst() }
                waiting.append(pages)
                lock.broadcast()
            }
        }

        /// Forgets `owner`'s waiting ranges and returns once no step may be mapping its pages.
        func drop(owner: pthread_t) {
            lock.withLock {
                waiting.removeAll { pthread_equal($0.owner, owner) != 0 }
                generation += 1
                while mapping { lock.wait() }
            }
        }

        private func run() {
            while let (pages, generation) = next() {
                var done = 0
                while done < pages.count, begin(generation) {
                    let step = min(pages.count - done, HeapReserve.step)
                    // Maps the pages without writing them: what malloc put there meanwhile stays.
                    madvise(UnsafeMutableRawPointer(bitPattern: pages.start + UInt(done)), step, MADV_POPULATE_WRITE)
                    lock.withLock {
                        mapping = false
                        lock.broadcast()
                    }
                    done += step
                }
            }
        }

        /// The next range to map, or nil (the thread ends) after a quiet quarter second.
        private func next() -> (Pages, Int)? {
            lock.withLock {
                while waiting.isEmpty {
                    if !lock.wait(until: .after(.milliseconds(250))) && waiting.isEmpty {
                        running = false
                        return nil
                    }
                }
                return (waiting.removeFirst(), generation)
            }
        }

        /// Starts a step of a range taken at `generation`, unless a release came since.
        private func begin(_ generation: Int) -> Bool {
            lock.withLock {
                guard generation == self.generation else { return false }
                mapping = true
                return true
            }
        }
    }
}
