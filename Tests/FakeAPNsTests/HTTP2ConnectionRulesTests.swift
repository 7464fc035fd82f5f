import FakeAPNsTestSupport
import Foundation
import XCTest
// Drives the connection's state machine in memory: HTTP2Connection, HTTP2Context and its host.
@testable import FakeAPNs

/// The rules of a provider API connection (``ProviderConnectionRules``): the stream limit it
/// announces and enforces, a limit of 1 after a refusal, GOAWAY after too many refusals or at
/// retirement, each checked on the frames of a connection that lives in memory, no socket and
/// no sleep. `HTTP2ConnectionRulesWireTests` checks the same with python3-h2.
final class HTTP2ConnectionRulesTests: XCTestCase {
    private static let token = "fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2"
    private static let push: [(String, String)] = [("apns-topic", "com.example.app"), ("apns-push-type", "alert")]
    private static let alert = Array(#"{"aps":{"alert":"Hi"}}"#.utf8)

    private final class Harness {
        let memory = HTTP2MemoryHost()
        let server: FakeAPNsServer
        let policy: Policy
        let connection: HTTP2Connection
        let events = Locked<[ProviderConnectionRules.Event]>([])
        let audit: SenderAudit
        /// Frames read so far by `take()`.
        private var read = 0

        init(
            _ rules: ProviderConnectionRules = ProviderConnectionRules(), clock: ServerClock? = nil,
            authentication: HTTP2Authentication = .none, certificate: ClientCertificateInfo? = nil
        ) {
            server = FakeAPNsServer(configuration: .init())
            policy = Policy(strict: false, environment: .sandbox, feedback: server.feedback, clock: clock ?? server.clock)
            var context = HTTP2Context(
                validator: RequestValidator(), authentication: authentication, verifier: nil, policy: policy,
                intake: server.intake, clock: clock ?? server.clock, tokenSightings: server.tokenSightings,
                managementOnly: false)
            context.rules = rules
            audit = SenderAudit(clock: clock ?? server.clock)
            context.audit = audit
            let events = events
            context.onRule = { _, event in events.withLock { $0.append(event) } }
            connection = HTTP2Connection(
                host: memory, info: ConnectionInfo(id: 1, peer: "memory", clientCertificate: certificate, transport: .tls),
                context: context)
        }

        deinit { connection.finish() }

        /// Starts the connection and sends the client's preface with an empty SETTINGS.
        func start() -> [RawFrame] {
            XCTAssertEqual(connection.start(), .read)
            XCTAssertEqual(send([RawFrame(type: RawFrame.settings, stream: 0, payload: [])], preface: true), .read)
            return take()
        }

        @discardableResult
        func send(_ frames: [RawFrame], preface: Bool = false) -> HTTP2Connection.Next {
            let bytes = (preface ? Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) : []) + frames.flatMap(\.bytes)
            return bytes.withUnsafeBytes { connection.received($0) }
        }

        /// The client acknowledges the server's SETTINGS.
        func acknowledge() {
            XCTAssertEqual(send([RawFrame(type: RawFrame.settings, flags: 1, stream: 0, payload: [])]), .read)
        }

        /// A push to `path`'s token (a valid one unless given).
        func push(stream: Int32, token: String = HTTP2ConnectionRulesTests.token, complete: Bool = true)
            -> HTTP2Connection.Next
        {
            var frames = RawFrame.request(
                stream: stream, path: "/3/device/\(token)", HTTP2ConnectionRulesTests.push,
                body: HTTP2ConnectionRulesTests.alert)
            if !complete { frames.removeLast() }
            return send(frames)
        }

        /// A refused push: priority 7 (400 BadPriority).
        func refused(stream: Int32) -> HTTP2Connection.Next {
            send(RawFrame.request(
                stream: stream, path: "/3/device/\(HTTP2ConnectionRulesTests.token)",
                HTTP2ConnectionRulesTests.push + [("apns-priority", "7")], body: HTTP2ConnectionRulesTests.alert))
        }

        /// The frames written since the last call.
        func take() -> [RawFrame] {
            let frames = RawFrame.parse(memory.written).frames
            defer { read = frames.count }
            return Array(frames[read...])
        }
    }

