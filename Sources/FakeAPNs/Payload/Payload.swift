public import Foundation

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
    /// The storage, shared by copies; only read after creation, the parse result under a lock.
    private struct Shared: @unchecked Sendable {
        let storage: Storage
    }

    private let shared: Shared
    private var storage: Storage { shared.storage }

    /// Creates a payload from raw bytes, without parsing them.
    public init(bytes: some Sequence<UInt8>) {
        let array = Array(bytes)
        shared = Shared(storage: array.withUnsafeBytes { Storage.make(copying: $0) })
    }

    /// A payload copied straight from a receive buffer: one allocation, bytes and all.
    init(copying raw: UnsafeRawBufferPointer) {
        shared = Shared(storage: Storage.make(copying: raw))
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
        storage.withBytes { Array($0) }
    }

    /// Calls `body` with the bytes, without copying them.
    func withBytes<T>(_ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        try storage.withBytes(body)
    }

    /// How many bytes the payload has.
    public var count: Int {
        storage.count
    }

    /// The payload exactly as sent, as `Data`.
    public var data: Data {
        storage.withBytes { Data($0) }
    }

    /// The payload as text, or `nil` when the bytes are not valid UTF-8.
    public var text: String? {
        storage.withBytes { String(validating: $0, as: UTF8.self) }
    }

    /// The parsed JSON, or `nil` when the bytes are not valid JSON.
    ///
    /// Valid JSON that is not an object (such as `[1]`) is still returned here, while
    /// ``parseError`` reports that APNs payloads must be objects.
    public var json: JSONValue? {
        storage.parsed.json
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
        storage.parsed.parseError
    }

    /// The `aps` dictionary; empty when the payload has none, is not a JSON object, or its
    /// `aps` is not a dictionary (``json`` shows what was there).
    public var aps: APS {
        storage.parsed.aps
    }

    /// Every top-level member except `aps`, in written order: the app's own data.
    public var customKeys: JSONObject {
        storage.parsed.customKeys
    }

    /// The top-level member named `key` (including `"aps"`), or `nil` when there is none or
    /// the payload is not a JSON object.
    public subscript(key: String) -> JSONValue? {
        storage.parsed.json?[key]
    }

    /// Whether the bytes have been parsed yet; lets tests check that parsing is lazy.
    var isParsed: Bool {
        storage.isParsed
    }

    /// How many times the bytes have been parsed (0 or 1); lets tests check parsing happens once.
    var parseCount: Int {
        storage.parseCount
    }

    /// Payloads are equal when their bytes are equal.
    public static func == (lhs: Payload, rhs: Payload) -> Bool {
        lhs.storage === rhs.storage
            || lhs.storage.withBytes { left in rhs.storage.withBytes { right in left.elementsEqual(right) } }
    }

    /// Hashes the bytes, consistent with `==`.
    public func hash(into hasher: inout Hasher) {
        storage.withBytes { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}

extension Payload: CustomStringConvertible {
    /// The payload's text, or its size when it is not UTF-8.
    public var description: String {
        text ?? "<\(storage.count) bytes, not UTF-8>"
    }
}

// MARK: - Lazy parsing

extension Payload {
    /// What parsing the bytes produced.
    private struct Parsed: Sendable {
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

    /// What a payload's storage holds besides its bytes.
    /// Kept small: a server holds thousands of payloads and parses few of them, so the parse
    /// result lives behind one reference, added on first use.
    private struct Header {
        /// 32 bits, beside `parseCount`: the header is 16 bytes, and a 100-byte payload one
        /// 144-byte allocation instead of 160.
        let count: UInt32
        var parseCount: Int32 = 0
        var parsed: ParsedBox?
    }

    private final class ParsedBox: Sendable {
        let value: Parsed
        init(_ value: Parsed) { self.value = value }
    }

    /// Shared by all copies of one payload: the bytes live in the same allocation as the
    /// object (a gateway makes a million of these a second), and the parse result is added on
    /// first use, under one of a few shared locks, so the bytes are parsed at most once.
    private final class Storage: ManagedBuffer<Header, UInt8> {
        static func make(copying raw: UnsafeRawBufferPointer) -> Storage {
            precondition(raw.count <= Int(UInt32.max), "a payload of \(raw.count) bytes")
            let buffer = Storage.create(minimumCapacity: raw.count) { _ in Header(count: UInt32(raw.count)) }
            let storage = unsafeDowncast(buffer, to: Storage.self)
            if let base = raw.baseAddress, raw.count > 0 {
                storage.withUnsafeMutablePointerToElements {
                    $0.initialize(from: base.assumingMemoryBound(to: UInt8.self), count: raw.count)
                }
            }
            return storage
        }

        var count: Int { Int(header.count) }

        func withBytes<T>(_ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
            try withUnsafeMutablePointerToElements { try body(UnsafeBufferPointer(start: $0, count: Int(header.count))) }
        }

        /// The lock guarding this payload's parse result: one of a few shared ones, since
        /// parsing is rare (tests look at a handful of payloads) and payloads are many.
        private var lock: ConditionLock {
            let address = UInt(bitPattern: Unmanaged.passUnretained(self).toOpaque())
            return Payload.parseLocks[Int((address >> 4) % UInt(Payload.parseLocks.count))]
        }

        /// The parse result, parsing on first use; concurrent first readers wait for one parse.
        var parsed: Parsed {
            lock.withLock {
                if let parsed = header.parsed {
                    return parsed.value
                }
                let parsed = withBytes { Parsed(bytes: $0) }
                header.parsed = ParsedBox(parsed)
                header.parseCount += 1
                return parsed
            }
        }

        var isParsed: Bool {
            lock.withLock { header.parsed != nil }
        }

        var parseCount: Int {
            lock.withLock { Int(header.parseCount) }
        }
    }

    private static let parseLocks = (0..<32).map { _ in ConditionLock() }
}
