#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What every gateway connection of one server shares: the decoder's limits, the policy, and
/// the intake.
struct GatewayContext: Sendable {
    let decoder: BinaryDecoder
    let policy: Policy
    let intake: Intake
    /// The server's clock: when notifications were received.
    let clock: ServerClock
}

/// One connection to the binary gateway: reads, decodes every complete notification in what
/// arrived, and hands the accepted ones over in one batch per read. On the first refused one it
/// answers as Apple did: the 6-byte error response (none for command 0), then the connection
/// closes and whatever followed on it is dropped.
struct GatewaySession {
    let connection: TLSListener.Connection
    let context: GatewayContext

    /// How a connection ends after a refusal.
    private struct Ending {
        let response: BinaryErrorResponse?
    }

    /// The identifier of the last notification accepted here, for status 10 (shutdown), and
    /// the chunks payloads are copied into.
    private final class State {
        var lastAcceptedIdentifier: UInt32 = 0
        /// Where payloads are copied: shared chunks, no allocation per notification. Only the
        /// connection's thread touches it, once per notification: `@exclusivity(unchecked)`
        /// spares each access the runtime's exclusivity check.
        @exclusivity(unchecked) var payloads = PayloadArena()
    }

    private let state = State()

    init(connection: TLSListener.Connection, context: GatewayContext) {
        self.connection = connection
        self.context = context
    }

    func run() {
        var buffer = ReadBuffer()
        defer { buffer.deallocate() }
        while true {
            let read: TLSListener.Connection.Read
            do {
                read = try connection.read(into: &buffer, insideFrame: buffer.count > 0)
            } catch {
                return
            }
            switch read {
            case .bytes:
                break
            case .end:
                if connection.listener.isStopping {
                    end(with: shutdown())
                } else if buffer.count > 0 {
                    end(with: refuse(buffer.withReadable { context.decoder.truncated($0) }))
                }
                return
            case .timedOut:
                // Idle, or stalled inside a frame: a frame cut short is answered as at the end.
                if buffer.count > 0, let timeout = connection.listener.timeouts.frame {
                    end(with: refuse(buffer.withReadable { context.decoder.truncated($0, stalledFor: timeout) }))
                }
                return
            }
            let (consumed, ending) = buffer.withReadable { decodeAll($0) }
            buffer.consume(consumed)
            if let ending {
                end(with: ending)
                return
            }
            if !connection.listener.mayKeepReading {
                end(with: shutdown())
                return
            }
        }
    }

    /// How a connection ends when the server stops: as Apple's gateway did, status 10 naming
    /// the last notification accepted here, after everything received was decoded. A frame
    /// cut short by the stop is not a client's error: it is dropped, and the identifier tells
    /// the client where to resume.
    private func shutdown() -> Ending {
        Ending(response: BinaryErrorResponse(status: .shutdown, identifier: state.lastAcceptedIdentifier))
    }

    /// Decodes and judges every complete notification in `bytes`; returns the bytes used and,
    /// when a notification was refused in a way that ends the connection, how it ends.
    private func decodeAll(_ bytes: UnsafeRawBufferPointer) -> (Int, Ending?) {
        var offset = 0
        var batch: [PushNotification] = []
        batch.reserveCapacity(bytes.count / 48)
        let now = context.clock.currentDate
        let judging = context.policy.isActive
        defer {
            if !judging, let last = batch.last { state.lastAcceptedIdentifier = last.identifier }
            context.intake.append(notifications: &batch)
        }
        while offset < bytes.count {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
            switch context.decoder.decode(rest) {
            case .frame(let frame):
                let notification = PushNotification(
                    deviceToken: DeviceToken(copying: UnsafeRawBufferPointer(rebasing: rest[frame.token])),
                    payload: state.payloads.payload(copying: UnsafeRawBufferPointer(rebasing: rest[frame.payload])),
                    identifier: frame.identifier,
                    expiration: frame.expiration,
                    priority: Priority(rawValue: Int(frame.priority)),
                    format: frame.format,
                    connection: connection.info,
                    receivedAt: now)
                offset += frame.length
                if !judging {
                    batch.append(notification)
                } else if let ending = judge(notification, batch: &batch) {
                    return (offset, ending)
                }
            case .incomplete:
                return (offset, nil)
            case .failure(let failure):
                if !judging, let last = batch.last { state.lastAcceptedIdentifier = last.identifier }
                context.intake.append(notifications: &batch)
                return (offset, refuse(failure))
            }
        }
        return (offset, nil)
    }

