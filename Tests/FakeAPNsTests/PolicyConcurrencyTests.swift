import FakeAPNsTestSupport
import Foundation
import Synchronization
import XCTest

// Reads internals on purpose: Policy and FeedbackService driven from many threads, and TLSClient.
@testable import FakeAPNs

#if canImport(Glibc)
import Glibc
#endif

/// The policy switch under concurrent control requests: whatever order changes land in, a rule
/// or strict mode in force is consulted, and a reset is one step.
final class PolicyConcurrencyTests: XCTestCase {
    private static let rule = FaultRule(match: .token(Fixtures.token), action: .reject(.invalidToken), times: .always)
    private static let unknownToken: DeviceToken = "a1a2a3a4a5a6a7a8a9b0b1b2b3b4b5b6b7b8b9c0c1c2c3c4c5c6c7c8c9d0d1d2"

    /// Runs each change on its own thread, all released at once, and waits for them. Three
    /// threads on a 2-core machine get preempted inside a change, where a policy that decides
    /// outside its lock stores a stale answer.
    private func race(_ changes: [@Sendable () -> Void]) throws {
        let arrived = Atomic<Int>(0)
        let threads = try changes.map { change in
            try OSThread(name: "policy-race") {
                arrived.add(1, ordering: .sequentiallyConsistent)
                while arrived.load(ordering: .sequentiallyConsistent) < changes.count { sched_yield() }
                change()
            }
        }
        threads.forEach { $0.join() }
    }

    /// A change that alters nothing but makes the policy decide again.
    private static func neutral(_ policy: Policy) -> @Sendable () -> Void {
        { policy.devices.remove(unknownToken) }
    }

    func testStrictModeTurnedOnWhileTheLastRuleGoesIsConsulted() throws {
        let policy = Policy(strict: false, environment: .sandbox, feedback: FeedbackService())
        for iteration in 1...3000 {
            let id = policy.faults.add(Self.rule)
            try race([{ policy.faults.remove(id) }, { policy.devices.isStrict = true }, Self.neutral(policy)])
            guard policy.isActive else { return XCTFail("strict mode on, policy inactive (iteration \(iteration))") }
            policy.devices.isStrict = false
        }
    }

    func testRuleAddedWhileAnotherIsRemovedIsConsulted() throws {
        let policy = Policy(strict: false, environment: .sandbox, feedback: FeedbackService())
        let id = Atomic<Int>(policy.faults.add(Self.rule))
        for iteration in 1...3000 {
            let old = id.load(ordering: .relaxed)
            try race([
                { policy.faults.remove(old) }, { id.store(policy.faults.add(Self.rule), ordering: .relaxed) },
                Self.neutral(policy),
            ])
            guard policy.isActive else { return XCTFail("a rule in force, policy inactive (iteration \(iteration))") }
        }
    }

    func testRulesClearedWhileADeviceIsRegisteredLeaveThePolicyConsulted() throws {
        let policy = Policy(strict: false, environment: .sandbox, feedback: FeedbackService())
        for iteration in 1...3000 {
            policy.faults.add(Self.rule)
            try race([
                { policy.faults.removeAll() }, { policy.devices.register(Fixtures.otherToken) }, Self.neutral(policy),
            ])
            guard policy.isActive else { return XCTFail("a device registered, policy inactive (iteration \(iteration))") }
            policy.devices.removeAll()
        }
    }

    func testUsedUpRuleSwitchesThePolicyOff() {
        let policy = Policy(strict: false, environment: .sandbox, feedback: FeedbackService())
        policy.faults.add(FaultRule(match: .every, action: .reject(.shutdown), times: .count(2)))
        for _ in 1...2 {
            XCTAssertTrue(policy.isActive)
            guard case .fault = policy.judge(token: Fixtures.token, topic: nil) else {
                return XCTFail("the rule did not act")
            }
        }
        XCTAssertFalse(policy.isActive, "nothing left that can refuse")
    }

    // MARK: - Over the wire

    /// A rule refusing one token stays in force while other rules come and go and strict mode
    /// toggles (with the senders' other token registered): no notification to that token is
    /// ever queued, over the binary gateway or HTTP/2, and the others keep arriving.
    func testNoNotificationEscapesARuleInForceWhileRulesAndStrictModeChange() throws {
        try withFakeAPNs { server in
            server.faults.add(Self.rule)
            server.devices.register(Fixtures.otherToken)
            let stop = Atomic<Bool>(false)
            let changes = try OSThread(name: "policy-changes") {
                var strict = false
                while !stop.load(ordering: .relaxed) {
                    let id = server.faults.add(FaultRule(match: .token(Self.unknownToken), action: .reject(.invalidToken)))
                    strict.toggle()
                    server.devices.isStrict = strict
                    server.faults.remove(id)
                    sched_yield()
                }
            }
            defer {
                stop.store(true, ordering: .relaxed)
                changes.join()
            }

            let http2 = try ProviderAPIClient(host: "127.0.0.1", port: server.http2Port!)
            defer { http2.close() }
            for round in 1...150 {
                // Binary: the refused notification ends the connection, so one round, one connection.
                let binary = try server.connectClient()
                try binary.send(
                    BinaryEncoder.enhanced(identifier: UInt32(round), token: Fixtures.otherToken, payload: Fixtures.alert)
                        + BinaryEncoder.enhanced(identifier: 1_000 + UInt32(round), token: Fixtures.token, payload: Fixtures.alert))
                let answer = BinaryErrorResponse(bytes: try binary.readToEnd())
                XCTAssertEqual(answer, BinaryErrorResponse(status: .invalidToken, identifier: 1_000 + UInt32(round)))
                binary.close()
                for token in [Fixtures.otherToken, Fixtures.token] {
                    let response = try http2.send(
                        ProviderAPIClient.Request(token: token, payload: Fixtures.alert, topic: "com.example.app"))
                    XCTAssertEqual(response.status, token == Fixtures.token ? 400 : 200, "round \(round)")
                }
            }
            let queued = server.notifications.snapshot()
            XCTAssertEqual(queued.filter { $0.deviceToken == Fixtures.token }.count, 0, "escaped the rule")
            XCTAssertEqual(queued.filter { $0.deviceToken == Fixtures.otherToken }.count, 300)
        }
    }

    /// Before the reset a rule refuses the token; after it, strict mode (the configuration's)
    /// does. A notification judged during the reset must see one or the other.
    func testResetIsOneStepForTheNotificationsJudgedMeanwhile() throws {
        let policy = Policy(strict: false, environment: .sandbox, feedback: FeedbackService())
        let stop = Atomic<Bool>(false)
        let escaped = Atomic<Int>(0)
        // In force before the judging starts: from here on a rule or strict mode always is.
        policy.faults.add(Self.rule)
        let judging = try OSThread(name: "policy-judging") {
            while !stop.load(ordering: .relaxed) {
                if policy.isActive, case .accept = policy.judge(token: Fixtures.token, topic: nil) {
                    escaped.add(1, ordering: .relaxed)
                } else if !policy.isActive {
                    escaped.add(1, ordering: .relaxed)
                }
            }
        }
        for _ in 1...3000 {
            policy.faults.add(Self.rule)
            policy.devices.isStrict = false
            policy.reset(strict: true)
        }
        stop.store(true, ordering: .relaxed)
        judging.join()
        XCTAssertEqual(escaped.load(ordering: .relaxed), 0)
    }
}
