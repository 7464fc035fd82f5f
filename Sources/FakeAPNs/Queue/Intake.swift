#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A received record that the intake numbers as it arrives.
package protocol Numbered: Sequenced {
    /// Its place in the order of arrival at its server, from 1; set by the intake.
    var sequenceNumber: UInt64 { get set }
}

extension PushNotification: Numbered {}
extension Rejection: Numbered {}
extension BroadcastDelivery: Numbered {}

/// What comes after the intake: sees each numbered batch inside the intake's lock, before it
/// is recorded and queued, and may mark its notifications and add refusals (the push lint, the
/// device model). Each must be quick when it has nothing to do: it runs for every batch.
package protocol IntakeStage: AnyObject, Sendable {
    /// A numbered batch of accepted notifications; `rejections` collects refusals to record
    /// after it.
    func unlockedTake(_ notifications: inout [PushNotification], rejections: inout [Rejection])
    /// A numbered batch of broadcast deliveries.
    func unlockedTake(_ deliveries: [BroadcastDelivery])
    /// A numbered batch of refusals, before it is recorded: the sessions' and those the
    /// stages added (the strict lint's).
    func unlockedTakeRefusals(_ refusals: [Rejection])
    /// Inside a reset of the intake.
    func unlockedReset()
    /// After a batch, on the thread that appended it, once the intake's lock is released: a
    /// stage that only noted the batch inside the lock does its work here, without holding
    /// the other sessions back.
    func afterIntake()
}

extension IntakeStage {
    /// Most stages judge what was accepted only.
    package func unlockedTakeRefusals(_ refusals: [Rejection]) {}
    /// Most stages do all their work inside the lock.
    package func afterIntake() {}
}

/// Where every session hands what it accepted (or refused), and where a broadcast becomes its
/// deliveries: the one place that numbers each notification, rejection and broadcast delivery
/// in order of arrival, records it in its ``History``, announces it to the server's event
/// observer and queues it in its ``Mailbox``.
///
/// One lock guards all of it, and the server's ``ChannelRegistry`` too, so that a `reset()`
/// sees every item either wholly handled or not at all, in every queue at once: a broadcast
/// kept has its deliveries kept, and nothing from before a reset is queued after it. Each kind
/// is numbered on its own; numbers go on across resets, so a reader paging a history with
/// `since` never sees a number twice.
///
/// ```swift
/// var batch = decodedNotifications
/// intake.append(notifications: &batch)   // numbered, recorded, announced, queued; batch left empty
/// ```
final class Intake: @unchecked Sendable {
    /// One kind of item: its queue, its history and its numbering.
    final class Lane<Element: Numbered>: @unchecked Sendable {
        /// The queue tests pop.
        let mailbox: Mailbox<Element>
        /// Everything kept, popped or not.
        let history: History<Element>
        private let announce: (@Sendable ([Element]) -> Void)?
        // Protected by the intake's lock:
        private(set) var lastSequenceNumber: UInt64 = 0
        /// Sees every numbered batch before it is recorded, however it came (a broadcast's
        /// deliveries, or a stored message delivered on subscribing).
        fileprivate var stagesSee: ((inout [Element]) -> Void)?

        fileprivate init(noun: String, retention: Int?, announce: (@Sendable ([Element]) -> Void)?) {
            mailbox = Mailbox(noun: noun, capacity: retention)
            history = History(capacity: retention)
            self.announce = announce
        }

        /// Inside the intake's lock: numbers, records, announces and queues `batch`, leaving
        /// it empty; `numbered` sees (and may mark) the numbered batch before it is recorded.
        func take(_ batch: inout [Element], numbered: (inout [Element]) -> Void = { _ in }) {
            guard !batch.isEmpty else { return }
            for index in batch.indices {
                lastSequenceNumber += 1
                batch[index].sequenceNumber = lastSequenceNumber
            }
            numbered(&batch)
            stagesSee?(&batch)
            history.append(contentsOf: batch)
            announce?(batch)
            mailbox.append(moving: &batch)
        }

        /// Inside the intake's lock: forgets the queue and the history; numbering goes on.
        fileprivate func removeAll() {
            mailbox.removeAll()
            history.removeAll()
        }
    }

    /// Every notification accepted.
    let notifications: Lane<PushNotification>
    /// Every notification or request refused.
    let rejections: Lane<Rejection>
    /// Every broadcast as each subscribed device received it.
    let deliveries: Lane<BroadcastDelivery>
    /// The broadcast channels and their subscribers, guarded by this intake's lock.
    let channels: ChannelRegistry
    private let backPressure: (@Sendable () -> Void)?
    /// The lock that guards the intake, its channels and its stages.
    let lock: ConditionLock
    /// The stages after the intake, in order; set before the server starts, read under the lock.
    private var stages: [any IntakeStage] = []

