import FakeAPNsTestSupport
import Foundation
import XCTest

// Reads internals on purpose: the policy and its per-token rate, judged without a socket.
@testable import FakeAPNs

/// The per-device-token rate answered 429 `TooManyRequests`: a setting, off by default, on the
/// server's clock, with a bounded memory of tokens.
final class DeviceTokenRateTests: XCTestCase {
    private static let start = Date(timeIntervalSince1970: 1_800_000_000)

    private func policy(_ limit: DeviceTokenRateLimit?, clock: ServerClock) -> Policy {
        Policy(strict: false, environment: .sandbox, feedback: FeedbackService(), clock: clock, tokenRateLimit: limit)
    }

    private func isTooManyRequests(_ verdict: Policy.Verdict) -> Bool {
        if case .fault(_, .respond(let reason)) = verdict { return reason == .tooManyRequests }
        return false
    }

    private func token(_ n: Int) -> DeviceToken {
        DeviceToken(bytes: (0..<32).map { UInt8(truncatingIfNeeded: n >> (($0 % 4) * 8)) })
    }

    func testOffByDefaultThePolicyStaysInactive() {
        let policy = policy(nil, clock: ServerClock())
        XCTAssertFalse(policy.isActive, "without a rate the accepted path skips the policy")
        for _ in 0..<100 { XCTAssertFalse(isTooManyRequests(policy.judge(token: Fixtures.token, topic: nil))) }
    }

    func testTheNextPushInTheWindowIsTooManyRequestsAndTheNextWindowOpensAgain() throws {
        let clock = ServerClock()
        clock.set(to: Self.start)
        let policy = policy(try XCTUnwrap(DeviceTokenRateLimit(requests: 3, per: .seconds(10))), clock: clock)
        XCTAssertTrue(policy.isActive)
        for n in 1...3 {
            XCTAssertFalse(isTooManyRequests(policy.judge(token: Fixtures.token, topic: nil)), "push \(n)")
        }
        let refused = policy.judge(token: Fixtures.token, topic: nil)
        XCTAssertTrue(isTooManyRequests(refused))
        if case .fault(let rule, _) = refused {
            XCTAssertEqual(
                "\(rule)", "the server's rate of 3 pushes per token within 10.0 seconds was reached for this token")
        }
        XCTAssertFalse(
            isTooManyRequests(policy.judge(token: Fixtures.otherToken, topic: nil)), "another token has its own")
        clock.advance(by: .seconds(9))
        XCTAssertTrue(
            isTooManyRequests(policy.judge(token: Fixtures.token, topic: nil)), "refusals do not count, nor end it")
        clock.advance(by: .seconds(1))
        XCTAssertFalse(isTooManyRequests(policy.judge(token: Fixtures.token, topic: nil)), "a new window")
    }

    func testResetForgetsTheWindows() throws {
        let clock = ServerClock()
        clock.set(to: Self.start)
        let policy = policy(try XCTUnwrap(DeviceTokenRateLimit(requests: 1, per: .seconds(60))), clock: clock)
        _ = policy.judge(token: Fixtures.token, topic: nil)
        XCTAssertTrue(isTooManyRequests(policy.judge(token: Fixtures.token, topic: nil)))
        policy.reset(strict: false)
        XCTAssertFalse(isTooManyRequests(policy.judge(token: Fixtures.token, topic: nil)))
        XCTAssertTrue(policy.isActive, "the rate stays on after a reset")
    }

    func testMemoryIsBoundedByTheTrackedTokensTheOldestWindowForgottenFirst() throws {
        let clock = ServerClock()
        clock.set(to: Self.start)
        let limit = try XCTUnwrap(DeviceTokenRateLimit(requests: 1, per: .seconds(60), trackedTokens: 100))
        let policy = policy(limit, clock: clock)
        for n in 0..<1000 { _ = policy.judge(token: token(n), topic: nil) }
        let rate = try XCTUnwrap(policy.tokenRate)
        XCTAssertEqual(rate.trackedCountLocked, 100)
        XCTAssertTrue(isTooManyRequests(policy.judge(token: token(999), topic: nil)), "the newest windows are kept")
        XCTAssertFalse(isTooManyRequests(policy.judge(token: token(0), topic: nil)), "the oldest was forgotten")
        clock.set(to: Self.start - 3600)
        for n in 1000..<1300 { _ = policy.judge(token: token(n), topic: nil) }
        XCTAssertLessThanOrEqual(rate.trackedCountLocked, 100, "a clock set back bounds the table all the same")
    }

    func testTheBinaryGatewayRefusesPastTheRateWithProcessingError() throws {
        let fixture = ServerFixture()
        var configuration = FakeAPNsServer.Configuration()
        configuration.deviceTokenRateLimit = DeviceTokenRateLimit(requests: 1, per: .seconds(600))
        let server = try fixture.start(configuration, for: self)
        let client = try server.connectClient()
        try client.send(
            BinaryEncoder.enhanced(identifier: 1, token: Fixtures.token, payload: Fixtures.alert)
                + BinaryEncoder.enhanced(identifier: 2, token: Fixtures.token, payload: Fixtures.alert))
        XCTAssertEqual(
            BinaryErrorResponse(bytes: try client.readToEnd()),
            BinaryErrorResponse(status: .processingError, identifier: 2))
        XCTAssertEqual(server.notifications.snapshot().map(\.identifier), [1])
        XCTAssertEqual(try server.rejections.pop(timeout: .seconds(5)).reason, "Processing error")
    }

    func testOutOfRangeRatesAreRefused() {
        XCTAssertNil(DeviceTokenRateLimit(requests: 0, per: .seconds(1)))
        XCTAssertNil(DeviceTokenRateLimit(requests: 1, per: .zero))
        XCTAssertNil(DeviceTokenRateLimit(requests: 1, per: .seconds(366 * 24 * 3600)))
        XCTAssertNil(DeviceTokenRateLimit(requests: 1, per: .seconds(1), trackedTokens: 0))
        XCTAssertNil(DeviceTokenRateLimit(requests: 1, per: .seconds(1), trackedTokens: Int.max))
        XCTAssertNotNil(DeviceTokenRateLimit(requests: Int.max, per: .seconds(1)))
    }
}
