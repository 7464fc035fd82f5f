import FakeAPNs
import Foundation

/// Start-to-first-notification, in process, the way a test begins:
///
/// - FakeAPNs: `FakeAPNsServer.started()` with the default configuration (binary gateway,
///   feedback service and HTTP/2 provider API on free ports, the test identity), then a
///   `BinaryProviderClient` connects and sends one enhanced frame, and the test pops it;
/// - reference: the least a TLS server must do for the same: make a server context with the
///   same identity, bind and listen on a free port, start a thread that accepts, completes the
///   handshake and reads the frame, while a client (a context trusting the test CA, as
///   `BinaryProviderClient` makes one) connects and writes it.
///
/// Alternated start by start; each server is stopped (its threads joined, ports freed) before
/// the next, untimed.
func runStart(_ options: BenchOptions) -> Never {
    let count = options.count ?? 50
    let warmup = options.warmup ?? 3
    let frame = BenchNotification.frame(1)
    var fakeTimes: [UInt64] = []
    var referenceTimes: [UInt64] = []
    do {
        for round in 0..<(warmup + count) {
            let started = monotonicNanoseconds()
            let server = try FakeAPNsServer.started()
            let client = try BinaryProviderClient(host: "127.0.0.1", port: server.gatewayPort)
            try client.send(frame)
            let notification = try server.notifications.pop(timeout: .seconds(5))
            let elapsed = monotonicNanoseconds() - started
            guard notification.identifier == 1 else {
                throw BareTLS.Failure(description: "popped \(notification), expected identifier 1")
            }
            client.close()
            server.stop()

            let referenceElapsed = try referenceStart(frame: frame)
            if round >= warmup {
                fakeTimes.append(elapsed)
                referenceTimes.append(referenceElapsed)
            }
        }
    } catch {
        failAndExit("start: \(error)")
    }
    writeReport([
        "count": count, "warmup": warmup,
        "fakeapns": latencySummary(fakeTimes), "reference": latencySummary(referenceTimes),
    ])
    exit(0)
}

/// One reference start: bare TLS set up on a fresh port and one frame carried; nanoseconds.
private func referenceStart(frame: [UInt8]) throws -> UInt64 {
    let started = monotonicNanoseconds()
    let context = try BareTLS.serverContext()
    let listener = try BareTLS.Listener()
    let arrived = Signal()
    let size = frame.count
    try OSThread(name: "reference") {
        do {
            let connection = try listener.accept(context: context)
            var buffer = [UInt8](repeating: 0, count: size)
            let complete = try buffer.withUnsafeMutableBytes { try connection.readExactly(into: $0) }
            arrived.raise(complete ? nil : BareTLS.Failure(description: "the reference client closed early"))
            connection.close()
        } catch {
            arrived.raise(error)
        }
    }.detach()
    let client = try BareTLS.Connection.connect(port: listener.port, context: try BareTLS.clientContext())
    try frame.withUnsafeBytes { try client.write($0) }
    guard try arrived.wait(seconds: 5) else { throw BareTLS.Failure(description: "the reference frame did not arrive") }
    let elapsed = monotonicNanoseconds() - started
    client.close()
    listener.close()
    return elapsed
}
