internal import CPOSIXShims
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A notification's payload: the raw bytes as they arrived, and lazily their JSON meaning.
///
/// Creating a payload only stores the bytes. They are parsed the first time ``json``,
/// ``parseError``, ``aps``, ``customKeys`` or a subscript is read, and only once however many
/// copies or threads read them, so a gateway can accept payloads at full speed and pay for
/// parsing only when a test looks.
///
/// A payload that is not valid JSON, or not a JSON object, is still a payload: ``bytes`` and
/// ``text`` show what was sent and ``parseError`` says what is wrong with it.
///
/// Two payloads are equal when their bytes are equal; formatting and key order count.
///
/// ```swift
/// let payload = Payload(#"{"aps":{"alert":{"title":"Hi","body":"There"},"badge":2},"id":7}"#)
/// payload.aps.alert?.title   // "Hi"
/// payload.aps.badge          // 2
/// payload["id"]              // .int(7)
/// payload.customKeys.keys    // ["id"]
/// ```
public struct Payload: Sendable, Hashable {
    /// The chunk holding the bytes, shared by copies (and, for payloads a connection received,
    /// by its neighbours); only read after creation, the parse results under a lock.
    private struct Shared: @unchecked Sendable {
        let chunk: Chunk
    }

    private let shared: Shared
    /// Where the bytes start in the chunk, and how many there are.
    private let offset: UInt32
    private let length: UInt32
    private var chunk: Chunk { shared.chunk }

    /// Creates a payload from raw bytes, without parsing them.
    public init(bytes: some Sequence<UInt8>) {
        let array = Array(bytes)
        self = array.withUnsafeBytes { Payload(copying: $0) }
    }

    /// A payload copied into a chunk of its own: one allocation, bytes and all.
    init(copying raw: UnsafeRawBufferPointer) {
        self.init(copying: raw, into: Chunk.make(capacity: raw.count), at: 0)
    }

    /// A payload whose bytes are copied to `offset` in `chunk`, where no payload's are yet.
    fileprivate init(copying raw: UnsafeRawBufferPointer, into chunk: Chunk, at offset: Int) {
        precondition(offset + raw.count <= Int(UInt32.max), "a payload of \(raw.count) bytes at \(offset)")
        chunk.write(raw, at: offset)
        shared = Shared(chunk: chunk)
        self.offset = UInt32(offset)
        self.length = UInt32(raw.count)
    }

    /// Creates a payload from the UTF-8 bytes of `string`, without parsing it.
    public init(_ string: String) {
        self.init(bytes: string.utf8)
    }

    /// Creates a payload whose bytes are the compact serialization of `json`.
    ///
    /// ```swift
    /// let payload = Payload(json: ["aps": ["content-available": 1]])
    /// payload.text   // {"aps":{"content-available":1}}
    /// ```
    public init(json: JSONValue) {
        self.init(json.serialized())
    }

    /// The payload exactly as sent.
    public var bytes: [UInt8] {
        withBytes { Array($0) }
    }

    /// Calls `body` with the bytes, without copying them.
    package func withBytes<T>(_ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        try chunk.withBytes(at: Int(offset), count: Int(length), body)
    }

    /// How many bytes the payload has.
    public var count: Int {
        Int(length)
    }

    /// The payload exactly as sent, as `Data`.
    public var data: Data {
        withBytes { Data($0) }
    }

    /// The payload as text, or `nil` when the bytes are not valid UTF-8.
    public var text: String? {
        withBytes { String(validating: $0, as: UTF8.self) }
    }

    /// The parsed JSON, or `nil` when the bytes are not valid JSON.
    ///
    /// Valid JSON that is not an object (such as `[1]`) is still returned here, while
    /// ``parseError`` reports that APNs payloads must be objects.
    public var json: JSONValue? {
        parsed.json
    }

    /// Why the payload is not a usable APNs payload: the JSON error with its byte offset, or,
    /// for valid JSON, that the top level is not an object. `nil` for a well-formed payload.
    ///
    /// ```swift
    /// Payload(#"{"aps":{}"#).parseError?.message
    /// // "expected ',' or '}' after object member, but the input ended at byte 9"
    /// Payload("[1]").parseError?.message
    /// // "payload must be a JSON object, found an array at byte 0"
    /// ```
    public var parseError: JSONParseError? {
        parsed.parseError
    }

