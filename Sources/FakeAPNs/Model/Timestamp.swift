#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// RFC 3339 UTC timestamps with microseconds ("2026-11-29T13:05:09.123456Z"), as refusal
/// details and the daemon print them. Formatted by hand: the daemon's log stamps every line;
/// its `Timestamp.Writer` formats many in a row from the parts declared here.
package enum Timestamp {
    /// `date` as RFC 3339 UTC with microseconds.
    package static func rfc3339(_ date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(27)
        let (seconds, micros) = split(date)
        appendSecond(seconds, to: &bytes)
        appendFraction(micros, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// How many bytes ``writeFraction(_:to:)`` writes.
    package static let fractionCount = 7

    /// Writes the six digits of `micros` (0 to 999,999) and the "Z" at `pointer`.
    package static func writeFraction(_ micros: Int, to pointer: UnsafeMutablePointer<UInt8>) {
        var remaining = micros
        for position in (0..<6).reversed() {
            pointer[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: remaining % 10)
            remaining /= 10
        }
        pointer[6] = UInt8(ascii: "Z")
    }

    /// Whole seconds since 1970 and the microseconds past them, rounded to the nearest, within
    /// the years RFC 3339 can write (0000 to 9999): a date past year 9999 is written as
    /// 9999-12-31T23:59:59.999999Z, one before year 0000 (or NaN) as 0000-01-01T00:00:00.000000Z.
    /// Every date from outside enters through ``UnixTime`` (1970 to year 9999), so only a date the
    /// engine computes from one (8 hours after an activity started on the last day of year 9999)
    /// can get past the end.
    package static func split(_ date: Date) -> (seconds: time_t, micros: Int) {
        let interval = date.timeIntervalSince1970
        let last = (seconds: time_t(UnixTime.range.upperBound), micros: 999_999)
        guard interval >= Double(firstSecond) else { return (firstSecond, 0) }
        guard interval < Double(last.seconds) + 1 else { return last }
        var seconds = time_t(interval.rounded(.down))
        var micros = Int(((interval - Double(seconds)) * 1_000_000).rounded())
        if micros >= 1_000_000 {
            guard seconds < last.seconds else { return last }
            seconds += 1
            micros -= 1_000_000
        }
        return (seconds, micros)
    }

    /// 0000-01-01T00:00:00Z, the first second RFC 3339 can write, in seconds since 1970.
    private static let firstSecond: time_t = -62_167_219_200

    /// "2026-11-29T13:05:09." for `seconds` since 1970.
    package static func appendSecond(_ seconds: time_t, to output: inout [UInt8]) {
        var seconds = seconds
        var parts = tm()
        gmtime_r(&seconds, &parts)
        pad(Int(parts.tm_year) + 1900, 4, to: &output)
        output.append(UInt8(ascii: "-"))
        pad(Int(parts.tm_mon) + 1, 2, to: &output)
        output.append(UInt8(ascii: "-"))
        pad(Int(parts.tm_mday), 2, to: &output)
        output.append(UInt8(ascii: "T"))
        pad(Int(parts.tm_hour), 2, to: &output)
        output.append(UInt8(ascii: ":"))
        pad(Int(parts.tm_min), 2, to: &output)
        output.append(UInt8(ascii: ":"))
        pad(Int(parts.tm_sec), 2, to: &output)
        output.append(UInt8(ascii: "."))
    }

    /// The six digits of `micros` (0 to 999,999) and the "Z".
    private static func appendFraction(_ micros: Int, to output: inout [UInt8]) {
        var text: UInt64 = 0
        withUnsafeMutableBytes(of: &text) { buffer in
            let digits = buffer.bindMemory(to: UInt8.self)
            writeFraction(micros, to: digits.baseAddress!)
            output.append(contentsOf: UnsafeBufferPointer(rebasing: digits[0..<fractionCount]))
        }
    }

    /// `value`'s decimal text with zeros before it up to `width` characters (before a minus
    /// sign too, as the text has always been written).
    private static func pad(_ value: Int, _ width: Int, to output: inout [UInt8]) {
        let start = output.count
        JSONWriter.writeInteger(value, to: &output)
        let written = output.count - start
        if written < width {
            output.insert(contentsOf: repeatElement(UInt8(ascii: "0"), count: width - written), at: start)
        }
    }
}
