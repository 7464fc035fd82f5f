import FakeAPNsTestSupport
import Foundation
import XCTest

@testable import FakeAPNs

/// The sender audit judged with records handed to a server's intake, as the sessions hand
/// them, on a clock the test moves: each rule, its windows, senders, bounds and reset.
final class SenderAuditTests: XCTestCase {
    private static let start = Date(timeIntervalSince1970: 1_800_000_000)
    private static let token: DeviceToken = "fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2"
    private static let other: DeviceToken = "0000a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2"
    private static let claimsA = ProviderTokenClaims(keyID: "KEYAAAAAAA", teamID: "TEAMAAAAAA", issuedAt: start)
    private static let claimsB = ProviderTokenClaims(keyID: "KEYBBBBBBB", teamID: "TEAMBBBBBB", issuedAt: start)

    private var server: FakeAPNsServer!
    private let connection = ConnectionInfo(id: 1, peer: "127.0.0.1:50001")

    private func makeServer(_ settings: SenderAuditSettings = SenderAuditSettings()) {
        var configuration = FakeAPNsServer.Configuration()
        configuration.senderAudit = settings
        server = FakeAPNsServer(configuration: configuration)
        server.clock.set(to: Self.start)
    }

    override func setUp() {
        makeServer()
    }

    // MARK: - Records

    private var now: Date { server.clock.currentDate }

    private func push(
        _ token: DeviceToken = token, _ body: String = #"{"aps":{"alert":"Hi"}}"#, apnsID: String = UUID().uuidString,
        claims: ProviderTokenClaims? = nil, on connection: ConnectionInfo? = nil,
        format: PushNotification.Format = .http2
    ) {
        let fields =
            format == .http2
            ? PushNotification.HTTP2Fields(
                apnsID: apnsID, topic: "com.example.app", pushType: .alert, collapseID: nil, providerToken: claims)
            : nil
        server.intake.append(notifications: [
            PushNotification(
                deviceToken: token, payload: Payload(body), format: format, connection: connection ?? self.connection,
                receivedAt: now, http2: fields)
        ])
    }

    private func refuse(
        _ reason: APNsReason, _ token: DeviceToken? = token, _ body: String = #"{"aps":{"alert":"Hi"}}"#,
        apnsID: String = UUID().uuidString, on connection: ConnectionInfo? = nil
    ) {
        server.intake.append(
            Rejection(
                answer: .reason(reason), detail: "refused", cause: .registry, responseSent: true,
                connectionClosed: false,
                deviceToken: token, payload: Payload(body), format: .http2, apnsID: apnsID, topic: "com.example.app",
                connection: connection ?? self.connection, receivedAt: now))
    }

    private func later(_ seconds: Double) {
        server.clock.advance(by: .milliseconds(Int(seconds * 1000)))
    }

    private var rules: [String] { server.senderReport.findings.map(\.rule.id) }

    private func finding(_ rule: SenderAuditRule) -> SenderFinding? {
        server.senderReport.findings.first { $0.rule == rule }
    }

    // MARK: - A clean sender

