#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What every HTTP/2 connection of one server shares.
struct HTTP2Context: Sendable {
    let validator: RequestValidator
    let authentication: HTTP2Authentication
    let verifier: ProviderTokenVerifier?
    let policy: Policy
    /// Where accepted notifications and refusals go; its channels serve the channel
    /// management and broadcast APIs.
    let intake: Intake
    /// The server's clock: when requests were received.
    let clock: ServerClock
    /// When the server first saw each provider token: what a token's age and the refresh rule
    /// are judged by.
    let tokenSightings: ProviderTokenSightings
    /// The listener serves channel management only: every other path is `BadPath`.
    let managementOnly: Bool
    /// What a connection costs a sender that errs, and how long it lives.
    var rules = ProviderConnectionRules()
    /// Hears when a rule throttled or ended a connection (the server's events).
    var onRule: @Sendable (ConnectionInfo, ProviderConnectionRules.Event) -> Void = { _, _ in }
    /// The sender audit: told of a stream opened past the stream limit
    /// (`streamOpenedPastLimit(connection:stream:)`) or after GOAWAY
    /// (`streamOpenedAfterGoAway(connection:stream:)`); nil: none (a connection a test drives).
    var audit: SenderAudit?
}

/// What an ``HTTP2Connection`` needs of the transport it runs on: its socket's writes, and its
/// listener's pauses and stop. A TLS or plaintext connection is one; a test's memory another.
protocol HTTP2ConnectionHost {
    /// Writes all of `bytes`; throws when the connection is gone.
    func write(_ bytes: [UInt8]) throws
    /// Reads nothing for `duration` (a fault's delay); false when the server stopped meanwhile.
    func pause(_ duration: Duration) -> Bool
    /// Whether the server is stopping.
    var isStopping: Bool { get }
    /// Whether the connection may read on (false once a stopping server's drain is over).
    var mayKeepReading: Bool { get }
}

/// One connection to the HTTP/2 provider API: nghttp2 frames the streams; each complete
/// request is validated, authenticated and judged as APNs would, and answered with Apple's
/// status, headers and `{"reason":…}` body. Accepted notifications are queued before their
/// 200 leaves.
///
/// A GOAWAY, whoever sends it (a fault rule, the server stopping, nghttp2 defending the
/// connection), names the last stream processed: nothing received on a stream above it is
/// queued or recorded, so a client may send those requests again on another connection.
///
/// The connection is a state machine apart from its socket: bytes in (``received(_:)``),
/// bytes out through its ``HTTP2ConnectionHost``, and what the loop around it does next
/// (``Next``). The rules of ``ProviderConnectionRules`` live here; `run()`
/// (HTTP2ConnectionLoop.swift) is the loop a listener's thread runs.
final class HTTP2Connection: HTTP2SessionDelegate {
    /// The stream limit APNs announces once a connection may send freely.
    static let openStreamLimit: UInt32 = StreamLimit.cap
    /// SETTINGS_MAX_HEADER_LIST_SIZE as APNs announces it, and as this server holds to: a
    /// request whose header list is larger is answered 431 and judged on nothing else. The
    /// fields of a stream are kept up to it, so one costs at most 24 KB of text (invalid UTF-8
    /// becomes U+FFFD, three bytes).
    static let headerListSizeLimit = 8000
    /// The answer to a header list over the limit. Apple documents none; 431 is HTTP's status
    /// for it, and a `{"reason":…}` body, as every other refusal has, is what APNs clients read.
    static let headerListTooLarge = APNsReason("RequestHeaderFieldsTooLarge", status: 431)
    /// RST_STREAM's REFUSED_STREAM: the request was not processed, and may be sent again.
    private static let refusedStream: UInt32 = 7
    /// GOAWAY's PROTOCOL_ERROR.
    private static let protocolError: UInt32 = 1
    /// Body bytes kept per stream: one more than the largest payload, enough to answer 413.
    private let bodyLimit: Int

