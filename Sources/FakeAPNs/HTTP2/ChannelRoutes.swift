#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The channel management API (`/1/apps/<bundle>/channels`, `/1/apps/<bundle>/all-channels`)
// and the checks every channel and broadcast request goes through first, on an HTTP/2
// connection; the broadcast itself is in `BroadcastRoute.swift`.

/// One channel management or broadcast request being handled: what its refusal records.
struct ChannelCall {
    let stream: Int32
    let route: ChannelRoute
    let operation: ChannelOperation?
    let requestID: String
    let fields: RequestHeaderFields
    let body: UnsafeRawBufferPointer
}

extension HTTP2Connection {
    /// Answers a channel management or broadcast request. Apple documents no order for its
    /// checks; this one, the first failing check deciding, is the order Apple's pages suggest:
    ///
    /// 1. the path (`BadPath`; on the channel listener, anything but management; any other path
    ///    goes to the provider API's checks) and the method (`MethodNotAllowed`), then repeated headers (`DuplicateHeaders`);
    /// 2. authentication, exactly as for `/3/device` (certificate, its environment, the provider
    ///    token and the connection's token rules), then the bundle: a push type's suffix
    ///    (`TopicDisallowed`), one the certificate does not cover (`TopicMismatch`), one whose
    ///    broadcast capability is off (`FeatureNotEnabled`, see ``ChannelRegistry/broadcastBundleIDs``);
    /// 3. management: the channel id (`MissingChannelId`, `BadChannelId`) or the create body
    ///    (`BadRequestPayload`, `BadRequestParams`), then the channel's existence
    ///    (`ChannelNotRegistered`) or the limit (`CannotCreateChannelConfig`);
    /// 4. broadcast: the channel id, the push type (`MissingPushType`, `InvalidPushType`),
    ///    `apns-id` (`BadMessageId`), the expiration (`BadExpirationDate`), the priority
    ///    (`BadPriority`, required), the channel's existence, an expiration on a policy-0
    ///    channel (`BadExpirationDate`), then the payload (`PayloadEmpty`, `PayloadTooLarge`,
    ///    `BadRequestPayload`);
    /// 5. fault rules, last: they act on a request that passed every check, just before its
    ///    effect (the channel created, read, deleted or listed; the broadcast queued).
    ///
    /// Every refusal is recorded on the server's rejections.
    func handleChannelRequest(
        _ route: ChannelRoute, _ stream: Int32, _ fields: RequestHeaderFields, body: UnsafeRawBufferPointer, bodySize: Int
    ) {
        let method = fields.method ?? ""
        let call = ChannelCall(
            stream: stream, route: route, operation: route.operation(method: method),
            requestID: ChannelRequests.clientRequestID(fields.requestID) ?? uuids.next(), fields: fields, body: body)
        if let refusal = checkChannelRequest(route, fields, method: method) { return refuseChannel(call, refusal) }
        switch route {
        case .allChannels(let bundleID):
            guard !faultActed(on: call) else { return }
            answerChannel(call, status: 200, body: ChannelRequests.listBody(context.intake.channels.list(bundleID: bundleID)))
        case .channels(let bundleID) where method == "POST":
            switch ChannelRequests.storagePolicy(createBody: body) {
            case .failure(let refusal):
                return refuseChannel(call, refusal)
            case .success(let policy):
                guard !faultActed(on: call) else { return }
                do {
                    let channel = try context.intake.channels.create(bundleID: bundleID, storagePolicy: policy)
                    answerChannel(call, status: 201, headers: [("apns-channel-id", channel.id)])
                } catch {
                    refuseChannel(call, ChannelRefusal(.cannotCreateChannelConfig, error.description), cause: .registry)
                }
            }
        case .channels(let bundleID):
            let channel: Channel
            switch existingChannel(fields.channelID, bundleID: bundleID) {
            case .failure(let refusal): return refuseChannel(call, refusal.refusal, cause: refusal.cause)
            case .success(let found): channel = found
            }
            guard !faultActed(on: call) else { return }
            if method == "GET" {
                answerChannel(call, status: 200, body: ChannelRequests.readBody(channel))
            } else {
                context.intake.channels.delete(id: channel.id)
                answerChannel(call, status: 204)
            }
        case .broadcast(let bundleID):
            broadcast(call, bundleID: bundleID, bodySize: bodySize)
        }
    }

