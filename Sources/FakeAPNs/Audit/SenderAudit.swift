#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// The sender audit: judges, over the whole run, what each sender does against what Apple
/// expects of a provider (``SenderAuditRule``), and keeps the findings for
/// ``FakeAPNsServer/senderReport``.
///
/// It is an intake stage, so it sees every accepted push and every refusal in order of
/// arrival, whichever listener carried it. Inside the intake's lock it only notes a provider
/// API batch (one append of the batch, sharing its storage); the judging happens after the lock
/// is released (``afterIntake()``), on the appending thread, under the audit's own lock, so the
/// other sessions never wait for it. One thread judges at a time, in order of arrival: another
/// that finds it busy leaves its batch to it and goes on. The report, connections' openings and
/// closings and the HTTP/2 connection's stream events judge what is waiting first. A binary
/// gateway batch costs one comparison (its pushes are not judged one by one: the gateway has no
/// `apns-id`, no 410 and no retry rules, and its ingest must not pay); a provider API push
/// costs two digests and integer look-ups in bounded memories (``SenderAuditSettings``).
/// Windows read the server's clock: the time each record was stamped with.
final class SenderAudit: IntakeStage, @unchecked Sendable {
    /// Guards what the audit judges and keeps; taken after the intake's, never before it.
    private let lock = ConditionLock()
    private let clock: ServerClock
    let settings: SenderAuditSettings
    private let samePushWindow: TimeInterval
    private let backoffWindow: TimeInterval
    private let churnWindow: TimeInterval

    /// What the intake handed over and nobody judged yet, in order of arrival, and whether a
    /// thread is judging.
    private struct Waiting {
        var batches: [Batch] = []
        var judging = false
    }

    private enum Batch {
        case accepted([PushNotification])
        case refused([Rejection])
    }

    private let waiting = Locked(Waiting())
    /// Whether `waiting` holds a batch: what a binary batch's `afterIntake()` reads.
    private let hasWaiting = Atomic<Bool>(false)

    // Protected by `lock`:
    /// Recent pushes, by content and by `apns-id`, with their answers.
    private var pushes: RecentMemory<Int, RememberedPush>
    /// Tokens answered 410, and the answer's reason.
    private var unregistered: RecentMemory<DeviceToken, APNsReason>
    /// Tokens answered 429, 500 or 503 recently, and the reason.
    private var backoffs: RecentMemory<DeviceToken, APNsReason>
    /// Open connections: when each opened, and who sent over it once a push said so.
    private var openConnections: [Int: (openedAt: Date, sender: PushSender?)] = [:]
    /// Each sender's recent closings of short-lived connections, oldest first.
    private var shortLivedClosings: [PushSender: [Date]] = [:]
    private var findings: [FindingKey: SenderFinding] = [:]
    private var sendersWithFindings: Set<PushSender> = []
    private var unrecorded = 0
    /// The sender of the last push judged, by connection and token: a batch is one
    /// connection's, so its pushes cost a comparison, not a sender's text each.
    private var lastSender: (connection: ConnectionInfo, claims: ProviderTokenClaims?, sender: PushSender)?

    private struct FindingKey: Hashable {
        /// The rule's place in ``SenderAuditRule/all``.
        let rule: Int
        let sender: PushSender
    }
    /// The finding counted last and where it is: a flood of one finding (a load test sending one
    /// push again and again) is counted without hashing its key; forgotten when a finding is added.
    private var lastCounted: (key: FindingKey, index: Dictionary<FindingKey, SenderFinding>.Index)?

    /// An audit with `settings`' windows and bounds, reading `clock` for connections' times.
    init(clock: ServerClock, settings: SenderAuditSettings = SenderAuditSettings()) {
        self.clock = clock
        let settings = settings.clamped
        self.settings = settings
        samePushWindow = settings.samePushWindow.timeInterval
        backoffWindow = settings.backoffWindow.timeInterval
        churnWindow = settings.connectionChurnWindow.timeInterval
        pushes = RecentMemory(limit: settings.rememberedPushLimit)
        unregistered = RecentMemory(limit: settings.unregisteredTokenLimit)
        backoffs = RecentMemory(limit: settings.unregisteredTokenLimit)
    }