    private let host: any HTTP2ConnectionHost
    let context: HTTP2Context
    // Only the connection's thread touches what follows, several times per request:
    // `@exclusivity(unchecked)` spares each access the runtime's exclusivity check.
    @exclusivity(unchecked) var session: (any RequestFraming)!
    /// Makes the session: HTTP/2 through nghttp2, or the plaintext listener's framing.
    private let makeSession: (any HTTP2SessionDelegate) throws -> any RequestFraming
    /// The connection's record, as the notifications and refusals carry it: a plaintext
    /// connection's says which protocol it speaks once its first bytes arrived.
    @exclusivity(unchecked) private(set) var info: ConnectionInfo
    /// Requests whose header block or body is still arriving.
    @exclusivity(unchecked) private var streams = HTTP2StreamTable()
    /// The stream whose header block arrives now (0: none) and its slot in `streams`: a
    /// header block comes whole, so its fields go straight to the slot.
    @exclusivity(unchecked) private var headerBlock: (stream: Int32, slot: Int) = (0, 0)
    /// Accepted notifications and refusals waiting for their answers to leave, each with its
    /// stream, so that a GOAWAY can withhold those above its last stream.
    @exclusivity(unchecked) private var batch: [PushNotification] = []
    @exclusivity(unchecked) private var batchStreams: [Int32] = []
    /// Whether `batch` holds a broadcast, whose deliveries follow its queueing.
    @exclusivity(unchecked) private var batchHasBroadcast = false
    @exclusivity(unchecked) private var refusals: [Rejection] = []
    @exclusivity(unchecked) private var refusalStreams: [Int32] = []
    /// What nghttp2 sends next, reused from one round to the next.
    @exclusivity(unchecked) private var output: [UInt8] = []
    @exclusivity(unchecked) var tokens: ProviderTokenSession
    @exclusivity(unchecked) var uuids = RandomUUID()
    /// Where accepted payloads are copied: shared chunks, no allocation per notification.
    @exclusivity(unchecked) private var payloads = PayloadArena()
    /// The shared fields the last accepted push got (see `sharedFields`).
    @exclusivity(unchecked) private var lastShared: PushNotification.HTTP2Fields.Shared?
    /// The stream limit announced last.
    @exclusivity(unchecked) private var announcedLimit: UInt32 = 0
    /// Refusals counted against ``ProviderConnectionRules/errorLimit``.
    @exclusivity(unchecked) private var refusalCount = RefusalCount()
    /// Requests handled, for ``ProviderConnectionRules/requestsPerConnection``.
    @exclusivity(unchecked) private var requestsHandled = 0
    /// When the connection is retired (``ProviderConnectionRules/connectionLifetime``).
    let retiresAt: ContinuousClock.Instant?
    /// When the bytes of this round were read: the arrival time of the pushes they complete,
    /// read once a round (as the gateway does a batch), not once a request.
    @exclusivity(unchecked) private(set) var roundReadAt: Date
    /// The highest stream answered, reset or closed on: streams complete out of order, so a
    /// GOAWAY of this side names this one, never the stream that caused it.
    @exclusivity(unchecked) private var lastProcessed: Int32 = 0
    /// Requests on streams above this are not handled: a GOAWAY refuses them, or the
    /// connection is closing.
    @exclusivity(unchecked) private var streamCeiling = Int32.max
    /// The last stream of the GOAWAY sent or owed; what came on streams above it is not kept.
    @exclusivity(unchecked) private var goAwayLastStream = Int32.max
    /// The GOAWAY this side owes, sent once the round's answers are out.
    @exclusivity(unchecked) private var owedGoAway: (errorCode: UInt32, debugData: [UInt8])?
    /// The connection closes at the end of this round.
    @exclusivity(unchecked) private var closing = false
    /// The connection closes without a drain (a fault closing it).
    @exclusivity(unchecked) private var closesAbruptly = false
    /// The session reported a protocol error: it reads nothing more.
    @exclusivity(unchecked) private var sessionFailed = false

    init(
        host: any HTTP2ConnectionHost, info: ConnectionInfo, context: HTTP2Context,
        framing: @escaping (any HTTP2SessionDelegate) throws -> any RequestFraming = {
            try NGHTTP2Session(server: true, delegate: $0)
        }
    ) {
        self.host = host
        self.context = context
        self.makeSession = framing
        self.info = info
        self.tokens = ProviderTokenSession()
        self.roundReadAt = context.clock.currentDate
        self.bodyLimit = max(context.validator.maximumPayloadSize, context.validator.maximumVoIPPayloadSize) + 1
        self.retiresAt = context.rules.connectionLifetime.map { ContinuousClock.now.advanced(by: max($0, .zero)) }
    }

