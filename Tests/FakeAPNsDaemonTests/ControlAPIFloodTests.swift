import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

#if canImport(Glibc)
import Glibc
#endif

/// The daemon under clients that connect and say nothing, more of them than the process has
/// descriptors for, and others knocking on every listener: no thread of the daemon spins, idle
/// or flooded, and the control API answers again once they leave.
final class ControlAPIFloodTests: XCTestCase {
    func testNoThreadSpinsIdleOrWhileSilentClientsOutrunTheDescriptors() throws {
        let limit = 200
        let daemon = try DaemonFixture.started(descriptorLimit: limit, for: self)
        let start = daemon.startLine
        let gateway = try XCTUnwrap(start["listeners"]?[0]?["port"]?.intValue)
        let web = try XCTUnwrap(start["listeners"]?[4]?["port"]?.intValue)
        let pid = daemon.process.processIdentifier
        XCTAssertEqual(try HTTPTestClient(port: web).get("/healthz").status, 200)

        let idle = try Self.busiestThread(of: pid, over: .seconds(2))
        XCTAssertLessThanOrEqual(idle.total, 6, "idle, the daemon used \(idle.total) ticks in 2 s")

        // Silent TLS clients of the gateway take most descriptors; control clients take the rest,
        // and more wait in the control port's backlog while others keep knocking.
        var held: [Int32] = []
        defer { held.forEach { close($0) } }
        // The gateway takes its share and more, the HTTP/2 listener what the other listeners'
        // shares leave (see ConnectionBudget).
        let http2 = try XCTUnwrap(start["listeners"]?[2]?["port"]?.intValue)
        for _ in 0..<80 { held.append(try Socket.connect(host: "127.0.0.1", port: gateway)) }
        for _ in 0..<50 { held.append(try Socket.connect(host: "127.0.0.1", port: http2)) }
        // Held before the control clients come: the listeners stop short of their shares and
        // the descriptor reserve, and accepting both at once would let the reserve refuse some.
        XCTAssertTrue(eventually(timeout: .seconds(10)) { Self.openDescriptors(of: pid) >= 110 },
                      "the APNs listeners hold \(Self.openDescriptors(of: pid)) descriptors")
        for _ in 0..<150 { held.append(try Socket.connect(host: "127.0.0.1", port: web)) }
        XCTAssertTrue(eventually(timeout: .seconds(10)) { Self.openDescriptors(of: pid) >= limit - 4 },
                      "the daemon holds \(Self.openDescriptors(of: pid)) descriptors of \(limit)")
        // Every listener knocked on at once; those of the APNs listeners are refused for the
        // descriptor reserve as fast as they come.
        let ports = (start["listeners"]?.arrayValue ?? []).compactMap { $0["port"]?.intValue }
        XCTAssertEqual(ports.count, 5)
        let knocking = try ports.map { try Knocker(port: $0) }
        let flooded = try Self.busiestThread(of: pid, over: .seconds(2))
        knocking.forEach { $0.stop() }
        XCTAssertLessThan(flooded.ticks, 40, "thread \(flooded.name) used \(flooded.ticks) of 200 ticks in 2 s")
        XCTAssertLessThan(flooded.total, 80, "the daemon used \(flooded.total) ticks in 2 s")

        held.forEach { close($0) }
        held = []
        let control = HTTPTestClient(port: web)
        XCTAssertTrue(eventually(timeout: .seconds(15)) {
            (try? control.get("/healthz", timeout: .seconds(2)).status) == 200
        })
        let after = try Self.busiestThread(of: pid, over: .seconds(2))
        XCTAssertLessThanOrEqual(after.total, 6, "idle again, the daemon used \(after.total) ticks in 2 s")
        XCTAssertEqual(daemon.stop(), 0)
    }

    /// Connects to `port` and closes again, every 5 ms, until stopped.
    private final class Knocker: Sendable {
        private let stopped = Locked(false)
        private let thread: OSThread

        init(port: Int) throws {
            let stopped = stopped
            thread = try OSThread(name: "knocker") {
                while !stopped.withLock({ $0 }) {
                    if let socket = try? Socket.connect(host: "127.0.0.1", port: port) { close(socket) }
                    usleep(5_000)
                }
            }
        }

        func stop() {
            stopped.withLock { $0 = true }
            thread.join()
        }
    }

    private static func openDescriptors(of pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }

    /// CPU time (user and system, in clock ticks of 10 ms) of every thread of `pid`.
    private static func threadTicks(of pid: Int32) -> [String: (name: String, ticks: Int)] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        var result: [String: (name: String, ticks: Int)] = [:]
        for task in tasks {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/stat", encoding: .utf8),
                let end = stat.lastIndex(of: ")")
            else { continue }
            let name = stat[stat.index(after: stat.firstIndex(of: "(") ?? stat.startIndex)..<end]
            // After the name: state, then fields 4 on; utime and stime are fields 14 and 15.
            let fields = stat[stat.index(end, offsetBy: 2)...].split(separator: " ")
            guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { continue }
            result[task] = (String(name), user + system)
        }
        return result
    }

    /// The thread of `pid` that used the most CPU over `duration`, and what the process used.
    private static func busiestThread(
        of pid: Int32, over duration: Duration
    ) throws -> (name: String, ticks: Int, total: Int) {
        let before = threadTicks(of: pid)
        Thread.sleep(forTimeInterval: Double(duration.components.seconds))
        let after = threadTicks(of: pid)
        let used = after.map { task, now in (now.name, now.ticks - (before[task]?.ticks ?? 0)) }
        let busiest = used.max { $0.1 < $1.1 } ?? ("none", 0)
        return (busiest.0, busiest.1, used.reduce(0) { $0 + $1.1 })
    }
}
