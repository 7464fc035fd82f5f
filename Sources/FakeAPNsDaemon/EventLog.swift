import FakeAPNs
import Foundation

/// The daemon's log: one line per event (connection opened or closed, handshake failed,
/// notification accepted, refusal, feedback read), as JSON lines or readable text. Events are
/// queued by the server's threads and written by one thread of the log's own, so a slow
/// terminal or disk never slows a connection.
final class EventLog: @unchecked Sendable {
    private let output: OutputWriter
    private let format: Options.LogFormat
    private let lock = NSCondition()
    private var pending: [ServerEvent] = []
    private var closing = false
    private var finished = false

    init(output: OutputWriter, format: Options.LogFormat) {
        self.output = output
        self.format = format
        Thread { [self] in writeLoop() }.start()
    }

    /// Queues an event; called on server threads.
    func record(_ event: ServerEvent) {
        lock.withLock {
            pending.append(event)
            if pending.count == 1 { lock.signal() }
        }
    }

    /// Writes what is queued and stops the writer; waits at most `timeout` for it.
    func close(timeout: TimeInterval = 0.5) {
        lock.withLock {
            closing = true
            lock.broadcast()
            let deadline = Date().addingTimeInterval(timeout)
            while !finished && lock.wait(until: deadline) {}
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
        var buffer: [UInt8] = []
        buffer.reserveCapacity(Self.chunkSize + 64 * 1024)
        var notificationLines = PushNotification.JSONLineWriter(event: "notification")
        // The queue and this array trade places on every round, so neither is reallocated.
        var batch: [ServerEvent] = []
        while true {
            let done: Bool = lock.withLock {
                while pending.isEmpty && !closing { lock.wait() }
                swap(&batch, &pending)
                return closing && batch.isEmpty
            }
            if done { break }
            for event in batch {
                if case .json = format, case .accepted(let notifications) = event {
                    // Through the buffer, so each notification is lent to the writer, not copied.
                    notifications.withUnsafeBufferPointer { notifications in
                        for index in notifications.indices {
                            notificationLines.append(notifications[index], to: &buffer)
                            if buffer.count >= Self.chunkSize { flush(&buffer) }
                        }
                    }
                } else {
                    for line in lines(event) {
                        buffer.append(contentsOf: line.utf8)
                        buffer.append(UInt8(ascii: "\n"))
                    }
                    if buffer.count >= Self.chunkSize { flush(&buffer) }
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

    private func flush(_ buffer: inout [UInt8]) {
        output.write(bytes: buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    /// The lines of one event.
    private func lines(_ event: ServerEvent) -> [String] {
        switch format {
        case .json: return Self.jsonLines(event)
        case .text: return Self.textLines(event)
        }
    }

    static func jsonLines(_ event: ServerEvent) -> [String] {
        func line(_ name: String, _ object: JSONValue) -> String {
            #"{"event":""# + name + #"","# + object.serialized().dropFirst()
        }
        func connection(_ info: ConnectionInfo, _ listener: ListenerKind) -> JSONValue {
            var members: [JSONObject.Element] = [
                (key: "listener", value: .string(listener.rawValue)), (key: "connection", value: .int(info.id)),
                (key: "peer", value: .string(info.peer)), (key: "tls", value: .string(info.tlsVersion)),
            ]
            if let certificate = info.clientCertificate {
                members.append((key: "clientSubject", value: .string(certificate.subject)))
            }
            return .object(JSONObject(members))
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
        case .handshakeFailed(let peer, let listener, let reason):
            return [line("handshake-failed", ["listener": .string(listener.rawValue), "peer": .string(peer), "reason": .string(reason)])]
        case .feedbackRead(let tuples, let info):
            return [line("feedback-read", [
                "connection": .int(info.id), "peer": .string(info.peer),
                "tuples": .array(tuples.map { ["token": .string($0.deviceToken.hex), "timestamp": .int(Int($0.timestamp))] }),
            ])]
        }
    }

    static func textLines(_ event: ServerEvent) -> [String] {
        let now = Timestamp.rfc3339(Date())
        switch event {
        case .accepted(let batch):
            return batch.map { notification in
                var text = "\(now) accepted #\(notification.sequenceNumber) \(notification.format) token \(notification.deviceToken.hex)"
                if let topic = notification.topic { text += " topic \(topic)" }
                if let apnsID = notification.apnsID { text += " apns-id \(apnsID)" } else { text += " id \(notification.identifier)" }
                return text + " payload " + (notification.payload.text ?? "<\(notification.payload.count) bytes, not UTF-8>")
            }
        case .rejected(let rejection):
            return ["\(now) rejected \(rejection)"]
        case .connectionOpened(let info, let listener):
            return ["\(now) \(listener) connection \(info.id) opened from \(info.peer) (\(info.tlsVersion)\(info.clientCertificate.map { ", \($0.subject)" } ?? ""))"]
        case .connectionClosed(let info, let listener):
            return ["\(now) \(listener) connection \(info.id) closed"]
        case .handshakeFailed(let peer, let listener, let reason):
            return ["\(now) \(listener) handshake from \(peer) failed: \(reason)"]
        case .feedbackRead(let tuples, let info):
            return ["\(now) feedback read by connection \(info.id): \(tuples.count) tuple\(tuples.count == 1 ? "" : "s")"
                + tuples.map { " \($0.deviceToken.hex)@\($0.timestamp)" }.joined()]
        }
    }
}