    // MARK: - The report

    /// Every finding so far; with `sender`, only that sender's (``PushSender/matches(_:)``).
    func report(sender: String? = nil) -> SenderReport {
        let report = lock.withLock {
            unlockedJudgeWaiting(endingTurn: false)
            return SenderReport(findings: Array(findings.values), unrecordedCount: unrecorded)
        }
        return sender.map { report.filtered(sender: $0) } ?? report
    }

    // MARK: - Intake stage

    func unlockedTake(_ notifications: inout [PushNotification], rejections: inout [Rejection]) {
        guard settings.isEnabled, let first = notifications.first, first.format == .http2 else { return }
        let batch = notifications
        waiting.withLock {
            $0.batches.append(.accepted(batch))
            hasWaiting.store(true, ordering: .releasing)
        }
    }

    func unlockedTake(_ deliveries: [BroadcastDelivery]) {}

    func unlockedTakeRefusals(_ refusals: [Rejection]) {
        guard settings.isEnabled, refusals.contains(where: { $0.format == .http2 }) else { return }
        waiting.withLock {
            $0.batches.append(.refused(refusals))
            hasWaiting.store(true, ordering: .releasing)
        }
    }

    /// Judges what is waiting, unless another thread is already judging (it judges this
    /// thread's batches too before it stops).
    func afterIntake() {
        guard hasWaiting.load(ordering: .acquiring) else { return }
        let myTurn = waiting.withLock { waiting in
            guard !waiting.judging, !waiting.batches.isEmpty else { return false }
            waiting.judging = true
            return true
        }
        guard myTurn else { return }
        lock.withLock { unlockedJudgeWaiting(endingTurn: true) }
    }

    /// With `lock` held: judges the waiting batches, oldest first, until none waits; taking
    /// them and judging them under `lock` keeps the order of arrival whoever judges.
    /// `endingTurn`: the caller had the judging turn, which ends when nothing waits.
    private func unlockedJudgeWaiting(endingTurn: Bool) {
        while true {
            let batches = waiting.withLock { waiting in
                let taken = waiting.batches
                waiting.batches = []
                if taken.isEmpty {
                    if endingTurn { waiting.judging = false }
                    hasWaiting.store(false, ordering: .releasing)
                }
                return taken
            }
            if batches.isEmpty { return }
            for batch in batches {
                switch batch {
                case .accepted(let pushes): for push in pushes { judge(accepted: push) }
                case .refused(let refusals):
                    for refusal in refusals where refusal.format == .http2 { judge(refused: refusal) }
                }
            }
        }
    }

    func unlockedReset() {
        lock.withLock {
            waiting.withLock { waiting in
                waiting.batches = []
                hasWaiting.store(false, ordering: .releasing)
            }
            pushes.removeAll()
            unregistered.removeAll()
            backoffs.removeAll()
            shortLivedClosings.removeAll()
            findings.removeAll()
            lastCounted = nil
            sendersWithFindings.removeAll()
            unrecorded = 0
        }
    }

    // MARK: - Pushes and refusals

    private func judge(accepted push: PushNotification) {
        let sender = sender(of: push)
        let time = push.receivedAt
        let token = push.deviceToken
        if !unregistered.isEmpty, unregistered[token] != nil {
            // Accepted: the token was registered again.
            unregistered.remove(token)
        }
        if !backoffs.isEmpty { checkBackoff(token: token, sender: sender, time: time, push: push) }
        pushes.forget(before: time.addingTimeInterval(-samePushWindow))
        let keys = SamePushKey.keys(of: push)
        let earlier = pushes[keys.content] ?? keys.id.flatMap { pushes[$0] }
        if let earlier {
            if let reason = earlier.value.refusal {
                if reason.isFinalForTheSamePush {
                    record(
                        .retriedRefusal, sender: sender,
                        example(
                            push, "sent again after \(reason) on connection \(earlier.value.connection), and accepted"))
                }
            } else {
                record(
                    .duplicatePush, sender: sender,
                    example(
                        push,
                        "accepted again \(seconds(time, since: earlier.time)) after connection"
                            + " \(earlier.value.connection)'s"))
            }
        }
        let remembered = RememberedPush(refusal: nil, connection: push.connection.id)
        pushes.set(keys.content, remembered, at: time)
        if let id = keys.id { pushes.set(id, remembered, at: time) }
    }