    /// Applies the policy to one notification: appends it to `batch` when accepted; records a
    /// refusal; returns how the connection ends when it must.
    private func judge(_ notification: PushNotification, batch: inout [PushNotification]) -> Ending? {
        let topic = connection.info.clientCertificate?.topic
        var verdict = context.policy.judge(token: notification.deviceToken, topic: topic)
        if case .delay(let duration) = verdict {
            // Whatever arrived before the delay is delivered before it.
            context.intake.append(notifications: &batch)
            verdict = connection.listener.pause(duration)
                ? context.policy.judge(token: notification.deviceToken, topic: topic, afterDelay: true) : .stopped
        }
        let refusal: (BinaryStatus, String, Rejection.Cause)
        switch verdict {
        case .accept:
            batch.append(notification)
            state.lastAcceptedIdentifier = notification.identifier
            return nil
        case .registry(.unregistered(let date)):
            record(
                notification, status: nil, reason: "Unregistered",
                detail: "the app was uninstalled from this device at \(Timestamp.rfc3339(date)); the gateway drops the notification without a word and the feedback service reports the token",
                cause: .registry, response: nil, closed: false)
            return nil
        case .registry(.unknownToken(let detail)), .registry(.otherEnvironment(let detail)), .registry(.otherTopic(let detail)):
            refusal = (.invalidToken, detail, .registry)
        case .registry(.expiredToken(let date)):
            refusal = (.invalidToken, "the Live Activity was dismissed at \(Timestamp.rfc3339(date))", .registry)
        case .registry(.accept):
            batch.append(notification)
            return nil
        case .fault(let rule, .reject(let status)):
            refusal = (status, "fault rule: \(rule)", .fault)
        case .fault(let rule, .respond(let reason)):
            refusal = (BinaryStatus(apnsReason: reason), "fault rule: \(rule)", .fault)
        case .fault(let rule, _):
            return closeSilently(notification, detail: "fault rule: \(rule)", batch: &batch)
        case .stopped, .delay:
            refusal = (.shutdown, "the server stopped during a fault delay", .fault)
        }
        context.intake.append(notifications: &batch)
        let (status, detail, cause) = refusal
        let identifier = status == .shutdown ? state.lastAcceptedIdentifier : notification.identifier
        let response = notification.format == .simple ? nil : BinaryErrorResponse(status: status, identifier: identifier)
        record(notification, status: status, reason: nil, detail: detail, cause: cause, response: response, closed: true)
        return Ending(response: response)
    }

    private func closeSilently(_ notification: PushNotification, detail: String, batch: inout [PushNotification]) -> Ending {
        context.intake.append(notifications: &batch)
        record(notification, status: nil, reason: "Connection closed", detail: detail, cause: .fault, response: nil, closed: true)
        return Ending(response: nil)
    }

    private func record(
        _ notification: PushNotification, status: BinaryStatus?, reason: String?, detail: String, cause: Rejection.Cause,
        response: BinaryErrorResponse?, closed: Bool
    ) {
        context.intake.append(Rejection(
            answer: status.map { .status($0) }, reason: reason, detail: detail, cause: cause, responseSent: response != nil,
            connectionClosed: closed, identifier: response?.identifier ?? notification.identifier,
            deviceToken: notification.deviceToken, payload: notification.payload, format: notification.format,
            connection: connection.info, receivedAt: notification.receivedAt))
    }

    /// Records a malformed notification and says how the connection ends.
    private func refuse(_ failure: BinaryDecoder.Failure) -> Ending {
        let response = failure.sendsResponse ? BinaryErrorResponse(status: failure.status, identifier: failure.identifier) : nil
        context.intake.append(Rejection(
            answer: .status(failure.status), detail: failure.reason, cause: .malformed, responseSent: response != nil,
            connectionClosed: true, identifier: failure.identifier, deviceToken: failure.token.map { DeviceToken(bytes: $0) },
            payload: failure.payload.map { Payload(bytes: $0) }, format: failure.format, connection: connection.info,
            receivedAt: context.clock.currentDate))
        return Ending(response: response)
    }

    private func end(with ending: Ending) {
        if let response = ending.response {
            try? connection.stream.write(response.bytes)
        }
    }
}