    /// Steps 1 and 2 of the order: path, method, headers, credentials, bundle.
    func checkChannelRequest(_ route: ChannelRoute, _ fields: RequestHeaderFields, method: String) -> ChannelRefusal? {
        let path = fields.path ?? ""
        if context.managementOnly && !route.isManagement {
            return ChannelRefusal(.badPath, "path \(path.debugDescription) is not a channel management path on this listener")
        }
        guard route.methods.contains(method) else {
            return ChannelRefusal(.methodNotAllowed, "method \(method.debugDescription) is not one of \(route.methods)")
        }
        if let duplicate = fields.firstDuplicate {
            return ChannelRefusal(.duplicateHeaders, "header \(duplicate.debugDescription) appears more than once")
        }
        let topics: TopicAuthority
        switch topicAuthority() {
        case .failure(let refusal): return refusal
        case .success(let authority): topics = authority
        }
        if let verifier = context.verifier,
            case .failure(let failure) = tokens.authenticate(
                authorization: fields.authorization, verifier: verifier, sightings: context.tokenSightings,
                topic: route.bundleID, environment: context.policy.environment)
        {
            // The channel APIs answer a bundle the credentials do not cover TopicMismatch (403).
            return ChannelRefusal(failure.reason == .topicDisallowed ? .topicMismatch : failure.reason, failure.detail)
        }
        let bundleID = route.bundleID
        if let suffix = ChannelRequests.pushTypeSuffix(of: bundleID) {
            return ChannelRefusal(.topicDisallowed, "the path names a topic ending in \(suffix), not a bundle ID")
        }
        if case .certificate(let listed) = topics, !listed.contains(where: { $0.utf8.elementsEqual(bundleID.utf8) }) {
            return ChannelRefusal(.topicMismatch, "bundle \(bundleID) is not among the certificate's topics \(listed)")
        }
        if !context.intake.channels.isBroadcastEnabled(for: bundleID) {
            return ChannelRefusal(.featureNotEnabled, "the broadcast capability is not enabled for \(bundleID)")
        }
        return nil
    }

    /// The channel `apns-channel-id` names, in this bundle, or why there is none (malformed,
    /// or unknown to the registry).
    func existingChannel(
        _ channelID: String?, bundleID: String
    ) -> Result<Channel, ChannelLookupFailure> {
        guard let channelID else { return .failure(.init(.missingChannelId, "no apns-channel-id")) }
        guard Channel.isWellFormedID(channelID) else {
            return .failure(.init(.badChannelId, "apns-channel-id \(channelID.debugDescription) is not base64"))
        }
        guard let channel = context.intake.channels.channel(id: channelID), channel.bundleID == bundleID else {
            return .failure(.init(
                .channelNotRegistered, "no channel \(channelID) of \(bundleID) in \(context.policy.environment)",
                cause: .registry))
        }
        return .success(channel)
    }

    /// Step 5: whether a fault rule acted on the request (answered, reset or closed on it).
    /// With no rule and an open registry, one atomic load.
    func faultActed(on call: ChannelCall) -> Bool {
        guard context.policy.isActive else { return false }
        let verdict = waitingOutDelays {
            context.policy.judgeChannelRequest(bundleID: call.route.bundleID, channelID: call.fields.channelID, afterDelay: $0)
        }
        switch verdict {
        case .accept, .registry:
            return false
        case .fault(let rule, let action):
            let detail = "fault rule: \(rule)"
            act(
                action, on: call.stream,
                answer: { reason, closes in refuseChannel(call, ChannelRefusal(reason, detail), cause: .fault, closes: closes) },
                unanswered: { outcome, closed in
                    recordChannel(call, reason: nil, outcome: outcome, detail: detail, cause: .fault, responseSent: false, closed: closed)
                })
        case .delay, .stopped:
            stoppedDuringDelay(call.stream)
        }
        return true
    }

    /// Answers with `status`, `apns-request-id`, `extra` headers and `body` (JSON, when any);
    /// a success opens the streams, as one on `/3/device` does.
    func answerChannel(_ call: ChannelCall, status: Int, headers extra: [(String, String)] = [], body: [UInt8] = []) {
        processed(call.stream)
        if status < 300 { openStreams() }
        var headers = [(":status", String(status))]
        if !body.isEmpty { headers.append(("content-type", "application/json")) }
        headers.append(("apns-request-id", call.requestID))
        session.submitResponse(call.stream, headers: headers + extra, body: body)
    }

    /// Answers Apple's error response for a channel or broadcast request and records the
    /// refusal; `closes` when a GOAWAY follows.
    func refuseChannel(
        _ call: ChannelCall, _ refusal: ChannelRefusal, cause: Rejection.Cause = .malformed, closes: Bool = false
    ) {
        answerChannel(call, status: refusal.reason.status, body: Self.errorBody(refusal.reason))
        recordChannel(
            call, reason: refusal.reason, outcome: nil, detail: refusal.detail, cause: cause, responseSent: true, closed: closes)
    }

    /// Records a refused channel or broadcast request on the rejections.
    func recordChannel(
        _ call: ChannelCall, reason: APNsReason?, outcome: String?, detail: String, cause: Rejection.Cause,
        responseSent: Bool, closed: Bool
    ) {
        let isBroadcast = call.operation == .broadcast
        queue(Rejection(
            answer: reason.map { .reason($0) }, reason: outcome, detail: detail, cause: cause, responseSent: responseSent,
            connectionClosed: closed, payload: call.body.isEmpty ? nil : Payload(copying: call.body),
            format: isBroadcast ? .broadcast : nil, apnsID: isBroadcast ? call.fields.apnsID : nil,
            topic: call.route.bundleID, channelOperation: call.operation, channelID: call.fields.channelID,
            requestID: call.requestID, connection: info, receivedAt: roundReadAt), on: call.stream)
    }
}

/// Why no channel was found for a request: the refusal, and whether the request was malformed
/// or the registry has no such channel.
struct ChannelLookupFailure: Error {
    let refusal: ChannelRefusal
    let cause: Rejection.Cause

    init(_ reason: APNsReason, _ detail: String, cause: Rejection.Cause = .malformed) {
        refusal = ChannelRefusal(reason, detail)
        self.cause = cause
    }
}
