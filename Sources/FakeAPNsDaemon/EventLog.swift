import FakeAPNs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's log: one line per event (connection opened, closed or refused, handshake
/// failed, notification accepted, refusal, feedback read, a step of the device model's
/// delivery log), as JSON lines or readable text. A text line starts with the time by the
/// server's clock (``FakeAPNsServer/clock``) when it is written, so a test that moved the clock
/// reads its own time there, as in the records. Events are
/// queued by the server's threads and written by one thread of the log's own, so a slow
/// terminal or disk does not slow a connection while the backlog is small; past
/// ``backlogLimit`` lines, `waitForRoom()` holds the producers back until the writer catches
/// up, so the backlog never outgrows memory and no line is dropped.
///
/// ```swift
/// let log = try EventLog(output: OutputWriter(), format: .json)
/// log.record(event)          // inside the server's locks: never blocks
/// log.waitForRoom()          // outside them: blocks while the backlog is full
/// log.prepareToClose()       // stopping: a destination that takes nothing is given up
/// if let loss = log.close() { print(loss) }
/// ```
final class EventLog: @unchecked Sendable {
    /// What the log could not write before it closed.
    struct Loss: Sendable, CustomStringConvertible {
        /// Lines (one per notification and per other event) that never reached the destination.
        let lines: Int
        /// Why.
        let reason: String

        var description: String {
            "\(lines) event\(lines == 1 ? "" : "s") of the log \(lines == 1 ? "was" : "were") not written: \(reason)"
        }
    }

    /// Lines queued beyond which producers wait: enough that the writer works in large
    /// batches, few enough that the backlog (with the batch being written, twice this) stays in
    /// tens of megabytes and a stop flushes it in a fraction of a second to a file.
    static let backlogLimit = 65_536

    private let output: OutputWriter
    private let format: Options.LogFormat
    /// How long a stopping log waits for a destination that takes no byte at all.
    private let stallLimit: Duration
    private let lock = ConditionLock()
    // Protected by `lock`:
    private var pending: [ServerEvent] = []
    private var pendingLines = 0
    private var recordedLines = 0
    private var writtenLines = 0
    private var waitingProducers = 0
    /// Since when the write in progress has moved nothing; nil while the writer is not writing.
    private var stalledSince: ContinuousClock.Instant?
    private var writeError: Int32?
    private var stopping = false
    private var closing = false
    private var finished = false
    /// Set once a stopping log gave its destination up: producers no longer wait, and what is
    /// recorded from then on is only counted.
    private var abandoned = false

    /// A log writing to `output`; throws when the system will not start its writer thread.
    init(output: OutputWriter, format: Options.LogFormat, stallLimit: Duration = .seconds(1)) throws {
        self.output = output
        self.format = format
        self.stallLimit = stallLimit
        // Never joined: a writer stuck on a destination that reads nothing outlives `close()`.
        try OSThread(name: "event-log") { [self] in writeLoop() }.detach()
    }

    /// Queues an event without waiting; called on server threads, inside their locks (the
    /// order of the lines is the order of these calls).
    func record(_ event: ServerEvent) {
        let lines = Self.lineCount(event)
        lock.withLock {
            recordedLines += lines
            guard !abandoned else { return }
            pending.append(event)
            pendingLines += lines
            if pending.count == 1 { lock.broadcast() }
        }
    }

    /// Blocks while the backlog is over ``backlogLimit``; called on a server thread after it
    /// recorded events, holding none of the server's locks. Once the log is stopping it waits
    /// only while the destination takes bytes.
    func waitForRoom() {
        lock.withLock {
            guard pendingLines >= Self.backlogLimit && !abandoned else { return }
            waitingProducers += 1
            defer { waitingProducers -= 1 }
            while pendingLines >= Self.backlogLimit && !abandoned {
                if stopping {
                    _ = lock.wait(until: .after(.milliseconds(50)))
                    abandonIfStalled()
                } else {
                    lock.wait()
                }
            }
        }
    }

    /// Says the daemon is stopping: from now on a destination that takes nothing for the
    /// stall limit is given up, so producers held back by it (and the stop waiting for them)
    /// go on.
    func prepareToClose() {
        lock.withLock {
            stopping = true
            lock.broadcast()
        }
    }

    /// Writes everything recorded and stops the writer. Waits as long as the destination takes
    /// bytes; gives it up when it took none for the stall limit. Returns what was not written.
    @discardableResult
    func close() -> Loss? {
        lock.withLock {
            stopping = true
            closing = true
            lock.broadcast()
            while !finished && !abandoned {
                _ = lock.wait(until: .after(.milliseconds(50)))
                abandonIfStalled()
            }
            let lost = recordedLines - writtenLines
            guard lost > 0 else { return nil }
            if abandoned {
                return Loss(lines: lost, reason: "the log's destination took nothing for \(stallLimit) (an unread pipe?)")
            }
            return Loss(lines: lost, reason: "writing failed: \(String(cString: strerror(writeError ?? EIO)))")
        }
    }

