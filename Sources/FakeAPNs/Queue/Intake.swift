/// A received record that the intake numbers as it arrives.
package protocol Numbered: Sequenced {
    /// Its place in the order of arrival at its server, from 1; set by the intake.
    var sequenceNumber: UInt64 { get set }
}

extension PushNotification: Numbered {}
extension Rejection: Numbered {}

/// Where a session hands what it accepted (or refused): the one place that numbers each item
/// in order of arrival, records it in the ``History``, announces it to the server's event
/// observer and queues it in the ``Mailbox``, all under one lock, so that a `reset()` sees
/// every item either wholly handled or not at all. Sequence numbers go on across resets, so a
/// reader paging the history with `since` never sees a number twice.
///
/// ```swift
/// var batch = decodedNotifications
/// intake.append(moving: &batch)      // numbered, recorded, announced, queued; batch left empty
/// ```
final class Intake<Element: Numbered>: @unchecked Sendable {
    /// The queue tests pop.
    let mailbox: Mailbox<Element>
    /// Everything kept, popped or not.
    let history: History<Element>
    private let announce: (@Sendable ([Element]) -> Void)?
    private let backPressure: (@Sendable () -> Void)?
    private let lock = ConditionLock()
    // Protected by `lock`:
    private var lastSequenceNumber: UInt64 = 0

    /// An intake whose queue and history keep at most `retention` items each. `announce` sees
    /// each numbered batch, in order, inside the intake's lock (it must be quick);
    /// `backPressure` runs on the appending thread after each batch, once the lock is released
    /// and the waiting pops have their items: a consumer of `announce` that falls behind may
    /// block there to slow the producer down.
    init(
        noun: String, retention: Int?, announce: (@Sendable ([Element]) -> Void)?,
        backPressure: (@Sendable () -> Void)?
    ) {
        mailbox = Mailbox(noun: noun, capacity: retention)
        history = History(capacity: retention)
        self.announce = announce
        self.backPressure = backPressure
    }

    /// Numbers, records, announces and queues a batch in order, taking it out of `batch` (left
    /// empty, possibly with spare capacity to reuse): one round of each lock per batch.
    /// `numbered` sees the numbered batch inside the lock, before it is queued (a broadcast's
    /// deliveries follow it in order).
    func append(moving batch: inout [Element], numbered: (([Element]) -> Void)? = nil) {
        guard !batch.isEmpty else { return }
        lock.withLock {
            for index in batch.indices {
                lastSequenceNumber += 1
                batch[index].sequenceNumber = lastSequenceNumber
            }
            history.append(contentsOf: batch)
            announce?(batch)
            numbered?(batch)
            mailbox.append(moving: &batch)
        }
        backPressure?()
    }

    /// Numbers, records, announces and queues a batch in order.
    func append(contentsOf batch: [Element]) {
        var batch = batch
        append(moving: &batch)
    }

    /// Numbers, records, announces and queues one item.
    func append(_ item: Element) {
        append(contentsOf: [item])
    }

    /// Empties the queue and the history at one instant: an item arriving meanwhile is
    /// wholly before it (and forgotten) or wholly after it (and kept). Numbering goes on.
    func reset() {
        lock.withLock {
            mailbox.removeAll()
            history.removeAll()
        }
    }
}