    /// What the loop around the connection does next.
    enum Next: Equatable {
        /// Reads more (at most until ``HTTP2Connection/retiresAt``).
        case read
        /// A GOAWAY left: reads for a short while, so that a client still writing reads the
        /// answers to what was accepted instead of a reset, then closes.
        case drain
        /// Closes the connection now.
        case close
    }

    /// How long a connection that sent GOAWAY goes on reading before it closes, unless the
    /// client closes first.
    static let drainTime: Duration = .seconds(1)

    /// Makes the session and sends the server's SETTINGS. `.close` when that failed.
    func start() -> Next {
        do {
            session = try makeSession(self)
        } catch {
            return .close
        }
        let tokenAuthentication = if case .token = context.authentication { true } else { false }
        // As APNs: with token authentication one stream until a request succeeds.
        announcedLimit = tokenAuthentication ? 1 : Self.openStreamLimit
        session.submitSettings([
            (Int32(NGHTTP2Settings.headerTableSize), 4096),
            (Int32(NGHTTP2Settings.maxConcurrentStreams), announcedLimit),
            (Int32(NGHTTP2Settings.initialWindowSize), 65_535),
            (Int32(NGHTTP2Settings.maxFrameSize), 16_384),
            (Int32(NGHTTP2Settings.maxHeaderListSize), UInt32(Self.headerListSizeLimit)),
        ])
        return flush() ? .read : .close
    }

    /// Ends the connection's cycle with its session (the session holds it strongly).
    func finish() {
        session = nil
    }

    /// Handles the bytes of one read: every request they complete is answered, in one write.
    func received(_ bytes: UnsafeRawBufferPointer) -> Next {
        roundReadAt = context.clock.currentDate
        do {
            try session.receive(bytes)
        } catch {
            sessionFailed = true
        }
        if let requests = context.rules.requestsPerConnection, requestsHandled >= max(requests, 1), !closing {
            retire("served \(requestsHandled) requests")
        }
        guard flush() else { return .close }
        if closesAbruptly { return .close }
        if closing || sessionFailed || !session.isAlive { return .drain }
        if !host.mayKeepReading {
            sayGoodbye(.shutdown)
            return .close
        }
        return .read
    }

    /// Handles what came during the drain: the session reads it unless it failed (window
    /// updates let the last answers out; the answer to the PING after the GOAWAY says the
    /// client read it; new streams are above the GOAWAY's last stream and ignored); after a
    /// protocol error it is discarded.
    func drained(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard !sessionFailed else { return true }
        roundReadAt = context.clock.currentDate
        do {
            try session.receive(bytes)
        } catch {
            sessionFailed = true
        }
        return flush()
    }

    /// The client ended the connection, or the listener ended the reads (the server stops).
    func readEnded() -> Next {
        if host.isStopping { sayGoodbye(.shutdown) }
        return .close
    }

    /// No byte came in time: retired past its lifetime, idle past the idle timeout (between
    /// frames), or stalled inside a frame.
    func readTimedOut() -> Next {
        if let retiresAt, ContinuousClock.now >= retiresAt {
            retire("lived \(context.rules.connectionLifetime.map { "\($0)" } ?? "")")
            return flush() ? .drain : .close
        }
        if session.isBetweenMessages {
            sayGoodbye(.idleTimeout)
            return .drain
        }
        return .close
    }

    /// Whether the client rests between messages (then a quiet connection is idle).
    var isBetweenMessages: Bool { session.isBetweenMessages }

    /// How a connection ends when the server stops (`.shutdown`: its listener ends the reads,
    /// at once or after a while for a client that keeps sending, and gives it a moment) or it
    /// rested past the idle timeout (`.idleTimeout`). What arrived was answered; GOAWAY
    /// `NO_ERROR` names the last stream of it, with the reason as debug data.
    private func sayGoodbye(_ reason: APNsReason) {
        goAway(errorCode: 0, debugData: Self.errorBody(reason))
        _ = flush()
    }

    /// Retires the connection as APNs does after hours: GOAWAY `Shutdown`, answering what it
    /// accepted.
    private func retire(_ why: String) {
        goAway(errorCode: 0, debugData: Self.errorBody(.shutdown))
        context.onRule(info, .retired(why))
    }

