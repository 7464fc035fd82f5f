#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Channel management (`/1/apps/<bundle>/…`, Apple's port 2195 or 2196, FakeAPNs's 2198) and
// broadcast send (`/4/broadcasts/apps/<bundle>`, the provider port) on the same client: each is
// a request made the same way as a push, with a response that reads the answer's ids and body.

extension ProviderAPIClient.Request {
    /// The push type a broadcast and a channel carry, as Apple's pages write it.
    public static let liveActivityPushType = "LiveActivity"

    /// Creates a channel: `POST /1/apps/<bundleID>/channels` with
    /// `{"message-storage-policy":<policy>,"push-type":"LiveActivity"}`.
    ///
    /// ```swift
    /// let response = try client.send(.createChannel(bundleID: "com.example.app", storagePolicy: 1))
    /// ```
    ///
    /// - Parameters:
    ///   - bundleID: the app's bundle ID, in the path.
    ///   - storagePolicy: 0 stores no message; 1 keeps the most recent one for devices that
    ///     subscribe later.
    ///   - requestID: `apns-request-id`, a UUID, answered as sent (the server makes one otherwise).
    ///   - providerToken: a JWT, sent as `authorization: bearer <token>`.
    public static func createChannel(
        bundleID: String, storagePolicy: Int, requestID: String? = nil, providerToken: String? = nil
    ) -> Self {
        let body: JSONValue = [
            "message-storage-policy": .int(storagePolicy), "push-type": .string(liveActivityPushType),
        ]
        return Self(
            path: "/1/apps/\(bundleID)/channels",
            headers: channelHeaders(channelID: nil, requestID: requestID, providerToken: providerToken),
            body: Array(body.serialized().utf8))
    }

    /// Reads a channel's settings: `GET /1/apps/<bundleID>/channels` with `apns-channel-id`.
    ///
    /// ```swift
    /// let response = try client.send(.readChannel(bundleID: "com.example.app", channelID: "dHN0LXNyY2gtY2hubA=="))
    /// ```
    ///
    /// - Parameters:
    ///   - bundleID: the app's bundle ID, in the path.
    ///   - channelID: the channel, base64 as the server gave it.
    ///   - requestID: `apns-request-id`, a UUID, answered as sent.
    ///   - providerToken: a JWT, sent as `authorization: bearer <token>`.
    public static func readChannel(
        bundleID: String, channelID: String, requestID: String? = nil, providerToken: String? = nil
    ) -> Self {
        Self(
            path: "/1/apps/\(bundleID)/channels",
            headers: channelHeaders(channelID: channelID, requestID: requestID, providerToken: providerToken),
            method: "GET")
    }

    /// Deletes a channel: `DELETE /1/apps/<bundleID>/channels` with `apns-channel-id`.
    ///
    /// ```swift
    /// let response = try client.send(.deleteChannel(bundleID: "com.example.app", channelID: channelID))
    /// ```
    ///
    /// - Parameters:
    ///   - bundleID: the app's bundle ID, in the path.
    ///   - channelID: the channel, base64 as the server gave it.
    ///   - requestID: `apns-request-id`, a UUID, answered as sent.
    ///   - providerToken: a JWT, sent as `authorization: bearer <token>`.
    public static func deleteChannel(
        bundleID: String, channelID: String, requestID: String? = nil, providerToken: String? = nil
    ) -> Self {
        Self(
            path: "/1/apps/\(bundleID)/channels",
            headers: channelHeaders(channelID: channelID, requestID: requestID, providerToken: providerToken),
            method: "DELETE")
    }

    /// Lists an app's channels: `GET /1/apps/<bundleID>/all-channels`.
    ///
    /// ```swift
    /// let response = try client.send(.listChannels(bundleID: "com.example.app"))
    /// ```
    ///
    /// - Parameters:
    ///   - bundleID: the app's bundle ID, in the path.
    ///   - requestID: `apns-request-id`, a UUID, answered as sent.
    ///   - providerToken: a JWT, sent as `authorization: bearer <token>`.
    public static func listChannels(bundleID: String, requestID: String? = nil, providerToken: String? = nil) -> Self {
        Self(
            path: "/1/apps/\(bundleID)/all-channels",
            headers: channelHeaders(channelID: nil, requestID: requestID, providerToken: providerToken),
            method: "GET")
    }

