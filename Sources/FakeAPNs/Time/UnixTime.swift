#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A date from outside: a payload's Live Activity dates, the time a test or the control API
/// sets the clock to, a provider token's `iat`, an unregistration date. Whole seconds since
/// 1970, within ``range``: from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z, the last second
/// RFC 3339 can write. Every such number enters through this type, so no later conversion or
/// arithmetic on it can trap. (`apns-expiration` is a `UInt32`, inside the range by its type.)
///
/// ```swift
/// UnixTime(seconds: 1_767_225_600)?.date      // 2026-01-01T00:00:00Z
/// UnixTime(seconds: .max)                     // nil: no phone could use it
/// UnixTime(clamping: Date(timeIntervalSince1970: 1e300))   // 9999-12-31T23:59:59Z
/// ```
public struct UnixTime: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The seconds since 1970 a date from outside may be: 1970 to the end of year 9999.
    public static let range: ClosedRange<Int64> = 0...253_402_300_799

    /// The first second of 1970.
    public static let earliest = UnixTime(checked: range.lowerBound)
    /// The last second of year 9999.
    public static let latest = UnixTime(checked: range.upperBound)

    /// Whole seconds since 1970-01-01T00:00:00Z, within ``range``.
    public let seconds: Int64

    private init(checked seconds: Int64) { self.seconds = seconds }

    /// The time `seconds` after 1970 began; nil outside ``range``.
    public init?(seconds: Int64) {
        guard Self.range.contains(seconds) else { return nil }
        self.seconds = seconds
    }

    /// The time `seconds` after 1970 began; nil outside ``range``.
    public init?(seconds: Int) {
        self.init(seconds: Int64(seconds))
    }

    /// The time `seconds` after 1970 began, when it is a whole number within ``range``
    /// (a JSON number written `1.767e9` is one); nil otherwise, NaN and infinities included.
    public init?(exactly seconds: Double) {
        guard seconds.isFinite, seconds.rounded(.towardZero) == seconds,
            seconds >= Double(Self.range.lowerBound), seconds <= Double(Self.range.upperBound)
        else { return nil }
        self.seconds = Int64(seconds)
    }

    /// The whole second `date` falls in, saturating at the ends of ``range`` (NaN: the first).
    public init(clamping date: Date) {
        let interval = date.timeIntervalSince1970
        guard interval >= Double(Self.range.lowerBound) else {
            self.seconds = Self.range.lowerBound
            return
        }
        guard interval < Double(Self.range.upperBound) else {
            self.seconds = Self.range.upperBound
            return
        }
        self.seconds = Int64(interval.rounded(.down))
    }

    /// The date.
    public var date: Date { Date(timeIntervalSince1970: TimeInterval(seconds)) }

    /// The seconds since 1970, as text.
    public var description: String { String(seconds) }

    public static func < (lhs: UnixTime, rhs: UnixTime) -> Bool { lhs.seconds < rhs.seconds }

    /// `date` held within ``range`` (to the last instant a `Date` can hold before year 10000,
    /// which RFC 3339 writes 9999-12-31T23:59:59.99997Z); NaN becomes the first second. What
    /// the clock does with a date a test sets. (Writing a date, `Timestamp` holds it within
    /// the years RFC 3339 can write, 0000 to 9999, on its own.)
    public static func clamped(_ date: Date) -> Date {
        let interval = date.timeIntervalSince1970
        guard interval >= Double(range.lowerBound) else { return earliest.date }
        // Not `upperBound + 0.999_999`: that many seconds since 1970 round to year 10000.
        let last = Double(range.upperBound + 1).nextDown
        guard interval <= last else { return Date(timeIntervalSince1970: last) }
        return date
    }

    /// `date` moved on by `interval` seconds, held within ``range`` (a NaN or negative step
    /// moves nothing).
    public static func clamped(_ date: Date, adding interval: TimeInterval) -> Date {
        guard interval.isFinite, interval > 0 else { return clamped(date) }
        return clamped(Date(timeIntervalSince1970: min(clamped(date).timeIntervalSince1970 + interval, 3e11)))
    }
}

extension Duration {
    /// The duration in seconds, as a `TimeInterval`: no `Duration` a test gives can trap it.
    package var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
