import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

/// Each sender audit rule the wire can show, tripped by a client the project did not write:
/// curl (one process, so one connection, per push) and Debian's python3-h2 (every push on one
/// connection); and the same clients used correctly, which leave no finding.
final class SenderAuditWireTests: XCTestCase {
    private let fixture = ServerFixture()
    private var server: FakeAPNsServer { fixture.server }
    private let token = Scenario.token
    private let other: DeviceToken = "0102030405060708091011121314151617181920212223242526272829303132"

    override func setUpWithError() throws {
        try fixture.start(for: self)
    }

    private func alert(_ text: String, to token: DeviceToken? = nil, apnsID: String = UUID().uuidString) -> WirePush {
        .device(token ?? self.token, #"{"aps":{"alert":"\#(text)"}}"#, apnsID: apnsID)
    }

    /// The rules found, once the server has judged `expected` of them (connections are judged
    /// as the server notices them close, just after the client's answer).
    private func rules(awaiting expected: Set<String> = []) -> [String] {
        _ = eventually { expected.isSubset(of: server.senderReport.findings.map(\.rule.id)) }
        return server.senderReport.findings.map(\.rule.id)
    }

    // MARK: - Correct use

    func testCurlAndPythonH2UsedCorrectlyLeaveNoFinding() throws {
        XCTAssertEqual(try Curl.send(alert("by curl"), to: server).status, 200)
        let answers = try PythonH2.send([alert("one"), alert("two"), alert("one", to: other)], to: server)
        XCTAssertEqual(answers.map(\.status), [200, 200, 200])
        XCTAssertTrue(eventually { server.openConnectionCount == 0 }, "both clients closed their connections")
        XCTAssertTrue(server.senderReport.isClean, server.senderReport.description)
    }

    // MARK: - Each rule

    func testCurlOpeningAConnectionPerPushIsConnectionChurn() throws {
        for number in 1...21 {
            XCTAssertEqual(try Curl.send(alert("push \(number)"), to: server).status, 200)
        }
        XCTAssertEqual(rules(awaiting: ["connection-churn"]), ["connection-churn"], server.senderReport.description)
        let finding = server.senderReport.findings[0]
        XCTAssertEqual(finding.sender, "address:127.0.0.1")
        XCTAssertEqual(finding.count, 1, "the 21st connection of a minute, each closed at once")
    }

    func testPythonH2PushingAgainAfter410IsPushAfterUnregistered() throws {
        server.devices.unregister(token)
        let answers = try PythonH2.send([alert("one"), alert("two")], to: server)
        XCTAssertEqual(answers.map(\.status), [410, 410])
        XCTAssertEqual(rules(awaiting: ["push-after-unregistered"]), ["push-after-unregistered"])
        XCTAssertEqual(server.senderReport.findings[0].examples.first?.apnsID, answers[1].apnsID)
    }

    func testPythonH2RetryingABadDeviceTokenIsRetriedRefusal() throws {
        server.faults.add(FaultRule(match: .token(token), action: .respond(.badDeviceToken), times: .always))
        let answers = try PythonH2.send([alert("same"), alert("same")], to: server)
        XCTAssertEqual(answers.map(\.status), [400, 400])
        XCTAssertEqual(rules(awaiting: ["retried-refusal"]), ["retried-refusal"])
    }

    func testPythonH2SendingAtOnceAfter429IsNoBackoff() throws {
        server.faults.add(FaultRule(match: .token(token), action: .respond(.tooManyRequests)))
        let answers = try PythonH2.send([alert("first"), alert("second")], to: server)
        XCTAssertEqual(answers.map(\.status), [429, 200])
        XCTAssertEqual(rules(awaiting: ["no-backoff"]), ["no-backoff"])
    }

    func testPythonH2SendingAnAcceptedPushAgainIsDuplicatePush() throws {
        let id = UUID().uuidString
        let answers = try PythonH2.send([alert("once", apnsID: id), alert("once", apnsID: id)], to: server)
        XCTAssertEqual(answers.map(\.status), [200, 200])
        XCTAssertEqual(rules(awaiting: ["duplicate-push"]), ["duplicate-push"])
        XCTAssertEqual(server.senderReport.findings[0].level, .warning)
    }

    func testPythonH2WithAnHourOldProviderTokenIsTokenRefresh() throws {
        try fixture.restart(.init(authentication: .testToken))
        let old = try ProviderTokenSigner.sign(
            keyID: TestCertificates.jwtKeyID, teamID: TestCertificates.jwtTeamID,
            issuedAt: server.clock.currentDate.addingTimeInterval(-7200))
        var push = alert("late")
        push.headers.append(("authorization", "bearer \(old)"))
        XCTAssertEqual(try PythonH2.send(push, to: server).reason, "ExpiredProviderToken")
        XCTAssertEqual(rules(awaiting: ["token-refresh"]), ["token-refresh"])
    }
}
