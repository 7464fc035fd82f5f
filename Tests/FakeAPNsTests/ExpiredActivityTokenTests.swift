import FakeAPNsTestSupport
import Foundation
import XCTest

@testable import FakeAPNs

/// The device registry's marks of dismissed Live Activities' tokens: the verdict per token and
/// topic, what clears a mark, and the bound.
final class ExpiredActivityTokenTests: XCTestCase {
    private let token = DeviceToken(bytes: [UInt8](repeating: 0x5A, count: 32))
    private let dismissedAt = Date(timeIntervalSince1970: 1_800_000_000)

    private func token(_ number: Int) -> DeviceToken {
        let head = withUnsafeBytes(of: UInt64(number).bigEndian) { Array($0) }
        return DeviceToken(bytes: head + [UInt8](repeating: 1, count: 24))
    }

    func testAMarkedTokenIsRefusedForItsTopicOnlyUntilItIsRegisteredAgain() {
        let policy = Policy(strict: false, environment: .sandbox, feedback: FeedbackService())
        XCTAssertFalse(policy.isActive)
        policy.devices.expireActivityToken(token, topic: "com.example.app.push-type.liveactivity", at: dismissedAt)
        XCTAssertTrue(policy.isActive, "a mark alone makes the policy judge")
        guard case .registry(.expiredToken(let date)) = policy.judge(token: token, topic: "com.example.app") else {
            return XCTFail("not refused ExpiredToken")
        }
        XCTAssertEqual(date, dismissedAt)
        guard case .accept = policy.judge(token: token, topic: "com.example.other") else {
            return XCTFail("another topic is refused")
        }
        XCTAssertEqual(policy.devices.expiredActivityTokenCount, 1)
        policy.devices.register(token)
        guard case .accept = policy.judge(token: token, topic: "com.example.app") else {
            return XCTFail("still refused after registering again")
        }
        XCTAssertEqual(policy.devices.expiredActivityTokenCount, 0)

        policy.devices.expireActivityToken(token, topic: "com.example.app", at: dismissedAt)
        policy.reset(strict: false)
        XCTAssertEqual(policy.devices.expiredActivityTokenCount, 0, "a reset forgets the marks")
        XCTAssertFalse(policy.isActive)
    }

    func testAtMostTenThousandTokensAreMarkedAndTheOldestMarkIsForgottenFirst() {
        let registry = Policy(strict: false, environment: .sandbox, feedback: FeedbackService()).devices
        let limit = DeviceRegistry.maximumExpiredActivityTokens
        XCTAssertEqual(limit, 10_000)
        for number in 0...limit {
            registry.expireActivityToken(token(number), topic: "com.example.app", at: dismissedAt)
        }
        XCTAssertEqual(registry.expiredActivityTokenCount, limit)
        XCTAssertNil(registry.activityTokenExpiry(token(0), topic: "com.example.app"), "the oldest is forgotten")
        XCTAssertEqual(registry.activityTokenExpiry(token(limit), topic: "com.example.app"), dismissedAt)

        // Marks cleared and made again keep the count, and the bound, exact.
        for round in 0..<3 {
            for number in 1...limit { registry.register(token(number)) }
            XCTAssertEqual(registry.expiredActivityTokenCount, 0, "round \(round)")
            for number in 1...limit {
                registry.expireActivityToken(token(number), topic: "com.example.app", at: dismissedAt)
            }
            XCTAssertEqual(registry.expiredActivityTokenCount, limit, "round \(round)")
        }
        registry.expireActivityToken(token(limit + 1), topic: "com.example.app", at: dismissedAt)
        XCTAssertEqual(registry.expiredActivityTokenCount, limit)
        XCTAssertNil(registry.activityTokenExpiry(token(1), topic: "com.example.app"))
    }
}
