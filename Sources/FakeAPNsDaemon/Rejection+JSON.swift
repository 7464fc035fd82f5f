import FakeAPNs

extension Rejection {
    /// The rejection as one JSON object, the form the daemon logs and serves.
    var jsonObject: JSONValue {
        var members: [JSONObject.Element] = [
            (key: "sequence", value: .int(Int(sequenceNumber))),
            (key: "status", value: binaryStatus.map { .int(Int($0.rawValue)) } ?? .null),
            (key: "reason", value: .string(reason)),
            (key: "detail", value: .string(detail)),
            (key: "cause", value: .string(cause.rawValue)),
            (key: "identifier", value: .int(Int(identifier))),
            (key: "token", value: deviceToken.map { .string($0.hex) } ?? .null),
        ]
        if let payload {
            members.append((key: "payload", value: payload.parseError == nil ? (payload.json ?? .null) : .null))
            if payload.parseError != nil, let text = payload.text {
                members.append((key: "payloadText", value: .string(text)))
            }
        }
        members += [
            (key: "format", value: format.map { .string($0.rawValue) } ?? .null),
            (key: "httpStatus", value: httpStatus.map { .int($0) } ?? .null),
            (key: "apnsID", value: http2?.apnsID.map { .string($0) } ?? .null),
            (key: "topic", value: http2?.topic.map { .string($0) } ?? .null),
        ]
        if let http2, let channelOperation = http2.channelOperation {
            members += [
                (key: "channelOperation", value: .string(channelOperation.rawValue)),
                (key: "channel", value: http2.channelID.map { .string($0) } ?? .null),
                (key: "requestID", value: http2.requestID.map { .string($0) } ?? .null),
            ]
        }
        members += [
            (key: "responseSent", value: .bool(responseSent)),
            (key: "connectionClosed", value: .bool(connectionClosed)),
            (key: "receivedAt", value: .string(Timestamp.rfc3339(receivedAt))),
            (key: "connection", value: .int(connection.id)),
            (key: "peer", value: .string(connection.peer)),
            (key: "transport", value: .string(connection.transport.rawValue)),
        ]
        return .object(JSONObject(members))
    }

    private var binaryStatus: BinaryStatus? {
        if case .status(let status) = answer { status } else { nil }
    }

    private var httpStatus: Int? {
        if case .reason(let reason) = answer { reason.status } else { nil }
    }
}
