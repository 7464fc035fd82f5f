#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The broadcast API, `POST /4/broadcasts/apps/<bundle>`, on an HTTP/2 connection; the
// checks before it are in `ChannelRoutes.swift`.

extension HTTP2Connection {
    /// Step 4: a broadcast, checked and queued before its 200 leaves.
    func broadcast(_ call: ChannelCall, bundleID: String, bodySize: Int) {
        let fields = call.fields
        func refused(_ reason: APNsReason, _ detail: String) {
            refuseChannel(call, ChannelRefusal(reason, detail))
        }
        guard let channelID = fields.channelID else { return refused(.missingChannelId, "no apns-channel-id") }
        guard Channel.isWellFormedID(channelID) else {
            return refused(.badChannelId, "apns-channel-id \(channelID.debugDescription) is not base64")
        }
        guard let pushType = fields.pushType else { return refused(.missingPushType, "no apns-push-type") }
        guard ChannelRequests.isLiveActivity(pushType) else {
            return refused(.invalidPushType, "apns-push-type \(pushType.debugDescription) is not LiveActivity")
        }
        var apnsID: String?
        if let value = fields.apnsID {
            guard let canonical = RequestValidator.canonicalUUID(value) else {
                return refused(.badMessageId, "apns-id \(value.debugDescription) is not a UUID 8-4-4-4-12")
            }
            apnsID = canonical
        }
        var expiration: UInt32?
        if let value = fields.expiration {
            guard let seconds = RequestValidator.decimalUInt32(value) else {
                return refused(.badExpirationDate, "apns-expiration \(value.debugDescription) is not a number of seconds")
            }
            expiration = seconds
        }
        guard let value = fields.priority else {
            return refused(.badPriority, "a broadcast needs apns-priority (10, 5 or 1)")
        }
        guard let priority = RequestValidator.priority(value) else {
            return refused(.badPriority, "apns-priority \(value.debugDescription) is not 10, 5 or 1")
        }
        let channel: Channel
        switch existingChannel(channelID, bundleID: bundleID) {
        case .failure(let failure): return refuseChannel(call, failure.refusal, cause: failure.cause)
        case .success(let found): channel = found
        }
        if channel.storagePolicy == .noStorage, let expiration, expiration != 0 {
            return refused(.badExpirationDate, "apns-expiration \(expiration) on a channel that stores nothing (policy 0) must be 0")
        }
        guard bodySize > 0 else { return refused(.payloadEmpty, "the body is empty") }
        guard bodySize <= ChannelRequests.maximumBroadcastPayloadSize else {
            return refused(
                .payloadTooLarge,
                "the body is \(bodySize) bytes, over the broadcast limit of \(ChannelRequests.maximumBroadcastPayloadSize)")
        }
        guard (try? JSONValue.parse(call.body)) != nil else { return refused(.badRequestPayload, "the body is not JSON") }
        guard !faultActed(on: call) else { return }
        let uniqueID = uuids.next()
        queue(broadcast: PushNotification(
            deviceToken: DeviceToken(bytes: []), payload: Payload(copying: call.body), expiration: expiration,
            priority: priority, format: .broadcast, connection: info, receivedAt: context.clock.currentDate,
            http2: PushNotification.HTTP2Fields(
                apnsID: apnsID ?? call.requestID, topic: bundleID, pushType: .liveactivity, collapseID: nil,
                providerToken: nil, channelID: channelID, requestID: call.requestID, uniqueID: uniqueID)), on: call.stream)
        answerChannel(call, status: 200, headers: [("apns-unique-id", uniqueID)])
    }
}