    /// The `aps` dictionary; empty when the payload has none, is not a JSON object, or its
    /// `aps` is not a dictionary (``json`` shows what was there).
    public var aps: APS {
        parsed.aps
    }

    /// Every top-level member except `aps`, in written order: the app's own data.
    public var customKeys: JSONObject {
        parsed.customKeys
    }

    /// The top-level member named `key` (including `"aps"`), or `nil` when there is none or
    /// the payload is not a JSON object.
    public subscript(key: String) -> JSONValue? {
        parsed.json?[key]
    }

    /// Whether the bytes have been parsed yet; lets tests check that parsing is lazy.
    var isParsed: Bool {
        chunk.isParsed(at: offset)
    }

    /// How many times the bytes have been parsed (0 or 1); lets tests check parsing happens once.
    var parseCount: Int {
        chunk.parseCount(at: offset)
    }

    /// The parse result, parsing on first use.
    private var parsed: Parsed {
        chunk.parsed(at: offset, count: length)
    }

    /// Payloads are equal when their bytes are equal.
    public static func == (lhs: Payload, rhs: Payload) -> Bool {
        (lhs.chunk === rhs.chunk && lhs.offset == rhs.offset && lhs.length == rhs.length)
            || lhs.withBytes { left in rhs.withBytes { right in left.elementsEqual(right) } }
    }

