import FakeAPNsTestSupport
import Foundation
import XCTest

@testable import FakeAPNs

/// The device model's structure under time and concurrency: an advance plays in slices that
/// leave the intake's lock, a phone is caught up from its token's pushes alone, a test's
/// settings change runs outside the lock and loses nothing to a concurrent one. Driven in
/// process, on a model with small slices.
final class DeviceModelTimeTests: XCTestCase {
    private let clock = ServerClock()
    private let intake = Intake(retention: 3)
    private let slices = Locked<[Int]>([])
    private var model: DeviceModel!

    private func makeModel(sliceSize: Int = 2, betweenSlices: (@Sendable () -> Void)? = nil) {
        let slices = slices
        let intake = intake
        model = DeviceModel(
            lock: intake.lock, clock: clock, logLimit: 100, history: intake.notifications.history, announce: nil,
            sliceSize: sliceSize,
            betweenSlices: betweenSlices
                ?? { slices.withLock { $0.append(intake.notifications.history.count) } })
        intake.add(model)
        clock.observe { [weak model] now in model?.advance(to: now) }
    }

    private static func token(_ index: Int) -> DeviceToken {
        DeviceToken(bytes: [UInt8(index)] + [UInt8](repeating: 0xC3, count: 31))
    }

    private func push(_ text: String, to token: DeviceToken) {
        var batch = [
            PushNotification(
                deviceToken: token, payload: Payload(bytes: Array(#"{"aps":{"alert":"\#(text)"}}"#.utf8)),
                format: .http2, connection: ConnectionInfo(id: 1, peer: "127.0.0.1:9"))
        ]
        intake.append(notifications: &batch)
    }

    private func phone(_ index: Int) -> Phone { Phone(token: Self.token(index), model: model) }

    func testAnAdvancePlaysInSlicesAndLeavesTheLockBetweenThem() {
        makeModel()
        for index in 0..<5 {
            phone(index).update { $0.isOnline = false }
            push("stored \(index)", to: Self.token(index))
        }
        clock.advance(by: .seconds(31 * 86_400))
        XCTAssertEqual(slices.withLock { $0.count }, 2, "five expiries in slices of two: two pauses between three slices")
        for index in 0..<5 {
            XCTAssertEqual(phone(index).log.map(\.status), [.received, .storedDeviceOffline, .discardedExpired])
        }
    }

    func testAnotherThreadTakesTheLockBetweenTwoSlices() {
        let intake = intake
        let taken = DispatchSemaphore(value: 0)
        let tookItDuringTheAdvance = Locked(false)
        let advancing = Locked(true)
        makeModel(sliceSize: 1) {
            guard advancing.withLock({ $0 }) else { return }
            let started = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                started.signal()
                intake.lock.withLock { tookItDuringTheAdvance.withLock { $0 = advancing.withLock { $0 } } }
                taken.signal()
            }
            started.wait()
            // The advance waits for the thread to have the lock before its next slice.
            XCTAssertEqual(taken.wait(timeout: .now() + 5), .success, "the lock was free between two slices")
        }
        for index in 0..<3 {
            phone(index).update { $0.isOnline = false }
            push("stored \(index)", to: Self.token(index))
        }
        clock.advance(by: .seconds(31 * 86_400))
        advancing.withLock { $0 = false }
        XCTAssertTrue(tookItDuringTheAdvance.withLock { $0 })
    }

    func testDescribingAPhoneReplaysItsTokensRetainedPushesAlone() {
        makeModel()
        push("forgotten by the history", to: Self.token(1))
        push("to another phone", to: Self.token(2))
        push("first kept", to: Self.token(1))
        push("second kept", to: Self.token(1))
        let log = phone(1).log
        XCTAssertEqual(log.map(\.sequenceNumber), [3, 3, 4, 4], "the history keeps three pushes: #2 to #4")
        XCTAssertEqual(log.map(\.status), [.received, .deliveredToDevice, .received, .deliveredToDevice])
        XCTAssertEqual(phone(2).log.map(\.sequenceNumber), [2, 2])
    }

    /// Once a phone is described, the index is kept as pushes come, and forgets what the
    /// history drops.
    func testTheIndexKeptAsPushesComeForgetsWhatTheHistoryDrops() {
        makeModel()
        _ = phone(9).log
        for round in 0..<4 {
            push("to one \(round)", to: Self.token(1))
            push("to two \(round)", to: Self.token(2))
        }
        XCTAssertEqual(phone(1).log.map(\.sequenceNumber), [7, 7], "of #1...#8 the history keeps #6...#8")
        XCTAssertEqual(phone(2).log.map(\.sequenceNumber), [6, 6, 8, 8])
    }

    func testConcurrentSettingsChangesAllApply() {
        makeModel()
        let phone = phone(1)
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for step in 0..<50 { phone.update { $0[app: "com.example.w\(worker).s\(step)"].isInstalled = false } }
        }
        XCTAssertEqual(phone.settings.apps.count, 200, "no change lost to another")
    }

    func testAChangeMadeBetweenReadingAndWritingSendsTheClosureRoundAgain() {
        makeModel()
        let phone = phone(1)
        var rounds = 0
        phone.update { settings in
            rounds += 1
            if rounds == 1 { self.model.update(Self.token(1), to: { var s = settings; s.isAwake = false; return s }()) }
            settings.isOnline = false
        }
        XCTAssertEqual(rounds, 2)
        XCTAssertFalse(phone.settings.isOnline)
        XCTAssertFalse(phone.settings.isAwake, "the change made meanwhile is kept")
    }
}