    /// Writes what the round produced, in one TLS write: every frame nghttp2 has queued, then
    /// the GOAWAY owed, after resetting the requests still arriving. nghttp2 would let a
    /// GOAWAY submitted with the answers overtake their DATA, and many clients stop reading
    /// at GOAWAY; an answer's DATA held back by the client's flow-control window does not
    /// hold the GOAWAY. False when the connection is gone.
    private func flush() -> Bool {
        do {
            output.removeAll(keepingCapacity: true)
            try session.takeOutput(appendingTo: &output)
            if let goAway = owedGoAway {
                owedGoAway = nil
                for stream in streams.pendingStreams { session.submitReset(stream, errorCode: Self.refusedStream) }
                session.submitGoAway(
                    lastStream: goAwayLastStream, errorCode: goAway.errorCode, debugData: goAway.debugData)
                try session.takeOutput(appendingTo: &output)
            }
            deliver()
            if !output.isEmpty { try host.write(output) }
            return true
        } catch {
            return false
        }
    }

    /// Queues the accepted notifications and the refusals whose answers are about to leave,
    /// except those of streams above a GOAWAY's last stream: their client was told they were
    /// not processed.
    private func deliver() {
        if goAwayLastStream != .max {
            Self.keep(&batch, streams: &batchStreams, upTo: goAwayLastStream)
            Self.keep(&refusals, streams: &refusalStreams, upTo: goAwayLastStream)
        }
        context.intake.append(notifications: &batch, broadcasts: batchHasBroadcast)
        batchHasBroadcast = false
        batchStreams.removeAll(keepingCapacity: true)
        if !refusals.isEmpty {
            context.intake.append(rejections: &refusals)
            refusalStreams.removeAll(keepingCapacity: true)
        }
    }

    /// Keeps, in order, the items whose stream is at most `last`.
    private static func keep<Item>(_ items: inout [Item], streams: inout [Int32], upTo last: Int32) {
        var kept = 0
        for index in items.indices where streams[index] <= last {
            items.swapAt(kept, index)
            streams.swapAt(kept, index)
            kept += 1
        }
        items.removeSubrange(kept...)
        streams.removeSubrange(kept...)
    }

    /// Handles no request above the last stream processed, and owes the client a GOAWAY
    /// naming it; the connection closes after sending it.
    private func goAway(errorCode: UInt32, debugData: [UInt8]) {
        streamCeiling = min(streamCeiling, lastProcessed)
        goAwayLastStream = min(goAwayLastStream, lastProcessed)
        owedGoAway = (errorCode, debugData)
        closing = true
    }

    // MARK: - Session events

    /// A header block begins: a request's, or trailers, which start the stream's request
    /// afresh (only their fields count, and no body).
    func streamBegan(_ stream: Int32) {
        guard stream <= streamCeiling else { return }
        headerBlock = (stream, streams.insert(stream))
    }

    func header(_ stream: Int32, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        guard stream == headerBlock.stream else { return }
        // A block split over several reads may see other streams close in between, which
        // can move entries in the table: then the stream is looked up again.
        if streams.stream(at: headerBlock.slot) != stream {
            guard let slot = streams.slot(of: stream) else { return }
            headerBlock.slot = slot
        }
        streams[headerBlock.slot].addHeader(name: name, value: value, sizeLimit: Self.headerListSizeLimit)
    }

    func headersEnded(_ stream: Int32, endsStream: Bool) {
        headerBlock = (0, 0)
    }

    func data(_ stream: Int32, _ bytes: UnsafeRawBufferPointer) {
        guard let slot = streams.slot(of: stream) else { return }
        streams[slot].append(bytes, limit: bodyLimit)
    }

    func streamEnded(_ stream: Int32) {
        guard stream <= streamCeiling, let slot = streams.slot(of: stream) else { return }
        requestsHandled += 1
        var request = streams.remove(at: slot)
        request.body.withUnsafeBytes { body in
            if request.headerListSize > Self.headerListSizeLimit {
                refuse(
                    stream, request.fields, body, Self.headerListTooLarge,
                    "the header list is \(request.headerListSize) bytes (name, value and 32 a field); SETTINGS_MAX_HEADER_LIST_SIZE is \(Self.headerListSizeLimit)",
                    deviceToken: request.fields.pathDeviceToken)
            } else {
                handle(stream, request.fields, body: body, bodySize: request.bodySize)
            }
        }
        streams.recycle(&request.body)
    }

