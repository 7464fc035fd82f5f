import FakeAPNs
import Foundation

/// Send-to-pop latency, one notification at a time, the way a test uses FakeAPNs: the client
/// sends, the test pops what arrived. Three kinds of round trip, interleaved in blocks so that
/// noise from the machine falls on all of them alike, with the servers' threads on CPU 1 and
/// the test's on CPU 0 when the process may use both (see below):
///
/// - binary: `BinaryProviderClient.send` of one enhanced frame (the benchmark file's
///   notification), then `notifications.pop`; the gateway's thread reads and decodes it, the
///   queue wakes the popping thread;
/// - http2: `ProviderAPIClient.send` of one request with the same token and payload (it
///   returns once the 200 answer is in), then `notifications.pop`;
/// - reference: a bare TLS ping-pong (OpenSSL, same identity, TCP_NODELAY): the client writes
///   the same frame, a server thread reads all of it and answers one byte, the client reads
///   that byte. Like the binary round trip it is one TLS write and two wake-ups of a blocked
///   thread on loopback, with no decoding or queueing: the floor a send-to-pop can reach.
func runLatency(_ options: BenchOptions) -> Never {
    let count = options.count ?? 20_000
    let warmup = options.warmup ?? 2_000
    let block = 500
    do {
        // The servers' threads start on the second CPU the process may use (CPU 1) and inherit
        // it; the test's thread then moves to the first (CPU 0). Left to the scheduler, each
        // pair of threads settles on one core or on two for a whole run, by chance, and a
        // hand-over costs a local wake-up or a wake-up of the other core (on a VM, a halted
        // vCPU's: several microseconds): each kind's median, the reference's too, could fall in
        // either mode. Placed, every kind crosses cores, as a client in another process on
        // another core does.
        let placement = twoAllowedCPUs().flatMap { cpus in pinCurrentThread(toCPU: cpus.servers) ? cpus : nil }
        let server = try FakeAPNsServer.started(configuration: .init(feedbackPort: nil))
        let ping = try PingPong(frameSize: BenchNotification.frame(1).count)
        if let placement { pinCurrentThread(toCPU: placement.test) }
        let binary = try BinaryProviderClient(host: "127.0.0.1", port: server.gatewayPort)
        let http2 = try ProviderAPIClient(host: "127.0.0.1", port: server.http2Port!)
        let token = BenchNotification.token(1)
        let request = ProviderAPIClient.Request(
            token: token, payload: BenchNotification.payload(1), topic: "com.example.app", pushType: .alert)
        let frames = (1...UInt32(min(count + warmup, 1000))).map { BenchNotification.frame($0) }

        var nextIdentifier: UInt32 = 1
        func binaryRound() throws -> UInt64 {
            let frame = frames[Int(nextIdentifier - 1) % frames.count]
            let expected = UInt32(Int(nextIdentifier - 1) % frames.count + 1)
            nextIdentifier &+= 1
            let started = monotonicNanoseconds()
            try binary.send(frame)
            let notification = try server.notifications.pop(timeout: .seconds(5))
            let elapsed = monotonicNanoseconds() - started
            guard notification.identifier == expected, notification.format == .enhanced else {
                throw BareTLS.Failure(description: "popped \(notification), expected enhanced identifier \(expected)")
            }
            return elapsed
        }
        func http2Round() throws -> UInt64 {
            let started = monotonicNanoseconds()
            let response = try http2.send(request)
            let notification = try server.notifications.pop(timeout: .seconds(5))
            let elapsed = monotonicNanoseconds() - started
            guard response.status == 200, notification.format == .http2, notification.deviceToken == token else {
                throw BareTLS.Failure(
                    description: "HTTP/2 answered \(response.status) \(response.reason ?? ""); popped \(notification)")
            }
            return elapsed
        }
        func referenceRound() throws -> UInt64 {
            let frame = frames[Int(nextIdentifier) % frames.count]
            let started = monotonicNanoseconds()
            try ping.roundTrip(frame)
            return monotonicNanoseconds() - started
        }

        for _ in 0..<warmup {
            _ = try binaryRound()
            _ = try http2Round()
            _ = try referenceRound()
        }
        var binaryTimes: [UInt64] = []
        var http2Times: [UInt64] = []
        var referenceTimes: [UInt64] = []
        binaryTimes.reserveCapacity(count)
        http2Times.reserveCapacity(count)
        referenceTimes.reserveCapacity(count)
        while binaryTimes.count < count {
            let size = min(block, count - binaryTimes.count)
            for _ in 0..<size { binaryTimes.append(try binaryRound()) }
            for _ in 0..<size { http2Times.append(try http2Round()) }
            for _ in 0..<size { referenceTimes.append(try referenceRound()) }
        }
        guard server.notifications.isEmpty, server.rejections.isEmpty else {
            throw BareTLS.Failure(
                description: "\(server.notifications.count) notifications and \(server.rejections.count) rejections left over")
        }
        let tls = ping.negotiated
        binary.close()
        http2.close()
        ping.close()
        server.stop()
        writeReport([
            "count": count, "warmup": warmup, "frame_bytes": frames[0].count, "tls": tls,
            "placement": placement.map { "servers on CPU \($0.servers), test on CPU \($0.test)" }
                ?? "one CPU, or left to the scheduler",
            "binary": latencySummary(binaryTimes), "http2": latencySummary(http2Times),
            "reference": latencySummary(referenceTimes),
        ])
    } catch {
        failAndExit("latency: \(error)")
    }
    exit(0)
}

/// The reference round trip: a bare TLS connection on loopback to a thread that answers each
/// frame of `frameSize` bytes with one byte.
final class PingPong: @unchecked Sendable {
    private let listener: BareTLS.Listener
    private let client: BareTLS.Connection
    private var answer = [UInt8](repeating: 0, count: 1)

    init(frameSize: Int) throws {
        let context = try BareTLS.serverContext()
        let listener = try BareTLS.Listener()
        self.listener = listener
        try OSThread(name: "ping-pong") {
            do {
                let connection = try listener.accept(context: context)
                var frame = [UInt8](repeating: 0, count: frameSize)
                let one: [UInt8] = [1]
                while try frame.withUnsafeMutableBytes({ try connection.readExactly(into: $0) }) {
                    try one.withUnsafeBytes { try connection.write($0) }
                }
                connection.close()
            } catch {
                FileHandle.standardError.write(Data("fake-apns-bench: ping-pong server: \(error)\n".utf8))
            }
        }.detach()
        client = try BareTLS.Connection.connect(port: listener.port, context: try BareTLS.clientContext())
    }

    var negotiated: String { client.negotiated }

    func roundTrip(_ frame: [UInt8]) throws {
        try frame.withUnsafeBytes { try client.write($0) }
        guard try answer.withUnsafeMutableBytes({ try client.readExactly(into: $0) }) else {
            throw BareTLS.Failure(description: "the ping-pong server closed")
        }
    }

    func close() {
        client.close()
        listener.close()
    }
}
