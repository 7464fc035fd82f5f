/// Bytes of one or more values end to end, in the same allocation as the object, each with at
/// most one thing computed from it on first use (a payload's parse results), kept by the
/// value's offset. Bytes are written once, before anything reads them; the computed things are
/// added under the chunk's own lock, so each is computed at most once. A lock per chunk costs
/// about 150 bytes per 64 KiB chunk of ``ByteArena``'s, a fraction of a byte per payload.
package final class ByteChunk: ManagedBuffer<ByteChunkHeader, UInt8> {
    /// A chunk with room for `capacity` bytes.
    package static func make(capacity: Int) -> ByteChunk {
        unsafeDowncast(
            ByteChunk.create(minimumCapacity: capacity) { _ in ByteChunkHeader() }, to: ByteChunk.self)
    }

    /// Copies `raw` to `offset`, where no value's bytes are yet.
    package func write(_ raw: UnsafeRawBufferPointer, at offset: Int) {
        guard let base = raw.baseAddress, raw.count > 0 else { return }
        withUnsafeMutablePointerToElements {
            ($0 + offset).initialize(from: base.assumingMemoryBound(to: UInt8.self), count: raw.count)
        }
    }

    package func withBytes<T>(at offset: Int, count: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        try withUnsafeMutablePointerToElements { try body(UnsafeBufferPointer(start: $0 + offset, count: count)) }
    }

    private var lock: ConditionLock { header.lock }

    /// What `make` computed from the value at `offset`, computing it on first use; concurrent
    /// first readers wait for one computation. Every call for one offset passes the same type.
    package func computed<T: AnyObject>(at offset: UInt32, _ make: () -> T) -> T {
        lock.withLock {
            if let known = header.computed[offset] { return unsafeDowncast(known, to: T.self) }
            let made = make()
            header.computed[offset] = made
            return made
        }
    }

    /// Whether something was computed from the value at `offset` yet.
    package func hasComputed(at offset: UInt32) -> Bool {
        lock.withLock { header.computed[offset] != nil }
    }
}

/// What a ``ByteChunk`` holds besides its bytes.
package struct ByteChunkHeader {
    /// What was computed from the values, by offset, added on first use.
    fileprivate var computed: [UInt32: AnyObject] = [:]
    /// Guards ``computed``.
    fileprivate let lock = ConditionLock()
}

/// Copies the values one connection receives (payloads) end to end into shared 64 KiB
/// chunks: a stored value costs its bytes and no allocation of its own. A chunk lives as long
/// as one of its values does. Owned by one thread. It also grows the thread's heap ahead of
/// the notifications that come with the values (``HeapReserve``).
///
/// Serves the `binary ingest` rows of `Scripts/bench.sh` (one allocation per payload less) and
/// the `memory` row (no object header and malloc rounding per payload). Measured 2026-12-03
/// (Performance.md, FakeAPNs / reference, medians over the rounds): binary ingest, 1
/// connection, 41.0% on and 34.5% off (+19%); 8 connections 48.9% and 41.7% (+17%); memory
/// 175.5 and 219.5 bytes per notification beyond its payload (+25% off). Switch: `arena` (off:
/// each value gets a chunk of its own).
package struct ByteArena {
    /// Bytes a chunk holds: 64 KiB less the allocator's and the object's headers.
    static let chunkSize = 64 * 1024 - 64
    /// Larger values get a chunk of their own.
    static let largestShared = 4 * 1024
    private static let isOn = SpeedUp.arena.isOn

    private var chunk: ByteChunk?
    private var used = 0
    private var heap = HeapReserve.Pacer()

    package init() {}

    /// Copies `raw` into a chunk: which one, and where in it.
    package mutating func copy(_ raw: UnsafeRawBufferPointer) -> (chunk: ByteChunk, offset: Int) {
        heap.allocated(raw.count)
        guard raw.count <= Self.largestShared, Self.isOn else { return (Self.single(raw), 0) }
        if chunk == nil || Self.chunkSize - used < raw.count {
            chunk = ByteChunk.make(capacity: Self.chunkSize)
            used = 0
        }
        let offset = used
        chunk!.write(raw, at: offset)
        used += raw.count
        return (chunk!, offset)
    }

    /// A chunk holding only a copy of `raw`.
    package static func single(_ raw: UnsafeRawBufferPointer) -> ByteChunk {
        let chunk = ByteChunk.make(capacity: raw.count)
        chunk.write(raw, at: 0)
        return chunk
    }
}
