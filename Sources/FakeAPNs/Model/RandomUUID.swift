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
        let high = splitMix()
        let low = splitMix()
        return Self.format(high: high & ~0xF000 | 0x4000, low: low & ~(0xC000 << 48) | (0x8000 << 48))
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

    private static let digits = Array("0123456789abcdef".utf8)

    private static func format(high: UInt64, low: UInt64) -> String {
        String(unsafeUninitializedCapacity: 36) { buffer in
            var index = 0
            for position in 0..<32 {
                if position == 8 || position == 12 || position == 16 || position == 20 {
                    buffer[index] = UInt8(ascii: "-")
                    index += 1
                }
                let word = position < 16 ? high : low
                let shift = UInt64(15 - position % 16) * 4
                buffer[index] = digits[Int(word >> shift & 0xF)]
                index += 1
            }
            return index
        }
    }
}
