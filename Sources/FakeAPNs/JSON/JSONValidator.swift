/// Checks that bytes are one valid JSON text (RFC 8259, UTF-8) without building any value: the
/// daemon's log copies a valid payload into its line as it is, which is many times faster than
/// parsing and writing it again. Depth is limited like the parser's, so hostile nesting costs
/// a bounded stack.
struct JSONValidator {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0
    private var depth = 0

    /// Whether `bytes` are one JSON object (with optional surrounding whitespace) that holds no
    /// line break outside strings, so it can stand inside a one-line log record.
    static func isSingleLineObject(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var validator = JSONValidator(bytes: bytes)
        validator.skipWhitespace()
        guard validator.peek == UInt8(ascii: "{"), validator.value() else { return false }
        validator.skipWhitespace()
        return validator.position == bytes.count && !bytes.contains(0x0A) && !bytes.contains(0x0D)
    }

    private init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    private var peek: UInt8? { position < bytes.count ? bytes[position] : nil }

    private mutating func skipWhitespace() {
        while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { position += 1 }
    }

    private mutating func value() -> Bool {
        skipWhitespace()
        guard let byte = peek else { return false }
        switch byte {
        case UInt8(ascii: "{"): return container(close: UInt8(ascii: "}"), members: true)
        case UInt8(ascii: "["): return container(close: UInt8(ascii: "]"), members: false)
        case UInt8(ascii: "\""): return string()
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "n"): return literal("null")
        default: return number()
        }
    }

    private mutating func container(close: UInt8, members: Bool) -> Bool {
        depth += 1
        defer { depth -= 1 }
        guard depth <= JSONValue.maximumNestingDepth else { return false }
        position += 1
        skipWhitespace()
        if peek == close {
            position += 1
            return true
        }
        while true {
            if members {
                skipWhitespace()
                guard peek == UInt8(ascii: "\""), string() else { return false }
                skipWhitespace()
                guard peek == UInt8(ascii: ":") else { return false }
                position += 1
            }
            guard value() else { return false }
            skipWhitespace()
            guard let byte = peek else { return false }
            position += 1
            if byte == close { return true }
            guard byte == UInt8(ascii: ",") else { return false }
        }
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard bytes.count - position >= count else { return false }
        for index in 0..<count where bytes[position + index] != word.utf8Start[index] { return false }
        position += count
        return true
    }

    private mutating func number() -> Bool {
        let start = position
        guard scanNumber() else { return false }
        // Short integers are always in range; anything else must be a finite double, as the
        // parser requires (it refuses 1e999).
        let text = UnsafeBufferPointer(rebasing: bytes[start..<position])
        if text.count <= 18 && !text.contains(where: { $0 == UInt8(ascii: ".") || $0 | 0x20 == UInt8(ascii: "e") }) {
            return true
        }
        return Double(String(decoding: text, as: UTF8.self))?.isFinite == true
    }

    private mutating func scanNumber() -> Bool {
        if peek == UInt8(ascii: "-") { position += 1 }
        guard let first = peek, isDigit(first) else { return false }
        position += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        if peek == UInt8(ascii: ".") {
            position += 1
            guard let digit = peek, isDigit(digit) else { return false }
            skipDigits()
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            position += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { position += 1 }
            guard let digit = peek, isDigit(digit) else { return false }
            skipDigits()
        }
        return true
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while let byte = peek, isDigit(byte) { position += 1 }
    }

    private mutating func string() -> Bool {
        position += 1
        while let byte = peek {
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return true
            case UInt8(ascii: "\\"):
                position += 1
                guard let escaped = peek else { return false }
                position += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                    UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    continue
                case UInt8(ascii: "u"):
                    guard bytes.count - position >= 4 else { return false }
                    var unit: UInt16 = 0
                    for index in 0..<4 {
                        guard let digit = DeviceToken.hexValue(bytes[position + index]) else { return false }
                        unit = unit << 4 | UInt16(digit)
                    }
                    // Surrogate pairs are left to the parser (the caller falls back to it), so
                    // what this accepts is exactly what the parser accepts.
                    guard !(0xD800...0xDFFF).contains(unit) else { return false }
                    position += 4
                default:
                    return false
                }
            case 0..<0x20:
                return false
            case 0..<0x80:
                position += 1
            default:
                guard utf8Sequence() else { return false }
            }
        }
        return false
    }

    /// Steps over one multi-byte UTF-8 sequence, rejecting overlong forms, surrogates and
    /// values past U+10FFFF.
    private mutating func utf8Sequence() -> Bool {
        let lead = bytes[position]
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; high = 0x9F
        case 0xF0: length = 4; low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; high = 0x8F
        default: return false
        }
        guard bytes.count - position >= length else { return false }
        let second = bytes[position + 1]
        guard second >= low && second <= high else { return false }
        for index in 2..<length where bytes[position + index] & 0xC0 != 0x80 { return false }
        position += length
        return true
    }
}
