/// A growable byte buffer for reads: bytes are appended at the end and consumed from the
/// front; what is left is moved to the front before the next read. It holds no memory until
/// the first `reserve`, and none again after `release`.
struct ReadBuffer {
    private var storage = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    private(set) var count = 0

    init() {}

    func deallocate() {
        if storage.baseAddress != nil { storage.deallocate() }
    }

    /// Gives the memory back; only while the buffer holds no data.
    mutating func release() {
        precondition(count == 0, "releasing a read buffer that holds data")
        deallocate()
        storage = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    }

    /// Makes room for at least `minimum` more bytes.
    mutating func reserve(_ minimum: Int) {
        guard storage.count - count < minimum else { return }
        let grown = UnsafeMutableRawBufferPointer.allocate(
            byteCount: max(storage.count * 2, count + minimum), alignment: 16)
        if count > 0 {
            grown.baseAddress!.copyMemory(from: storage.baseAddress!, byteCount: count)
        }
        deallocate()
        storage = grown
    }

    /// The space after the data, for the next read.
    var freeSpace: UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(rebasing: storage[count...])
    }

    /// Counts `added` bytes written into `freeSpace` as data.
    mutating func commit(_ added: Int) {
        count += added
    }

    func withReadable<T>(_ body: (UnsafeRawBufferPointer) -> T) -> T {
        body(UnsafeRawBufferPointer(rebasing: storage[..<count]))
    }

    /// Drops the first `used` bytes, moving the rest to the front.
    mutating func consume(_ used: Int) {
        guard used > 0 else { return }
        let left = count - used
        if left > 0 {
            storage.baseAddress!.copyMemory(from: storage.baseAddress! + used, byteCount: left)
        }
        count = left
    }
}