    /// Hashes the bytes, consistent with `==`.
    public func hash(into hasher: inout Hasher) {
        withBytes { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}

extension Payload: CustomStringConvertible {
    /// The payload's text, or its size when it is not UTF-8.
    public var description: String {
        text ?? "<\(count) bytes, not UTF-8>"
    }
}

// MARK: - Lazy parsing

extension Payload {
    /// What parsing the bytes produced.
    fileprivate struct Parsed: Sendable {
        var json: JSONValue?
        var parseError: JSONParseError?
        var aps = APS()
        var customKeys = JSONObject()

        init(bytes: UnsafeBufferPointer<UInt8>) {
            do {
                let json = try JSONValue.parse(bytes)
                self.json = json
                guard case .object(let root) = json else {
                    let start = bytes.firstIndex { ![0x20, 0x09, 0x0A, 0x0D].contains($0) } ?? 0
                    parseError = JSONParseError(
                        "payload must be a JSON object, found \(json.kindDescription)",
                        at: start
                    )
                    return
                }
                aps = APS(raw: root["aps"]?.objectValue ?? JSONObject())
                customKeys = root.removing("aps")
            } catch {
                parseError = error
            }
        }
    }

    /// What a chunk holds besides its bytes: the parse results of its payloads, by offset,
    /// added on first use.
    fileprivate struct Header {
        var parsed: [UInt32: ParsedBox] = [:]
        /// The chunk's own lock, when the shared ones are off.
        var ownLock: ConditionLock?
    }

    fileprivate final class ParsedBox: Sendable {
        let value: Parsed
        init(_ value: Parsed) { self.value = value }
    }

    /// Bytes of one or more payloads, end to end, in the same allocation as the object (a
    /// gateway receives a million payloads a second: a connection copies them into 64 KiB
    /// chunks, see ``PayloadArena``). Bytes are written once, before their payload exists;
    /// the parse results are added under one of a few shared locks, so each payload is parsed
    /// at most once.
    fileprivate final class Chunk: ManagedBuffer<Header, UInt8> {
        static func make(capacity: Int) -> Chunk {
            unsafeDowncast(
                Chunk.create(minimumCapacity: capacity) { _ in
                    Header(ownLock: Payload.stripesOn ? nil : ConditionLock())
                }, to: Chunk.self)
        }

        /// Copies `raw` to `offset`, where no payload's bytes are yet.
        func write(_ raw: UnsafeRawBufferPointer, at offset: Int) {
            guard let base = raw.baseAddress, raw.count > 0 else { return }
            withUnsafeMutablePointerToElements {
                ($0 + offset).initialize(from: base.assumingMemoryBound(to: UInt8.self), count: raw.count)
            }
        }

        func withBytes<T>(at offset: Int, count: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
            try withUnsafeMutablePointerToElements { try body(UnsafeBufferPointer(start: $0 + offset, count: count)) }
        }

        /// The lock guarding this chunk's parse results: one of a few shared ones, since
        /// parsing is rare (tests look at a handful of payloads) and chunks are many.
        private var lock: ConditionLock {
            if let own = header.ownLock { return own }
            let address = UInt(bitPattern: Unmanaged.passUnretained(self).toOpaque())
            return Payload.parseLocks[Int((address >> 4) % UInt(Payload.parseLocks.count))]
        }

        /// The parse result of the payload at `offset`, parsing on first use; concurrent first
        /// readers wait for one parse.
        func parsed(at offset: UInt32, count: UInt32) -> Parsed {
            lock.withLock {
                if let parsed = header.parsed[offset] { return parsed.value }
                let parsed = withBytes(at: Int(offset), count: Int(count)) { Parsed(bytes: $0) }
                header.parsed[offset] = ParsedBox(parsed)
                return parsed
            }
        }

        func isParsed(at offset: UInt32) -> Bool {
            lock.withLock { header.parsed[offset] != nil }
        }

        /// 1 once the payload at `offset` was parsed, 0 before: never more.
        func parseCount(at offset: UInt32) -> Int {
            isParsed(at: offset) ? 1 : 0
        }
    }

    private static let parseLocks = (0..<32).map { _ in ConditionLock() }
    fileprivate static let stripesOn = SpeedUp.stripes.isOn
}

/// Copies the payloads of one connection end to end into shared 64 KiB chunks: a stored
/// notification's payload costs its bytes and no allocation of its own. A chunk lives as long
/// as one of its payloads does. Owned by one thread.
package struct PayloadArena {
    /// Bytes a chunk holds: 64 KiB less the allocator's and the object's headers.
    static let chunkSize = 64 * 1024 - 64
    /// Larger payloads get a chunk of their own.
    static let largestShared = 4 * 1024

    private var chunk: Payload.Chunk?
    private var used = 0
    /// About how much the connection's thread allocated for its notifications since it last
    /// reserved heap: each payload's bytes and ``notificationBytes``.
    private var allocatedSinceReserve = 0
    /// What a notification allocates besides its payload, about (its record, its fields, its
    /// place in the queue and the history).
    private static let notificationBytes = 320
    /// Room reserved in the thread's malloc arena ahead of the notifications, reserved again
    /// every ``reserveInterval`` of them: a connection receiving a flood of notifications grows
    /// its arena in steps of this size rather than page by page (see `fakeapns_reserve_heap`).
    private static let heapReserve = 4 << 20
    /// How much of the reserve is mapped ahead each time, a little more than is used until the
    /// next time: mapping further ahead also makes resident early the spare capacity of the
    /// queue's and the history's arrays, which the arena hands out from the same room.
    private static let heapAhead = 768 << 10
    /// About how much a connection allocates between two reserves.
    private static let reserveInterval = 512 << 10

    package init() {}

    private static let arenaOn = SpeedUp.arena.isOn

    /// A payload holding a copy of `raw`.
    package mutating func payload(copying raw: UnsafeRawBufferPointer) -> Payload {
        allocatedSinceReserve += raw.count + Self.notificationBytes
        if allocatedSinceReserve >= Self.reserveInterval {
            allocatedSinceReserve = 0
            if SpeedUp.reserve.isOn { fakeapns_reserve_heap(Self.heapReserve, SpeedUp.prefault.isOn ? Self.heapAhead : 0) }
        }
        guard raw.count <= Self.largestShared, Self.arenaOn else { return Payload(copying: raw) }
        if chunk == nil || Self.chunkSize - used < raw.count {
            chunk = Payload.Chunk.make(capacity: Self.chunkSize)
            used = 0
        }
        let payload = Payload(copying: raw, into: chunk!, at: used)
        used += raw.count
        return payload
    }
}
