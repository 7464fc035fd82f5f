import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: TLSClient, RandomUUID and ProviderAPIClient.exchange/goAway/serverStreamLimit.
@testable import FakeAPNs

/// The HTTP/2 provider API over real connections: transport, answers, authentication, and the
/// registry and faults with their HTTP/2 meanings.
final class HTTP2Tests: XCTestCase {
    private let fixture = ServerFixture()
    private var server: FakeAPNsServer { fixture.server }

    override func setUpWithError() throws {
        try fixture.start(for: self)
    }

    // MARK: - Transport and success

    func testAcceptedRequestBecomesANotificationOnTheSameQueue() throws {
        let client = try server.connectHTTP2()
        XCTAssertEqual(client.negotiatedProtocol, "h2")
        let response = try client.send(.push(extra: [
            ("apns-id", "E4A1B2C3-D4E5-F6A7-B8C9-D0E1F2A3B4C5"), ("apns-expiration", "1900000000"),
            ("apns-priority", "5"), ("apns-collapse-id", "order-7"),
        ]))
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.header("apns-id"), "E4A1B2C3-D4E5-F6A7-B8C9-D0E1F2A3B4C5", "as sent, as APNs echoes it")
        XCTAssertNotNil(response.header("apns-unique-id"), "a sandbox server sends apns-unique-id")
        XCTAssertEqual(response.body, [])
        let notification = try server.notifications.pop(timeout: .seconds(5))
        XCTAssertEqual(notification.format, .http2)
        XCTAssertEqual(notification.deviceToken, Fixtures.token)
        XCTAssertEqual(notification.apnsID, "E4A1B2C3-D4E5-F6A7-B8C9-D0E1F2A3B4C5")
        XCTAssertEqual(notification.topic, "com.example.app")
        XCTAssertEqual(notification.pushType, .alert)
        XCTAssertEqual(notification.collapseID, "order-7")
        XCTAssertEqual(notification.expiration, 1_900_000_000)
        XCTAssertEqual(notification.priority, .consideringDevicePower)
        XCTAssertEqual(notification.payload.aps.alert?.body, "Hello")
    }

    func testApnsIDIsMadeUpWhenAbsentAndNoUniqueIDInProduction() throws {
        try fixture.restart(.init(environment: .production))
        let response = try server.connectHTTP2().send(.push())
        XCTAssertEqual(response.status, 200)
        let apnsID = try XCTUnwrap(response.header("apns-id"))
        XCTAssertNotNil(UUID(uuidString: apnsID))
        XCTAssertEqual(apnsID, apnsID.uppercased(), "in capitals, as APNs makes them")
        XCTAssertNil(response.header("apns-unique-id"))
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).apnsID, apnsID)
    }

    /// A client matches answers to requests by `apns-id`: an upper-case one (node-apn's README
    /// sends them) comes back as sent, accepted or refused, and the records hold the same.
    func testAnUpperCaseApnsIDIsAnsweredAndRecordedAsSent() throws {
        let accepted = "0F3C8A52-7D7E-4B8E-9E4F-2A1D6C5B4A39"
        let refused = "6B0C4F1E-2a3d-4C5B-8e9f-0A1B2C3D4E5F"
        let responses = try server.connectHTTP2().exchange([
            .push(extra: [("apns-id", accepted)]),
            .push(extra: [("apns-id", refused), ("apns-priority", "7")]),
        ])
        XCTAssertEqual(responses.map(\.status), [200, 400])
        XCTAssertEqual(responses.map { $0.header("apns-id") }, [accepted, refused])
        let notification = try server.notifications.pop(timeout: .seconds(5))
        XCTAssertEqual(notification.apnsID, accepted)
        let rejection = try server.rejections.pop(timeout: .seconds(5))
        XCTAssertEqual(rejection.answer, .reason(.badPriority))
        XCTAssertEqual(rejection.apnsID, refused)
    }

    func testPriorKnowledgeWithoutALPNWorks() throws {
        let client = try server.connectHTTP2(offerALPN: false)
        XCTAssertNil(client.negotiatedProtocol)
        XCTAssertEqual(try client.send(.push()).status, 200)
    }

    func testManyConcurrentStreamsOnOneConnection() throws {
        let client = try server.connectHTTP2()
        let requests = (0..<300).map { ProviderAPIClient.Request.push(body: Fixtures.payload($0)) }
        let responses = try client.exchange(requests)
        XCTAssertEqual(responses.map(\.status), Array(repeating: 200, count: 300))
        let numbers = try server.notifications.pop(count: 300, timeout: .seconds(10)).compactMap { $0.payload["n"]?.intValue }
        XCTAssertEqual(Set(numbers), Set(0..<300))
    }

    func testManyConnectionsAtOnce() throws {
        let server = self.server
        DispatchQueue.concurrentPerform(iterations: 6) { connection in
            do {
                let client = try server.connectHTTP2()
                let responses = try client.exchange((0..<50).map { ProviderAPIClient.Request.push(body: Fixtures.payload(connection * 1000 + $0)) })
                XCTAssertEqual(Set(responses.map(\.status)), [200])
            } catch {
                XCTFail("connection \(connection): \(error)")
            }
        }
        XCTAssertEqual(try server.notifications.pop(count: 300, timeout: .seconds(10)).count, 300)
    }

    func testSettingsAsAPNsSendsThem() throws {
        let client = try server.connectHTTP2()
        try client.exchangeSettings()
        XCTAssertEqual(client.serverStreamLimit, 1000)
    }

    func testTokenAuthenticationStartsWithOneStreamAndOpensUpAfterASuccess() throws {
        try fixture.restart(.init(authentication: .testToken))
        let client = try server.connectHTTP2()
        try client.exchangeSettings()
        XCTAssertEqual(client.serverStreamLimit, 1)
        let token = try ProviderTokenSigner.sign(keyID: TestCertificates.jwtKeyID, teamID: TestCertificates.jwtTeamID)
        XCTAssertEqual(try client.send(.push(extra: [("authorization", "bearer \(token)")])).status, 200)
        XCTAssertEqual(client.serverStreamLimit, 1000)
    }

    // MARK: - Refusals over the wire

    func testErrorsCarryStatusReasonBodyAndApnsID() throws {
        let client = try server.connectHTTP2()
        let cases: [(ProviderAPIClient.Request, Int, String)] = [
            (.init(path: "/3/device/zz", headers: [("apns-topic", "com.example.app")], body: Fixtures.alert), 400, "BadDeviceToken"),
            (.init(path: "/3/device/", body: Fixtures.alert), 400, "MissingDeviceToken"),
            (.init(path: "/4/device/\(Fixtures.token.hex)", body: Fixtures.alert), 404, "BadPath"),
            (.init(path: "/3/device/\(Fixtures.token.hex)", method: "GET"), 405, "MethodNotAllowed"),
            (.push(extra: [("apns-topic", "com.example.app")]), 400, "DuplicateHeaders"),
            (.push(extra: [("apns-priority", "7")]), 400, "BadPriority"),
            (.push(extra: [("apns-id", "not-a-uuid")]), 400, "BadMessageId"),
            (.push(extra: [("apns-expiration", "soon")]), 400, "BadExpirationDate"),
            (.push(extra: [("apns-collapse-id", String(repeating: "x", count: 65))]), 400, "BadCollapseId"),
            (.push(pushType: "telegram"), 400, "InvalidPushType"),
            (.push(pushType: "voip"), 400, "InvalidPushType"),
            (.push(body: []), 400, "PayloadEmpty"),
            (.push(body: [UInt8](repeating: 0x20, count: 4097)), 413, "PayloadTooLarge"),
        ]
        let responses = try client.exchange(cases.map(\.0))
        for ((_, status, reason), response) in zip(cases, responses) {
            XCTAssertEqual(response.status, status, reason)
            XCTAssertEqual(response.reason, reason)
            XCTAssertEqual(response.header("content-type"), "application/json", reason)
            XCTAssertNotNil(response.header("apns-id"), reason)
        }
        XCTAssertEqual(server.notifications.count, 0)
        let rejections = try server.rejections.pop(count: cases.count, timeout: .seconds(5))
        XCTAssertTrue(rejections.allSatisfy { if case .reason = $0.answer { $0.format == .http2 } else { false } })
        XCTAssertEqual(Set(rejections.map(\.reason)), Set(cases.map(\.2)))
    }

    func testVoIPPayloadsMayBe5120Bytes() throws {
        let body = Array(#"{"aps":{}}"#.utf8) + [UInt8](repeating: 0x20, count: 5110)
        XCTAssertEqual(body.count, 5120)
        let response = try server.connectHTTP2().send(.push(topic: "com.example.app.voip", pushType: "voip", body: body))
        XCTAssertEqual(response.status, 200)
    }

    func testOneBadRequestDoesNotCloseTheConnection() throws {
        let client = try server.connectHTTP2()
        XCTAssertEqual(try client.send(.push(body: [])).status, 400)
        XCTAssertEqual(try client.send(.push()).status, 200)
    }

    func testClientSpeakingHTTP1IsClosedAndOthersAreServed() throws {
        let wrong = try TLSClient(host: "127.0.0.1", port: fixture.http2Port)
        try wrong.send(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        let answer = try wrong.readToEnd()
        XCTAssertFalse(answer.isEmpty, "nghttp2 answers a bad preface with GOAWAY before closing")
        XCTAssertEqual(try server.connectHTTP2().send(.push()).status, 200)
    }

    func testGarbageInsteadOfTLSIsClosedAndOthersAreServed() throws {
        let client = try server.connectHTTP2()
        let garbageClient = try RawConnection(port: fixture.http2Port)
        garbageClient.send([UInt8](repeating: 0x16, count: 100))
        XCTAssertEqual(try client.send(.push()).status, 200)
        XCTAssertTrue(garbageClient.waitForClose(timeout: .seconds(5)))
    }

    // MARK: - Registry with HTTP/2 meanings

    func testUnregisteredTokenAnswers410WithTimestampInMilliseconds() throws {
        server.devices.unregister(Fixtures.token, at: Date(timeIntervalSince1970: 1_700_000_000.5))
        let response = try server.connectHTTP2().send(.push())
        XCTAssertEqual(response.status, 410)
        XCTAssertEqual(response.reason, "Unregistered")
        XCTAssertEqual(response.json?["timestamp"]?.intValue, 1_700_000_000_500)
        let rejection = try server.rejections.pop(timeout: .seconds(5))
        XCTAssertEqual(rejection.answer, .reason(.unregistered))
        XCTAssertEqual(rejection.cause, .registry)
    }

    func testAnUnregistrationReportedAfterADelayIsAnswered200UntilTheServersClockReachesIt() throws {
        server.clock.set(to: Date(timeIntervalSince1970: 1_800_000_000))
        server.devices.unregister(Fixtures.token, at: server.clock.currentDate, reportedAfter: .seconds(3600))
        let client = try server.connectHTTP2()
        XCTAssertEqual(try client.send(.push()).status, 200, "APNs answers 200 for a while after an uninstall")
        server.clock.advance(by: .seconds(3599))
        XCTAssertEqual(try client.send(.push()).status, 200)
        server.clock.advance(by: .seconds(1))
        let response = try client.send(.push())
        XCTAssertEqual(response.status, 410)
        XCTAssertEqual(response.json?["timestamp"]?.intValue, 1_800_000_000_000, "the uninstall's time, not the 410's")
        XCTAssertEqual(server.notifications.count, 2)
    }

    func testRegistryRefusalsUseTheirReasons() throws {
        server.devices.register(Fixtures.token, topic: "com.example.other")
        server.devices.register(Fixtures.otherToken, environment: .production)
        let strictToken: DeviceToken = "abcdef"
        let client = try server.connectHTTP2()
        XCTAssertEqual(try client.send(.push(Fixtures.token)).reason, "DeviceTokenNotForTopic")
        XCTAssertEqual(try client.send(.push(Fixtures.token, topic: "com.example.other.voip", pushType: "voip")).status, 200)
        XCTAssertEqual(try client.send(.push(Fixtures.otherToken)).reason, "BadDeviceToken")
        server.devices.isStrict = true
        XCTAssertEqual(try client.send(.push(strictToken)).reason, "BadDeviceToken")
    }

    // MARK: - Faults with HTTP/2 meanings

    func testRespondFaultAnswersAnyStatusAndReason() throws {
        server.faults.add(FaultRule(match: .nth(1), action: .respond(.tooManyRequests)))
        server.faults.add(FaultRule(match: .nth(2), action: .respond(.serviceUnavailable)))
        server.faults.add(FaultRule(match: .nth(3), action: .reject(.shutdown)))
        server.faults.add(FaultRule(match: .nth(4), action: .respond(APNsReason("SomethingNew", status: 500))))
        let client = try server.connectHTTP2()
        var answers: [String] = []
        for _ in 0..<5 {
            let response = try client.send(.push())
            answers.append("\(response.status) \(response.reason ?? "")")
        }
        XCTAssertEqual(answers, ["429 TooManyRequests", "503 ServiceUnavailable", "503 Shutdown", "500 SomethingNew", "200 "])
    }

    func testARefusalBeforeValidationKeepsTheTopicSent() throws {
        let request = ProviderAPIClient.Request(
            path: "/3/device/not-hex", headers: [("apns-topic", "com.example.other")], body: Array(#"{"aps":{}}"#.utf8))
        XCTAssertEqual(try server.connectHTTP2().send(request).reason, "BadDeviceToken")
        let rejection = try server.rejections.pop(timeout: .seconds(5))
        XCTAssertEqual(rejection.topic, "com.example.other", "\(rejection)")
    }

    func testGoAwayFaultSendsJSONDebugDataAndCloses() throws {
        server.faults.add(FaultRule(match: .every, action: .goAway(.shutdown)))
        let client = try server.connectHTTP2()
        let response = try client.send(.push())
        XCTAssertEqual(response.status, 503)
        let goAway = try XCTUnwrap(client.goAway)
        XCTAssertEqual(goAway.errorCode, 0)
        XCTAssertEqual(String(decoding: goAway.debugData, as: UTF8.self), #"{"reason":"Shutdown"}"#)
        XCTAssertEqual(try client.tls.readToEnd(), [], "the server closes after GOAWAY")
    }

    func testResetFaultResetsOnlyThatStream() throws {
        server.faults.add(FaultRule(match: .nth(1), action: .resetStream))
        let client = try server.connectHTTP2()
        let reset = try client.send(.push())
        XCTAssertEqual(reset.resetCode, 7)
        XCTAssertEqual(reset.status, 0)
        XCTAssertEqual(try client.send(.push()).status, 200)
        let rejection = try server.rejections.pop(timeout: .seconds(5))
        XCTAssertEqual(rejection.reason, "Stream reset")
        XCTAssertEqual(rejection.topic, "com.example.app", "a device push's refusal keeps its apns-topic")
        XCTAssertNil(rejection.channelOperation)
    }

    func testDelayFaultDelaysTheResponse() throws {
        server.faults.add(FaultRule(match: .every, action: .delay(.milliseconds(300))))
        let started = ContinuousClock.now
        XCTAssertEqual(try server.connectHTTP2().send(.push()).status, 200)
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - started, .milliseconds(300))
    }

    func testCloseFaultDropsTheConnection() throws {
        server.faults.add(FaultRule(match: .every, action: .closeConnection))
        let client = try server.connectHTTP2()
        let response = try client.exchange(.push())
        XCTAssertEqual(response.status, 0)
        XCTAssertEqual(try server.rejections.pop(timeout: .seconds(5)).reason, "Connection closed")
    }
}

/// The apns-id generator.
final class RandomUUIDTests: XCTestCase {
    func testMakesDistinctLowercaseVersion4UUIDs() {
        var generator = RandomUUID()
        let made = (0..<1000).map { _ in generator.next() }
        XCTAssertEqual(Set(made).count, 1000)
        for text in made.prefix(50) {
            let parsed = UUID(uuidString: text)
            XCTAssertNotNil(parsed, text)
            XCTAssertEqual(text, text.lowercased())
            XCTAssertEqual(Array(text)[14], "4", "version 4: \(text)")
            XCTAssertTrue("89ab".contains(Array(text)[19]), "RFC 4122 variant: \(text)")
        }
    }
}
