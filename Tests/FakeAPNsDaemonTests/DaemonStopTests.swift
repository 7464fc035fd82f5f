import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: TLSClient and its socket, and Mailbox.init.
@testable import FakeAPNs

#if canImport(Glibc)
import Glibc
#endif

/// How `fake-apns` stops on SIGTERM, seen from outside: waiting `next` requests are answered
/// 503, every notification accepted is in the log, and a log nobody reads holds the connections
/// back without holding up the control API or the stop.
final class DaemonStopTests: XCTestCase {
    private struct Started {
        let daemon: DaemonFixture
        let gateway: Int
        let web: Int
    }

    private func started(_ arguments: [String] = []) throws -> Started {
        let daemon = try DaemonFixture.started(arguments, for: self)
        return Started(daemon: daemon, gateway: try daemon.port("gateway"), web: try daemon.port("web"))
    }

    /// One control API call with curl: the HTTP status (0 when no answer came) and the body.
    private func curl(_ web: Int, _ method: String, _ path: String) throws -> (status: Int, body: String) {
        try Self.curl(web, method, path)
    }

    private static func curl(
        _ web: Int, _ method: String, _ path: String, maxTime: Int? = nil
    ) throws -> (status: Int, body: String) {
        let result = try FakeAPNsDaemonTests.curl(port: web, method, path, maxTime: maxTime)
        return (result.status, result.body + result.error)
    }

