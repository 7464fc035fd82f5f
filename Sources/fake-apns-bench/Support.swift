import CPOSIXShims
import FakeAPNs
import Foundation

#if canImport(Glibc)
import Glibc
#endif

func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// Writes a line to standard output at once (unbuffered), so a driver reading the pipe sees it.
func writeLine(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func failAndExit(_ message: String) -> Never {
    FileHandle.standardError.write(Data("fake-apns-bench: \(message)\n".utf8))
    exit(1)
}

/// Prints `report` as one JSON line, keys sorted.
func writeReport(_ report: [String: Any]) {
    do {
        let json = try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys])
        writeLine(String(decoding: json, as: UTF8.self))
    } catch {
        failAndExit("could not encode the report: \(error)")
    }
}

/// The benchmark file's notification `number`, as `Scripts/bench.sh` generates it: token
/// A0...BB followed by the number, a 100-byte JSON payload, expiry 2,000,000,000.
enum BenchNotification {
    static let payloadSize = 100

    static func token(_ number: UInt32) -> DeviceToken {
        DeviceToken(bytes: (0..<28).map { UInt8(0xA0 + $0) } + withUnsafeBytes(of: number.bigEndian) { Array($0) })
    }

    static func payload(_ number: UInt32) -> [UInt8] {
        let number7 = String(number).count >= 7 ? String(number) : String(repeating: "0", count: 7 - String(number).count) + String(number)
        let text = #"{"aps":{"alert":"Benchmark notification \#(number7)","badge":1,"sound":"default"},"id":\#(number)"#
        let pad = max(payloadSize - text.utf8.count - #","pad":""}"#.utf8.count, 0)
        return Array((text + #","pad":""# + String(repeating: "x", count: pad) + #""}"#).utf8)
    }

    static func frame(_ number: UInt32) -> [UInt8] {
        BinaryEncoder.enhanced(identifier: number, expiration: 2_000_000_000, token: token(number), payload: payload(number))
    }
}

/// Median and percentiles of durations in nanoseconds, as microseconds.
func latencySummary(_ nanoseconds: [UInt64]) -> [String: Any] {
    let sorted = nanoseconds.sorted()
    func percentile(_ fraction: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let rank = min(sorted.count - 1, max(0, Int((fraction * Double(sorted.count)).rounded(.up)) - 1))
        return Double(sorted[rank]) / 1000
    }
    let median: Double
    if sorted.isEmpty {
        median = 0
    } else if sorted.count % 2 == 1 {
        median = Double(sorted[sorted.count / 2]) / 1000
    } else {
        median = Double(sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2000
    }
    let mean = sorted.isEmpty ? 0 : Double(sorted.reduce(0, +)) / Double(sorted.count) / 1000
    return [
        "count": sorted.count, "median_us": median, "p90_us": percentile(0.90), "p99_us": percentile(0.99),
        "min_us": Double(sorted.first ?? 0) / 1000, "max_us": Double(sorted.last ?? 0) / 1000, "mean_us": mean,
    ]
}

/// The process's resident set size in bytes, from /proc/self/statm.
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// The first two CPUs the calling thread may run on, the test's and the servers', or nil when
/// it may run on one only.
func twoAllowedCPUs() -> (test: Int32, servers: Int32)? {
    let first = fakeapns_allowed_cpu(0)
    let second = fakeapns_allowed_cpu(1)
    return first >= 0 && second >= 0 ? (first, second) : nil
}

/// Keeps the calling thread, and the threads it starts from now on, on `cpu`. False when the
/// kernel refuses.
@discardableResult
func pinCurrentThread(toCPU cpu: Int32) -> Bool {
    fakeapns_pin_thread(cpu) == 0
}