    func streamClosed(_ stream: Int32, errorCode: UInt32) {
        if streams.count > 0, let slot = streams.slot(of: stream) {
            _ = streams.remove(at: slot)
        }
    }

    /// nghttp2 sends a GOAWAY of its own when it defends the connection (a flood of resets):
    /// what came after, on higher streams, was answered by nobody and is not kept.
    func goAwaySent(lastStream: Int32) {
        streamCeiling = min(streamCeiling, lastStream)
        goAwayLastStream = min(goAwayLastStream, lastStream)
    }

    func transportChosen(_ transport: ConnectionTransport) {
        info = info.carrying(transport)
    }

    /// A stream over the concurrent-stream limit: the session refused it alone; with
    /// ``ProviderConnectionRules/StreamLimitViolation/goAway`` a client that broke a limit it
    /// had acknowledged loses the connection, as APNs was seen to answer.
    func streamRefused(_ stream: Int32, pastAcknowledged: Bool) {
        guard pastAcknowledged else { return }
        context.audit?.streamOpenedPastLimit(connection: info, stream: stream)
        guard context.rules.streamLimitViolation == .goAway, !closing else { return }
        goAway(errorCode: Self.protocolError, debugData: Array(Self.streamLimitViolated.utf8))
    }

    /// The client opened a stream after it had read this side's GOAWAY: the audit hears of it.
    func streamOpenedAfterGoAway(_ stream: Int32) {
        context.audit?.streamOpenedAfterGoAway(connection: info, stream: stream)
    }

    /// APNs's GOAWAY debug data for a stream over the limit (jchambers/pushy #356, 2016).
    static let streamLimitViolated = "Maximum active streams violated for this endpoint."

    func oldStreamIDUsed(_ stream: Int32, highest: Int32) {
        // A connection already ending (a fault closing it, a GOAWAY owed) ends as it would.
        guard !closing else { return }
        goAway(
            errorCode: Self.protocolError,
            debugData: Array("HEADERS on stream \(stream), not above stream \(highest) already used".utf8))
    }

    // MARK: - Requests

    private func handle(_ stream: Int32, _ fields: RequestHeaderFields, body: UnsafeRawBufferPointer, bodySize: Int) {
        if !fields.pathIsDeviceToken, let route = ChannelRoute(path: fields.path ?? "") {
            return handleChannelRequest(route, stream, fields, body: body, bodySize: bodySize)
        }
        if context.managementOnly {
            return refuse(stream, fields, body, .badPath, "this listener serves channel management only")
        }
        let topics: TopicAuthority
        switch topicAuthority() {
        case .success(let authority):
            topics = authority
        case .failure(let refusal):
            if refusal.reason == .badCertificateEnvironment && context.rules.certificateEnvironmentGoAway {
                return endForCertificateEnvironment(stream, fields, body, refusal.detail)
            }
            return refuse(
                stream, fields, body, refusal.reason, refusal.detail,
                deviceToken: fields.pathDeviceToken)
        }
        let validated: ValidatedRequest
        let validation = context.validator.validate(
            fields, body: body, topics: topics, newID: { uuids.nextBits() }, payloads: &payloads)
        switch consume validation {
        case .rejected(let reason, let detail, let deviceToken):
            return refuse(stream, fields, body, reason, detail, deviceToken: deviceToken)
        case .accepted(let accepted):
            validated = accepted
        }
        if bodySize > validated.payload.count {
            return refuse(stream, fields, body, .payloadTooLarge, "the body of \(bodySize) bytes is over the limit")
        }

        var claims: ProviderTokenClaims?
        if let verifier = context.verifier {
            switch tokens.authenticate(
                authorization: validated.authorization, verifier: verifier, sightings: context.tokenSightings,
                topic: validated.topic, environment: context.policy.environment)
            {
            case .failure(let failure):
                return refuse(stream, fields, body, failure.reason, failure.detail, validated: validated)
            case .success(let verified):
                claims = verified
            }
        }

        // With no fault rule and an open, empty registry the policy accepts everything: one
        // atomic load instead of asking it, as the binary gateway does.
        var verdict = Policy.Verdict.accept
        if context.policy.isActive {
            let baseTopic = Self.bundleTopic(validated.topic, pushType: validated.pushType)
            verdict = waitingOutDelays { context.policy.judge(token: validated.deviceToken, topic: baseTopic, afterDelay: $0) }
        }
        switch verdict {
        case .accept, .registry(.accept):
            accept(stream, validated, claims: claims)
        case .registry(.unknownToken(let detail)), .registry(.otherEnvironment(let detail)):
            refuse(stream, fields, body, .badDeviceToken, detail, validated: validated, cause: .registry)
        case .registry(.otherTopic(let detail)):
            refuse(stream, fields, body, .deviceTokenNotForTopic, detail, validated: validated, cause: .registry)
        case .registry(.unregistered(let date)):
            refuse(stream, fields, body, .unregistered, "the app was uninstalled from this device at \(Timestamp.rfc3339(date))",
                   validated: validated, cause: .registry, unregisteredAt: date)
        case .registry(.expiredToken(let date)):
            refuse(stream, fields, body, .expiredToken, "the Live Activity was dismissed at \(Timestamp.rfc3339(date))",
                   validated: validated, cause: .registry, unregisteredAt: date)
        case .fault(let rule, let action):
            act(
                action, on: stream,
                answer: { reason, closes in
                    refuse(stream, fields, body, reason, "fault rule: \(rule)", validated: validated, cause: .fault, closes: closes)
                },
                unanswered: { outcome, closed in
                    record(
                        stream, body, validated: validated, reason: nil, label: outcome, detail: "fault rule: \(rule)",
                        cause: .fault, responseSent: false, closed: closed)
                })
        case .delay, .stopped:
            stoppedDuringDelay(stream)
        }
    }

