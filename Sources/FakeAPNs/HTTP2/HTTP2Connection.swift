import Foundation

/// What every HTTP/2 connection of one server shares.
struct HTTP2Context: Sendable {
    let validator: RequestValidator
    let authentication: HTTP2Authentication
    let verifier: ProviderTokenVerifier?
    let policy: Policy
    let notifications: Mailbox<PushNotification>
    let rejections: Mailbox<Rejection>
    let clock: @Sendable () -> Date
}

/// One connection to the HTTP/2 provider API: nghttp2 frames the streams; each complete
/// request is validated, authenticated and judged as APNs would, and answered with Apple's
/// status, headers and `{"reason":…}` body. Accepted notifications are queued before their
/// 200 leaves.
final class HTTP2Connection: HTTP2SessionDelegate {
    /// The stream limit APNs announces once a connection may send freely.
    static let openStreamLimit: UInt32 = 1000
    /// Header fields kept per stream, and their bytes: a hostile client opening its thousand
    /// streams costs at most a few megabytes.
    private static let headerLimit = 100
    private static let headerBytesLimit = 16 * 1024
    /// Body bytes kept per stream: one more than the largest payload, enough to answer 413.
    private let bodyLimit: Int

    private let connection: TLSListener.Connection
    private let context: HTTP2Context
    private var session: NGHTTP2Session!
    private var streams: [Int32: StreamState] = [:]
    private var batch: [PushNotification] = []
    private var tokens: ProviderTokenSession
    private var uuids = RandomUUID()
    private var streamsOpened = false
    private var closeAfterFlush = false
    private var closeNow = false

    private struct StreamState {
        var headers: [(name: String, value: String)] = []
        var headerBytes = 0
        var body: [UInt8] = []
        var bodySize = 0
    }

    init(connection: TLSListener.Connection, context: HTTP2Context) {
        self.connection = connection
        self.context = context
        self.tokens = ProviderTokenSession()
        self.bodyLimit = max(context.validator.maximumPayloadSize, context.validator.maximumVoIPPayloadSize) + 1
    }

    func run() {
        do {
            session = try NGHTTP2Session(server: true, delegate: self)
        } catch {
            return
        }
        let tokenAuthentication = if case .token = context.authentication { true } else { false }
        // As APNs: with token authentication one stream until a request succeeds.
        session.submitSettings([
            (Int32(NGHTTP2Settings.headerTableSize), 4096),
            (Int32(NGHTTP2Settings.maxConcurrentStreams), tokenAuthentication ? 1 : Self.openStreamLimit),
            (Int32(NGHTTP2Settings.initialWindowSize), 65_535),
            (Int32(NGHTTP2Settings.maxFrameSize), 16_384),
            (Int32(NGHTTP2Settings.maxHeaderListSize), 8000),
        ])
        streamsOpened = !tokenAuthentication
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        guard flush() else { return }
        while !closeNow {
            let count: Int
            do {
                count = try buffer.withUnsafeMutableBytes { try connection.stream.read(into: $0) }
            } catch {
                return
            }
            if count == 0 { return }
            var protocolError = false
            buffer.withUnsafeBytes { bytes in
                do {
                    try session.receive(UnsafeRawBufferPointer(rebasing: bytes[0..<count]))
                } catch {
                    protocolError = true
                }
            }
            deliver()
            if closeNow { return }
            guard flush(), !protocolError, !closeAfterFlush, session.isAlive else { return }
        }
    }

    /// Queues accepted notifications; called before the responses that announce them leave.
    private func deliver() {
        context.notifications.append(moving: &batch)
    }

    /// Writes whatever nghttp2 has queued; false when the connection is gone.
    private func flush() -> Bool {
        do {
            let output = try session.takeOutput()
            if !output.isEmpty { try connection.stream.write(output) }
            return true
        } catch {
            return false
        }
    }

    // MARK: - Session events

    func streamBegan(_ stream: Int32) {
        streams[stream] = StreamState()
    }

    func header(_ stream: Int32, name: String, value: String) {
        guard let state = streams[stream], state.headers.count < Self.headerLimit,
            state.headerBytes + name.utf8.count + value.utf8.count <= Self.headerBytesLimit
        else { return }
        streams[stream]!.headerBytes += name.utf8.count + value.utf8.count
        streams[stream]!.headers.append((name, value))
    }

    func data(_ stream: Int32, _ bytes: UnsafeRawBufferPointer) {
        guard streams[stream] != nil else { return }
        streams[stream]!.bodySize += bytes.count
        if streams[stream]!.body.count + bytes.count <= bodyLimit {
            streams[stream]!.body.append(contentsOf: bytes)
        }
    }

    func streamEnded(_ stream: Int32) {
        guard let state = streams[stream] else { return }
        handle(stream, HTTP2Request(headers: state.headers, body: state.body), bodySize: state.bodySize)
    }

    func streamClosed(_ stream: Int32, errorCode: UInt32) {
        streams[stream] = nil
    }

    // MARK: - Requests

