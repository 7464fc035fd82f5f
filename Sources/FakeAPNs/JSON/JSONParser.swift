// MARK: - Public entry points

extension JSONValue {
    /// The deepest nesting of arrays and objects the parser accepts.
    ///
    /// The parser keeps its own stack, so depth never threatens the thread's stack; the limit
    /// bounds memory and the recursion of code that later walks the value.
    public static let maximumNestingDepth = 512

    /// Parses one JSON text (RFC 8259, strictly) from UTF-8 bytes.
    ///
    /// Whitespace may surround the value. Rejected: invalid UTF-8, a byte order mark, control
    /// characters or lone surrogates in strings, leading zeros, trailing commas, anything after
    /// the value, numbers beyond `Double`'s range, and nesting deeper than
    /// ``maximumNestingDepth``.
    ///
    /// ```swift
    /// let json = try JSONValue.parse(Array(#"{"aps":{"badge":1}}"#.utf8))
    /// json["aps"]?["badge"]   // .int(1)
    /// ```
    ///
    /// - Throws: ``JSONParseError`` with the byte offset of the first problem.
    public static func parse(_ bytes: some Collection<UInt8>) throws(JSONParseError) -> JSONValue {
        let result = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONParseError) in try JSONParser.parse(buffer) }
        }
        if let result {
            return try result.get()
        }
        return try Array(bytes).withUnsafeBufferPointer { buffer throws(JSONParseError) in
            try JSONParser.parse(buffer)
        }
    }

    /// Parses one JSON text from a string, by its UTF-8 bytes; see ``parse(_:)``.
    ///
    /// ```swift
    /// let value = try JSONValue(parsing: "[1, 2.5, \"x\"]")   // [1, 2.5, "x"]
    /// ```
    ///
    /// - Throws: ``JSONParseError`` with the byte offset (in UTF-8) of the first problem.
    public init(parsing string: String) throws(JSONParseError) {
        var string = string
        let result = string.withUTF8 { buffer in
            Result { () throws(JSONParseError) in try JSONParser.parse(buffer) }
        }
        self = try result.get()
    }
}

// MARK: - JSONParseError

/// Why a JSON text was rejected, and where.
///
/// ```swift
/// do {
///     _ = try JSONValue(parsing: #"{"a":1 "b":2}"#)
/// } catch {
///     error.offset    // 7
///     error.message   // "expected ',' or '}' after object member at byte 7"
/// }
/// ```
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The zero-based byte offset of the problem: usually the first byte that could not be
    /// accepted; for an unterminated string its opening quote, for a bad escape its backslash,
    /// for an out-of-range number its first byte; the input's length when the input ended early.
    public let offset: Int

    /// A sentence for humans that names the problem and ends with its byte offset.
    public let message: String

    /// Creates an error from a description of the problem and the byte offset where it was found.
    ///
    /// The message becomes `"<reason> at byte <offset>"`.
    public init(_ reason: String, at offset: Int) {
        self.offset = offset
        self.message = "\(reason) at byte \(offset)"
    }

    /// The ``message``.
    public var description: String {
        message
    }
}

// MARK: - Parser

/// A strict, non-recursive RFC 8259 parser over a contiguous UTF-8 buffer.
///
/// Arrays and objects being built live on an explicit stack, so hostile nesting cannot
/// overflow the thread's stack. Strings without escapes become `String`s straight from the
/// input; strings with escapes are assembled in one scratch buffer reused for the whole parse.
struct JSONParser {
    private let input: UnsafeBufferPointer<UInt8>
    private var position = 0
    /// Assembles strings that contain escapes; reused for every such string in one parse.
    private var scratch: [UInt8] = []

    private init(_ input: UnsafeBufferPointer<UInt8>) {
        self.input = input
    }

