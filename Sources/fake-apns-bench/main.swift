import FakeAPNs
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// fake-apns-bench: the ingest benchmark's server side.
///
/// Starts a `FakeAPNsServer` (binary gateway, or with `--http2` the HTTP/2 provider API;
/// built-in test identity), prints the bound port
/// on the first line of standard output, then pops notifications from the library's queue in
/// batches (so memory stays flat) until `--count` have been decoded and queued. It then prints
/// one JSON line and exits 0; after `--timeout` seconds without reaching the count it exits 1
/// with a message on standard error. `Scripts/bench.sh` drives it and times it from outside.
///
/// Every popped notification is checked: identifiers must run 1, 2, 3, ... in order (one
/// connection, the benchmark file's identifiers), so what is counted was really decoded.

struct BenchOptions {
    var host = "127.0.0.1"
    var port = 0
    var count = 1_000_000
    var timeout = 120.0
    var checkIdentifiers = true
    var http2 = false

    static let usage = """
        Usage: fake-apns-bench [--count N] [--port N] [--host HOST] [--timeout SECONDS] [--no-check] [--http2]

          --count N           Notifications to wait for (default 1000000).
          --port N            Gateway port (default 0: a free one, printed on the first line).
          --host HOST         Address to bind (default 127.0.0.1).
          --timeout SECONDS   Give up, exiting 1, after this long (default 120).
          --no-check          Do not check that identifiers run 1...count in order.
          --http2             Listen with the HTTP/2 provider API instead of the binary gateway
                              (implies --no-check: HTTP/2 has no binary identifiers).
        """

    static func parse(_ arguments: [String]) -> BenchOptions {
        var options = BenchOptions()
        var rest = arguments[...]
        func fail(_ message: String) -> Never {
            FileHandle.standardError.write(Data("fake-apns-bench: \(message)\n\(usage)\n".utf8))
            exit(64)
        }
        func value(_ name: String) -> String {
            guard let next = rest.popFirst() else { fail("\(name) needs a value") }
            return next
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--count":
                guard let number = Int(value(argument)), number > 0 else { fail("--count takes a positive integer") }
                options.count = number
            case "--port":
                guard let number = Int(value(argument)), (0...65535).contains(number) else {
                    fail("--port takes a port from 0 to 65535")
                }
                options.port = number
            case "--host":
                options.host = value(argument)
            case "--timeout":
                guard let seconds = Double(value(argument)), seconds > 0 else {
                    fail("--timeout takes a positive number of seconds")
                }
                options.timeout = seconds
            case "--no-check":
                options.checkIdentifiers = false
            case "--http2":
                options.http2 = true
                options.checkIdentifiers = false
            case "--help", "-h":
                writeLine(usage)
                exit(0)
            default:
                fail("unknown argument '\(argument)'")
            }
        }
        return options
    }
}

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

let options = BenchOptions.parse(Array(CommandLine.arguments.dropFirst()))

let server: FakeAPNsServer
do {
    server = try FakeAPNsServer.started(
        configuration: options.http2
            ? .init(host: options.host, gatewayPort: 0, feedbackPort: nil, http2Port: options.port)
            : .init(host: options.host, gatewayPort: options.port, feedbackPort: nil, http2Port: nil))
} catch {
    failAndExit("could not start the server: \(error)")
}

writeLine(String(options.http2 ? server.http2Port : server.gatewayPort))

/// The next batch from the queue, or nil when none arrived within `seconds`.
func popBatch<Element>(from mailbox: Mailbox<Element>, waitingAtMost seconds: Double) -> [Element]? {
    do {
        return try mailbox.popAll(timeout: .milliseconds(Int(seconds * 1000) + 1))
    } catch is MailboxTimeout {
        return nil
    } catch {
        failAndExit("popping failed: \(error)")
    }
}

let startedAt = monotonicSeconds()
let deadline = startedAt + options.timeout
var received = 0
var batches = 0
var largestBatch = 0
var expectedIdentifier: UInt32 = 1
var firstReceivedAt: Date?
var lastReceivedAt: Date?
var firstPoppedAt = 0.0
var lastPoppedAt = 0.0

while received < options.count {
    let remaining = deadline - monotonicSeconds()
    if remaining <= 0 {
        failAndExit(
            "timed out after \(options.timeout) s: \(received) of \(options.count) notifications arrived "
                + "(\(server.notifications.totalArrived) queued in all)")
    }
    guard let batch = popBatch(from: server.notifications, waitingAtMost: min(remaining, 1)) else { continue }
    let now = monotonicSeconds()
    if firstReceivedAt == nil {
        firstReceivedAt = batch.first?.receivedAt
        firstPoppedAt = now
    }
    lastReceivedAt = batch.last?.receivedAt
    lastPoppedAt = now
    if options.checkIdentifiers {
        for notification in batch {
            guard notification.identifier == expectedIdentifier else {
                failAndExit(
                    "notification \(received + 1) has identifier \(notification.identifier), expected "
                        + "\(expectedIdentifier)")
            }
            expectedIdentifier &+= 1
        }
    }
    received += batch.count
    batches += 1
    largestBatch = max(largestBatch, batch.count)
}

let receivedSpan = lastReceivedAt!.timeIntervalSince(firstReceivedAt!)
let poppedSpan = lastPoppedAt - firstPoppedAt
func rate(_ count: Int, _ seconds: Double) -> Double {
    seconds > 0 ? (Double(count) / seconds).rounded() : 0
}
let report: [String: Any] = [
    "count": options.count,
    "received": received,
    "total_arrived": server.notifications.totalArrived,
    "batches": batches,
    "largest_batch": largestBatch,
    "identifiers_checked": options.checkIdentifiers,
    "first_to_last_received_seconds": receivedSpan,
    "received_per_second": rate(received, receivedSpan),
    "first_to_last_popped_seconds": poppedSpan,
    "popped_per_second": rate(received, poppedSpan),
    "listening_seconds": lastPoppedAt - startedAt,
]
do {
    let json = try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys])
    writeLine(String(decoding: json, as: UTF8.self))
} catch {
    failAndExit("could not encode the report: \(error)")
}
if received != options.count {
    failAndExit("received \(received) notifications, expected exactly \(options.count)")
}
server.stop()
exit(0)
