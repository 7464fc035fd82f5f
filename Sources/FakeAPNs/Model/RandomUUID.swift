/// Random (version 4) UUIDs as lowercase text, made without a system call or a file read each:
/// the HTTP/2 side makes one or two per request (`apns-id`, `apns-unique-id`; an `apns-id` is
/// shown in capitals, ``UUIDBits/upperCased``). They identify, they do not protect, so a fast
/// generator seeded once from the system is enough.
struct RandomUUID {
    private var state: UInt64

    /// A generator seeded from the system's random source.
    init() {
        var system = SystemRandomNumberGenerator()
        state = system.next()
    }

    /// The next UUID.
    mutating func next() -> String {
        nextBits().text
    }

    /// The next UUID's 128 bits: kept as they are, a UUID costs no text until it is shown.
    mutating func nextBits() -> UUIDBits {
        UUIDBits(high: splitMix() & ~0xF000 | 0x4000, low: splitMix() & ~(0xC000 << 48) | (0x8000 << 48))
    }

    /// The length of a UUID's text.
    static let length = 36

    /// A UUID from a one-off generator, for callers that make few.
    static func make() -> String {
        makeBits().text
    }

    /// A UUID's bits from a one-off generator.
    static func makeBits() -> UUIDBits {
        var generator = RandomUUID()
        return generator.nextBits()
    }

    private mutating func splitMix() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A UUID's 128 bits and the case its text came in: an `apns-id` kept with a stored
/// notification costs its bits, not a string. APNs answers with "the same value found in" the
/// request's header and clients match answers by it, so a UUID sent as `E621E1F8-…` is written
/// back so. One the server makes up is lowercase (an `apns-unique-id`, as Apple writes them),
/// or in capitals for an `apns-id` (``upperCased``), as APNs makes those.
struct UUIDBits: Sendable, Hashable {
    let high: UInt64
    let low: UInt64
    /// Which of the 32 hex digits were capitals (`A`–`F`), the first digit in the lowest bit; 0
    /// for lowercase text, the common case, which writes without looking at it.
    let capitals: UInt32

    init(high: UInt64, low: UInt64, capitals: UInt32 = 0) {
        self.high = high
        self.low = low
        self.capitals = capitals
    }

    /// The bits of 8-4-4-4-12 text in either case (or mixed), or nil for anything else.
    init?(text: String) {
        var text = text
        guard let bits = text.withUTF8({ Self(utf8: $0) }) else { return nil }
        self = bits
    }

    init?(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        guard bytes.count == RandomUUID.length else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        var capitals: UInt32 = 0
        var digits = 0
        for offset in 0..<bytes.count {
            let byte = bytes[offset]
            if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            guard let value = HexDigit.value(byte) else { return nil }
            if byte &- UInt8(ascii: "A") < 6 { capitals |= 1 << UInt32(digits) }
            if digits < 16 { high = high << 4 | UInt64(value) } else { low = low << 4 | UInt64(value) }
            digits += 1
        }
        self.init(high: high, low: low, capitals: capitals)
    }

    /// The same UUID written in capitals (`ACDFB3EB-105B-…`): the form of the `apns-id`s APNs
    /// makes for a request that sent none (seen in answers reported to AndrewBarba/apns2 #95
    /// and industrialbinaries/lola #8), so that a client comparing ids by their case meets it
    /// in tests. Equal to the same text read back (``init(text:)``): only its letters are
    /// flagged.
    var upperCased: UUIDBits {
        var letters: UInt32 = 0
        for digit in 0..<32 {
            let word = digit < 16 ? high : low
            let nibble = word >> UInt64(60 - 4 * (digit % 16)) & 0xF
            if nibble >= 10 { letters |= 1 << UInt32(digit) }
        }
        return UUIDBits(high: high, low: low, capitals: letters)
    }

    /// The text, in the case it came in (lowercase for a UUID the server made).
    var text: String {
        String(unsafeUninitializedCapacity: RandomUUID.length) { buffer in
            write(into: buffer)
            return RandomUUID.length
        }
    }

    /// Writes the text, in the case it came in, into the first 36 bytes of `buffer`: an answer
    /// header needs the bytes, not a `String`.
    func write(into buffer: UnsafeMutableBufferPointer<UInt8>) {
        precondition(buffer.count >= RandomUUID.length)
        let base = buffer.baseAddress!
        Self.write(high >> 32, digits: 8, to: base)
        base[8] = UInt8(ascii: "-")
        Self.write(high >> 16, digits: 4, to: base + 9)
        base[13] = UInt8(ascii: "-")
        Self.write(high, digits: 4, to: base + 14)
        base[18] = UInt8(ascii: "-")
        Self.write(low >> 48, digits: 4, to: base + 19)
        base[23] = UInt8(ascii: "-")
        Self.write(low, digits: 12, to: base + 24)
        if capitals != 0 { capitalize(base) }
    }

    /// Turns the digits flagged in ``capitals`` to capitals in the text at `base`.
    private func capitalize(_ base: UnsafeMutablePointer<UInt8>) {
        var remaining = capitals
        while remaining != 0 {
            let digit = remaining.trailingZeroBitCount
            remaining &= remaining - 1
            // The digit's place in 8-4-4-4-12: one more for each hyphen before it.
            let offset = digit + (digit >= 8 ? 1 : 0) + (digit >= 12 ? 1 : 0) + (digit >= 16 ? 1 : 0)
                + (digit >= 20 ? 1 : 0)
            let byte = base[offset]
            if byte >= UInt8(ascii: "a") { base[offset] = byte - 0x20 }
        }
    }

    /// Calls `body` with the text, in the case it came in, in a temporary buffer.
    func withText<T>(_ body: (UnsafeBufferPointer<UInt8>) -> T) -> T {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: RandomUUID.length) { buffer in
            write(into: buffer)
            return body(UnsafeBufferPointer(buffer))
        }
    }

    /// The low `digits` hex digits of `word` (an even number), lowercase, most significant
    /// first: two digits per table lookup.
    private static func write(_ word: UInt64, digits: Int, to output: UnsafeMutablePointer<UInt8>) {
        pairs.withUnsafeBufferPointer { pairs in
            var word = word
            var index = digits
            while index > 0 {
                index -= 2
                let pair = pairs[Int(word & 0xFF)]
                output[index] = UInt8(truncatingIfNeeded: pair >> 8)
                output[index + 1] = UInt8(truncatingIfNeeded: pair)
                word >>= 8
            }
        }
    }

    /// Each byte's two lowercase hex digits, the first in the high byte.
    private static let pairs: [UInt16] = (0...255).map { byte in
        let digits = Array("0123456789abcdef".utf8)
        return UInt16(digits[byte >> 4]) << 8 | UInt16(digits[byte & 0xF])
    }
}
