/// Apple's topics extension of a provider certificate, OID `1.2.840.113635.100.6.3.6`: the
/// topics a universal certificate may push to, each with its kinds (`app`, `voip`,
/// `complication`).
///
/// The extension value is a DER `SEQUENCE` of pairs, a `UTF8String` topic then a
/// `SEQUENCE { UTF8String kind, ... }`:
///
/// ```
/// SEQUENCE {
///   UTF8String "com.example.app"               SEQUENCE { UTF8String "app" }
///   UTF8String "com.example.app.voip"          SEQUENCE { UTF8String "voip" }
///   UTF8String "com.example.app.complication"  SEQUENCE { UTF8String "complication" }
/// }
/// ```
///
/// ```swift
/// // OpenSSL: X509_EXTENSION_get_data(extension) is the OCTET STRING; pass its content.
/// let entries = CertificateTopics.parse(extensionValue: octetStringContent)
/// entries?.map(\.topic)   // ["com.example.app", "com.example.app.voip", "com.example.app.complication"]
/// ```
enum CertificateTopics {
    /// One topic of the extension and the kinds listed for it.
    typealias Entry = (topic: String, kinds: [String])

    /// The extension's object identifier.
    static let oid = "1.2.840.113635.100.6.3.6"

    /// The topics in `der`, the content of the extension's `OCTET STRING` (starting with the
    /// `SEQUENCE` tag 0x30), in the order listed; nil when it is not exactly that structure.
    ///
    /// Strict DER: definite lengths only, in their shortest form, long forms of at most 4
    /// bytes, no bytes after the outer `SEQUENCE`, only `UTF8String`s holding valid UTF-8
    /// where strings belong. An empty `SEQUENCE` gives no topics; a topic may list no kinds.
    /// Never traps, whatever the bytes; time is linear in their count.
    static func parse(extensionValue der: [UInt8]) -> [Entry]? {
        var outer = DERReader(der[...])
        guard let pairs = outer.read(tag: DERReader.sequenceTag), outer.isAtEnd else { return nil }
        var reader = DERReader(pairs)
        var entries: [Entry] = []
        while !reader.isAtEnd {
            guard let topic = reader.readUTF8String(), let kindList = reader.read(tag: DERReader.sequenceTag) else {
                return nil
            }
            var kindReader = DERReader(kindList)
            var kinds: [String] = []
            while !kindReader.isAtEnd {
                guard let kind = kindReader.readUTF8String() else { return nil }
                kinds.append(kind)
            }
            entries.append((topic: topic, kinds: kinds))
        }
        return entries
    }
}

/// Reads DER elements one after another from a byte slice, refusing anything that is not
/// strict DER with a one-byte tag (see ``CertificateTopics/parse(extensionValue:)``).
struct DERReader {
    /// The tag of a constructed `SEQUENCE`.
    static let sequenceTag: UInt8 = 0x30
    /// The tag of a `UTF8String`.
    static let utf8StringTag: UInt8 = 0x0C

    /// The bytes not read yet.
    private var remaining: ArraySlice<UInt8>

    /// A reader of `bytes`, from their first.
    init(_ bytes: ArraySlice<UInt8>) {
        remaining = bytes
    }

    /// Whether every byte has been read.
    var isAtEnd: Bool {
        remaining.isEmpty
    }

    /// The content of the next element when its tag is `tag` and its length is well formed
    /// and within the input, moving past it; nil, moving nowhere, otherwise. So an optional
    /// element is read with `_ = reader.read(tag: ...)`.
    mutating func read(tag: UInt8) -> ArraySlice<UInt8>? {
        var cursor = remaining.startIndex
        let end = remaining.endIndex
        guard cursor < end, remaining[cursor] == tag else { return nil }
        cursor += 1
        guard cursor < end else { return nil }
        let first = remaining[cursor]
        cursor += 1
        var length = Int(first)
        if first >= 0x80 {
            // Long form: 0x80 alone is BER's indefinite length; over 4 length bytes is refused.
            let byteCount = Int(first & 0x7F)
            guard byteCount >= 1, byteCount <= 4, end - cursor >= byteCount else { return nil }
            // DER: no leading zero byte, and the long form only where the short one cannot say it.
            guard remaining[cursor] != 0 else { return nil }
            length = 0
            for offset in 0..<byteCount {
                length = length << 8 | Int(remaining[cursor + offset])
            }
            cursor += byteCount
            guard length >= 0x80 else { return nil }
        }
        guard length <= end - cursor else { return nil }
        let content = remaining[cursor..<(cursor + length)]
        remaining = remaining[(cursor + length)...]
        return content
    }

    /// The next element's text when it is a `UTF8String` of valid UTF-8, moving past it.
    mutating func readUTF8String() -> String? {
        let saved = remaining
        guard let bytes = read(tag: Self.utf8StringTag), let text = String(validating: bytes, as: UTF8.self) else {
            remaining = saved
            return nil
        }
        return text
    }
}
