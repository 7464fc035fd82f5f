import FakeAPNs
import Foundation

/// The device model's time with many phones described (issue 32, item 2): `--count` phones
/// (default 1,000) described offline through the library (`phone.update { $0.isOnline =
/// false }`), then one push to each over HTTP/2 (`ProviderAPIClient`, one connection), each
/// stored for the offline phone; then:
///
/// - settings change: `phone.update` toggling Low Power Mode on phones in turn (no push is
///   released by it), 200 times, timed one by one;
/// - idle push: one push to a phone no test described, on a second connection opened
///   beforehand, timed from `send` until the 200 answer, 50 times (the reference of the next);
/// - advance: `server.clock.advance(by: .seconds(31 * 86_400))` on a thread of its own, which
///   expires every stored push (30 days at most), timed until it returns; 2 ms after it began,
///   one more push on the second connection, timed until its answer, and whether the advance
///   was still running when it was sent (when the advance takes under 2 ms, it was not).
///
/// Every stored push must then be logged `Discarded - Expired` (checked on the first and last
/// phones), and every push sent must be in the queue.
func runDeviceModel(_ options: BenchOptions) -> Never {
    let phones = options.count ?? 1_000
    let topic = "com.example.app"
    do {
        let server = try FakeAPNsServer.started(configuration: .init(feedbackPort: nil))
        guard let port = server.http2Port else { throw BareTLS.Failure(description: "no HTTP/2 listener") }
        let tokens = (0..<phones).map { DeviceToken(bytes: [0xD0, 0x0D] + withUnsafeBytes(of: UInt32($0).bigEndian) { Array($0) }) }

        let describeStarted = monotonicNanoseconds()
        for token in tokens { server.device(token).update { $0.isOnline = false } }
        let describeSeconds = Double(monotonicNanoseconds() - describeStarted) / 1e9

        let sender = try ProviderAPIClient(host: "127.0.0.1", port: port)
        let payload = Array(#"{"aps":{"alert":"stored while offline","badge":1}}"#.utf8)
        let storeStarted = monotonicNanoseconds()
        for token in tokens {
            let response = try sender.send(.init(token: token, payload: payload, topic: topic, pushType: .alert))
            guard response.status == 200 else {
                throw BareTLS.Failure(description: "a push to \(token.hex) was answered \(response.status) \(response.reason ?? "")")
            }
        }
        let storeSeconds = Double(monotonicNanoseconds() - storeStarted) / 1e9
        for token in [tokens[0], tokens[phones - 1]] {
            guard server.device(token).log.last?.status == .storedDeviceOffline else {
                throw BareTLS.Failure(description: "\(token.hex) did not store its push: \(server.device(token).log)")
            }
        }

        // One settings change, with every phone described and a push stored on each.
        var updateTimes: [UInt64] = []
        for round in 0..<200 {
            let phone = server.device(tokens[(round * 7919) % phones])
            let started = monotonicNanoseconds()
            phone.update { $0.isLowPowerMode.toggle() }
            updateTimes.append(monotonicNanoseconds() - started)
        }

        // The second connection, and its answer time with nothing else going on.
        // Its answer may wait for the whole advance: seconds with a slow model.
        let bystander = try ProviderAPIClient(host: "127.0.0.1", port: port, timeout: .seconds(600))
        let undescribed = DeviceToken(bytes: [0xEE, 0xEE, 0xEE, 0xEE])
        let probe = ProviderAPIClient.Request(token: undescribed, payload: payload, topic: topic, pushType: .alert)
        func timedProbe() throws -> UInt64 {
            let started = monotonicNanoseconds()
            let response = try bystander.send(probe)
            let elapsed = monotonicNanoseconds() - started
            guard response.status == 200 else {
                throw BareTLS.Failure(description: "the probe push was answered \(response.status) \(response.reason ?? "")")
            }
            return elapsed
        }
        var idleTimes: [UInt64] = []
        for _ in 0..<50 { idleTimes.append(try timedProbe()) }

        let advance = Locked<(started: UInt64, ended: UInt64)>((0, 0))
        let thread = try OSThread(name: "bench-advance") {
            let started = monotonicNanoseconds()
            advance.withLock { $0.started = started }
            server.clock.advance(by: .seconds(31 * 86_400))
            let ended = monotonicNanoseconds()
            advance.withLock { $0.ended = ended }
        }
        while advance.withLock({ $0.started }) == 0 { usleep(100) }
        usleep(2_000)
        let sentAt = monotonicNanoseconds()
        let duringTime = try timedProbe()
        thread.join()
        let (advanceStarted, advanceEnded) = advance.withLock { ($0.started, $0.ended) }
        let advanceSeconds = Double(advanceEnded - advanceStarted) / 1e9

        for token in [tokens[0], tokens[phones - 1]] {
            guard server.device(token).log.last?.status == .discardedExpired else {
                throw BareTLS.Failure(
                    description: "\(token.hex)'s push did not expire: \(server.device(token).log.last.map { "\($0.status)" } ?? "no log")")
            }
        }
        let expected = phones + idleTimes.count + 1
        guard server.notifications.count == expected else {
            throw BareTLS.Failure(description: "\(server.notifications.count) notifications queued, expected \(expected)")
        }
        sender.close()
        bystander.close()
        server.stop()
        writeReport([
            "phones": phones, "describe_seconds": describeSeconds, "store_seconds": storeSeconds,
            "advance_seconds": advanceSeconds,
            "push_during_advance_ms": Double(duringTime) / 1e6,
            "advance_running_at_send": sentAt < advanceEnded,
            "push_idle": latencySummary(idleTimes), "update": latencySummary(updateTimes),
        ])
    } catch {
        failAndExit("device model: \(error)")
    }
    exit(0)
}
