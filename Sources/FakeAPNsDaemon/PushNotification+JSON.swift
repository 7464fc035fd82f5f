import FakeAPNs

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// A notification's record has one schema, `writeRecord(to:)` and the groups it calls: its
// members and their order are declared there only. The daemon writes the record two ways,
// both by following it: as a JSON tree (`jsonObject`, what the control API serves) and as a
// log line (`JSONLineWriter`, fast, into one buffer).

/// What a notification's record is written to: one call per member (or group of members), in
/// the order ``PushNotification/writeRecord(to:)`` makes them. A writer that has nothing
/// faster to do for a group leaves it to the schema's group (the default implementations).
protocol NotificationRecordWriter {
    mutating func integer(_ name: StaticString, _ value: Int)
    /// An integer, or `null`.
    mutating func optionalInteger(_ name: StaticString, _ value: Int?)
    /// A string, or `null`.
    mutating func string(_ name: StaticString, _ value: String?)
    /// A string of ASCII letters, digits and punctuation that JSON does not escape (an enum's
    /// raw value).
    mutating func keyword(_ name: StaticString, _ value: String)
    /// A device token as lowercase hex.
    mutating func token(_ name: StaticString, _ value: DeviceToken)
    /// A date as RFC 3339 UTC with microseconds (``Timestamp/rfc3339(_:)``).
    mutating func timestamp(_ name: StaticString, _ value: Date)
    mutating func json(_ name: StaticString, _ value: JSONValue)

    /// The payload's members: ``PushNotification/writePayload(_:to:)``.
    mutating func payload(_ payload: Payload)
    /// The HTTP/2 request's members: ``PushNotification/writeHTTP2(_:to:)``.
    mutating func http2(_ fields: PushNotification.HTTP2Fields)
    /// The connection's members, the record's last: ``PushNotification/writeConnection(_:to:)``.
    mutating func connection(_ connection: ConnectionInfo)
    /// The push lint's findings: ``PushNotification/writeLint(_:to:)`` with
    /// ``PushNotification/lintFindings``, the request's (judged now when the intake did not)
    /// and the device model's.
    mutating func lint(of notification: PushNotification)
}

extension NotificationRecordWriter {
    mutating func payload(_ payload: Payload) {
        PushNotification.writePayload(payload, to: &self)
    }

    mutating func http2(_ fields: PushNotification.HTTP2Fields) {
        PushNotification.writeHTTP2(fields, to: &self)
    }

    mutating func connection(_ connection: ConnectionInfo) {
        PushNotification.writeConnection(connection, to: &self)
    }

    mutating func lint(of notification: PushNotification) {
        PushNotification.writeLint(notification.lintFindings, to: &self)
    }
}

// MARK: - The schema

extension PushNotification {
    /// Writes the notification's record, member by member:
    ///
    /// ```json
    /// {"sequence":1,"token":"fe15…","payload":{"aps":{"alert":"Hi"}},"identifier":7,
    ///  "expiration":0,"priority":10,"format":"enhanced","lint":[],
    ///  "receivedAt":"2026-11-29T13:05:09.123456Z","connection":1,"peer":"127.0.0.1:53122","transport":"tls"}
    /// ```
    ///
    /// An HTTP/2 request's members come after `format`; a client certificate's after
    /// `transport`. `lint` holds the push lint's findings, the request's and the device
    /// model's, errors first
    /// (`[{"rule":"background-priority-10","level":"error","message":"…","source":"…"}]`); the
    /// log line has it only for a push the intake judged (an app described, `--lint strict`,
    /// or the device model's findings): judging every push as it is logged would cost the log
    /// most of its speed. A payload that is not valid JSON appears as `"payload":null` with
    /// `payloadText` (or `payloadBase64` when it is not UTF-8) and `payloadError`.
    func writeRecord(to record: inout some NotificationRecordWriter) {
        record.integer("sequence", Int(sequenceNumber))
        record.token("token", deviceToken)
        record.payload(payload)
        record.integer("identifier", Int(identifier))
        record.optionalInteger("expiration", expiration.map { Int($0) })
        record.integer("priority", priority.rawValue)
        record.keyword("format", format.rawValue)
        if let http2 { record.http2(http2) }
        record.lint(of: self)
        record.timestamp("receivedAt", receivedAt)
        record.connection(connection)
    }

    /// The name of the payload's member, for a writer that copies a valid payload as it came.
    static let payloadMember: StaticString = "payload"

