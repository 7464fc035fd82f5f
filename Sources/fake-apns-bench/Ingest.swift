import FakeAPNs
import Foundation

/// How many notifications the sink pops at a time: as a load test that knows how many it sent
/// pops them, `pop(count:)`, in slices so that the first and last pop times mean something.
let sinkSlice = 5_000

/// The next `wanted` notifications from the queue, or nil when they did not all arrive within
/// `seconds` (they stay queued for the next try).
func popBatch<Element>(from mailbox: Mailbox<Element>, wanted: Int, waitingAtMost seconds: Double) -> [Element]? {
    do {
        return try mailbox.pop(count: wanted, timeout: .milliseconds(Int(seconds * 1000) + 1))
    } catch is MailboxTimeout {
        return nil
    } catch {
        failAndExit("popping failed: \(error)")
    }
}

/// Checks what arrives over several connections: per connection, identifiers run on by one
/// from the first (the order a connection keeps), and over all of them each identifier of
/// 1...count arrives exactly once.
struct ConnectionOrderCheck {
    private var next: [Int: UInt32] = [:]
    private var seen: [Bool]

    init(count: Int) {
        seen = Array(repeating: false, count: count + 1)
    }

    var connectionCount: Int { next.count }

    mutating func check(_ notification: PushNotification, position: Int) {
        let identifier = notification.identifier
        let connection = notification.connection.id
        if let expected = next[connection], identifier != expected {
            failAndExit(
                "notification \(position) has identifier \(identifier) on connection \(connection), expected \(expected)")
        }
        guard identifier >= 1, Int(identifier) < seen.count, !seen[Int(identifier)] else {
            failAndExit("identifier \(identifier) (notification \(position)) is out of range or arrived twice")
        }
        seen[Int(identifier)] = true
        next[connection] = identifier &+ 1
    }
}

func runIngest(_ options: BenchOptions) -> Never {
    let count = options.count ?? 1_000_000
    let server: FakeAPNsServer
    do {
        var configuration: FakeAPNsServer.Configuration =
            options.http2
            ? .init(host: options.host, gatewayPort: 0, feedbackPort: nil, http2Port: options.plaintext ? nil : options.port)
            : .init(host: options.host, gatewayPort: options.port, feedbackPort: nil, http2Port: nil)
        if options.http2 && options.plaintext { configuration.plaintextPort = options.port }
        server = try FakeAPNsServer.started(configuration: configuration)
    } catch {
        failAndExit("could not start the server: \(error)")
    }

    let port = options.http2 ? (options.plaintext ? server.plaintextPort! : server.http2Port!) : server.gatewayPort
    writeLine(String(port))

    let startedAt = monotonicSeconds()
    let deadline = startedAt + options.timeout
    var received = 0
    var batches = 0
    var largestBatch = 0
    var expectedIdentifier: UInt32 = 1
    var orderCheck = options.connections > 1 ? ConnectionOrderCheck(count: count) : nil
    var firstReceivedAt: Date?
    var lastReceivedAt: Date?
    var firstPoppedAt = 0.0
    var lastPoppedAt = 0.0

    while received < count {
        let remaining = deadline - monotonicSeconds()
        if remaining <= 0 {
            failAndExit(
                "timed out after \(options.timeout) s: \(received) of \(count) notifications arrived "
                    + "(\(server.notifications.totalArrived) queued in all)")
        }
        guard
            let batch = popBatch(
                from: server.notifications, wanted: min(count - received, sinkSlice), waitingAtMost: min(remaining, 1))
        else { continue }
        let now = monotonicSeconds()
        if firstReceivedAt == nil {
            firstReceivedAt = batch.first?.receivedAt
            firstPoppedAt = now
        }
        lastReceivedAt = batch.last?.receivedAt
        lastPoppedAt = now
        if options.checkIdentifiers {
            if orderCheck != nil {
                for (offset, notification) in batch.enumerated() {
                    orderCheck!.check(notification, position: received + offset + 1)
                }
            } else {
                for notification in batch {
                    guard notification.identifier == expectedIdentifier else {
                        failAndExit(
                            "notification \(received + 1) has identifier \(notification.identifier), expected "
                                + "\(expectedIdentifier)")
                    }
                    expectedIdentifier &+= 1
                }
            }
        }
        received += batch.count
        batches += 1
        largestBatch = max(largestBatch, batch.count)
    }
    if let orderCheck, options.checkIdentifiers, orderCheck.connectionCount != options.connections {
        failAndExit("the notifications came over \(orderCheck.connectionCount) connections, expected \(options.connections)")
    }

    let receivedSpan = lastReceivedAt!.timeIntervalSince(firstReceivedAt!)
    let poppedSpan = lastPoppedAt - firstPoppedAt
    func rate(_ count: Int, _ seconds: Double) -> Double {
        seconds > 0 ? (Double(count) / seconds).rounded() : 0
    }
    writeReport([
        "count": count,
        "connections": options.connections,
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
    ])
    if received != count {
        failAndExit("received \(received) notifications, expected exactly \(count)")
    }
    server.stop()
    exit(0)
}