    /// The policy's verdict from `judge`, with a fault delay waited out: the answers owed go
    /// first, then the connection reads nothing for the delay, then `judge` is asked again
    /// (`afterDelay` true). `.stopped` when the server stopped meanwhile.
    func waitingOutDelays(_ judge: (_ afterDelay: Bool) -> Policy.Verdict) -> Policy.Verdict {
        let verdict = judge(false)
        guard case .delay(let duration) = verdict else { return verdict }
        _ = flush()
        return host.pause(duration) ? judge(true) : .stopped
    }

    /// What a fault rule's action does to a request, the same on every API: `answer` refuses
    /// it with a reason (`closes`: a GOAWAY follows); `unanswered` records a refusal no answer
    /// tells of ("Stream reset", "Connection closed"; `closed`: the connection closes).
    func act(
        _ action: FaultRule.Action, on stream: Int32, answer: (APNsReason, _ closes: Bool) -> Void,
        unanswered: (_ outcome: String, _ closed: Bool) -> Void
    ) {
        switch action {
        case .reject(let status):
            answer(APNsReason(binaryStatus: status), false)
        case .respond(let reason):
            answer(reason, false)
        case .goAway(let reason):
            answer(reason, true)
            goAway(errorCode: 0, debugData: Self.errorBody(reason))
        case .resetStream:
            unanswered("Stream reset", false)
            session.submitReset(stream, errorCode: Self.refusedStream)
        case .closeConnection:
            unanswered("Connection closed", true)
            // The answers to what came before leave; nothing after is handled.
            streamCeiling = 0
            closing = true
            closesAbruptly = true
        case .delay:
            // Delays come as the verdict `.delay`, waited out before the action is asked for.
            stoppedDuringDelay(stream)
        }
    }

    /// The server stopped during a fault delay: this request was not processed.
    func stoppedDuringDelay(_ stream: Int32) {
        session.submitReset(stream, errorCode: Self.refusedStream)
        goAway(errorCode: 0, debugData: Self.errorBody(.shutdown))
    }

    /// The topics the connection's credentials allow, or why they do not count: certificate
    /// authentication needs a certificate for this server's environment.
    func topicAuthority() -> Result<TopicAuthority, ChannelRefusal> {
        switch context.authentication {
        case .none:
            // As Apple: a certificate's only topic stands for a missing apns-topic.
            guard let certificate = info.clientCertificate, !certificate.topics.isEmpty else { return .success(.any) }
            return .success(.anyWithCertificate(topics: certificate.topics))
        case .token:
            return .success(.token)
        case .certificate:
            guard let certificate = info.clientCertificate else {
                return .failure(ChannelRefusal(
                    .missingProviderToken, "no client certificate and certificate authentication is on"))
            }
            if !certificate.environments.isEmpty && !certificate.environments.contains(context.policy.environment) {
                let environments = certificate.environments.map(\.rawValue).sorted().joined(separator: ", ")
                return .failure(ChannelRefusal(
                    .badCertificateEnvironment,
                    "the certificate is for \(environments); this server plays \(context.policy.environment)"))
            }
            return .success(.certificate(topics: certificate.topics))
        }
    }