    private func judge(refused refusal: Rejection) {
        guard case .reason(let reason) = refusal.answer, refusal.channelOperation == nil else { return }
        let connection = refusal.connection
        let sender = openConnections[connection.id]?.sender ?? PushSender(connection: connection)
        let time = refusal.receivedAt
        if reason == .expiredProviderToken || reason == .tooManyProviderTokenUpdates {
            let detail =
                reason == .expiredProviderToken
                ? "a provider token used more than an hour after it was issued (403 ExpiredProviderToken)"
                : "a new provider token less than 20 minutes after the last (429 TooManyProviderTokenUpdates)"
            record(.tokenRefresh, sender: sender, example(refusal, detail))
        }
        guard let token = refusal.deviceToken else { return }
        if reason.status == 410 {
            if let earlier = unregistered[token] {
                record(
                    .pushAfterUnregistered, sender: sender,
                    example(
                        refusal,
                        "sent after \(earlier.value) at \(Timestamp.rfc3339(earlier.time)), answered \(reason)"))
            }
            unregistered.set(token, reason, at: time)
        }
        if !backoffs.isEmpty { checkBackoff(token: token, sender: sender, time: time, refusal: refusal) }
        if reason.asksForBackoff { backoffs.set(token, reason, at: time) }
        pushes.forget(before: time.addingTimeInterval(-samePushWindow))
        let keys = SamePushKey.keys(of: refusal)
        let earlier = keys.content.flatMap { pushes[$0] } ?? keys.id.flatMap { pushes[$0] }
        if let earlier, let previous = earlier.value.refusal, previous.isFinalForTheSamePush {
            record(
                .retriedRefusal, sender: sender,
                example(
                    refusal,
                    "sent again after \(previous) on connection \(earlier.value.connection), answered \(reason)"))
        }
        let remembered = RememberedPush(refusal: reason, connection: connection.id)
        if let content = keys.content { pushes.set(content, remembered, at: time) }
        if let id = keys.id { pushes.set(id, remembered, at: time) }
    }

    private func checkBackoff(
        token: DeviceToken, sender: PushSender, time: Date, push: PushNotification? = nil, refusal: Rejection? = nil
    ) {
        backoffs.forget(before: time.addingTimeInterval(-backoffWindow))
        guard let earlier = backoffs[token] else { return }
        let detail = "sent \(seconds(time, since: earlier.time)) after \(earlier.value) for this token"
        if let push { record(.noBackoff, sender: sender, example(push, detail)) }
        if let refusal { record(.noBackoff, sender: sender, example(refusal, detail)) }
        backoffs.remove(token)
    }

    /// The push's sender: its token's, else its connection's; remembered for the connection,
    /// so that its refusals and its closing name the same sender.
    private func sender(of push: PushNotification) -> PushSender {
        let claims = push.providerToken
        if let last = lastSender, last.connection === push.connection, last.claims == claims { return last.sender }
        let sender = PushSender(claims: claims, connection: push.connection)
        lastSender = (push.connection, claims, sender)
        if openConnections[push.connection.id] != nil { openConnections[push.connection.id]?.sender = sender }
        return sender
    }

    // MARK: - Connections

    /// A client connection opened (on any listener but the feedback service's).
    func connectionOpened(_ connection: ConnectionInfo) {
        guard settings.isEnabled else { return }
        let now = clock.currentDate
        lock.withLock {
            unlockedJudgeWaiting(endingTurn: false)
            openConnections[connection.id] = (now, nil)
        }
    }