    /// A broadcast to every device subscribed to a channel: `POST /4/broadcasts/apps/<bundleID>`
    /// with `apns-channel-id`, `apns-push-type` and `apns-priority`.
    ///
    /// ```swift
    /// let request = ProviderAPIClient.Request.broadcast(
    ///     bundleID: "com.example.app", channelID: channelID,
    ///     payload: Array(#"{"aps":{"event":"update","content-state":{"score":"2-1"},"timestamp":1700000000}}"#.utf8))
    /// ```
    ///
    /// - Parameters:
    ///   - bundleID: the app's bundle ID, in the path.
    ///   - channelID: `apns-channel-id`, the channel.
    ///   - payload: the Live Activity payload, the body (at most 5,120 bytes).
    ///   - priority: `apns-priority`: 10 (default), 5 or 1.
    ///   - expiration: `apns-expiration` in UNIX seconds, omitted when nil; 0 stores nothing.
    ///   - pushType: `apns-push-type` (default `LiveActivity`).
    ///   - requestID: `apns-request-id`, a UUID, answered as sent.
    ///   - apnsID: `apns-id`, a UUID the server echoes.
    ///   - providerToken: a JWT, sent as `authorization: bearer <token>`.
    public static func broadcast(
        bundleID: String, channelID: String, payload: [UInt8], priority: Int = 10, expiration: Int? = nil,
        pushType: String = liveActivityPushType, requestID: String? = nil, apnsID: String? = nil,
        providerToken: String? = nil
    ) -> Self {
        var headers: [(String, String)] = [
            ("apns-channel-id", channelID), ("apns-push-type", pushType), ("apns-priority", String(priority)),
        ]
        if let expiration { headers.append(("apns-expiration", String(expiration))) }
        if let requestID { headers.append(("apns-request-id", requestID)) }
        if let apnsID { headers.append(("apns-id", apnsID)) }
        if let providerToken { headers.append(("authorization", "bearer \(providerToken)")) }
        return Self(path: "/4/broadcasts/apps/\(bundleID)", headers: headers, body: payload)
    }

    private static func channelHeaders(
        channelID: String?, requestID: String?, providerToken: String?
    ) -> [(String, String)] {
        var headers: [(String, String)] = []
        if let channelID { headers.append(("apns-channel-id", channelID)) }
        if let requestID { headers.append(("apns-request-id", requestID)) }
        if let providerToken { headers.append(("authorization", "bearer \(providerToken)")) }
        return headers
    }
}

extension ProviderAPIClient {
    /// The answer to a channel management or broadcast request: the ids Apple's headers carry
    /// and the body read.
    ///
    /// ```swift
    /// let created = try client.createChannel(bundleID: "com.example.app", storagePolicy: 1)
    /// created.status     // 201
    /// created.channelID  // "dHN0LXNyY2gtY2hubA=="
    /// ```
    public struct ChannelResponse: Sendable {
        /// The answer as it came.
        public var response: Response

        /// Reads `response`.
        public init(_ response: Response) {
            self.response = response
        }

        /// The HTTP status: 201 created, 200 read, listed or broadcast, 204 deleted, 4xx or 5xx
        /// refused.
        public var status: Int { response.status }

        /// `apns-request-id`: the request's, or the one the server made up.
        public var requestID: String? { response.header("apns-request-id") }

        /// `apns-channel-id`: the channel a create made.
        public var channelID: String? { response.header("apns-channel-id") }

        /// `apns-unique-id`: the broadcast's id, on success.
        public var uniqueID: String? { response.header("apns-unique-id") }

        /// The `reason` of a refusal (`MissingChannelId`, `ChannelNotRegistered`, …).
        public var reason: String? { response.reason }

        /// A read's `message-storage-policy`: 0 or 1 (a digit in a string is read too).
        public var storagePolicy: Int? {
            guard let value = response.json?["message-storage-policy"] else { return nil }
            return value.intValue ?? value.stringValue.flatMap { Int($0) }
        }

        /// A read's `push-type` (`LiveActivity`).
        public var pushType: String? { response.json?["push-type"]?.stringValue }