    /// A certificate for the other environment, as clients saw APNs end it: GOAWAY naming
    /// stream 0, `{"reason":"BadCertificateEnvironment"}`, no answer on the stream. The
    /// request is recorded as refused (no answer sent, the connection closed).
    private func endForCertificateEnvironment(
        _ stream: Int32, _ fields: RequestHeaderFields, _ body: UnsafeRawBufferPointer, _ detail: String
    ) {
        var refusal = [
            Rejection(
                answer: .reason(.badCertificateEnvironment), reason: nil, detail: detail, cause: .malformed,
                responseSent: false, connectionClosed: true, deviceToken: fields.pathDeviceToken,
                payload: body.isEmpty ? nil : Payload(copying: body), format: .http2, apnsID: fields.clientAPNsID,
                topic: fields.topic, unregisteredAt: nil, connection: info, receivedAt: roundReadAt)
        ]
        context.intake.append(rejections: &refusal)
        streamCeiling = 0
        goAwayLastStream = 0
        owedGoAway = (0, Self.errorBody(.badCertificateEnvironment))
        closing = true
        context.onRule(info, .endedAfterRefusals(1, reason: APNsReason.badCertificateEnvironment.rawValue))
    }

    /// As APNs: more streams once a request succeeds (with token authentication, the first;
    /// after a refusal, the next).
    func openStreams() {
        if announcedLimit != Self.openStreamLimit {
            announceStreamLimit(Self.openStreamLimit)
        }
    }

    private func announceStreamLimit(_ limit: UInt32) {
        announcedLimit = limit
        session.submitSettings([(Int32(NGHTTP2Settings.maxConcurrentStreams), limit)])
    }

    /// What a refusal costs the connection, as Apple documents: any 4xx but 410 slows it to
    /// one stream until the next success, and too many in a window end it with GOAWAY naming
    /// the last refusal's reason.
    private func refusalAnswered(_ reason: APNsReason) {
        guard (400..<500).contains(reason.status), reason.status != 410, !closing else { return }
        let rules = context.rules
        if refusalCount.exceeds(rules, counting: reason, at: roundReadAt) {
            goAway(errorCode: 0, debugData: Self.errorBody(reason))
            context.onRule(info, .endedAfterRefusals(refusalCount.total, reason: reason.rawValue))
            return
        }
        if rules.throttleAfterRefusal && announcedLimit != 1 {
            announceStreamLimit(1)
            context.onRule(info, .throttled(reason: reason.rawValue))
        }
    }

    private func accept(_ stream: Int32, _ validated: consuming ValidatedRequest, claims: ProviderTokenClaims?) {
        processed(stream)
        batchStreams.append(stream)
        // Apple answers `apns-unique-id` in the sandbox environment only.
        let uniqueID = context.policy.environment == .sandbox ? uuids.nextBits() : nil
        batch.append(PushNotification(
            deviceToken: validated.deviceToken, payload: validated.payload, identifier: 0,
            expiration: validated.expiration, priority: validated.priority, format: .http2,
            connection: info, receivedAt: roundReadAt,
            http2: PushNotification.HTTP2Fields(
                apnsID: validated.apnsIDBits, uniqueID: uniqueID, shared: sharedFields(validated, claims))))
        validated.apnsIDBits.withText { apnsID in
            if let uniqueID {
                uniqueID.withText { uniqueID in session.submitAccepted(stream, apnsID: apnsID, uniqueID: uniqueID) }
            } else {
                session.submitAccepted(stream, apnsID: apnsID, uniqueID: nil)
            }
        }
        openStreams()
    }

    /// The shared part of an accepted push's fields: one object for the notifications with the
    /// same topic, push type, collapse id and token claims, as a connection's mostly are.
    private func sharedFields(_ validated: borrowing ValidatedRequest, _ claims: ProviderTokenClaims?)
        -> PushNotification.HTTP2Fields.Shared
    {
        let topic = validated.topic
        let pushType = validated.pushType
        let collapseID = validated.collapseID
        if let last = lastShared,
            last.isShared(byTopic: topic, pushType: pushType, collapseID: collapseID, providerToken: claims)
        {
            return last
        }
        let made = PushNotification.HTTP2Fields.Shared(
            topic: topic, pushType: pushType, collapseID: collapseID, providerToken: claims)
        lastShared = made
        return made
    }