    /// Parses `input` as one complete JSON text.
    static func parse(_ input: UnsafeBufferPointer<UInt8>) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(input)
        return try parser.parseText()
    }

    /// An array or object whose members are still being read.
    private struct OpenContainer {
        /// Room reserved up front: enough for most payload containers without regrowing.
        private static let initialCapacity = 8

        let isObject: Bool
        var elements: [JSONValue] = []
        var members: [JSONObject.Member] = []
        /// The key of the object member whose value is being read.
        var pendingKey = ""

        static func array() -> OpenContainer {
            var container = OpenContainer(isObject: false)
            container.elements.reserveCapacity(initialCapacity)
            return container
        }

        static func object(firstKey: String) -> OpenContainer {
            var container = OpenContainer(isObject: true, pendingKey: firstKey)
            container.members.reserveCapacity(initialCapacity)
            return container
        }
    }

    private mutating func parseText() throws(JSONParseError) -> JSONValue {
        if input.starts(with: [0xEF, 0xBB, 0xBF]) {
            throw JSONParseError("byte order mark is not allowed", at: 0)
        }
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        guard position == input.count else {
            throw failure("unexpected data after the JSON value")
        }
        return value
    }

    /// Parses one value, which may be a whole tree of arrays and objects.
    private mutating func parseValue() throws(JSONParseError) -> JSONValue {
        var open: [OpenContainer] = []
        readingValues: while true {
            // Here the next byte starts a value (leading whitespace already skipped).
            var value: JSONValue
            guard let byte = peek() else { throw failure("expected a JSON value") }
            switch byte {
            case UInt8(ascii: "["):
                guard open.count < JSONValue.maximumNestingDepth else {
                    throw failure("nesting deeper than \(JSONValue.maximumNestingDepth) levels")
                }
                position += 1
                skipWhitespace()
                if peek() == UInt8(ascii: "]") {
                    position += 1
                    value = .array([])
                } else {
                    open.append(.array())
                    continue readingValues
                }
            case UInt8(ascii: "{"):
                guard open.count < JSONValue.maximumNestingDepth else {
                    throw failure("nesting deeper than \(JSONValue.maximumNestingDepth) levels")
                }
                position += 1
                skipWhitespace()
                if peek() == UInt8(ascii: "}") {
                    position += 1
                    value = .object(JSONObject())
                } else {
                    open.append(.object(firstKey: try parseMemberKey()))
                    continue readingValues
                }
            case UInt8(ascii: "\""):
                value = .string(try parseString())
            case UInt8(ascii: "t"):
                try expectLiteral("true")
                value = .bool(true)
            case UInt8(ascii: "f"):
                try expectLiteral("false")
                value = .bool(false)
            case UInt8(ascii: "n"):
                try expectLiteral("null")
                value = .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                value = try parseNumber()
            default:
                throw failure("expected a JSON value")
            }

            // Hand the finished value to its container; close every container that ends here.
            while !open.isEmpty {
                let top = open.count - 1
                let isObject = open[top].isObject
                if isObject {
                    open[top].members.append(JSONObject.Member(key: open[top].pendingKey, value: value))
                } else {
                    open[top].elements.append(value)
                }
                skipWhitespace()
                let closing = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
                switch peek() {
                case UInt8(ascii: ","):
                    let comma = position
                    position += 1
                    skipWhitespace()
                    if peek() == closing {
                        throw JSONParseError("trailing comma in \(isObject ? "object" : "array")", at: comma)
                    }
                    if isObject {
                        open[top].pendingKey = try parseMemberKey()
                    }
                    continue readingValues
                case closing:
                    position += 1
                    let container = open.removeLast()
                    value = isObject ? .object(JSONObject(members: container.members)) : .array(container.elements)
                default:
                    throw failure(
                        isObject ? "expected ',' or '}' after object member" : "expected ',' or ']' after array element"
                    )
                }
            }
            return value
        }
    }

    /// Reads `"key"` and the `:` after it, leaving the position at the member's value.
    private mutating func parseMemberKey() throws(JSONParseError) -> String {
        guard peek() == UInt8(ascii: "\"") else {
            throw failure("expected '\"' to begin an object key")
        }
        let key = try parseString()
        skipWhitespace()
        guard peek() == UInt8(ascii: ":") else {
            throw failure("expected ':' after object key")
        }
        position += 1
        skipWhitespace()
        return key
    }

    // MARK: Strings

    /// Reads a string starting at its opening quote.
    private mutating func parseString() throws(JSONParseError) -> String {
        let openingQuote = position
        let start = position + 1
        // Fast path: no escapes, so the string is a slice of the input.
        var index = start
        while index < input.count {
            let byte = input[index]
            if byte >= 0x20 && byte < 0x80 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
                index += 1
                continue
            }
            position = index
            if byte == UInt8(ascii: "\"") {
                position += 1
                return String(decoding: UnsafeBufferPointer(rebasing: input[start..<index]), as: UTF8.self)
            } else if byte == UInt8(ascii: "\\") {
                return try parseEscapedString(from: start, openingQuote: openingQuote)
            } else if byte < 0x20 {
                throw failure("unescaped control character \(hex(byte)) in string")
            }
            try skipUTF8Sequence()
            index = position
        }
        throw JSONParseError("unterminated string", at: openingQuote)
    }

    /// Reads the rest of a string that contains escapes; `start` is its first content byte.
    private mutating func parseEscapedString(from start: Int, openingQuote: Int) throws(JSONParseError) -> String {
        scratch.removeAll(keepingCapacity: true)
        var runStart = start
        while position < input.count {
            let byte = input[position]
            if byte == UInt8(ascii: "\"") {
                scratch.append(contentsOf: input[runStart..<position])
                position += 1
                return String(decoding: scratch, as: UTF8.self)
            } else if byte == UInt8(ascii: "\\") {
                scratch.append(contentsOf: input[runStart..<position])
                try parseEscape()
                runStart = position
            } else if byte < 0x20 {
                throw failure("unescaped control character \(hex(byte)) in string")
            } else if byte < 0x80 {
                position += 1
            } else {
                try skipUTF8Sequence()
            }
        }
        throw JSONParseError("unterminated string", at: openingQuote)
    }

    /// Decodes one escape sequence starting at its backslash into `scratch`.
    private mutating func parseEscape() throws(JSONParseError) {
        let backslash = position
        position += 1
        guard let byte = peek() else { throw JSONParseError("unterminated string", at: backslash) }
        position += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"):
            scratch.append(byte)
        case UInt8(ascii: "b"):
            scratch.append(0x08)
        case UInt8(ascii: "f"):
            scratch.append(0x0C)
        case UInt8(ascii: "n"):
            scratch.append(0x0A)
        case UInt8(ascii: "r"):
            scratch.append(0x0D)
        case UInt8(ascii: "t"):
            scratch.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try parseHexQuad(escapeStart: backslash)
            let scalarValue: UInt32
            switch unit {
            case 0xD800...0xDBFF:
                let lowStart = position
                guard input[position...].starts(with: [UInt8(ascii: "\\"), UInt8(ascii: "u")]) else {
                    throw JSONParseError("lone high surrogate \\u\(hex4(unit)) in string", at: backslash)
                }
                position += 2
                let low = try parseHexQuad(escapeStart: lowStart)
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw JSONParseError("lone high surrogate \\u\(hex4(unit)) in string", at: backslash)
                }
                scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            case 0xDC00...0xDFFF:
                throw JSONParseError("lone low surrogate \\u\(hex4(unit)) in string", at: backslash)
            default:
                scalarValue = UInt32(unit)
            }
            appendUTF8(scalarValue)
        default:
            throw JSONParseError("invalid escape sequence '\\\(describe(byte))' in string", at: backslash)
        }
    }

    /// Appends a Unicode scalar value (never a surrogate) to `scratch` as UTF-8.
    private mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case ..<0x80:
            scratch.append(UInt8(scalar))
        case ..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case ..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    /// Reads the four hex digits of a `\u` escape.
    private mutating func parseHexQuad(escapeStart: Int) throws(JSONParseError) -> UInt16 {
        var unit: UInt16 = 0
        for _ in 0..<4 {
            guard let byte = peek(), let digit = hexDigitValue(byte) else {
                throw JSONParseError("invalid \\u escape: expected four hex digits", at: escapeStart)
            }
            unit = unit << 4 | UInt16(digit)
            position += 1
        }
        return unit
    }

    /// Checks one multi-byte UTF-8 sequence at `position` and steps over it.
    private mutating func skipUTF8Sequence() throws(JSONParseError) {
        let lead = input[position]
        // How many continuation bytes follow, and the range allowed for the first of them,
        // which excludes overlong forms, UTF-16 surrogates (ED) and values above U+10FFFF (F4).
        let (continuationCount, secondRange): (Int, ClosedRange<UInt8>)
        switch lead {
        case 0xC2...0xDF: (continuationCount, secondRange) = (1, 0x80...0xBF)
        case 0xE0: (continuationCount, secondRange) = (2, 0xA0...0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: (continuationCount, secondRange) = (2, 0x80...0xBF)
        case 0xED: (continuationCount, secondRange) = (2, 0x80...0x9F)
        case 0xF0: (continuationCount, secondRange) = (3, 0x90...0xBF)
        case 0xF1...0xF3: (continuationCount, secondRange) = (3, 0x80...0xBF)
        case 0xF4: (continuationCount, secondRange) = (3, 0x80...0x8F)
        default: throw failure("invalid UTF-8 byte \(hex(lead)) in string")
        }
        for offset in 1...continuationCount {
            let at = position + offset
            guard at < input.count else {
                throw JSONParseError("truncated UTF-8 sequence in string", at: position)
            }
            let range = offset == 1 ? secondRange : 0x80...0xBF
            guard range.contains(input[at]) else {
                throw JSONParseError("invalid UTF-8 byte \(hex(input[at])) in string", at: at)
            }
        }
        position += continuationCount + 1
    }

    // MARK: Numbers and literals

    /// Reads a number; the grammar is checked here, the value converted afterwards.
    private mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = position
        if peek() == UInt8(ascii: "-") {
            position += 1
        }
        guard let first = peek(), isDigit(first) else {
            throw failure("expected a digit after '-'")
        }
        position += 1
        if first == UInt8(ascii: "0") {
            if let next = peek(), isDigit(next) {
                throw JSONParseError("leading zeros are not allowed in numbers", at: position - 1)
            }
        } else {
            skipDigits()
        }
        var isInteger = true
        if peek() == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard let digit = peek(), isDigit(digit) else { throw failure("expected a digit after '.'") }
            skipDigits()
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            isInteger = false
            position += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") {
                position += 1
            }
            guard let digit = peek(), isDigit(digit) else { throw failure("expected a digit in exponent") }
            skipDigits()
        }
        let text = UnsafeBufferPointer(rebasing: input[start..<position])
        if isInteger, let integer = Self.integer(text) {
            return .int(integer)
        }
        // Short numbers make small (inline) strings, so this does not allocate in practice.
        guard let double = Double(String(decoding: text, as: UTF8.self)), double.isFinite else {
            throw JSONParseError("number is out of range for a double", at: start)
        }
        return .double(double)
    }

    /// The value of an optionally negative run of digits, or `nil` if it does not fit in `Int`.
    private static func integer(_ text: UnsafeBufferPointer<UInt8>) -> Int? {
        let isNegative = text.first == UInt8(ascii: "-")
        // Accumulate negatively: Int.min has no positive counterpart.
        var value = 0
        for byte in text.dropFirst(isNegative ? 1 : 0) {
            let (shifted, overflowed) = value.multipliedReportingOverflow(by: 10)
            let (next, underflowed) = shifted.subtractingReportingOverflow(Int(byte &- UInt8(ascii: "0")))
            guard !overflowed, !underflowed else { return nil }
            value = next
        }
        if isNegative { return value }
        return value == .min ? nil : -value
    }

    private mutating func skipDigits() {
        while let byte = peek(), isDigit(byte) {
            position += 1
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        guard input[position...].starts(with: expected) else {
            throw failure("invalid literal, expected '\(literal)'")
        }
        position += expected.count
    }

    // MARK: Bytes

    private func peek() -> UInt8? {
        position < input.count ? input[position] : nil
    }

    private mutating func skipWhitespace() {
        while position < input.count {
            switch input[position] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
                position += 1
            default:
                return
            }
        }
    }

    /// An error at the current position, noting when the input has already ended.
    private func failure(_ reason: String) -> JSONParseError {
        position < input.count
            ? JSONParseError(reason, at: position)
            : JSONParseError("\(reason), but the input ended", at: position)
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private func hexDigitValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// `0x1F` style, for bytes in messages.
    private func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return "0x\(digits[Int(byte >> 4)])\(digits[Int(byte & 0xF)])"
    }

    /// `D83D` style, for UTF-16 units in messages.
    private func hex4(_ unit: UInt16) -> String {
        String(hex(UInt8(unit >> 8)).dropFirst(2) + hex(UInt8(unit & 0xFF)).dropFirst(2))
    }

    /// A printable ASCII byte as itself, anything else in hex.
    private func describe(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? String(UnicodeScalar(byte)) : hex(byte)
    }
}
