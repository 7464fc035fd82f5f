import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

#if canImport(Glibc)
import Glibc
#endif

/// What an idle connection costs the daemon in resident memory: it waits outside OpenSSL with
/// no read buffer, and gives back the stack its handshake used, so thousands of idle
/// providers fit in a small container.
///
/// The daemon is the one built beside the tests (debug, as `swift test` builds); debug code
/// takes a few kilobytes more per connection than release, and the bounds hold for both
/// (measured here, 500 connections after 40: 44 KB binary and 51 KB HTTP/2 in debug; with
/// 2,000, release: 38 and 53). Before these savings a connection cost 64 KB (binary) and
/// 148 KB (HTTP/2).
final class DaemonMemoryTests: XCTestCase {
    private static let count = 500
    /// The goal is 64 KB for either kind; binary connections, at about 44, are held to less,
    /// which the 64 KB they cost before fails.
    private static let binaryLimitKB = 56.0
    private static let http2LimitKB = 64.0

    func testAnIdleConnectionCostsTheDaemonUnder64KB() throws {
        // A sanitized daemon's memory is mostly the sanitizer's (shadow memory, quarantine).
        for runtime in ["__asan_init", "__tsan_init"] {
            try XCTSkipIf(dlsym(nil, runtime) != nil, "resident memory under a sanitizer measures the sanitizer")
        }
        try raiseDescriptorLimit(to: 3 * Self.count + 200)
        let daemon = try DaemonFixture.started(["--log-file", "/dev/null"], for: self)
        let gateway = try daemon.port("gateway")
        let http2 = try daemon.port("http2")
        let pid = daemon.process.processIdentifier
        var binaryClients: [BinaryProviderClient] = []
        var http2Clients: [IdleHTTP2Connection] = []
        defer {
            binaryClients.forEach { $0.close() }
            http2Clients.forEach { $0.close() }
        }
        let threadsAtStart = threadCount(pid)

        // The first connections create malloc's arenas and the like: a fixed cost, left out.
        for _ in 0..<20 {
            binaryClients.append(try BinaryProviderClient(host: "127.0.0.1", port: gateway))
            http2Clients.append(try IdleHTTP2Connection(port: http2))
        }
        let before = try settledResidentKB(pid, threads: threadsAtStart + 40)
        for _ in 0..<Self.count { binaryClients.append(try BinaryProviderClient(host: "127.0.0.1", port: gateway)) }
        let afterBinary = try settledResidentKB(pid, threads: threadsAtStart + 40 + Self.count)
        for _ in 0..<Self.count { http2Clients.append(try IdleHTTP2Connection(port: http2)) }
        let afterHTTP2 = try settledResidentKB(pid, threads: threadsAtStart + 40 + 2 * Self.count)

        let binaryKB = Double(afterBinary - before) / Double(Self.count)
        let http2KB = Double(afterHTTP2 - afterBinary) / Double(Self.count)
        // The figures, for Performance.md's measure of the stack give-back (`stack`).
        print("resident KB per idle connection: binary \(binaryKB), HTTP/2 \(http2KB)")
        XCTAssertLessThan(binaryKB, Self.binaryLimitKB, "resident KB per idle binary connection")
        XCTAssertLessThan(http2KB, Self.http2LimitKB, "resident KB per idle HTTP/2 connection")
        XCTAssertEqual(daemon.stop(), 0)
    }

    /// The daemon's resident memory once it runs `threads` threads (one per connection, and
    /// its own) and the figure has stopped moving: the last connections' threads have finished
    /// their handshakes.
    private func settledResidentKB(_ pid: Int32, threads: Int) throws -> Int {
        XCTAssertTrue(eventually(timeout: .seconds(30)) { self.threadCount(pid) >= threads }, "\(threadCount(pid)) threads")
        var last = residentKB(pid)
        var settled = false
        for _ in 0..<50 where !settled {
            var pause = timespec(tv_sec: 0, tv_nsec: 100_000_000)
            nanosleep(&pause, nil)
            let now = residentKB(pid)
            settled = abs(now - last) < 64
            last = now
        }
        XCTAssertTrue(settled, "resident memory did not settle")
        return last
    }

    private func residentKB(_ pid: Int32) -> Int { processStatus(pid, "VmRSS") }
    private func threadCount(_ pid: Int32) -> Int { processStatus(pid, "Threads") }

    /// Raises this process's descriptor limit (the daemon inherits it) to `needed`, or skips.
    private func raiseDescriptorLimit(to needed: Int) throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        guard limit.rlim_cur < rlim_t(needed) else { return }
        try XCTSkipIf(limit.rlim_max < rlim_t(needed), "\(needed) descriptors needed; the hard limit is \(limit.rlim_max)")
        limit.rlim_cur = rlim_t(needed)
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}

/// A number of process `pid`'s /proc status ("VmRSS" in KB, "Threads"); -1 when absent.
func processStatus(_ pid: Int32, _ field: String) -> Int {
    let text = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
    let line = text.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
    return Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "") ?? -1
}