    /// The MAX_CONCURRENT_STREAMS values of the SETTINGS frames among `frames`.
    private func streamLimits(_ frames: [RawFrame]) -> [UInt32] {
        frames.filter { $0.type == RawFrame.settings && $0.flags & 1 == 0 }.flatMap { frame in
            stride(from: frame.payload.startIndex, to: frame.payload.endIndex - 5, by: 6).compactMap { entry in
                let id = UInt16(frame.payload[entry]) << 8 | UInt16(frame.payload[entry + 1])
                return id == 3 ? RawFrame.word(frame.payload, entry - frame.payload.startIndex + 2) : nil
            }
        }
    }

    private func status(_ frames: [RawFrame], stream: Int32) -> Bool {
        frames.contains { $0.type == RawFrame.headers && $0.stream == stream }
    }

    // MARK: - The stream limit

    func testTheServerAnnouncesItsLimitOnTheWire() {
        let harness = Harness()
        XCTAssertEqual(streamLimits(harness.start()), [1000])
    }

    func testAStreamOverTheAcknowledgedLimitIsRefusedAloneAndTheConnectionServesOn() {
        let harness = Harness()
        _ = harness.start()
        harness.acknowledge()
        XCTAssertEqual(harness.refused(stream: 1), .read)
        XCTAssertEqual(streamLimits(harness.take()), [1], "a refusal cuts the limit to 1")
        harness.acknowledge()
        // Stream 3 stays open (its body held back); stream 5 is one too many.
        XCTAssertEqual(harness.push(stream: 3, complete: false), .read)
        XCTAssertEqual(harness.push(stream: 5), .read)
        let frames = harness.take()
        let reset = frames.first { $0.type == RawFrame.rstStream && $0.stream == 5 }
        XCTAssertEqual(reset?.resetErrorCode, 7, "REFUSED_STREAM for stream 5 alone: \(frames)")
        XCTAssertFalse(frames.contains { $0.type == RawFrame.goAway }, "\(frames)")
        // Stream 3's body completes it: answered, and the limit is raised again.
        XCTAssertEqual(harness.send([RawFrame(type: RawFrame.data, flags: 1, stream: 3, payload: Self.alert[...])]), .read)
        let after = harness.take()
        XCTAssertTrue(status(after, stream: 3), "\(after)")
        XCTAssertEqual(streamLimits(after), [1000])
        XCTAssertEqual(harness.server.notifications.count, 1, "stream 5 was not processed")
    }

    func testStreamsOpenedBeforeTheClientAcknowledgedALowerLimitAreServed() {
        let harness = Harness()
        _ = harness.start()
        harness.acknowledge()
        _ = harness.refused(stream: 1)
        XCTAssertEqual(streamLimits(harness.take()), [1])
        // No acknowledgement yet: the client may still hold to 1000.
        _ = harness.push(stream: 3, complete: false)
        _ = harness.push(stream: 5)
        let frames = harness.take()
        XCTAssertFalse(frames.contains { $0.type == RawFrame.rstStream }, "\(frames)")
        XCTAssertTrue(status(frames, stream: 5), "\(frames)")
    }

    func testWithTheGoAwayOptionAStreamOverTheAcknowledgedLimitEndsTheConnection() {
        var rules = ProviderConnectionRules()
        rules.streamLimitViolation = .goAway
        let harness = Harness(rules)
        _ = harness.start()
        harness.acknowledge()
        _ = harness.refused(stream: 1)
        harness.acknowledge()
        _ = harness.push(stream: 3, complete: false)
        XCTAssertEqual(harness.push(stream: 5), .drain)
        let goAway = harness.take().first { $0.type == RawFrame.goAway }
        XCTAssertEqual(goAway?.goAwayErrorCode, 1)
        XCTAssertEqual(
            goAway.map { String(decoding: $0.goAwayDebugData, as: UTF8.self) },
            "Maximum active streams violated for this endpoint.")
        XCTAssertEqual(goAway?.goAwayLastStream, 1, "stream 3 was still arriving: not processed")
    }

