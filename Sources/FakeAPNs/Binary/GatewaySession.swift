import Foundation

/// One connection to the binary gateway: reads, decodes every complete notification in what
/// arrived, hands them over in one batch per read, and on the first malformed one answers as
/// Apple did: the 6-byte error response (none for command 0), then the connection closes and
/// whatever followed on it is dropped.
struct GatewaySession {
    let connection: TLSListener.Connection
    let decoder: BinaryDecoder
    let deliver: @Sendable ([PushNotification]) -> Void
    let refuse: @Sendable (BinaryDecoder.Failure, ConnectionInfo) -> Void

    /// Bytes asked of each read; TLS records carry at most 16 KiB, so this takes several.
    private static let readSize = 64 * 1024

    func run() {
        var buffer = ReadBuffer(capacity: Self.readSize * 2)
        defer { buffer.deallocate() }
        while true {
            buffer.reserve(Self.readSize)
            let count: Int
            do {
                count = try connection.stream.read(into: buffer.freeSpace)
            } catch {
                return
            }
            if count == 0 {
                if buffer.count > 0 && !connection.listener.isStopping {
                    let failure = buffer.withReadable { decoder.truncated($0) }
                    reject(failure)
                }
                return
            }
            buffer.commit(count)
            let (consumed, failure) = buffer.withReadable { decodeAll($0) }
            buffer.consume(consumed)
            if let failure {
                reject(failure)
                return
            }
        }
    }

    /// Decodes every complete notification in `bytes`; returns the bytes used and the
    /// failure that stopped decoding, if any.
    private func decodeAll(_ bytes: UnsafeRawBufferPointer) -> (Int, BinaryDecoder.Failure?) {
        var offset = 0
        var batch: [PushNotification] = []
        let now = Date()
        var failure: BinaryDecoder.Failure?
        decoding: while offset < bytes.count {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
            switch decoder.decode(rest) {
            case .frame(let frame):
                batch.append(PushNotification(
                    deviceToken: DeviceToken(bytes: rest[frame.token]),
                    payload: Payload(bytes: Array(rest[frame.payload])),
                    identifier: frame.identifier,
                    expiration: frame.expiration,
                    priority: Priority(rawValue: Int(frame.priority)),
                    format: frame.format,
                    connection: connection.info,
                    receivedAt: now))
                offset += frame.length
            case .incomplete:
                break decoding
            case .failure(let found):
                failure = found
                break decoding
            }
        }
        deliver(batch)
        return (offset, failure)
    }

    private func reject(_ failure: BinaryDecoder.Failure) {
        refuse(failure, connection.info)
        if failure.sendsResponse {
            let response = BinaryErrorResponse(status: failure.status, identifier: failure.identifier)
            try? connection.stream.write(response.bytes)
        }
    }
}

/// A growable byte buffer for reads: bytes are appended at the end and consumed from the
/// front; what is left is moved to the front before the next read.
struct ReadBuffer {
    private var storage: UnsafeMutableRawBufferPointer
    private(set) var count = 0

    init(capacity: Int) {
        storage = .allocate(byteCount: capacity, alignment: 16)
    }

    func deallocate() {
        storage.deallocate()
    }

    /// Makes room for at least `minimum` more bytes.
    mutating func reserve(_ minimum: Int) {
        guard storage.count - count < minimum else { return }
        let grown = UnsafeMutableRawBufferPointer.allocate(
            byteCount: max(storage.count * 2, count + minimum), alignment: 16)
        if count > 0 {
            grown.baseAddress!.copyMemory(from: storage.baseAddress!, byteCount: count)
        }
        storage.deallocate()
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
