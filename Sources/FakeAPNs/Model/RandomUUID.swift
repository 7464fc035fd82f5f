/// Random (version 4) UUIDs as lowercase text, made without a system call or a file read each:
/// the HTTP/2 side makes one or two per request (`apns-id`, `apns-unique-id`). They identify,
/// they do not protect, so a fast generator seeded once from the system is enough.
struct RandomUUID {
    private var state: UInt64

    /// A generator seeded from the system's random source.
    init() {
        var system = SystemRandomNumberGenerator()
        state = system.next()
    }

    /// The next UUID.
    mutating func next() -> String {
        String(unsafeUninitializedCapacity: Self.length) { buffer in
            next(into: buffer)
            return Self.length
        }
    }

    /// The length of a UUID's text.
    static let length = 36

    /// Writes the next UUID's text into the first ``length`` bytes of `buffer`: an answer
    /// header needs the bytes, not a `String`.
    mutating func next(into buffer: UnsafeMutableBufferPointer<UInt8>) {
        precondition(buffer.count >= Self.length)
        let high = splitMix() & ~0xF000 | 0x4000
        let low = splitMix() & ~(0xC000 << 48) | (0x8000 << 48)
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
    }

    /// A UUID from a one-off generator, for callers that make few.
    static func make() -> String {
        var generator = RandomUUID()
        return generator.next()
    }

    private mutating func splitMix() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
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
