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
    /// by its neighbours, see ``PayloadArena``); only read after creation, the parse results
    /// under a lock.
    private struct Shared: @unchecked Sendable {
        let chunk: ByteChunk
    }

    private let shared: Shared
    /// Where the bytes start in the chunk, and how many there are.
    private let offset: UInt32
    private let length: UInt32
    private var chunk: ByteChunk { shared.chunk }

    /// Creates a payload from raw bytes, without parsing them.
    public init(bytes: some Sequence<UInt8>) {
        let array = Array(bytes)
        self = array.withUnsafeBytes { Payload(copying: $0) }
    }

    /// A payload copied into a chunk of its own: one allocation, bytes and all.
    init(copying raw: UnsafeRawBufferPointer) {
        self.init(chunk: ByteArena.single(raw), offset: 0, count: raw.count)
    }

    /// The payload whose `count` bytes were copied to `offset` in `chunk`.
    fileprivate init(chunk: ByteChunk, offset: Int, count: Int) {
        precondition(offset + count <= Int(UInt32.max), "a payload of \(count) bytes at \(offset)")
        shared = Shared(chunk: chunk)
        self.offset = UInt32(offset)
        self.length = UInt32(count)
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
        chunk.hasComputed(at: offset)
    }

    /// How many times the bytes have been parsed (0 or 1); lets tests check parsing happens once.
    var parseCount: Int {
        isParsed ? 1 : 0
    }

    /// The parse result, parsing on first use; concurrent first readers wait for one parse.
    private var parsed: Parsed {
        chunk.computed(at: offset) { ParsedBox(withBytes { Parsed(bytes: $0) }) }.value
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

    fileprivate final class ParsedBox: Sendable {
        let value: Parsed
        init(_ value: Parsed) { self.value = value }
    }
}

/// The arena a connection copies the payloads it receives into (see ``ByteArena``).
package typealias PayloadArena = ByteArena

extension ByteArena {
    /// A payload holding a copy of `raw`.
    package mutating func payload(copying raw: UnsafeRawBufferPointer) -> Payload {
        let (chunk, offset) = copy(raw)
        return Payload(chunk: chunk, offset: offset, count: raw.count)
    }
}
