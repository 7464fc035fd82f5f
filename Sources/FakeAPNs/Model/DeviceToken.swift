#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A device token: the opaque bytes APNs uses to address one app on one device.
///
/// Tokens travel as raw bytes in the binary protocol and as hex in HTTP/2 paths and in logs.
/// Length is not checked here (Apple warns that it varies); the gateways enforce their limits.
///
/// ```swift
/// let token = try DeviceToken(hex: "<fe15a27d 5df3c347 ...>")   // NSData description, pasted
/// token.hex                                      // "fe15a27d5df3c347..."
/// let fixture: DeviceToken = "fe15a27d5df3c347"  // string literal, for tests
/// ```
public struct DeviceToken: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// Tokens of up to 32 bytes (every device token so far) are kept inline, so a gateway
    /// receiving a million notifications a second allocates nothing for them. Each length has
    /// one representation, so the synthesized equality and hashing are the bytes'.
    private enum Storage: Hashable, Sendable {
        case inline(count: UInt8, UInt64, UInt64, UInt64, UInt64)
        case heap([UInt8])
    }

    private let storage: Storage

    /// The longest token APNs takes, in bytes: Apple once announced 100 bytes as the ceiling
    /// (the binary gateway's limit; HTTP/2 paths of up to 200 hex digits). Today's are 32.
    public static let maximumByteCount = 100

    /// The token's bytes.
    public var bytes: [UInt8] {
        withUnsafeBytes { Array($0) }
    }

    /// Calls `body` with the token's bytes, without copying them into an array.
    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        switch storage {
        case .heap(let bytes):
            return try bytes.withUnsafeBytes(body)
        case .inline(let count, let a, let b, let c, let d):
            // Byte i sits in word i / 8 at bit (i % 8) * 8: little-endian words, laid end to
            // end, are the bytes in order.
            var words = (a.littleEndian, b.littleEndian, c.littleEndian, d.littleEndian)
            return try Swift.withUnsafeBytes(of: &words) { try body(UnsafeRawBufferPointer(rebasing: $0.prefix(Int(count)))) }
        }
    }

    /// How many bytes the token has.
    public var count: Int {
        switch storage {
        case .heap(let bytes): bytes.count
        case .inline(let count, _, _, _, _): Int(count)
        }
    }

    /// Creates a token from its bytes.
    public init(bytes: some Sequence<UInt8>) {
        let array = Array(bytes)
        self = array.withUnsafeBytes { DeviceToken(copying: $0) }
    }

    /// A token copied straight from a receive buffer.
    init(copying raw: UnsafeRawBufferPointer) {
        guard raw.count <= 32 else {
            storage = .heap(Array(raw))
            return
        }
        // One copy into four little-endian words: byte i lands in word i / 8 at bit (i % 8) * 8.
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        Swift.withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: raw) }
        storage = .inline(
            count: UInt8(raw.count), UInt64(littleEndian: words.0), UInt64(littleEndian: words.1),
            UInt64(littleEndian: words.2), UInt64(littleEndian: words.3))
    }

    /// Creates a token from hexadecimal text.
    ///
    /// Upper- and lowercase digits are accepted, and so is the form iOS logs for an `NSData`
    /// token: spaces, tabs and line breaks anywhere, a `<` before the first digit and a `>`
    /// after the last.
    ///
    /// ```swift
    /// try DeviceToken(hex: "FE15A27D")              // bytes [0xfe, 0x15, 0xa2, 0x7d]
    /// try DeviceToken(hex: "<fe15a27d 5df3c347>")   // bytes of "fe15a27d5df3c347"
    /// try DeviceToken(hex: "fe1g")                  // throws .invalidCharacter("g", position: 3)
    /// ```
    ///
    /// - Throws: ``DeviceTokenError`` when there are no digits, an odd number of digits,
    ///   or a character that is not a hex digit, whitespace or a bracket in its place.
    public init(hex: String) throws(DeviceTokenError) {
        self.init(bytes: try Self.decode(hex))
    }

    /// Creates a token from a hex string literal; for tests and fixtures.
    ///
    /// The literal is read as by ``init(hex:)``. A literal that is not a valid token is a
    /// programming error in the test, so it stops the program with a message naming the
    /// problem, such as `Invalid DeviceToken literal "fe1g": invalid character 'g' (U+0067)
    /// at position 3 in device token: expected hex digits 0-9, a-f or A-F`.
    public init(stringLiteral value: String) {
        do {
            self.init(bytes: try Self.decode(value))
        } catch {
            fatalError("Invalid DeviceToken literal \"\(value)\": \(error)")
        }
    }

    /// The bytes as lowercase hex digits with no separators, as in an HTTP/2 request path.
    public var hex: String {
        guard count > 0 else { return "" }
        return String(unsafeUninitializedCapacity: count * 2) { buffer in writeHex(at: buffer.baseAddress!) }
    }

    /// Writes ``hex``'s digits (two per byte) at `pointer`, which must have room for them;
    /// returns how many were written. The daemon's log writes every token this way.
    package func writeHex(at pointer: UnsafeMutablePointer<UInt8>) -> Int {
        let digits: StaticString = "0123456789abcdef"
        let table = digits.utf8Start
        return withUnsafeBytes { bytes in
            for (position, byte) in bytes.enumerated() {
                pointer[2 * position] = table[Int(byte >> 4)]
                pointer[2 * position + 1] = table[Int(byte & 0x0F)]
            }
            return bytes.count * 2
        }
    }

    /// The bytes as `Data`.
    public var data: Data {
        Data(bytes)
    }

    /// The token as lowercase hex (``hex``).
    public var description: String {
        hex
    }

    // MARK: Decoding

    /// The outcome of decoding, before a bad byte's offset is turned into a character position.
    private enum Decoded {
        case bytes([UInt8])
        case failure(DeviceTokenError)
        case invalidByte(utf8Offset: Int)
    }

    private static func decode(_ text: String) throws(DeviceTokenError) -> [UInt8] {
        var utf8Text = text
        switch utf8Text.withUTF8(decodeDigits) {
        case .bytes(let bytes):
            return bytes
        case .failure(let error):
            throw error
        case .invalidByte(let offset):
            // Every byte before the bad one is ASCII, so the offset starts a Unicode scalar.
            let index = text.utf8.index(text.startIndex, offsetBy: offset)
            throw .invalidCharacter(
                Character(text.unicodeScalars[index]),
                position: text.distance(from: text.startIndex, to: index)
            )
        }
    }

    private static func decodeDigits(_ utf8: UnsafeBufferPointer<UInt8>) -> Decoded {
        var firstDigit = 0
        var endOfDigits = utf8.count
        // Brackets are allowed only around the digits, where NSData's description puts them.
        while firstDigit < endOfDigits, isWhitespace(utf8[firstDigit]) { firstDigit += 1 }
        if firstDigit < endOfDigits, utf8[firstDigit] == UInt8(ascii: "<") { firstDigit += 1 }
        while endOfDigits > firstDigit, isWhitespace(utf8[endOfDigits - 1]) { endOfDigits -= 1 }
        if endOfDigits > firstDigit, utf8[endOfDigits - 1] == UInt8(ascii: ">") { endOfDigits -= 1 }

        var bytes: [UInt8] = []
        bytes.reserveCapacity((endOfDigits - firstDigit) / 2)
        var pendingHighNibble: UInt8?
        var digitCount = 0
        for offset in firstDigit..<endOfDigits {
            let byte = utf8[offset]
            if isWhitespace(byte) { continue }
            guard let nibble = HexDigit.value(byte) else { return .invalidByte(utf8Offset: offset) }
            digitCount += 1
            if let high = pendingHighNibble {
                bytes.append(high << 4 | nibble)
                pendingHighNibble = nil
            } else {
                pendingHighNibble = nibble
            }
        }
        guard digitCount > 0 else { return .failure(.empty) }
        guard pendingHighNibble == nil else { return .failure(.oddLength(digitCount: digitCount)) }
        return .bytes(bytes)
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n")
            || byte == UInt8(ascii: "\r")
    }

}