    func testWithoutThrottlingARefusalLeavesTheLimit() {
        var rules = ProviderConnectionRules()
        rules.throttleAfterRefusal = false
        let harness = Harness(rules)
        _ = harness.start()
        _ = harness.refused(stream: 1)
        XCTAssertEqual(streamLimits(harness.take()), [])
        XCTAssertEqual(harness.events.withLock { $0 }, [])
    }

    func testAThrottledConnectionIsAnEventOnce() {
        let harness = Harness()
        _ = harness.start()
        _ = harness.refused(stream: 1)
        _ = harness.refused(stream: 3)
        XCTAssertEqual(harness.events.withLock { $0 }, [.throttled(reason: "BadPriority")])
    }

    // MARK: - What the sender audit hears

    /// The audit's findings of `rule`: how many times it was seen.
    private func count(_ harness: Harness, _ rule: String) -> Int {
        harness.audit.report().findings.filter { $0.rule.id == rule }.map(\.count).reduce(0, +)
    }

    func testAStreamOverAnAcknowledgedLimitIsAnAuditFindingAndOneBeforeTheAcknowledgementIsNot() {
        let harness = Harness()
        _ = harness.start()
        harness.acknowledge()
        _ = harness.refused(stream: 1)
        _ = harness.push(stream: 3, complete: false)
        _ = harness.push(stream: 5, complete: false)
        XCTAssertEqual(count(harness, "streams-past-limit"), 0, "the limit of 1 was not acknowledged yet")
        harness.acknowledge()
        _ = harness.push(stream: 7)
        XCTAssertTrue(harness.take().contains { $0.type == RawFrame.rstStream && $0.stream == 7 })
        XCTAssertEqual(count(harness, "streams-past-limit"), 1)
    }

    func testAStreamOpenedAfterTheClientAnsweredThePingAfterGoAwayIsAnAuditFinding() {
        var rules = ProviderConnectionRules()
        rules.requestsPerConnection = 1
        let harness = Harness(rules)
        _ = harness.start()
        XCTAssertEqual(harness.push(stream: 1), .drain)
        let frames = harness.take()
        let ping = try? XCTUnwrap(frames.last { $0.type == RawFrame.ping }, "a PING follows the GOAWAY: \(frames)")
        let request = { (stream: Int32) in
            RawFrame.request(stream: stream, path: "/3/device/\(Self.token)", Self.push, body: Self.alert)
        }
        // Stream 3 may have crossed the GOAWAY: not a finding.
        XCTAssertTrue(request(3).flatMap(\.bytes).withUnsafeBytes { harness.connection.drained($0) })
        XCTAssertEqual(count(harness, "streams-after-goaway"), 0)
        let answer = RawFrame(type: RawFrame.ping, flags: 1, stream: 0, payload: ping?.payload ?? [])
        XCTAssertTrue((answer.bytes + request(5).flatMap(\.bytes)).withUnsafeBytes { harness.connection.drained($0) })
        XCTAssertEqual(count(harness, "streams-after-goaway"), 1, "stream 5 came after the client read the GOAWAY")
        XCTAssertEqual(harness.server.notifications.count, 1, "neither stream 3 nor 5 is processed")
    }

    // MARK: - Too many refusals