    /// Notifications accepted so far, from `/metrics`.
    private func accepted(_ web: Int) throws -> Int {
        let metrics = try curl(web, "GET", "/metrics")
        XCTAssertEqual(metrics.status, 200, metrics.body)
        return metrics.body.split(separator: "\n")
            .filter { $0.hasPrefix("fakeapns_notifications_accepted_total{") }
            .compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }
            .reduce(0, +)
    }

    /// The control API's long polls waiting now, from `/metrics`; what came instead when it
    /// did not say (`seen` keeps the last answer, for a failure message).
    private func waits(_ web: Int, seen: inout String) -> Int? {
        let started = ContinuousClock.now
        let metrics: (status: Int, body: String)
        do {
            // Bounded, so that a control API that stopped answering shows in the message.
            metrics = try Self.curl(web, "GET", "/metrics", maxTime: 10)
        } catch {
            seen = "no answer from /metrics after \(ContinuousClock.now - started): \(error)"
            return nil
        }
        let count = metrics.body.split(separator: "\n").first { $0.hasPrefix("fakeapns_control_waits ") }
            .flatMap { $0.split(separator: " ").last.flatMap { Int($0) } }
        seen = metrics.status == 200 && count != nil
            ? "\(count ?? 0) waits" : "/metrics answered \(metrics.status): \(metrics.body.prefix(300))"
        return metrics.status == 200 ? count : nil
    }

    /// A waiter's answer: the HTTP status (0 when curl got none, -1 when curl did not end), the
    /// body or what went wrong, and when it came.
    private struct Answer: Sendable {
        let status: Int
        let body: String
        let at: ContinuousClock.Instant
    }

    /// Starts `count` curl requests on threads of their own; the mailbox gets each answer.
    private func waiters(_ web: Int, _ path: String, count: Int) throws -> Mailbox<Answer> {
        let answers = Mailbox<Answer>(noun: "answer")
        for _ in 0..<count {
            try OSThread(name: "curl-waiter") {
                do {
                    let answer = try Self.curl(web, "GET", path)
                    answers.append(Answer(status: answer.status, body: answer.body, at: .now))
                } catch {
                    answers.append(Answer(status: -1, body: "curl did not end: \(error)", at: .now))
                }
            }.detach()
        }
        return answers
    }

    /// Expects `count` answers 503 `unavailable`, each within 30 s; a failure says when each came
    /// (after `since`, the signal) and how the daemon is.
    private func expect503(
        _ answers: Mailbox<Answer>, count: Int, since: ContinuousClock.Instant, daemon: DaemonFixture
    ) throws {
        let came: [Answer]
        do {
            came = try answers.pop(count: count, timeout: .seconds(30))
        } catch {
            XCTFail("\(error); \(Self.state(of: daemon))")
            return
        }
        var state: String?  // asked once, at the first failure
        for answer in came {
            func when() -> String {
                state = state ?? Self.state(of: daemon)
                return "\(answer.body); \(answer.at - since) after the signal; \(state ?? "")"
            }
            XCTAssertEqual(answer.status, 503, when())
            XCTAssertEqual(try? JSONValue(parsing: answer.body)["error"], "unavailable", when())
        }
    }

    /// Whether the daemon runs, or how it ended and what it wrote to standard error.
    private static func state(of daemon: DaemonFixture) -> String {
        guard !daemon.process.isRunning else {
            let threads = daemon.threadDump().map { ", its threads:\n\($0)" } ?? ""
            return "the daemon (pid \(daemon.process.processIdentifier)) still runs\(threads)"
        }
        return "the daemon exited with status \(daemon.process.terminationStatus), standard error: "
            + "\"\(daemon.standardError)\""
    }

    /// Sends enhanced notifications on one connection, as fast as the daemon takes them, until
    /// the connection fails or `stop` is set.
    private final class Flood: Sendable {
        private let stopped = Locked(false)
        let ended = Mailbox<Bool>(noun: "end of the flood")

        init(port: Int) throws {
            let client = try TLSClient(host: "127.0.0.1", port: port)
            let token: DeviceToken = "fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2"
            let chunk = (0..<500).flatMap { index in
                BinaryEncoder.enhanced(
                    identifier: UInt32(index), token: token, payload: Array(#"{"aps":{"alert":"flood \#(index)"}}"#.utf8))
            }
            try OSThread(name: "binary-flood") { [self] in
                while !stopped.withLock({ $0 }) {
                    do { try client.send(chunk) } catch { break }
                }
                client.close()
                ended.append(true)
            }.detach()
        }

        func stop() { stopped.withLock { $0 = true } }
    }

    func testSIGTERMAnswersEveryWaitingNext503BeforeExiting() throws {
        let daemon = try started()
        let answers = try waiters(daemon.web, "/api/v1/notifications/next?timeout=60", count: 20)
        // Each request is waiting (not merely connected) before the signal: a connection whose
        // request has not arrived yet is closed by the stop without an answer.
        var seen = "nothing"
        XCTAssertTrue(
            eventually(timeout: .seconds(30)) { self.waits(daemon.web, seen: &seen) == 20 }, "last seen: \(seen)")
        let signalled = ContinuousClock.now
        let status = daemon.daemon.stop(signal: SIGTERM, timeout: .seconds(5))
        XCTAssertEqual(status, 0, Self.state(of: daemon.daemon))
        try expect503(answers, count: 20, since: signalled, daemon: daemon.daemon)
    }

    func testSIGTERMDuringAFloodLeavesEveryAcceptedNotificationInTheLogFile() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("stop-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: file) }
        let daemon = try started(["--log-file", file.path])
        let flood = try Flood(port: daemon.gateway)
        defer { flood.stop() }
        XCTAssertTrue(eventually(timeout: .seconds(60)) { ((try? self.accepted(daemon.web)) ?? 0) >= 20_000 })
        let acceptedBeforeStop = try accepted(daemon.web)
        XCTAssertEqual(daemon.daemon.stop(signal: SIGTERM, timeout: .seconds(10)), 0, daemon.daemon.standardError)
        // Every line, in order of arrival, none missing: sequence numbers run 1, 2, 3, …
        var expected = 1
        let text = try String(contentsOf: file, encoding: .utf8)
        for line in text.split(separator: "\n") where line.hasPrefix(#"{"event":"notification""#) {
            let sequence = try JSONValue(parsing: String(line))["sequence"]?.intValue
            guard sequence == expected else {
                XCTFail("line \(expected) has sequence \(sequence.map(String.init) ?? "none")")
                return
            }
            expected += 1
        }
        XCTAssertGreaterThanOrEqual(expected - 1, acceptedBeforeStop, "every notification /metrics counted is logged")
        XCTAssertEqual(daemon.daemon.standardError, "")
    }

    func testSIGTERMGivesABinaryClientStatus10AfterDecodingAndLoggingEverythingItSent() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("stop-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: file) }
        let daemon = try started(["--log-file", file.path])
        let client = try TLSClient(host: "127.0.0.1", port: daemon.gateway)
        try client.send((1...500).flatMap {
            BinaryEncoder.enhanced(identifier: UInt32($0), token: Fixtures.token, payload: Fixtures.payload($0))
        })
        XCTAssertTrue(eventually { unsentBytes(client.stream.socket) == 0 }, "everything sent reached the daemon")
        let clock = ContinuousClock()
        var status: Int32?
        let took = clock.measure { status = daemon.daemon.stop(signal: SIGTERM, timeout: .seconds(10)) }
        XCTAssertEqual(status, 0, daemon.daemon.standardError)
        XCTAssertLessThan(took, .seconds(2), "SIGTERM to exit")
        XCTAssertEqual(try client.readToEnd(), [8, 10, 0, 0, 0x01, 0xF4], "status 10 naming identifier 500")
        let identifiers = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
            .filter { $0.hasPrefix(#"{"event":"notification""#) }
            .map { try JSONValue(parsing: String($0))["identifier"]?.intValue }
        XCTAssertEqual(identifiers, (1...500).map { $0 }, "every notification in the log, in order")
    }

    func testALogNobodyReadsHoldsConnectionsBackButNotTheAPIOrTheStop() throws {
        let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("unread-\(UUID().uuidString)").path
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        defer { unlink(fifo) }
        // Opened for reading (so the daemon's open succeeds) and never read.
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        XCTAssertGreaterThanOrEqual(reader, 0)
        defer { close(reader) }
        let daemon = try started(["--log-file", fifo])
        let flood = try Flood(port: daemon.gateway)
        defer { flood.stop() }

        // The connection is held back once the backlog is full: what is accepted stops growing,
        // near the backlog bound (65,536 lines queued, as many being written) rather than at
        // what the sender had to give.
        var held = -1
        var since = ContinuousClock.now
        XCTAssertTrue(eventually(timeout: .seconds(60)) {
            let now = (try? self.accepted(daemon.web)) ?? -1
            if now != held { (held, since) = (now, .now) }
            return now >= 65_536 && ContinuousClock.now - since >= .milliseconds(500)
        }, "accepted: \(held)")
        XCTAssertLessThan(held, 3 * 65_536)

        // Meanwhile the control API answers, pops, waits, resets.
        let rejectionWaiters = try waiters(daemon.web, "/api/v1/rejections/next?timeout=60", count: 3)
        XCTAssertEqual(try curl(daemon.web, "GET", "/healthz").status, 200)
        let next = try curl(daemon.web, "GET", "/api/v1/notifications/next?timeout=5")
        XCTAssertEqual(next.status, 200, next.body)
        XCTAssertEqual(try JSONValue(parsing: next.body)["format"], "enhanced")
        XCTAssertEqual(try curl(daemon.web, "POST", "/api/v1/reset").status, 200)
        XCTAssertEqual(try accepted(daemon.web), held, "still held")
        var seen = "nothing"
        XCTAssertTrue(
            eventually(timeout: .seconds(30)) { self.waits(daemon.web, seen: &seen) == 3 }, "last seen: \(seen)")

        // The stop gives the log up (it took nothing) and says how much it lost.
        let signalled = ContinuousClock.now
        XCTAssertEqual(daemon.daemon.stop(signal: SIGTERM, timeout: .seconds(10)), 0, Self.state(of: daemon.daemon))
        try expect503(rejectionWaiters, count: 3, since: signalled, daemon: daemon.daemon)
        let error = daemon.daemon.standardError
        XCTAssertTrue(error.contains("events of the log were not written"), error)
        XCTAssertTrue(error.contains("took nothing"), error)
    }
}
