import Foundation

extension PushNotification {
    /// The notification as one JSON object, the form the daemon logs and serves:
    ///
    /// ```json
    /// {"sequence":1,"token":"fe15…","payload":{"aps":{"alert":"Hi"}},"identifier":7,
    ///  "expiration":0,"priority":10,"format":"enhanced","receivedAt":"2026-11-29T13:05:09.123456Z",
    ///  "connection":1,"peer":"127.0.0.1:53122"}
    /// ```
    ///
    /// A payload that is not valid JSON appears as `"payload":null` with `payloadText` (or
    /// `payloadBase64` when it is not UTF-8) and `payloadError`.
    public var jsonObject: JSONValue {
        var members: [JSONObject.Element] = [
            ("sequence", .int(Int(sequenceNumber))),
            ("token", .string(deviceToken.hex)),
        ]
        if let json = payload.json, payload.parseError == nil {
            members.append(("payload", json))
        } else {
            members.append(("payload", .null))
            if let text = payload.text {
                members.append(("payloadText", .string(text)))
            } else {
                members.append(("payloadBase64", .string(payload.data.base64EncodedString())))
            }
            members.append(("payloadError", .string(payload.parseError.map { "\($0)" } ?? "not valid JSON")))
        }
        members.append(("identifier", .int(Int(identifier))))
        members.append(("expiration", expiration.map { .int(Int($0)) } ?? .null))
        members.append(("priority", .int(priority.rawValue)))
        members.append(("format", .string(format.rawValue)))
        if let http2 {
            members.append(("apnsID", .string(http2.apnsID)))
            members.append(("topic", http2.topic.map { .string($0) } ?? .null))
            members.append(("pushType", http2.pushType.map { .string($0.rawValue) } ?? .null))
            members.append(("collapseID", http2.collapseID.map { .string($0) } ?? .null))
            if let token = http2.providerToken {
                members.append(("keyID", .string(token.keyID)))
                members.append(("teamID", .string(token.teamID)))
            }
        }
        members.append(("receivedAt", .string(Timestamp.rfc3339(receivedAt))))
        members.append(("connection", .int(connection.id)))
        members.append(("peer", .string(connection.peer)))
        if let certificate = connection.clientCertificate {
            members.append(("clientSubject", .string(certificate.subject)))
            if let topic = certificate.topic { members.append(("clientTopic", .string(topic))) }
        }
        return .object(JSONObject(members.map { (key: $0.0, value: $0.1) }))
    }
}
