import FakeAPNs

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

extension Timestamp {
    /// Formats the timestamps of many records in a row, the same text as ``Timestamp/rfc3339(_:)``.
    /// The date and time of day are formatted once per second and only the microseconds per
    /// record: the daemon's log stamps hundreds of thousands of lines a second, nearly all
    /// within the same second as the line before.
    struct Writer {
        private var second: time_t?
        /// "2026-11-29T13:05:09.": the date and time down to the second of the date last
        /// passed to `prepare(_:)`.
        private(set) var prefix: [UInt8] = []

        /// Makes `prefix` the one of `date` and returns the microseconds to write after it
        /// (with ``Timestamp/writeFraction(_:to:)``).
        mutating func prepare(_ date: Date) -> Int {
            let (seconds, micros) = Timestamp.split(date)
            if seconds != second {
                prefix.removeAll(keepingCapacity: true)
                Timestamp.appendSecond(seconds, to: &prefix)
                second = seconds
            }
            return micros
        }
    }
}