    /// Answers Apple's error response and records the refusal; `closes` when the connection
    /// closes because of it. `deviceToken` is the path's, for a request refused before it
    /// was validated.
    private func refuse(
        _ stream: Int32, _ fields: RequestHeaderFields, _ body: UnsafeRawBufferPointer, _ reason: APNsReason,
        _ detail: String, validated: ValidatedRequest? = nil, deviceToken: DeviceToken? = nil,
        cause: Rejection.Cause = .malformed, unregisteredAt: Date? = nil, closes: Bool = false
    ) {
        let apnsID = validated?.apnsID ?? fields.clientAPNsID ?? uuids.next()
        session.submitResponse(
            stream, headers: [(":status", String(reason.status)), ("content-type", "application/json"), ("apns-id", apnsID)],
            body: Self.errorBody(reason, unregisteredAt: unregisteredAt))
        record(
            stream, body, validated: validated, deviceToken: deviceToken, reason: reason, label: nil, detail: detail,
            cause: cause, responseSent: true, closed: closes, apnsID: apnsID, topic: validated?.topic ?? fields.topic,
            unregisteredAt: unregisteredAt)
        // After the record: a GOAWAY the refusal brings names its stream as processed.
        refusalAnswered(reason)
    }

    private func record(
        _ stream: Int32, _ body: UnsafeRawBufferPointer, validated: ValidatedRequest?, deviceToken: DeviceToken? = nil,
        reason: APNsReason?, label: String?, detail: String, cause: Rejection.Cause, responseSent: Bool, closed: Bool,
        apnsID: String? = nil, topic: String? = nil, unregisteredAt: Date? = nil
    ) {
        queue(Rejection(
            answer: reason.map { .reason($0) }, reason: label, detail: detail, cause: cause, responseSent: responseSent,
            connectionClosed: closed, deviceToken: validated?.deviceToken ?? deviceToken,
            payload: validated?.payload ?? (body.isEmpty ? nil : Payload(copying: body)),
            format: .http2, apnsID: apnsID ?? validated?.apnsID, topic: topic ?? validated?.topic,
            unregisteredAt: unregisteredAt, connection: info, receivedAt: roundReadAt), on: stream)
    }

    /// Holds a refusal until its answer leaves (then the intake records it), unless a GOAWAY
    /// withholds its stream.
    func queue(_ refusal: Rejection, on stream: Int32) {
        processed(stream)
        refusalStreams.append(stream)
        refusals.append(refusal)
    }

    /// Holds an accepted broadcast until its answer leaves (then the intake records it and
    /// makes its deliveries), unless a GOAWAY withholds its stream.
    func queue(broadcast: PushNotification, on stream: Int32) {
        processed(stream)
        batchStreams.append(stream)
        batchHasBroadcast = true
        batch.append(broadcast)
    }

    func processed(_ stream: Int32) {
        if stream > lastProcessed { lastProcessed = stream }
    }

    /// Apple's error body, `{"reason":…}` with `timestamp` in milliseconds for 410; also the
    /// debug data of a GOAWAY.
    static func errorBody(_ reason: APNsReason, unregisteredAt: Date? = nil) -> [UInt8] {
        var body: [UInt8] = []
        JSONWriter.append(#"{"reason":"#, to: &body)
        JSONWriter.writeString(reason.rawValue, to: &body)
        if let unregisteredAt {
            JSONWriter.append(#","timestamp":"#, to: &body)
            JSONWriter.writeInteger(Int((unregisteredAt.timeIntervalSince1970 * 1000).rounded(.down)), to: &body)
        }
        body.append(UInt8(ascii: "}"))
        return body
    }

    /// The bundle ID a topic belongs to: the topic without its push type's suffix.
    static func bundleTopic(_ topic: String?, pushType: PushType?) -> String? {
        guard let topic else { return nil }
        let suffixes = pushType.flatMap(\.topicSuffix).map { [$0] } ?? PushType.known.compactMap(\.topicSuffix)
        for suffix in suffixes where !suffix.isEmpty && topic.hasSuffix(suffix) {
            return String(topic.dropLast(suffix.count))
        }
        return topic
    }
}