    /// A client connection closed: one closed within the churn window of opening counts
    /// toward `connection-churn`.
    func connectionClosed(_ connection: ConnectionInfo) {
        guard settings.isEnabled else { return }
        let now = clock.currentDate
        lock.withLock {
            unlockedJudgeWaiting(endingTurn: false)
            guard let opened = openConnections.removeValue(forKey: connection.id) else { return }
            if lastSender?.connection === connection { lastSender = nil }
            let lifetime = now.timeIntervalSince(opened.openedAt)
            guard lifetime < churnWindow else { return }
            let sender = opened.sender ?? PushSender(connection: connection)
            guard shortLivedClosings[sender] != nil || shortLivedClosings.count < settings.senderLimit else {
                unrecorded += 1
                return
            }
            var closings = shortLivedClosings[sender, default: []]
            closings.removeAll { now.timeIntervalSince($0) >= churnWindow }
            closings.append(now)
            if closings.count > settings.connectionChurnCount {
                closings.removeFirst(closings.count - settings.connectionChurnCount)
                record(
                    .connectionChurn, sender: sender,
                    SenderFinding.Example(
                        connection: connection.id, time: now,
                        detail: "closed \(seconds(now, since: opened.openedAt)) after opening; more than"
                            + " \(settings.connectionChurnCount) such within \(seconds(now, since: closings[0]))"))
            }
            shortLivedClosings[sender] = closings
        }
    }

    // MARK: - The HTTP/2 connection's stream events

    /// The client opened a stream while it already had as many open as the connection's last
    /// acknowledged SETTINGS_MAX_CONCURRENT_STREAMS allows (`streams-past-limit`).
    func streamOpenedPastLimit(connection: ConnectionInfo, stream: Int32 = 0) {
        recordStreamEvent(.streamsPastLimit, connection: connection, stream: stream, "opened past the stream limit")
    }

    /// The client opened a stream after this server sent the connection GOAWAY
    /// (`streams-after-goaway`).
    func streamOpenedAfterGoAway(connection: ConnectionInfo, stream: Int32 = 0) {
        recordStreamEvent(.streamsAfterGoAway, connection: connection, stream: stream, "opened after GOAWAY")
    }

    private func recordStreamEvent(_ rule: SenderAuditRule, connection: ConnectionInfo, stream: Int32, _ what: String) {
        guard settings.isEnabled else { return }
        let now = clock.currentDate
        lock.withLock {
            unlockedJudgeWaiting(endingTurn: false)
            let sender = openConnections[connection.id]?.sender ?? PushSender(connection: connection)
            let detail = stream > 0 ? "stream \(stream) \(what)" : "a stream \(what)"
            record(rule, sender: sender, SenderFinding.Example(connection: connection.id, time: now, detail: detail))
        }
    }

    // MARK: - Findings

    /// Counts one occurrence of `rule` by `sender`, keeping `example` among the first few.
    private func record(
        _ rule: SenderAuditRule, sender: PushSender, _ example: @autoclosure () -> SenderFinding.Example
    ) {
        let key = FindingKey(rule: SenderAuditRule.all.firstIndex(of: rule) ?? 0, sender: sender)
        let known = lastCounted.flatMap { $0.key == key ? $0.index : nil } ?? findings.index(forKey: key)
        if let index = known {
            lastCounted = (key, index)
            findings.values[index].count += 1
            if findings.values[index].examples.count < settings.examplesPerFinding {
                findings.values[index].examples.append(example())
            }
            return
        }
        if !sendersWithFindings.contains(sender) {
            guard sendersWithFindings.count < settings.senderLimit else {
                unrecorded += 1
                return
            }
            sendersWithFindings.insert(sender)
        }
        var finding = SenderFinding(rule: rule, sender: sender, count: 1)
        if settings.examplesPerFinding > 0 { finding.examples.append(example()) }
        findings[key] = finding
        lastCounted = nil
    }

    private func example(_ push: PushNotification, _ detail: String) -> SenderFinding.Example {
        SenderFinding.Example(
            connection: push.connection.id, deviceToken: push.deviceToken, apnsID: push.apnsID, time: push.receivedAt,
            detail: detail)
    }

    private func example(_ refusal: Rejection, _ detail: String) -> SenderFinding.Example {
        SenderFinding.Example(
            connection: refusal.connection.id, deviceToken: refusal.deviceToken, apnsID: refusal.apnsID,
            time: refusal.receivedAt, detail: detail)
    }

    /// "0.25 s": how long after `earlier`.
    private func seconds(_ time: Date, since earlier: Date) -> String {
        let interval = max(0, time.timeIntervalSince(earlier))
        return "\((interval * 1000).rounded() / 1000) s"
    }
}