    func testACleanSenderHasNoFinding() {
        server.audit.connectionOpened(connection)
        push(Self.token, #"{"aps":{"alert":"one"}}"#)
        push(Self.token, #"{"aps":{"alert":"two"}}"#)
        push(Self.other, #"{"aps":{"alert":"one"}}"#)
        refuse(.badDeviceToken, "abcd")
        refuse(.unregistered, Self.other)
        later(61)
        push(Self.token, #"{"aps":{"alert":"one"}}"#)
        server.audit.connectionClosed(connection)
        XCTAssertTrue(server.senderReport.isClean, server.senderReport.description)
        XCTAssertEqual(server.senderReport.description, "no sender findings")
    }

    // MARK: - Each rule

    func testAPushAfter410AnsweredAgainIsPushAfterUnregistered() throws {
        refuse(.unregistered)
        later(5)
        refuse(.unregistered)
        refuse(.unregistered)
        let found = try XCTUnwrap(finding(.pushAfterUnregistered))
        XCTAssertEqual(found.count, 2)
        XCTAssertEqual(found.level, .error)
        XCTAssertEqual(found.sender, "address:127.0.0.1")
        XCTAssertEqual(found.examples.first?.deviceToken, Self.token)
        XCTAssertEqual(found.examples.first?.connection, 1)
        XCTAssertEqual(found.examples.first?.time, now)
        XCTAssertTrue(found.source.contains("(D)"), found.source)
        XCTAssertEqual(rules, ["push-after-unregistered"], "a 410 is not a refusal the same-push rules count")
    }

    func testAPushAcceptedAfter410MeansTheTokenWasRegisteredAgain() {
        refuse(.unregistered)
        push(Self.token, #"{"aps":{"alert":"after registering"}}"#)
        refuse(.unregistered, Self.token, #"{"aps":{"alert":"after unregistering again"}}"#)
        XCTAssertNil(finding(.pushAfterUnregistered), server.senderReport.description)
        refuse(.expiredToken)
        XCTAssertEqual(finding(.pushAfterUnregistered)?.count, 1, "ExpiredToken is a 410 too")
    }

    func testTheSamePushAfterARefusalThatCannotChangeIsRetriedRefusal() throws {
        refuse(.badDeviceToken)
        later(2)
        refuse(.badDeviceToken)
        push()
        let found = try XCTUnwrap(finding(.retriedRefusal))
        XCTAssertEqual(found.count, 2, "re-sent and refused again, then re-sent and accepted (a fault rule ended)")
        XCTAssertTrue(found.examples[0].detail.contains("BadDeviceToken"), found.examples[0].detail)
    }

    func testARetryOfWhatATokenOrTimeCanFixIsNotRetriedRefusal() {
        refuse(.expiredProviderToken)
        push()
        refuse(.missingProviderToken, Self.other)
        push(Self.other)
        refuse(.badPriority, Self.token, #"{"aps":{"alert":"headers"}}"#)
        refuse(.badExpirationDate, Self.token, #"{"aps":{"alert":"headers"}}"#)
        refuse(.serviceUnavailable, Self.other)
        later(2)
        push(Self.other)
        refuse(.badDeviceToken, Self.token, #"{"aps":{"alert":"other"}}"#)
        later(61)
        refuse(.badDeviceToken, Self.token, #"{"aps":{"alert":"other"}}"#)
        XCTAssertNil(finding(.retriedRefusal), server.senderReport.description)
    }

    func testTheSameAPNsIDWithAnotherPayloadIsTheSamePush() {
        refuse(.badTopic, Self.token, #"{"aps":{"alert":"one"}}"#, apnsID: "9F3B0C3E-2A43-4C1B-8E0A-6B0F3A9D0A11")
        push(Self.token, #"{"aps":{"alert":"two"}}"#, apnsID: "9F3B0C3E-2A43-4C1B-8E0A-6B0F3A9D0A11")
        XCTAssertEqual(finding(.retriedRefusal)?.count, 1)
    }

    func testAPushSoonAfter429Or503IsNoBackoff() throws {
        refuse(.tooManyRequests)
        later(0.5)
        push()
        refuse(.serviceUnavailable, Self.other)
        later(0.2)
        refuse(.serviceUnavailable, Self.other)
        let found = try XCTUnwrap(finding(.noBackoff))
        XCTAssertEqual(found.count, 2)
        XCTAssertTrue(found.examples[0].detail.contains("TooManyRequests"), found.examples[0].detail)
    }

    func testAPushAfterTheBackoffWindowIsNotNoBackoff() {
        refuse(.tooManyRequests)
        later(1.5)
        push()
        refuse(.tooManyProviderTokenUpdates)
        push()
        refuse(.shutdown, Self.other)
        push(Self.other)
        XCTAssertNil(finding(.noBackoff), "a push re-sent on another connection after GOAWAY Shutdown is right")
    }

    func testTheSamePushAcceptedTwiceIsADuplicateWarning() throws {
        push()
        later(10)
        push()
        let found = try XCTUnwrap(finding(.duplicatePush))
        XCTAssertEqual(found.level, .warning, "a test may send one payload twice on purpose")
        XCTAssertEqual(found.count, 1)
        later(61)
        push()
        XCTAssertEqual(finding(.duplicatePush)?.count, 1, "outside the same-push window it is another push")
        push(Self.other, apnsID: "9F3B0C3E-2A43-4C1B-8E0A-6B0F3A9D0A12")
        push(Self.token, #"{"aps":{"alert":"other"}}"#, apnsID: "9F3B0C3E-2A43-4C1B-8E0A-6B0F3A9D0A12")
        XCTAssertEqual(finding(.duplicatePush)?.count, 2, "the same client-sent apns-id")
    }

    func testTheBinaryGatewaysPushesAreNotJudgedOneByOne() {
        push(format: .enhanced)
        push(format: .enhanced)
        XCTAssertTrue(server.senderReport.isClean, server.senderReport.description)
    }

    func testAConnectionPerPushIsConnectionChurn() throws {
        for id in 1...21 {
            let connection = ConnectionInfo(id: id, peer: "127.0.0.1:\(50_000 + id)")
            server.audit.connectionOpened(connection)
            later(0.05)
            server.audit.connectionClosed(connection)
        }
        let found = try XCTUnwrap(finding(.connectionChurn))
        XCTAssertEqual(found.count, 1, "the 21st short-lived connection within a minute")
        XCTAssertEqual(found.sender, "address:127.0.0.1", "the address without its port")
        XCTAssertEqual(found.level, .warning)
        XCTAssertEqual(found.examples.first?.connection, 21)
    }

    func testConnectionsKeptOrSpreadOutAreNotChurn() {
        for id in 1...30 {
            let connection = ConnectionInfo(id: id, peer: "127.0.0.1:\(50_000 + id)")
            server.audit.connectionOpened(connection)
            later(id.isMultiple(of: 2) ? 61 : 3.5)
            server.audit.connectionClosed(connection)
        }
        server.audit.connectionClosed(ConnectionInfo(id: 99, peer: "127.0.0.1:1"))
        XCTAssertNil(finding(.connectionChurn), server.senderReport.description)
    }

    func testStreamEventsFromTheHTTP2Connection() throws {
        server.audit.connectionOpened(connection)
        push(claims: Self.claimsA)
        server.audit.streamOpenedPastLimit(connection: connection, stream: 3)
        server.audit.streamOpenedAfterGoAway(connection: connection, stream: 5)
        server.audit.streamOpenedAfterGoAway(connection: ConnectionInfo(id: 2, peer: "[::1]:4000"))
        let pastLimit = try XCTUnwrap(finding(.streamsPastLimit))
        XCTAssertEqual(pastLimit.sender, "token:TEAMAAAAAA:KEYAAAAAAA", "the connection's sender, once a push said it")
        XCTAssertEqual(pastLimit.examples.first?.detail, "stream 3 opened past the stream limit")
        let afterGoAway = server.senderReport.findings.filter { $0.rule == .streamsAfterGoAway }
        XCTAssertEqual(afterGoAway.map(\.sender.description).sorted(), ["address:::1", "token:TEAMAAAAAA:KEYAAAAAAA"])
    }

    func testExpiredOrTooFrequentProviderTokensAreTokenRefresh() throws {
        server.audit.connectionOpened(connection)
        push(claims: Self.claimsA)
        refuse(.expiredProviderToken, Self.other)
        refuse(.tooManyProviderTokenUpdates, Self.other)
        let found = try XCTUnwrap(finding(.tokenRefresh))
        XCTAssertEqual(found.count, 2)
        XCTAssertEqual(found.sender, "token:TEAMAAAAAA:KEYAAAAAAA")
    }

    // MARK: - Senders, bounds, reset

    func testTheReportFiltersBySender() {
        let second = ConnectionInfo(id: 2, peer: "127.0.0.1:50002")
        push(claims: Self.claimsA)
        push(claims: Self.claimsA)
        push(Self.other, claims: Self.claimsB, on: second)
        push(Self.other, claims: Self.claimsB, on: second)
        XCTAssertEqual(server.senderReport.findings.count, 2)
        XCTAssertEqual(
            server.senderReport(sender: "token:TEAMAAAAAA").findings.map(\.sender), ["token:TEAMAAAAAA:KEYAAAAAAA"])
        XCTAssertEqual(server.senderReport(sender: "token:TEAMBBBBBB:KEYBBBBBBB").findings.count, 1)
        XCTAssertTrue(server.senderReport(sender: "token:TEAM").isClean, "a prefix matches only whole parts")
        XCTAssertTrue(server.senderReport(sender: "address:127.0.0.1").isClean)
    }

    func testFindingsKeepTheFirstExamplesAndCountTheRest() throws {
        makeServer({ var settings = SenderAuditSettings(); settings.examplesPerFinding = 2; return settings }())
        for _ in 1...6 { refuse(.unregistered) }
        let found = try XCTUnwrap(finding(.pushAfterUnregistered))
        XCTAssertEqual(found.count, 5)
        XCTAssertEqual(found.examples.count, 2)
    }

    func testTheRememberedPushesAreBounded() {
        makeServer({ var settings = SenderAuditSettings(); settings.rememberedPushLimit = 4; return settings }())
        push(Self.token, #"{"aps":{"alert":"first"}}"#)
        push(Self.token, #"{"aps":{"alert":"second"}}"#)
        push(Self.token, #"{"aps":{"alert":"third"}}"#)
        push(Self.token, #"{"aps":{"alert":"first"}}"#)
        XCTAssertNil(finding(.duplicatePush), "the first push was forgotten (two keys per push, four kept)")
        push(Self.token, #"{"aps":{"alert":"first"}}"#)
        XCTAssertEqual(finding(.duplicatePush)?.count, 1)
    }

    func testSendersBeyondTheLimitAreCountedOnly() {
        makeServer({ var settings = SenderAuditSettings(); settings.senderLimit = 1; return settings }())
        refuse(.unregistered)
        refuse(.unregistered)
        refuse(.unregistered, on: ConnectionInfo(id: 2, peer: "10.0.0.2:1"))
        XCTAssertEqual(server.senderReport.findings.map(\.sender), ["address:127.0.0.1"])
        XCTAssertEqual(server.senderReport.unrecordedCount, 1)
    }

    func testResetForgetsFindingsAndWhatWasRemembered() {
        refuse(.unregistered)
        refuse(.unregistered)
        XCTAssertFalse(server.senderReport.isClean)
        server.reset()
        server.clock.set(to: Self.start)
        XCTAssertTrue(server.senderReport.isClean)
        refuse(.unregistered)
        XCTAssertTrue(server.senderReport.isClean, "the 410 before the reset was forgotten")
    }

    func testTheAuditSwitchedOffFindsNothing() {
        makeServer({ var settings = SenderAuditSettings(); settings.isEnabled = false; return settings }())
        refuse(.unregistered)
        refuse(.unregistered)
        server.audit.streamOpenedAfterGoAway(connection: connection)
        XCTAssertTrue(server.senderReport.isClean)
    }

    func testAFloodOfOnePushKeepsOneRememberedPlace() {
        var memory = RecentMemory<Int, Int>(limit: 10)
        for value in 0..<100_000 { memory.set(7, value, at: Self.start) }
        XCTAssertEqual(memory.count, 1)
        XCTAssertEqual(memory[7]?.value, 99_999)
        for key in 0..<25 { memory.set(key, key, at: Self.start.addingTimeInterval(Double(key))) }
        XCTAssertEqual(memory.count, 10)
        XCTAssertNil(memory[14]?.value)
        memory.forget(before: Self.start.addingTimeInterval(20))
        XCTAssertEqual(memory.count, 5)
        XCTAssertEqual(memory[20]?.value, 20)
    }

    func testSendersAreNamedAsTheReportWritesThem() {
        XCTAssertEqual(PushSender(token: Self.claimsA).description, "token:TEAMAAAAAA:KEYAAAAAAA")
        XCTAssertEqual(PushSender(connection: ConnectionInfo(id: 1, peer: "[::1]:443")).description, "address:::1")
        let certificate = ClientCertificateInfo(subject: "CN=Apple Push Services: com.example.app", topic: nil)
        XCTAssertEqual(
            PushSender(
                connection: ConnectionInfo(id: 1, peer: "127.0.0.1:1", clientCertificate: certificate)
            ).description,
            "certificate:CN=Apple Push Services: com.example.app")
        XCTAssertEqual(SenderAuditRule.all.count, Set(SenderAuditRule.all.map(\.id)).count)
        XCTAssertEqual(SenderAuditRule.named("connection-churn"), .connectionChurn)
    }
}

/// The SenderAudit article's rule table is the rule table's rows.
final class SenderAuditArticleTests: XCTestCase {
    func testTheArticlesRuleTableIsTheRuleTable() throws {
        let article = repositoryRoot.appendingPathComponent("Sources/FakeAPNs/FakeAPNs.docc/SenderAudit.md")
        let text = try String(contentsOf: article, encoding: .utf8)
        let ids = Set(SenderAuditRule.all.map { "| `\($0.id)` |" })
        let rows = text.split(separator: "\n").map(String.init).filter { line in ids.contains { line.hasPrefix($0) } }
        let expected = SenderAuditRule.all.map(\.docRow)
        XCTAssertEqual(rows, expected, "the rows the table makes:\n" + expected.joined(separator: "\n"))
    }
}
