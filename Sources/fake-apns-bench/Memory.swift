import FakeAPNs
import Foundation

/// Resident memory per stored notification. Starts a `FakeAPNsServer` (binary gateway only,
/// no retention limit, so nothing is dropped), prints the port, and records its resident set
/// size (VmRSS, from /proc/self/statm). A sender outside the process then sends `--count`
/// notifications over one connection; none is popped, so each stays in the queue (and in the
/// history, as in any server). Once all arrived and the connection closed, the resident size
/// is read again. The report gives the growth, the payload bytes stored, and the growth per
/// notification beyond its payload. Identifiers are checked (1...count, in order) afterwards,
/// from a snapshot, which leaves the queue as it is.
func runMemory(_ options: BenchOptions) -> Never {
    let count = options.count ?? 100_000
    let server: FakeAPNsServer
    do {
        server = try FakeAPNsServer.started(
            configuration: .init(host: options.host, gatewayPort: options.port, feedbackPort: nil, http2Port: nil))
    } catch {
        failAndExit("could not start the server: \(error)")
    }
    guard server.notifications.capacity == nil || server.notifications.capacity! >= count else {
        failAndExit("the queue keeps at most \(server.notifications.capacity!) notifications")
    }
    let before = residentBytes()
    writeLine(String(server.gatewayPort))

    let deadline = monotonicSeconds() + options.timeout
    while server.notifications.count < count || server.openConnectionCount > 0 {
        if monotonicSeconds() > deadline {
            failAndExit(
                "timed out: \(server.notifications.count) of \(count) notifications queued, "
                    + "\(server.openConnectionCount) connections open")
        }
        usleep(2_000)
    }
    // What the connection's thread freed is back with the allocator by now; let it settle.
    usleep(50_000)
    let after = residentBytes()

    let stored = server.notifications.count
    let snapshot = server.notifications.snapshot()
    var payloadBytes = 0
    var expected: UInt32 = 1
    for notification in snapshot {
        guard notification.identifier == expected else {
            failAndExit("stored notification \(expected) has identifier \(notification.identifier)")
        }
        expected &+= 1
        payloadBytes += notification.payload.count
    }
    guard stored == count, server.notifications.droppedCount == 0, server.notificationHistory.count == count else {
        failAndExit(
            "\(stored) notifications queued (\(server.notifications.droppedCount) dropped), "
                + "\(server.notificationHistory.count) in the history; expected \(count)")
    }
    let growth = after - before
    writeReport([
        "count": count, "stored": stored, "rss_before_bytes": before, "rss_after_bytes": after,
        "rss_growth_bytes": growth, "payload_bytes": payloadBytes,
        "bytes_per_notification": Double(growth) / Double(count),
        "bytes_per_notification_beyond_payload": Double(growth - payloadBytes) / Double(count),
        "notification_stride_bytes": MemoryLayout<PushNotification>.stride,
    ])
    server.stop()
    exit(0)
}