    /// An intake whose queues and histories keep at most `retention` items each, with the
    /// channels of `environment` (`clock` dates them and judges stored messages' age;
    /// `broadcastBundleIDs` as ``ChannelRegistry/broadcastBundleIDs``). The announce closures
    /// see each numbered batch, in order, inside the intake's lock (they must be quick);
    /// `announceChannel` hears each channel created (true) or deleted (false), outside it.
    /// `backPressure` runs on the appending thread after each batch, once the lock is released
    /// and the waiting pops have their items: a consumer of the announcements that falls
    /// behind may block there to slow the producer down.
    init(
        retention: Int?, environment: PushEnvironment = .sandbox, clock: ServerClock = ServerClock(),
        broadcastBundleIDs: Set<String>? = nil, announceAccepted: (@Sendable ([PushNotification]) -> Void)? = nil,
        announceRejected: (@Sendable ([Rejection]) -> Void)? = nil,
        announceChannel: (@Sendable (Channel, _ created: Bool) -> Void)? = nil, backPressure: (@Sendable () -> Void)? = nil
    ) {
        let lock = ConditionLock()
        self.lock = lock
        notifications = Lane(noun: "notification", retention: retention, announce: announceAccepted)
        rejections = Lane(noun: "rejection", retention: retention, announce: announceRejected)
        let deliveries = Lane<BroadcastDelivery>(noun: "broadcast delivery", retention: retention, announce: nil)
        self.deliveries = deliveries
        channels = ChannelRegistry(
            environment: environment, lock: lock, deliveries: deliveries, clock: { clock.currentDate },
            broadcastBundleIDs: broadcastBundleIDs, onChange: announceChannel)
        self.backPressure = backPressure
    }

    /// Adds a stage after the intake; only before the first item arrives.
    func add(_ stage: any IntakeStage) {
        lock.withLock {
            stages.append(stage)
            deliveries.stagesSee = { [stages] batch in
                for stage in stages { stage.unlockedTake(batch) }
            }
        }
    }

    /// Numbers, records, announces and queues a batch of accepted notifications in order,
    /// taking it out of `batch` (left empty, possibly with spare capacity to reuse): one round
    /// of each lock per batch. With `broadcasts`, each broadcast in it is delivered to the
    /// devices subscribed to its channel now, its deliveries queued right after it.
    func append(notifications batch: inout [PushNotification], broadcasts: Bool = false) {
        guard !batch.isEmpty else { return }
        let stagesAfter = lock.withLock {
            var made: [BroadcastDelivery] = []
            var refused: [Rejection] = []
            notifications.take(&batch) { numbered in
                if broadcasts {
                    for notification in numbered where notification.format == .broadcast {
                        channels.unlockedDeliveries(of: notification, into: &made)
                    }
                }
                for stage in stages { stage.unlockedTake(&numbered, rejections: &refused) }
            }
            deliveries.take(&made)
            rejections.take(&refused) { numbered in
                for stage in stages { stage.unlockedTakeRefusals(numbered) }
            }
            return stages
        }
        for stage in stagesAfter { stage.afterIntake() }
        backPressure?()
    }

    /// Numbers, records, announces and queues a batch of refusals in order, leaving `batch`
    /// empty.
    func append(rejections batch: inout [Rejection]) {
        guard !batch.isEmpty else { return }
        let stagesAfter = lock.withLock {
            rejections.take(&batch) { numbered in
                for stage in stages { stage.unlockedTakeRefusals(numbered) }
            }
            return stages
        }
        for stage in stagesAfter { stage.afterIntake() }
        backPressure?()
    }

    /// Numbers, records, announces and queues accepted notifications.
    func append(notifications batch: [PushNotification]) {
        var batch = batch
        append(notifications: &batch)
    }

    /// Numbers, records, announces and queues one refusal.
    func append(_ rejection: Rejection) {
        var batch = [rejection]
        append(rejections: &batch)
    }

    /// Empties every queue and history, forgets every channel (``ChannelRegistry``) and runs
    /// `alongside` (the rest of a server's state), at one instant: an item arriving meanwhile
    /// is wholly before it (and forgotten) or wholly after it (and kept). Numbering goes on.
    /// `alongside` runs inside the lock: it must not use the intake.
    func reset(alongside: () -> Void = {}) {
        lock.withLock {
            notifications.removeAll()
            rejections.removeAll()
            deliveries.removeAll()
            channels.unlockedReset()
            for stage in stages { stage.unlockedReset() }
            alongside()
        }
    }
}