    /// The payload's JSON, or `null` and the members that explain a payload that is not JSON.
    static func writePayload(_ payload: Payload, to record: inout some NotificationRecordWriter) {
        if let json = payload.json, payload.parseError == nil {
            record.json(payloadMember, json)
            return
        }
        record.json(payloadMember, .null)
        if let text = payload.text {
            record.string("payloadText", text)
        } else {
            record.string("payloadBase64", payload.data.base64EncodedString())
        }
        record.string("payloadError", payload.parseError.map { "\($0)" } ?? "not valid JSON")
    }

    /// The fields only HTTP/2 requests carry: the provider token's when it authenticated the
    /// request, a broadcast's when it went to a channel.
    static func writeHTTP2(_ http2: HTTP2Fields, to record: inout some NotificationRecordWriter) {
        record.string("apnsID", http2.apnsID)
        record.string("topic", http2.topic)
        record.string("pushType", http2.pushType?.rawValue)
        record.string("collapseID", http2.collapseID)
        if let token = http2.providerToken {
            record.string("keyID", token.keyID)
            record.string("teamID", token.teamID)
        }
        if let channelID = http2.channelID {
            record.string("channel", channelID)
            record.string("requestID", http2.requestID)
            record.string("uniqueID", http2.uniqueID)
        }
    }

    /// The push lint's findings, errors first.
    static func writeLint(_ findings: [LintFinding], to record: inout some NotificationRecordWriter) {
        record.json("lint", PhoneJSON.lint(findings))
    }

    /// The connection that carried the notification, and its client certificate.
    static func writeConnection(_ connection: ConnectionInfo, to record: inout some NotificationRecordWriter) {
        record.integer("connection", connection.id)
        record.string("peer", connection.peer)
        record.keyword("transport", connection.transport.rawValue)
        if let certificate = connection.clientCertificate {
            record.string("clientSubject", certificate.subject)
            if let topic = certificate.topic { record.string("clientTopic", topic) }
        }
    }
}

// MARK: - The tree

extension PushNotification {
    /// The notification's record as one JSON object, the form the control API serves.
    var jsonObject: JSONValue {
        var tree = RecordTree()
        writeRecord(to: &tree)
        return .object(JSONObject(tree.members))
    }

    /// The notification's record as one line of JSON (no line feed) with `"event":event`
    /// first, as the daemon logs it: ``JSONLineWriter``'s line.
    func jsonLine(event: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(payload.count + 400)
        var writer = JSONLineWriter(event: event)
        writer.append(self, to: &bytes)
        bytes.removeLast()
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// A record's members as JSON values.
private struct RecordTree: NotificationRecordWriter {
    var members: [JSONObject.Element] = []

    private mutating func add(_ name: StaticString, _ value: JSONValue) {
        members.append((key: name.description, value: value))
    }

    mutating func integer(_ name: StaticString, _ value: Int) { add(name, .int(value)) }
    mutating func optionalInteger(_ name: StaticString, _ value: Int?) { add(name, value.map { .int($0) } ?? .null) }
    mutating func string(_ name: StaticString, _ value: String?) { add(name, value.map { .string($0) } ?? .null) }
    mutating func keyword(_ name: StaticString, _ value: String) { add(name, .string(value)) }
    mutating func token(_ name: StaticString, _ value: DeviceToken) { add(name, .string(value.hex)) }
    mutating func timestamp(_ name: StaticString, _ value: Date) { add(name, .string(Timestamp.rfc3339(value))) }
    mutating func json(_ name: StaticString, _ value: JSONValue) { add(name, value) }
}

/// A record's members as JSON text, each `,"name":value`, appended to `bytes`.
struct RecordMemberBytes: NotificationRecordWriter {
    var bytes: [UInt8] = []

    private mutating func name(_ name: StaticString) {
        JSONWriter.append(#",""#, to: &bytes)
        JSONWriter.append(name, to: &bytes)
        JSONWriter.append(#"":"#, to: &bytes)
    }

    mutating func integer(_ name: StaticString, _ value: Int) {
        self.name(name)
        JSONWriter.writeInteger(value, to: &bytes)
    }

    mutating func optionalInteger(_ name: StaticString, _ value: Int?) {
        if let value { integer(name, value) } else { json(name, .null) }
    }

    mutating func string(_ name: StaticString, _ value: String?) {
        self.name(name)
        if let value { JSONWriter.writeString(value, to: &bytes) } else { JSONWriter.append("null", to: &bytes) }
    }

    mutating func keyword(_ name: StaticString, _ value: String) { string(name, value) }
    mutating func token(_ name: StaticString, _ value: DeviceToken) { string(name, value.hex) }
    mutating func timestamp(_ name: StaticString, _ value: Date) { string(name, Timestamp.rfc3339(value)) }

    mutating func json(_ name: StaticString, _ value: JSONValue) {
        self.name(name)
        JSONWriter(sortedKeys: false).write(value, to: &bytes)
    }
}