    /// Inside the lock.
    private func abandonIfStalled() {
        guard stopping, !abandoned, let since = stalledSince, ContinuousClock.now - since >= stallLimit else { return }
        abandoned = true
        pending.removeAll()
        pendingLines = 0
        lock.broadcast()
    }

    private static func lineCount(_ event: ServerEvent) -> Int {
        switch event {
        case .accepted(let batch): batch.count
        case .deviceLog(let entries): entries.count
        default: 1
        }
    }

    /// How many bytes of lines are gathered before they are written: large enough that
    /// a backlog of notifications costs few system calls, small enough that it streams out
    /// instead of being formatted whole first.
    private static let chunkSize = 256 * 1024

    private func writeLoop() {
        // Lines are formatted straight into one reused buffer, and notification lines by one
        // writer that formats what repeats once: at hundreds of thousands of notifications a
        // second, a `String` per line and formatting every timestamp whole cost more than the
        // rest of the daemon.
        var buffer = LineBuffer()
        buffer.bytes.reserveCapacity(Self.chunkSize + 64 * 1024)
        var notificationLines = PushNotification.JSONLineWriter(event: "notification")
        // The queue and this array trade places on every round, so neither is reallocated.
        var batch: [ServerEvent] = []
        while true {
            let done: Bool = lock.withLock {
                while pending.isEmpty && !closing { lock.wait() }
                swap(&batch, &pending)
                pendingLines = 0
                if waitingProducers > 0 { lock.broadcast() }
                return closing && batch.isEmpty
            }
            if done { break }
            for event in batch {
                if case .json = format, case .accepted(let notifications) = event {
                    // Through the buffer, so each notification is lent to the writer, not copied.
                    notifications.withUnsafeBufferPointer { notifications in
                        for index in notifications.indices {
                            notificationLines.append(notifications[index], to: &buffer.bytes)
                            buffer.lines += 1
                            if buffer.bytes.count >= Self.chunkSize { flush(&buffer) }
                        }
                    }
                } else {
                    for line in lines(event) {
                        buffer.bytes.append(contentsOf: line.utf8)
                        buffer.bytes.append(UInt8(ascii: "\n"))
                        buffer.lines += 1
                    }
                    if buffer.bytes.count >= Self.chunkSize { flush(&buffer) }
                }
            }
            flush(&buffer)
            batch.removeAll(keepingCapacity: true)
        }
        lock.withLock {
            finished = true
            lock.broadcast()
        }
    }

    /// Lines formatted and not yet written.
    private struct LineBuffer {
        var bytes: [UInt8] = []
        var lines = 0
    }

    /// Writes the buffer, counting the lines that leave. A write that moves everything at once
    /// (a file, a pipe with room) counts them all; one that moves part (a slow reader) counts
    /// the line feeds in what left, so a log given up knows exactly what it lost.
    private func flush(_ buffer: inout LineBuffer) {
        guard !buffer.bytes.isEmpty else { return }
        let total = buffer.bytes.count
        let lines = buffer.lines
        lock.withLock { stalledSince = .now }
        let failure = output.write(bytes: buffer.bytes) { written in
            let left = written.count == total ? lines : written.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
            lock.withLock {
                writtenLines += left
                stalledSince = .now
            }
        }
        lock.withLock {
            stalledSince = nil
            if let failure { writeError = failure }
        }
        buffer.bytes.removeAll(keepingCapacity: true)
        buffer.lines = 0
    }

    /// The lines of one event.
    private func lines(_ event: ServerEvent) -> [String] {
        switch format {
        case .json: return Self.jsonLines(event)
        case .text: return Self.textLines(event, at: stampClock.withLock { $0 }.currentDate)
        }
    }

    /// The clock the text lines are stamped by: real time until ``stamp(by:)``.
    private let stampClock = Locked(ServerClock())

    /// Stamps the text lines by `clock` from now on: the daemon's server's, once it exists.
    func stamp(by clock: ServerClock) {
        stampClock.withLock { $0 = clock }
    }

