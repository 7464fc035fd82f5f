import FakeAPNs

/// Checks that bytes are one valid JSON text (RFC 8259, UTF-8) without building any value: the
/// daemon's log copies a valid payload into its line as it is, which is many times faster than
/// parsing and writing it again. Depth is limited like the parser's, so hostile nesting costs
/// a bounded stack.
///
/// It runs once per logged notification, so it walks the bytes with a pointer, keeps the
/// cursor in a local in its loops, and steps over plain text in strings eight bytes at a time.
struct JSONValidator {
    private var cursor: UnsafePointer<UInt8>
    private let end: UnsafePointer<UInt8>
    private var depth = 0
    /// Whether whitespace outside strings held a line feed or carriage return (inside strings
    /// they are control characters, which the validator refuses anyway).
    private var sawLineBreak = false

    /// Whether `bytes` are one JSON object (with optional surrounding whitespace) that holds no
    /// line break outside strings, so it can stand inside a one-line log record.
    static func isSingleLineObject(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let start = bytes.baseAddress else { return false }
        var validator = JSONValidator(cursor: start, end: start + bytes.count)
        validator.skipWhitespace()
        guard validator.peek == UInt8(ascii: "{"), validator.value() else { return false }
        validator.skipWhitespace()
        return validator.cursor == validator.end && !validator.sawLineBreak
    }

    private init(cursor: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>) {
        self.cursor = cursor
        self.end = end
    }

    private var peek: UInt8? { cursor < end ? cursor.pointee : nil }

    /// Compact JSON has no whitespace between tokens: one test, inlined, settles that case.
    @inline(__always)
    private mutating func skipWhitespace() {
        if cursor < end && cursor.pointee > 0x20 { return }
        skipWhitespaceRun()
    }

    private mutating func skipWhitespaceRun() {
        var at = cursor
        while at < end {
            switch at.pointee {
            case 0x20, 0x09: at += 1
            case 0x0A, 0x0D:
                sawLineBreak = true
                at += 1
            default:
                cursor = at
                return
            }
        }
        cursor = at
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
        cursor += 1
        skipWhitespace()
        if peek == close {
            cursor += 1
            return true
        }
        while true {
            if members {
                skipWhitespace()
                guard peek == UInt8(ascii: "\""), string() else { return false }
                skipWhitespace()
                guard peek == UInt8(ascii: ":") else { return false }
                cursor += 1
            }
            guard value() else { return false }
            skipWhitespace()
            guard let byte = peek else { return false }
            cursor += 1
            if byte == close { return true }
            guard byte == UInt8(ascii: ",") else { return false }
        }
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard end - cursor >= count else { return false }
        for index in 0..<count where cursor[index] != word.utf8Start[index] { return false }
        cursor += count
        return true
    }

    private mutating func number() -> Bool {
        let start = cursor
        guard scanNumber() else { return false }
        // Short integers are always in range; anything else must be a finite double, as the
        // parser requires (it refuses 1e999).
        let text = UnsafeBufferPointer(start: start, count: cursor - start)
        if text.count <= 18 && !text.contains(where: { $0 == UInt8(ascii: ".") || $0 | 0x20 == UInt8(ascii: "e") }) {
            return true
        }
        return Double(String(decoding: text, as: UTF8.self))?.isFinite == true
    }

    private mutating func scanNumber() -> Bool {
        if peek == UInt8(ascii: "-") { cursor += 1 }
        guard let first = peek, isDigit(first) else { return false }
        cursor += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        if peek == UInt8(ascii: ".") {
            cursor += 1
            guard let digit = peek, isDigit(digit) else { return false }
            skipDigits()
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            cursor += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { cursor += 1 }
            guard let digit = peek, isDigit(digit) else { return false }
            skipDigits()
        }
        return true
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        var at = cursor
        while at < end, isDigit(at.pointee) { at += 1 }
        cursor = at
    }

    private mutating func string() -> Bool {
        cursor += 1
        while true {
            skipPlainText()
            guard cursor < end else { return false }
            let byte = cursor.pointee
            switch byte {
            case UInt8(ascii: "\""):
                cursor += 1
                return true
            case UInt8(ascii: "\\"):
                cursor += 1
                guard let escaped = peek else { return false }
                cursor += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                    UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    continue
                case UInt8(ascii: "u"):
                    guard end - cursor >= 4 else { return false }
                    var unit: UInt16 = 0
                    for index in 0..<4 {
                        guard let digit = HexDigit.value(cursor[index]) else { return false }
                        unit = unit << 4 | UInt16(digit)
                    }
                    // Surrogate pairs are left to the parser (the caller falls back to it), so
                    // what this accepts is exactly what the parser accepts.
                    guard !(0xD800...0xDFFF).contains(unit) else { return false }
                    cursor += 4
                default:
                    return false
                }
            case 0..<0x20:
                return false
            case 0..<0x80:
                // Not reached (plain text was stepped over); kept so every byte has its case.
                cursor += 1
            default:
                guard utf8Sequence() else { return false }
            }
        }
    }

    /// Steps over printable ASCII inside a string up to the next quote, backslash, control
    /// character or non-ASCII byte: most of a payload is such text, so it is tested eight
    /// bytes at a time, and the word that holds the byte that ends the run says where it is.
    private mutating func skipPlainText() {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        /// The high bit of each byte of `word` below `limit` (at most 0x80). Bits above the
        /// lowest can be wrong (a borrow carries), but the lowest marks the first such byte.
        func bytesBelow(_ word: UInt64, _ limit: UInt64) -> UInt64 {
            (word &- ones &* limit) & ~word & high
        }
        var at = cursor
        while end - at >= 8 {
            // Byte 0 of the word is the first in memory: read it as little-endian.
            let word = UInt64(littleEndian: UnsafeRawPointer(at).loadUnaligned(as: UInt64.self))
            let stops = word & high | bytesBelow(word, 0x20) | bytesBelow(word ^ (ones &* 0x22), 1)
                | bytesBelow(word ^ (ones &* 0x5C), 1)
            if stops != 0 {
                cursor = at + stops.trailingZeroBitCount / 8
                return
            }
            at += 8
        }
        while at < end {
            let byte = at.pointee
            guard byte >= 0x20 && byte < 0x80 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") else { break }
            at += 1
        }
        cursor = at
    }

    /// Steps over one multi-byte UTF-8 sequence, rejecting overlong forms, surrogates and
    /// values past U+10FFFF.
    private mutating func utf8Sequence() -> Bool {
        let lead = cursor.pointee
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
        guard end - cursor >= length else { return false }
        let second = cursor[1]
        guard second >= low && second <= high else { return false }
        for index in 2..<length where cursor[index] & 0xC0 != 0x80 { return false }
        cursor += length
        return true
    }
}
