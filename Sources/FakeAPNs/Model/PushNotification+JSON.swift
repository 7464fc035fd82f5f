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
        var bytes: [UInt8] = []
        writeJSON(to: &bytes)
        // What the writer produces always parses; the fallback only keeps this total.
        return (try? JSONValue.parse(bytes)) ?? .null
    }

    /// The notification as one line of JSON with `"event":event` first, as the daemon logs it.
    /// A valid payload is copied into the line as it came, without being parsed.
    public func jsonLine(event: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(payload.count + 400)
        writeJSON(to: &bytes, event: event)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes the notification's JSON object, with an `event` member first when given.
    func writeJSON(to output: inout [UInt8], event: String? = nil) {
        var object = JSONMembers(bytes: output)
        if let event { object.string("event", event) }
        object.int("sequence", Int(sequenceNumber))
        object.string("token", deviceToken.hex)
        let valid = payload.withBytes { JSONValidator.isSingleLineObject($0) }
        if valid {
            object.raw("payload") { bytes in payload.withBytes { bytes.append(contentsOf: $0) } }
        } else if let json = payload.json, payload.parseError == nil {
            object.value("payload", json)
        } else {
            object.value("payload", .null)
            if let text = payload.text {
                object.string("payloadText", text)
            } else {
                object.string("payloadBase64", payload.data.base64EncodedString())
            }
            object.string("payloadError", payload.parseError.map { "\($0)" } ?? "not valid JSON")
        }
        object.int("identifier", Int(identifier))
        object.optionalInt("expiration", expiration.map(Int.init))
        object.int("priority", priority.rawValue)
        object.string("format", format.rawValue)
        if let http2 {
            object.string("apnsID", http2.apnsID)
            object.optionalString("topic", http2.topic)
            object.optionalString("pushType", http2.pushType?.rawValue)
            object.optionalString("collapseID", http2.collapseID)
            if let token = http2.providerToken {
                object.string("keyID", token.keyID)
                object.string("teamID", token.teamID)
            }
        }
        object.string("receivedAt", Timestamp.rfc3339(receivedAt))
        object.int("connection", connection.id)
        object.string("peer", connection.peer)
        if let certificate = connection.clientCertificate {
            object.string("clientSubject", certificate.subject)
            if let topic = certificate.topic { object.string("clientTopic", topic) }
        }
        output = object.bytes
    }
}

/// Writes one JSON object's members straight into bytes, for the records written per event.
struct JSONMembers {
    private(set) var bytes: [UInt8]
    private var isEmpty = true

    /// An object appended to `bytes`; `bytes` holds the closing brace after every member.
    init(bytes: [UInt8]) {
        self.bytes = bytes
        self.bytes.append(UInt8(ascii: "{"))
        self.bytes.append(UInt8(ascii: "}"))
    }

    private mutating func key(_ name: String) {
        bytes.removeLast()
        if !isEmpty { bytes.append(UInt8(ascii: ",")) }
        isEmpty = false
        JSONWriter.writeString(name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }

    private mutating func close() {
        bytes.append(UInt8(ascii: "}"))
    }

    mutating func string(_ name: String, _ value: String) {
        key(name)
        JSONWriter.writeString(value, to: &bytes)
        close()
    }

    mutating func optionalString(_ name: String, _ value: String?) {
        if let value { string(name, value) } else { self.value(name, .null) }
    }

    mutating func int(_ name: String, _ value: Int) {
        key(name)
        JSONWriter.writeInteger(value, to: &bytes)
        close()
    }

    mutating func optionalInt(_ name: String, _ value: Int?) {
        if let value { int(name, value) } else { self.value(name, .null) }
    }

    mutating func value(_ name: String, _ value: JSONValue) {
        key(name)
        JSONWriter(sortedKeys: false).write(value, to: &bytes)
        close()
    }

    /// A member whose value the caller writes as valid JSON text.
    mutating func raw(_ name: String, _ write: (inout [UInt8]) -> Void) {
        key(name)
        write(&bytes)
        close()
    }
}