    private func handle(_ stream: Int32, _ request: HTTP2Request, bodySize: Int) {
        let info = connection.info
        let topics: TopicAuthority
        switch context.authentication {
        case .none:
            topics = .any
        case .token:
            topics = .token
        case .certificate:
            guard let certificate = info.clientCertificate else {
                return refuse(stream, request, .missingProviderToken, "no client certificate and certificate authentication is on")
            }
            if !certificate.environments.isEmpty && !certificate.environments.contains(context.policy.environment) {
                return refuse(stream, request, .badCertificateEnvironment,
                              "the certificate is for \(certificate.environments.map(\.rawValue).sorted().joined(separator: ", ")); this server plays \(context.policy.environment)")
            }
            topics = .certificate(topics: certificate.topics)
        }
        var validated: ValidatedRequest
        switch context.validator.validate(request, topics: topics, newID: { uuids.next() }) {
        case .rejected(let reason, let detail):
            return refuse(stream, request, reason, detail)
        case .accepted(let accepted):
            validated = accepted
        }
        if bodySize > validated.payload.bytes.count {
            return refuse(stream, request, .payloadTooLarge, "the body of \(bodySize) bytes is over the limit")
        }

        var claims: ProviderTokenClaims?
        if let verifier = context.verifier {
            let now = context.clock()
            switch tokens.authenticate(authorization: validated.authorization, verifier: verifier, now: now) {
            case .failure(let failure):
                return refuse(stream, request, failure.reason, failure.detail, validated: validated)
            case .success(let verified):
                claims = verified
            }
        }

        let baseTopic = Self.bundleTopic(validated.topic, pushType: validated.pushType)
        let verdict = context.policy.judge(token: validated.deviceToken, topic: baseTopic) { duration in
            deliver()
            _ = flush()
            return connection.listener.pause(duration)
        }
        switch verdict {
        case .accept, .registry(.accept):
            accept(stream, validated, claims: claims)
        case .registry(.unknownToken(let detail)), .registry(.otherEnvironment(let detail)):
            refuse(stream, request, .badDeviceToken, detail, validated: validated, cause: .registry)
        case .registry(.otherTopic(let detail)):
            refuse(stream, request, .deviceTokenNotForTopic, detail, validated: validated, cause: .registry)
        case .registry(.unregistered(let date)):
            refuse(stream, request, .unregistered, "the app was uninstalled from this device at \(Timestamp.rfc3339(date))",
                   validated: validated, cause: .registry, unregisteredAt: date)
        case .fault(let rule, .reject(let status)):
            refuse(stream, request, APNsReason(binaryStatus: status), "fault rule: \(rule)", validated: validated, cause: .fault)
        case .fault(let rule, .respond(let reason)):
            refuse(stream, request, reason, "fault rule: \(rule)", validated: validated, cause: .fault)
        case .fault(let rule, .goAway(let reason)):
            refuse(stream, request, reason, "fault rule: \(rule)", validated: validated, cause: .fault)
            session.submitGoAway(
                lastStream: stream, errorCode: 0, debugData: Array(#"{"reason":"\#(reason.rawValue)"}"#.utf8))
            closeAfterFlush = true
        case .fault(let rule, .resetStream):
            record(request, validated: validated, reason: nil, label: "Stream reset", detail: "fault rule: \(rule)", cause: .fault,
                   responseSent: false, closed: false)
            session.submitReset(stream, errorCode: 7)
        case .fault(let rule, .closeConnection):
            record(request, validated: validated, reason: nil, label: "Connection closed", detail: "fault rule: \(rule)",
                   cause: .fault, responseSent: false, closed: true)
            closeNow = true
        case .fault(_, .delay), .stopped:
            closeNow = true
        }
    }

    private func accept(_ stream: Int32, _ validated: ValidatedRequest, claims: ProviderTokenClaims?) {
        batch.append(PushNotification(
            deviceToken: validated.deviceToken, payload: validated.payload, identifier: 0,
            expiration: validated.expiration, priority: validated.priority, format: .http2,
            connection: connection.info, receivedAt: Date(),
            http2: PushNotification.HTTP2Fields(
                apnsID: validated.apnsID, topic: validated.topic, pushType: validated.pushType,
                collapseID: validated.collapseID, providerToken: claims)))
        var headers = [(":status", "200"), ("apns-id", validated.apnsID)]
        if context.policy.environment == .sandbox {
            headers.append(("apns-unique-id", uuids.next()))
        }
        session.submitResponse(stream, headers: headers, body: [])
        if !streamsOpened {
            streamsOpened = true
            session.submitSettings([(Int32(NGHTTP2Settings.maxConcurrentStreams), Self.openStreamLimit)])
        }
    }

    /// Answers Apple's error response and records the refusal.
    private func refuse(
        _ stream: Int32, _ request: HTTP2Request, _ reason: APNsReason, _ detail: String,
        validated: ValidatedRequest? = nil, cause: Rejection.Cause = .malformed, unregisteredAt: Date? = nil
    ) {
        let apnsID = validated?.apnsID ?? request.clientAPNsID ?? uuids.next()
        var body = #"{"reason":"\#(reason.rawValue)""#
        if let unregisteredAt {
            body += #","timestamp":\#(Int64((unregisteredAt.timeIntervalSince1970 * 1000).rounded(.down)))"#
        }
        body += "}"
        session.submitResponse(
            stream, headers: [(":status", String(reason.status)), ("content-type", "application/json"), ("apns-id", apnsID)],
            body: Array(body.utf8))
        record(request, validated: validated, reason: reason, label: nil, detail: detail, cause: cause,
               responseSent: true, closed: false, apnsID: apnsID, unregisteredAt: unregisteredAt)
    }

    private func record(
        _ request: HTTP2Request, validated: ValidatedRequest?, reason: APNsReason?, label: String?, detail: String,
        cause: Rejection.Cause, responseSent: Bool, closed: Bool, apnsID: String? = nil, unregisteredAt: Date? = nil
    ) {
        context.rejections.append(Rejection(
            apnsReason: reason, reason: label, detail: detail, cause: cause, responseSent: responseSent,
            connectionClosed: closed, deviceToken: validated?.deviceToken,
            payload: validated?.payload ?? (request.body.isEmpty ? nil : Payload(bytes: request.body)),
            format: .http2, apnsID: apnsID ?? validated?.apnsID, unregisteredAt: unregisteredAt,
            connection: connection.info))
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