        /// A list's channel ids, in the server's order.
        public var channels: [String]? {
            response.json?["channels"]?.arrayValue?.compactMap(\.stringValue)
        }
    }

    /// Creates a channel for `bundleID`; its id is ``ChannelResponse/channelID``.
    ///
    /// ```swift
    /// let created = try client.createChannel(bundleID: "com.example.app", storagePolicy: 1)
    /// ```
    ///
    /// - Parameters: as ``Request/createChannel(bundleID:storagePolicy:requestID:providerToken:)``.
    /// - Throws: as ``send(_:)``.
    public func createChannel(
        bundleID: String, storagePolicy: Int, requestID: String? = nil, providerToken: String? = nil
    ) throws -> ChannelResponse {
        ChannelResponse(
            try send(
                .createChannel(
                    bundleID: bundleID, storagePolicy: storagePolicy, requestID: requestID, providerToken: providerToken)
            ))
    }

    /// Reads a channel's storage policy and push type.
    ///
    /// ```swift
    /// let read = try client.readChannel(bundleID: "com.example.app", channelID: channelID)
    /// read.storagePolicy  // 1
    /// ```
    ///
    /// - Parameters: as ``Request/readChannel(bundleID:channelID:requestID:providerToken:)``.
    /// - Throws: as ``send(_:)``.
    public func readChannel(
        bundleID: String, channelID: String, requestID: String? = nil, providerToken: String? = nil
    ) throws -> ChannelResponse {
        ChannelResponse(
            try send(
                .readChannel(bundleID: bundleID, channelID: channelID, requestID: requestID, providerToken: providerToken)))
    }

    /// Deletes a channel (204 when it was there).
    ///
    /// ```swift
    /// let deleted = try client.deleteChannel(bundleID: "com.example.app", channelID: channelID)
    /// ```
    ///
    /// - Parameters: as ``Request/deleteChannel(bundleID:channelID:requestID:providerToken:)``.
    /// - Throws: as ``send(_:)``.
    public func deleteChannel(
        bundleID: String, channelID: String, requestID: String? = nil, providerToken: String? = nil
    ) throws -> ChannelResponse {
        ChannelResponse(
            try send(
                .deleteChannel(
                    bundleID: bundleID, channelID: channelID, requestID: requestID, providerToken: providerToken)))
    }

    /// Lists the ids of an app's channels, ``ChannelResponse/channels``.
    ///
    /// ```swift
    /// let ids = try client.listChannels(bundleID: "com.example.app").channels ?? []
    /// ```
    ///
    /// - Parameters: as ``Request/listChannels(bundleID:requestID:providerToken:)``.
    /// - Throws: as ``send(_:)``.
    public func listChannels(
        bundleID: String, requestID: String? = nil, providerToken: String? = nil
    ) throws -> ChannelResponse {
        ChannelResponse(try send(.listChannels(bundleID: bundleID, requestID: requestID, providerToken: providerToken)))
    }

    /// Broadcasts a Live Activity update to a channel; its id is ``ChannelResponse/uniqueID``.
    ///
    /// ```swift
    /// let sent = try client.broadcast(
    ///     bundleID: "com.example.app", channelID: channelID,
    ///     payload: Array(#"{"aps":{"event":"update","content-state":{"score":"2-1"},"timestamp":1700000000}}"#.utf8))
    /// sent.status  // 200
    /// ```
    ///
    /// - Parameters: as
    ///   ``Request/broadcast(bundleID:channelID:payload:priority:expiration:pushType:requestID:apnsID:providerToken:)``.
    /// - Throws: as ``send(_:)``.
    public func broadcast(
        bundleID: String, channelID: String, payload: [UInt8], priority: Int = 10, expiration: Int? = nil,
        pushType: String = Request.liveActivityPushType, requestID: String? = nil, apnsID: String? = nil,
        providerToken: String? = nil
    ) throws -> ChannelResponse {
        ChannelResponse(
            try send(
                .broadcast(
                    bundleID: bundleID, channelID: channelID, payload: payload, priority: priority,
                    expiration: expiration, pushType: pushType, requestID: requestID, apnsID: apnsID,
                    providerToken: providerToken)))
    }
}
