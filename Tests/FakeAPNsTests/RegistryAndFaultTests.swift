import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: TLSClient, to write raw binary frames and read the raw answer.
@testable import FakeAPNs

/// The device registry and fault rules over the wire, and the rejections they produce.
final class RegistryAndFaultTests: XCTestCase {
    private let fixture = ServerFixture()
    private var server: FakeAPNsServer { fixture.server }

    override func setUpWithError() throws {
        try fixture.start(for: self)
    }

    private func enhanced(_ identifier: UInt32, _ token: DeviceToken = Fixtures.token) -> [UInt8] {
        BinaryEncoder.enhanced(identifier: identifier, token: token, payload: Fixtures.payload(Int(identifier)))
    }

    /// Sends `bytes` on a new connection and returns what the server answered before closing.
    private func sendAndReadAnswer(_ bytes: [UInt8], identity: TLSIdentity? = nil) throws -> [UInt8] {
        let client = try server.connectClient(identity: identity)
        try client.send(bytes)
        return try client.readToEnd()
    }

    // MARK: - Registry

    func testOpenModeAcceptsAnyWellFormedToken() throws {
        let client = try server.connectClient()
        try client.send(enhanced(1, Fixtures.otherToken))
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).identifier, 1)
    }

    func testStrictModeRefusesUnknownTokensWithStatus8() throws {
        server.devices.isStrict = true
        server.devices.register(Fixtures.token)
        let answer = try sendAndReadAnswer(enhanced(1) + enhanced(2, Fixtures.otherToken) + enhanced(3))
        XCTAssertEqual(BinaryErrorResponse(bytes: answer), BinaryErrorResponse(status: .invalidToken, identifier: 2))
        XCTAssertEqual(server.notifications.snapshot().map(\.identifier), [1])
        let rejection = try server.rejections.pop(timeout: .seconds(5))
        XCTAssertEqual(rejection.answer, .status(.invalidToken))
        XCTAssertEqual(rejection.reason, "Invalid token")
        XCTAssertEqual(rejection.cause, .registry)
        XCTAssertEqual(rejection.deviceToken, Fixtures.otherToken)
        XCTAssertEqual(rejection.payload?.bytes, Fixtures.payload(2))
        XCTAssertTrue(rejection.responseSent)
        XCTAssertTrue(rejection.connectionClosed)
        XCTAssertTrue(rejection.detail.contains("not registered"), rejection.detail)
        XCTAssertEqual(server.rejections.count, 0, "the frame after the refused one is dropped, not refused")
    }

    func testStrictModeFromTheConfiguration() throws {
        try withFakeAPNs(configuration: .init(strictDeviceRegistry: true)) { strict in
            XCTAssertTrue(strict.devices.isStrict)
            let client = try strict.connectClient()
            try client.send(enhanced(5))
            XCTAssertEqual(BinaryErrorResponse(bytes: try client.readToEnd()), BinaryErrorResponse(status: .invalidToken, identifier: 5))
        }
    }

    func testTokenOfTheOtherEnvironmentIsRefusedWithStatus8() throws {
        server.devices.register(Fixtures.token, environment: .production)  // the server plays sandbox
        let answer = try sendAndReadAnswer(enhanced(9))
        XCTAssertEqual(BinaryErrorResponse(bytes: answer), BinaryErrorResponse(status: .invalidToken, identifier: 9))
        let rejection = try server.rejections.pop(timeout: .seconds(5))
        XCTAssertTrue(rejection.detail.contains("production"), rejection.detail)
    }

    func testTokenOfAnotherAppThanTheCertificatesIsRefusedWithStatus8() throws {
        server.stop()
        try fixture.restart(.init(clientCertificates: .required()))
        server.devices.register(Fixtures.token, topic: "com.example.other")
        server.devices.register(Fixtures.otherToken, topic: "com.example.app")
        let answer = try sendAndReadAnswer(enhanced(1, Fixtures.otherToken) + enhanced(2), identity: .testClient)
        XCTAssertEqual(BinaryErrorResponse(bytes: answer), BinaryErrorResponse(status: .invalidToken, identifier: 2))
        XCTAssertEqual(server.notifications.snapshot().map(\.identifier), [1])
    }

    func testUnregisteredDeviceIsDroppedSilentlyAndTheConnectionGoesOn() throws {
        server.devices.unregister(Fixtures.otherToken, at: Date(timeIntervalSince1970: 1_700_000_000))
        let client = try server.connectClient()
        try client.send(enhanced(1) + enhanced(2, Fixtures.otherToken) + enhanced(3))
        XCTAssertEqual(try server.notifications.pop(count: 2, timeout: .seconds(5)).map(\.identifier), [1, 3])
        let rejection = try server.rejections.pop(timeout: .seconds(5))
        XCTAssertEqual(rejection.reason, "Unregistered")
        XCTAssertEqual(rejection.identifier, 2)
        XCTAssertFalse(rejection.responseSent)
        XCTAssertFalse(rejection.connectionClosed)
        XCTAssertEqual(server.devices.device(Fixtures.otherToken)?.unregisteredAt, Date(timeIntervalSince1970: 1_700_000_000))
    }

    func testRegisteringAgainRevivesADevice() throws {
        server.devices.unregister(Fixtures.token)
        server.devices.register(Fixtures.token)
        let client = try server.connectClient()
        try client.send(enhanced(4))
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).identifier, 4)
        XCTAssertNil(server.devices.device(Fixtures.token)?.unregisteredAt)
        XCTAssertEqual(server.devices.devices.count, 1)
    }

    // MARK: - Faults

    func testRejectRuleForATokenActsOnceThenThatTokenIsAcceptedAgain() throws {
        let id = server.faults.add(FaultRule(match: .token(Fixtures.otherToken), action: .reject(.processingError)))
        let answer = try sendAndReadAnswer(enhanced(1) + enhanced(2, Fixtures.otherToken) + enhanced(3))
        XCTAssertEqual(BinaryErrorResponse(bytes: answer), BinaryErrorResponse(status: .processingError, identifier: 2))
        let rejection = try server.rejections.pop(timeout: .seconds(5))
        XCTAssertEqual(rejection.cause, .fault)
        XCTAssertTrue(rejection.detail.contains("fault rule"), rejection.detail)
        XCTAssertEqual(server.faults.rules.first { $0.id == id }?.hits, 1)
        XCTAssertEqual(server.faults.rules.first { $0.id == id }?.remaining, 0)

        let client = try server.connectClient()
        try client.send(enhanced(4, Fixtures.otherToken))
        XCTAssertEqual(try server.notifications.pop(count: 2, timeout: .seconds(5)).map(\.identifier), [1, 4])
    }

    func testNthRuleCountsFromWhenItWasAdded() throws {
        let client = try server.connectClient()
        try client.send(enhanced(1))
        _ = try server.notifications.pop(timeout: .seconds(5))
        server.faults.add(FaultRule(match: .nth(3), action: .reject(.invalidToken)))
        try client.send(enhanced(2) + enhanced(3) + enhanced(4) + enhanced(5))
        XCTAssertEqual(BinaryErrorResponse(bytes: try client.readToEnd()), BinaryErrorResponse(status: .invalidToken, identifier: 4))
        XCTAssertEqual(server.notifications.snapshot().map(\.identifier), [2, 3])
    }

    func testRuleActingNTimesThenStopping() throws {
        server.faults.add(FaultRule(match: .every, action: .reject(.processingError), times: .count(2)))
        for identifier in [UInt32(1), 2] {
            XCTAssertEqual(BinaryErrorResponse(bytes: try sendAndReadAnswer(enhanced(identifier)))?.identifier, identifier)
        }
        let client = try server.connectClient()
        try client.send(enhanced(3))
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).identifier, 3)
    }

    func testAlwaysRuleActsUntilRemoved() throws {
        server.stop()
        try fixture.restart(.init(clientCertificates: .optional()))
        let rule = server.faults.add(FaultRule(match: .topic("com.example.app"), action: .reject(.missingTopic), times: .always))
        for identifier in [UInt32(1), 2] {
            let answer = try sendAndReadAnswer(enhanced(identifier), identity: .testClient)
            XCTAssertEqual(BinaryErrorResponse(bytes: answer), BinaryErrorResponse(status: .missingTopic, identifier: identifier))
        }
        let client = try server.connectClient()
        try client.send(enhanced(3))
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).identifier, 3, "no certificate, no topic, no match")
        XCTAssertTrue(server.faults.remove(rule))
        XCTAssertFalse(server.faults.remove(rule), "removing twice finds nothing")
        let certified = try server.connectClient(identity: .testClient)
        try certified.send(enhanced(4))
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).identifier, 4)
    }

    func testShutdownCarriesTheLastAcceptedIdentifierOfTheConnection() throws {
        server.faults.add(FaultRule(match: .nth(3), action: .reject(.shutdown)))
        let answer = try sendAndReadAnswer(enhanced(10) + enhanced(11) + enhanced(12) + enhanced(13))
        XCTAssertEqual(BinaryErrorResponse(bytes: answer), BinaryErrorResponse(status: .shutdown, identifier: 11))
        XCTAssertEqual(server.notifications.snapshot().map(\.identifier), [10, 11])
        XCTAssertEqual(try server.rejections.pop(timeout: .seconds(5)).identifier, 11)
    }

    func testShutdownBeforeAnythingWasAcceptedCarriesZero() throws {
        server.faults.add(FaultRule(match: .every, action: .reject(.shutdown)))
        XCTAssertEqual(BinaryErrorResponse(bytes: try sendAndReadAnswer(enhanced(10))), BinaryErrorResponse(status: .shutdown, identifier: 0))
    }

    func testCloseRuleClosesWithoutAWordAndDropsTheRest() throws {
        server.faults.add(FaultRule(match: .nth(2), action: .closeConnection))
        XCTAssertEqual(try sendAndReadAnswer(enhanced(1) + enhanced(2) + enhanced(3)), [])
        XCTAssertEqual(server.notifications.snapshot().map(\.identifier), [1])
        let rejection = try server.rejections.pop(timeout: .seconds(5))
        XCTAssertEqual(rejection.identifier, 2)
        XCTAssertFalse(rejection.responseSent)
        XCTAssertTrue(rejection.connectionClosed)
    }

    func testDelayRuleHoldsTheConnectionThenAccepts() throws {
        server.faults.add(FaultRule(match: .nth(2), action: .delay(.milliseconds(300))))
        let client = try server.connectClient()
        let started = ContinuousClock.now
        try client.send(enhanced(1) + enhanced(2))
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).identifier, 1, "what came before the delay is delivered before it")
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).identifier, 2)
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - started, .milliseconds(300))
        XCTAssertEqual(server.rejections.count, 0)
    }

    func testStopInterruptsALongDelay() throws {
        server.faults.add(FaultRule(match: .every, action: .delay(.seconds(60))))
        let client = try server.connectClient()
        try client.send(enhanced(1))
        XCTAssertTrue(eventually { server.faults.rules.first?.hits == 1 })
        let started = ContinuousClock.now
        server.stop()
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(5))
    }

    func testRulesCanBeClearedBetweenTests() throws {
        server.faults.add(FaultRule(match: .every, action: .reject(.shutdown), times: .always))
        server.faults.removeAll()
        XCTAssertTrue(server.faults.rules.isEmpty)
        let client = try server.connectClient()
        try client.send(enhanced(1))
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).identifier, 1)
    }

    func testSimpleFormatRefusedByAFaultClosesWithoutResponse() throws {
        server.faults.add(FaultRule(match: .every, action: .reject(.invalidToken)))
        let answer = try sendAndReadAnswer(BinaryEncoder.simple(token: Fixtures.token, payload: Fixtures.alert))
        XCTAssertEqual(answer, [])
        XCTAssertFalse(try server.rejections.pop(timeout: .seconds(5)).responseSent)
    }

    // MARK: - Rejections of malformed input

    func testMalformedInputLandsOnTheRejectionsQueue() throws {
        _ = try sendAndReadAnswer(BinaryEncoder.frame(items: [.identifier(5), .deviceToken(Fixtures.token)]))
        let rejection = try server.rejections.pop(timeout: .seconds(5))
        XCTAssertEqual(rejection.answer, .status(.missingPayload))
        XCTAssertEqual(rejection.reason, "Missing payload")
        XCTAssertEqual(rejection.cause, .malformed)
        XCTAssertEqual(rejection.identifier, 5)
        XCTAssertEqual(rejection.deviceToken, Fixtures.token)
        XCTAssertNil(rejection.payload)
        XCTAssertEqual(rejection.format, .frame)
        XCTAssertEqual(rejection.sequenceNumber, 1)
        XCTAssertTrue(rejection.description.contains("Missing payload"), rejection.description)
    }
}