    static func jsonLines(_ event: ServerEvent) -> [String] {
        func line(_ name: String, _ object: JSONValue) -> String {
            #"{"event":""# + name + #"","# + object.serialized().dropFirst()
        }
        func connection(
            _ info: ConnectionInfo, _ listener: ListenerKind, _ extra: [JSONObject.Element] = []
        ) -> JSONValue {
            var members: [JSONObject.Element] = [
                (key: "listener", value: .string(listener.rawValue)), (key: "connection", value: .int(info.id)),
                (key: "peer", value: .string(info.peer)), (key: "tls", value: .string(info.tlsVersion)),
                (key: "transport", value: .string(info.transport.rawValue)),
            ]
            if let certificate = info.clientCertificate {
                members.append((key: "clientSubject", value: .string(certificate.subject)))
            }
            return .object(JSONObject(members + extra))
        }
        switch event {
        case .accepted(let batch):
            return batch.map { $0.jsonLine(event: "notification") }
        case .rejected(let rejection):
            return [line("rejected", rejection.jsonObject)]
        case .connectionOpened(let info, let listener):
            return [line("connection-opened", connection(info, listener))]
        case .connectionClosed(let info, let listener):
            return [line("connection-closed", connection(info, listener))]
        case .connectionRule(let info, let listener, let rule):
            let rule: [JSONObject.Element] = [(key: "rule", value: .string(rule.name)), (key: "detail", value: .string(rule.detail))]
            return [line("connection-rule", connection(info, listener, rule))]
        case .handshakeFailed(let peer, let listener, let reason):
            return [line("handshake-failed", ["listener": .string(listener.rawValue), "peer": .string(peer), "reason": .string(reason)])]
        case .connectionRefused(let peer, let listener, let reason):
            return [line("connection-refused", [
                "listener": .string(listener.rawValue), "peer": .string(peer), "cause": .string(reason.cause),
                "reason": .string(reason.description),
            ])]
        case .feedbackRead(let tuples, let info):
            return [line("feedback-read", [
                "connection": .int(info.id), "peer": .string(info.peer),
                "tuples": .array(tuples.map { ["token": .string($0.deviceToken.hex), "timestamp": .int(Int($0.timestamp))] }),
            ])]
        case .channelCreated(let channel):
            return [line("channel-created", channelObject(channel))]
        case .channelDeleted(let channel):
            return [line("channel-deleted", channelObject(channel))]
        case .deviceLog(let entries):
            // As the control API writes an entry, with the time last.
            return entries.map { entry in
                var members = PhoneJSON.logMembers(entry)
                if let at = members.firstIndex(where: { $0.key == "at" }) { members.append(members.remove(at: at)) }
                return line("device-log", .object(JSONObject(members)))
            }
        }
    }

    /// The text lines of one event, stamped `now`.
    static func textLines(_ event: ServerEvent, at now: Date) -> [String] {
        let now = Timestamp.rfc3339(now)
        switch event {
        case .accepted(let batch):
            return batch.map { notification in
                var text = "\(now) accepted #\(notification.sequenceNumber) \(notification.format) token \(notification.deviceToken.hex)"
                if let topic = notification.topic { text += " topic \(topic)" }
                if let apnsID = notification.apnsID { text += " apns-id \(apnsID)" } else { text += " id \(notification.identifier)" }
                // As the JSON log: the findings of a push the intake judged, the request's and the phone's.
                if let findings = notification.lintFindingsIfJudged, !findings.isEmpty {
                    text += " lint " + findings.map { "\($0.level) \($0.rule)" }.joined(separator: ", ")
                }
                return text + " payload " + (notification.payload.text ?? "<\(notification.payload.count) bytes, not UTF-8>")
            }
        case .rejected(let rejection):
            return ["\(now) rejected \(rejection)"]
        case .connectionOpened(let info, let listener):
            return ["\(now) \(listener) connection \(info.id) opened from \(info.peer) (\(info.transport == .tls ? info.tlsVersion : "plaintext")\(info.clientCertificate.map { ", \($0.subject)" } ?? ""))"]
        case .connectionClosed(let info, let listener):
            return ["\(now) \(listener) connection \(info.id) closed"]
        case .connectionRule(let info, let listener, let rule):
            return ["\(now) \(listener) connection \(info.id) \(rule.detail)"]
        case .handshakeFailed(let peer, let listener, let reason):
            return ["\(now) \(listener) handshake from \(peer) failed: \(reason)"]
        case .connectionRefused(let peer, let listener, let reason):
            return ["\(now) \(listener) connection from \(peer) refused: \(reason)"]
        case .feedbackRead(let tuples, let info):
            return ["\(now) feedback read by connection \(info.id): \(tuples.count) tuple\(tuples.count == 1 ? "" : "s")"
                + tuples.map { " \($0.deviceToken.hex)@\($0.timestamp)" }.joined()]
        case .channelCreated(let channel):
            return ["\(now) channel \(channel.id) created for \(channel.bundleID) (storage policy \(channel.storagePolicy.rawValue))"]
        case .channelDeleted(let channel):
            return ["\(now) channel \(channel.id) deleted for \(channel.bundleID)"]
        case .deviceLog(let entries):
            // The time by the server's clock, which a test may have moved.
            return entries.map { entry in
                "\(Timestamp.rfc3339(entry.at)) device \(entry.deviceToken.hex) #\(entry.sequenceNumber) \(entry.status)"
                    + (entry.detail.map { ": \($0)" } ?? "")
            }
        }
    }

    /// A channel's members in the JSON log.
    private static func channelObject(_ channel: Channel) -> JSONValue {
        [
            "channel": .string(channel.id), "bundle": .string(channel.bundleID),
            "environment": .string(channel.environment.rawValue), "storagePolicy": .int(channel.storagePolicy.rawValue),
        ]
    }
}