/// Why text could not be read as a device token.
public enum DeviceTokenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The text holds no hex digits.
    case empty
    /// The text holds an odd number of hex digits, so the last byte is incomplete.
    case oddLength(digitCount: Int)
    /// A character that is not a hex digit, whitespace, or a bracket around the digits.
    /// `position` counts characters from zero, in the text as given.
    case invalidCharacter(Character, position: Int)

    /// A sentence naming the problem, for test failures and logs.
    public var description: String {
        switch self {
        case .empty:
            "device token is empty: expected hex digits"
        case .oddLength(let digitCount):
            "device token has an odd number of hex digits (\(digitCount)): each byte needs two"
        case .invalidCharacter(let character, let position):
            "invalid character \(Self.describe(character)) at position \(position) in device token:"
                + " expected hex digits 0-9, a-f or A-F"
        }
    }

    /// `'g' (U+0067)`; control characters as their code alone, since they do not print.
    private static func describe(_ character: Character) -> String {
        let scalars = character.unicodeScalars
        let codes = scalars.map { scalar in
            let digits = String(scalar.value, radix: 16, uppercase: true)
            return "U+" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        }.joined(separator: " ")
        let isPrintable = scalars.allSatisfy { $0.properties.generalCategory != .control }
        return isPrintable ? "'\(character)' (\(codes))" : codes
    }
}