    func testTooManyRefusalsEndTheConnectionWithGoAwayNamingTheLastReason() {
        var rules = ProviderConnectionRules()
        rules.errorLimit = 3
        let harness = Harness(rules)
        _ = harness.start()
        XCTAssertEqual(harness.refused(stream: 1), .read)
        XCTAssertEqual(harness.refused(stream: 3), .read)
        XCTAssertEqual(harness.refused(stream: 5), .drain)
        let frames = harness.take()
        XCTAssertTrue(status(frames, stream: 5), "the third refusal is answered before GOAWAY: \(frames)")
        let goAway = frames.first { $0.type == RawFrame.goAway }
        XCTAssertEqual(goAway?.goAwayLastStream, 5)
        XCTAssertEqual(goAway?.goAwayErrorCode, 0)
        XCTAssertEqual(goAway.map { String(decoding: $0.goAwayDebugData, as: UTF8.self) }, #"{"reason":"BadPriority"}"#)
        XCTAssertEqual(harness.events.withLock { $0.last }, .endedAfterRefusals(3, reason: "BadPriority"))
        XCTAssertEqual(harness.server.rejections.count, 3, "every refusal answered is recorded")
    }

    func testBadDeviceTokenEndsTheConnectionSooner() {
        var rules = ProviderConnectionRules()
        rules.badDeviceTokenLimit = 2
        let harness = Harness(rules)
        _ = harness.start()
        XCTAssertEqual(harness.push(stream: 1, token: "abc"), .read)
        XCTAssertEqual(harness.push(stream: 3, token: "abc"), .drain)
        let goAway = harness.take().first { $0.type == RawFrame.goAway }
        XCTAssertEqual(goAway.map { String(decoding: $0.goAwayDebugData, as: UTF8.self) }, #"{"reason":"BadDeviceToken"}"#)
    }

    func testRefusalsCountWithinTheWindowOnTheServersClock() {
        var rules = ProviderConnectionRules()
        rules.errorLimit = 2
        let clock = ServerClock(reading: { Date(timeIntervalSince1970: 1_800_000_000) })
        let harness = Harness(rules, clock: clock)
        _ = harness.start()
        XCTAssertEqual(harness.refused(stream: 1), .read)
        clock.advance(by: .seconds(61))
        XCTAssertEqual(harness.refused(stream: 3), .read, "the first refusal's window ended")
        XCTAssertEqual(harness.refused(stream: 5), .drain)
    }

    func testAcceptedPushesAndUnregisteredTokensAreNotErrors() {
        var rules = ProviderConnectionRules()
        rules.errorLimit = 1
        let harness = Harness(rules)
        harness.policy.devices.unregister(DeviceToken(stringLiteral: Self.token))
        _ = harness.start()
        XCTAssertEqual(harness.push(stream: 1), .read)
        let frames = harness.take()
        XCTAssertTrue(status(frames, stream: 1))
        XCTAssertFalse(frames.contains { $0.type == RawFrame.goAway }, "410 is not an error: \(frames)")
        XCTAssertEqual(streamLimits(frames), [], "nor does it throttle")
    }

    // MARK: - A certificate for the other environment

    private static let productionCertificate = ClientCertificateInfo(
        subject: "Apple Production IOS Push Services: com.example.app", topic: "com.example.app",
        environments: [.production])

    func testACertificateForTheOtherEnvironmentIsAnswered403OnEachRequestByDefault() {
        let harness = Harness(authentication: .certificate, certificate: Self.productionCertificate)
        _ = harness.start()
        XCTAssertEqual(harness.push(stream: 1), .read)
        XCTAssertEqual(harness.push(stream: 3), .read)
        let frames = harness.take()
        XCTAssertTrue(status(frames, stream: 1) && status(frames, stream: 3), "\(frames)")
        XCTAssertFalse(frames.contains { $0.type == RawFrame.goAway })
        XCTAssertEqual(harness.server.rejections.snapshot().map(\.answer), [
            .reason(.badCertificateEnvironment), .reason(.badCertificateEnvironment),
        ])
    }

    func testWithTheOptionACertificateForTheOtherEnvironmentEndsTheConnectionNamingStreamZero() {
        var rules = ProviderConnectionRules()
        rules.certificateEnvironmentGoAway = true
        let harness = Harness(rules, authentication: .certificate, certificate: Self.productionCertificate)
        _ = harness.start()
        XCTAssertEqual(harness.push(stream: 1), .drain)
        let frames = harness.take()
        XCTAssertFalse(status(frames, stream: 1), "no answer on the stream: \(frames)")
        let goAway = frames.first { $0.type == RawFrame.goAway }
        XCTAssertEqual(goAway?.goAwayLastStream, 0)
        XCTAssertEqual(goAway?.goAwayErrorCode, 0)
        XCTAssertEqual(
            goAway.map { String(decoding: $0.goAwayDebugData, as: UTF8.self) }, #"{"reason":"BadCertificateEnvironment"}"#)
        let refusal = harness.server.rejections.snapshot().first
        XCTAssertEqual(refusal?.responseSent, false)
        XCTAssertEqual(refusal?.connectionClosed, true)
        XCTAssertEqual(harness.server.notifications.count, 0)
    }

    // MARK: - Retirement

    func testAConnectionIsRetiredAfterItsRequestsWithShutdownAnsweringWhatItAccepted() {
        var rules = ProviderConnectionRules()
        rules.requestsPerConnection = 2
        let harness = Harness(rules)
        _ = harness.start()
        XCTAssertEqual(harness.push(stream: 1), .read)
        XCTAssertEqual(harness.push(stream: 3), .drain)
        let frames = harness.take()
        XCTAssertTrue(status(frames, stream: 3))
        let goAway = RawFrame.lastBeforePing(frames)
        XCTAssertEqual(goAway?.type, RawFrame.goAway)
        XCTAssertEqual(goAway?.goAwayLastStream, 3)
        XCTAssertEqual(goAway.map { String(decoding: $0.goAwayDebugData, as: UTF8.self) }, #"{"reason":"Shutdown"}"#)
        XCTAssertEqual(harness.server.notifications.count, 2)
        XCTAssertEqual(harness.events.withLock { $0 }, [.retired("served 2 requests")])
    }

    func testAConnectionPastItsLifetimeIsRetiredWhenItsReadTimesOut() {
        var rules = ProviderConnectionRules()
        rules.connectionLifetime = .zero
        let harness = Harness(rules)
        _ = harness.start()
        XCTAssertEqual(harness.push(stream: 1), .read)
        XCTAssertEqual(harness.connection.readTimedOut(), .drain)
        let goAway = RawFrame.lastBeforePing(harness.take())
        XCTAssertEqual(goAway?.goAwayLastStream, 1)
        XCTAssertEqual(goAway.map { String(decoding: $0.goAwayDebugData, as: UTF8.self) }, #"{"reason":"Shutdown"}"#)
    }

    func testWithoutALifetimeAQuietConnectionBetweenFramesIsIdle() {
        let harness = Harness()
        _ = harness.start()
        XCTAssertEqual(harness.connection.readTimedOut(), .drain)
        let goAway = RawFrame.lastBeforePing(harness.take())
        XCTAssertEqual(goAway.map { String(decoding: $0.goAwayDebugData, as: UTF8.self) }, #"{"reason":"IdleTimeout"}"#)
    }

    func testDuringTheDrainNewStreamsAreNeitherAnsweredNorQueued() {
        var rules = ProviderConnectionRules()
        rules.requestsPerConnection = 1
        let harness = Harness(rules)
        _ = harness.start()
        XCTAssertEqual(harness.push(stream: 1), .drain)
        _ = harness.take()
        let frames = RawFrame.request(stream: 3, path: "/3/device/\(Self.token)", Self.push, body: Self.alert)
        XCTAssertTrue(frames.flatMap(\.bytes).withUnsafeBytes { harness.connection.drained($0) })
        XCTAssertFalse(status(harness.take(), stream: 3))
        XCTAssertEqual(harness.server.notifications.count, 1)
    }
}

/// The same rules on the wire, with python3-h2, a client that shares no code with the server.
final class HTTP2ConnectionRulesWireTests: XCTestCase {
    private let fixture = ServerFixture()

    func testAStreamOverTheAcknowledgedLimitIsRefusedAloneNotTheWholeConnection() throws {
        // Found by Go's sideshow/apns2: with the limit of 1 that token authentication starts
        // with, a second stream after the SETTINGS acknowledgement lost the whole connection.
        let server = try fixture.start(.init(authentication: .testToken), for: self)
        let run = try PythonH2Run.run("over-limit", against: server, ["--count", "1"])
        XCTAssertNil(run.goaway, "frames \(run.frames)")
        XCTAssertEqual(run.requests.map(\.stream), [1, 3])
        XCTAssertEqual(run.requests[0].status, 403, "stream 1 is answered: \(run.requests[0])")
        XCTAssertEqual(run.requests[0].reason, "MissingProviderToken")
        XCTAssertEqual(run.requests[1].reset, 7, "stream 3 alone is refused: \(run.requests[1])")
        let finding = server.senderReport.findings.first { $0.rule.id == "streams-past-limit" }
        XCTAssertEqual(finding?.count, 1, "the sender audit names the client: \(server.senderReport)")
    }

    func testTheGoAwayOptionEndsTheConnectionAsAPNsWasSeenTo() throws {
        var configuration = FakeAPNsServer.Configuration(authentication: .testToken)
        configuration.connectionRules.streamLimitViolation = .goAway
        let server = try fixture.start(configuration, for: self)
        let run = try PythonH2Run.run("over-limit", against: server, ["--count", "1"])
        let goAway = try XCTUnwrap(run.goaway, "frames \(run.frames)")
        XCTAssertEqual(goAway.errorCode, 1)
        XCTAssertEqual(goAway.debug, "Maximum active streams violated for this endpoint.")
    }

    func testRepeatedBadDeviceTokensEndTheConnectionAndEveryRecordedRefusalWasAnswered() throws {
        var configuration = FakeAPNsServer.Configuration()
        configuration.connectionRules.badDeviceTokenLimit = 5
        let server = try fixture.start(configuration, for: self)
        let run = try PythonH2Run.run("pipeline", against: server, ["--count", "10", "--token", "not-a-token"])
        let goAway = try XCTUnwrap(run.goaway, "frames \(run.frames)")
        XCTAssertEqual(goAway.debug, #"{"reason":"BadDeviceToken"}"#)
        let answered = run.requests.filter { $0.status != nil }
        XCTAssertEqual(answered.count, 5, "\(run.requests)")
        XCTAssertTrue(answered.allSatisfy { $0.status == 400 && $0.reason == "BadDeviceToken" })
        XCTAssertTrue(run.requests.filter { $0.status == nil }.allSatisfy { $0.stream > goAway.lastStreamId })
        XCTAssertEqual(server.rejections.count, answered.count, "recorded: exactly what was answered")
    }

    func testARetiredConnectionsAnswersComeBeforeItsGoAwayShutdown() throws {
        var configuration = FakeAPNsServer.Configuration()
        configuration.connectionRules.requestsPerConnection = 3
        let server = try fixture.start(configuration, for: self)
        let run = try PythonH2Run.run("pipeline", against: server, ["--count", "5", "--retry"])
        let goAway = try XCTUnwrap(run.goaway, "frames \(run.frames)")
        XCTAssertEqual(goAway.debug, #"{"reason":"Shutdown"}"#)
        for request in run.requests {
            XCTAssertTrue(request.status == 200 || request.retry?.status == 200, "\(request)")
        }
        let queued = PythonH2Run.indexes(of: try server.notifications.pop(count: 5, timeout: .seconds(10)))
        XCTAssertEqual(queued.sorted(), Array(0..<5), "each push once")
    }
}
