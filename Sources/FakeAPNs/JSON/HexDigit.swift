/// Hex digits as device tokens, JSON `\u` escapes and HTTP/2 paths spell them.
package enum HexDigit {
    /// The value of one hex digit (either case), or nil.
    package static func value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension HexDigit {
    /// Decodes `digits`, an even number of lowercase hex digits (`0`-`9`, `a`-`f`, nothing
    /// else), into `bytes`, which holds `digits.count / 2`; false, with `bytes` partly
    /// written, when a byte is not such a digit. Eight digits at a time in a 64-bit word, as
    /// every HTTP/2 request's 64-digit token goes through here.
    package static func decodeLowercase(_ digits: UnsafeRawBufferPointer, into bytes: UnsafeMutableRawBufferPointer) -> Bool {
        precondition(digits.count % 2 == 0 && bytes.count >= digits.count / 2)
        let lanes: UInt64 = 0x0101_0101_0101_0101
        var offset = 0
        while offset + 8 <= digits.count {
            let word = UInt64(littleEndian: digits.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            // Each byte's value, were it a digit: its low nibble, plus 9 for a letter (bit 6).
            let values = (word & (lanes &* 0x0F)) &+ ((word >> 6) & lanes) &* 9
            // The digit that value spells, in lowercase; a byte is a digit when it is that one
            // and its value fits a nibble (`g` to `o` would come back as themselves).
            let spelled = values &+ (lanes &* 0x30) &+ (((values &+ (lanes &* 0x06)) >> 4) & lanes) &* 0x27
            guard spelled == word, values & (lanes &* 0xF0) == 0 else { return false }
            // Pairs of nibbles, first the high one, into the four bytes they make.
            var packed = ((values & 0x000F_000F_000F_000F) << 4) | ((values >> 8) & 0x000F_000F_000F_000F)
            packed = (packed | (packed >> 8)) & 0x0000_FFFF_0000_FFFF
            packed = (packed | (packed >> 16)) & 0xFFFF_FFFF
            bytes.storeBytes(of: UInt32(packed).littleEndian, toByteOffset: offset / 2, as: UInt32.self)
            offset += 8
        }
        while offset < digits.count {
            guard let high = lowercaseValue(digits[offset]), let low = lowercaseValue(digits[offset + 1]) else {
                return false
            }
            bytes[offset / 2] = high << 4 | low
            offset += 2
        }
        return true
    }

    /// The value of `0`-`9` or `a`-`f`: ``value(_:)`` without the capitals.
    private static func lowercaseValue(_ byte: UInt8) -> UInt8? {
        (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte) ? nil : value(byte)
    }
}
