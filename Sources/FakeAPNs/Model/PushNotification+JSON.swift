#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension PushNotification {
    /// The notification as one JSON object, the form the daemon logs and serves:
    ///
    /// ```json
    /// {"sequence":1,"token":"fe15…","payload":{"aps":{"alert":"Hi"}},"identifier":7,
    ///  "expiration":0,"priority":10,"format":"enhanced","receivedAt":"2026-11-29T13:05:09.123456Z",
    ///  "connection":1,"peer":"127.0.0.1:53122","transport":"tls"}
    /// ```
    ///
    /// A payload that is not valid JSON appears as `"payload":null` with `payloadText` (or
    /// `payloadBase64` when it is not UTF-8) and `payloadError`.
    package var jsonObject: JSONValue {
        var members: [JSONObject.Element] = [
            (key: "sequence", value: .int(Int(sequenceNumber))),
            (key: "token", value: .string(deviceToken.hex)),
        ]
        // The members `JSONLineWriter` writes, in its order: a payload copied into a line as it
        // came parses to the payload's own JSON.
        if let json = payload.json, payload.parseError == nil {
            members.append((key: "payload", value: json))
        } else {
            members.append((key: "payload", value: .null))
            if let text = payload.text {
                members.append((key: "payloadText", value: .string(text)))
            } else {
                members.append((key: "payloadBase64", value: .string(payload.data.base64EncodedString())))
            }
            members.append((key: "payloadError", value: .string(payload.parseError.map { "\($0)" } ?? "not valid JSON")))
        }
        members += [
            (key: "identifier", value: .int(Int(identifier))),
            (key: "expiration", value: expiration.map { .int(Int($0)) } ?? .null),
            (key: "priority", value: .int(priority.rawValue)),
            (key: "format", value: .string(format.rawValue)),
        ]
        if let http2 {
            members += [
                (key: "apnsID", value: .string(http2.apnsID)),
                (key: "topic", value: http2.topic.map { .string($0) } ?? .null),
                (key: "pushType", value: http2.pushType.map { .string($0.rawValue) } ?? .null),
                (key: "collapseID", value: http2.collapseID.map { .string($0) } ?? .null),
            ]
            if let token = http2.providerToken {
                members += [(key: "keyID", value: .string(token.keyID)), (key: "teamID", value: .string(token.teamID))]
            }
            if let channelID = http2.channelID {
                members += [
                    (key: "channel", value: .string(channelID)),
                    (key: "requestID", value: http2.requestID.map { .string($0) } ?? .null),
                    (key: "uniqueID", value: http2.uniqueID.map { .string($0) } ?? .null),
                ]
            }
        }
        members += [
            (key: "receivedAt", value: .string(Timestamp.rfc3339(receivedAt))),
            (key: "connection", value: .int(connection.id)),
            (key: "peer", value: .string(connection.peer)),
            (key: "transport", value: .string(connection.transport.rawValue)),
        ]
        if let certificate = connection.clientCertificate {
            members.append((key: "clientSubject", value: .string(certificate.subject)))
            if let topic = certificate.topic { members.append((key: "clientTopic", value: .string(topic))) }
        }
        return .object(JSONObject(members))
    }

    /// The notification as one line of JSON with `"event":event` first, as the daemon logs it.
    /// A valid payload is copied into the line as it came, without being parsed.
    package func jsonLine(event: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(payload.count + 400)
        var writer = JSONLineWriter(event: event)
        writer.append(self, to: &bytes)
        bytes.removeLast()
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes the log lines of many notifications into one byte buffer, each line the bytes of
    /// ``PushNotification/jsonLine(event:)`` followed by a line feed.
    ///
    /// The daemon's log writes hundreds of thousands of lines a second through one of these,
    /// so what repeats from line to line is formatted once: the event member, the timestamp's
    /// date and time down to the second, and the members that describe the connection. Keep
    /// one writer per output (it is not shared between threads) and reuse the buffer.
    ///
    /// ```swift
    /// var writer = PushNotification.JSONLineWriter(event: "notification")
    /// var buffer: [UInt8] = []
    /// for notification in batch { writer.append(notification, to: &buffer) }
    /// write(descriptor, buffer, buffer.count)
    /// ```
    package struct JSONLineWriter {
        /// `{"event":"…","sequence":`.
        private let opening: [UInt8]
        private var timestamps = Timestamp.Writer()
        /// The connection whose members `connectionMembers` holds.
        private var connection: ConnectionInfo?
        /// From `,"connection":` to the closing brace and the line feed.
        private var connectionMembers: [UInt8] = []

        /// A writer of lines whose first member is `"event":event`.
        package init(event: String) {
            var opening: [UInt8] = []
            JSONWriter.append(#"{"event":"#, to: &opening)
            JSONWriter.writeString(event, to: &opening)
            JSONWriter.append(#","sequence":"#, to: &opening)
            self.opening = opening
        }

        /// Appends the notification's line and a line feed to `output`.
        package mutating func append(_ notification: PushNotification, to output: inout [UInt8]) {
            if connection !== notification.connection {
                connection = notification.connection
                connectionMembers.removeAll(keepingCapacity: true)
                Self.writeConnection(notification.connection, to: &connectionMembers)
            }
            let micros = timestamps.prepare(notification.receivedAt)
            // What is not the usual case (a payload that is not a one-line object, HTTP/2's
            // fields) is written the ordinary way first; the line itself is then put together
            // with plain memory copies in space sized for it, and appended to `output` at once.
            let (payloadIsCopied, payloadCount) = notification.payload.withBytes { bytes in
                (JSONValidator.isSingleLineObject(bytes), bytes.count)
            }
            var rareMembers: [UInt8] = []
            if !payloadIsCopied {
                Self.writePayloadFallback(notification.payload, to: &rareMembers)
            }
            let payloadEnd = rareMembers.count
            if let http2 = notification.http2 {
                Self.writeHTTP2(http2, to: &rareMembers)
            }
            let capacity = opening.count + 2 * notification.deviceToken.count + (payloadIsCopied ? payloadCount : 0) + rareMembers.count
                + timestamps.prefix.count + connectionMembers.count + Self.fixedCapacity
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer in
                var line = LineCursor(buffer.baseAddress!)
                line.write(opening)
                line.writeInteger(Int(notification.sequenceNumber))
                line.write(#","token":""#)
                line.writeHex(notification.deviceToken)
                line.write(#"","payload":"#)
                rareMembers.withUnsafeBufferPointer { rare in
                    if payloadIsCopied {
                        notification.payload.withBytes { line.write($0) }
                    } else {
                        line.write(UnsafeBufferPointer(rebasing: rare[..<payloadEnd]))
                    }
                    line.write(#","identifier":"#)
                    line.writeInteger(Int(notification.identifier))
                    line.write(#","expiration":"#)
                    if let expiration = notification.expiration {
                        line.writeInteger(Int(expiration))
                    } else {
                        line.write("null")
                    }
                    line.write(#","priority":"#)
                    line.writeInteger(notification.priority.rawValue)
                    switch notification.format {
                    case .simple: line.write(#","format":"simple""#)
                    case .enhanced: line.write(#","format":"enhanced""#)
                    case .frame: line.write(#","format":"frame""#)
                    case .http2: line.write(#","format":"http2""#)
                    case .broadcast: line.write(#","format":"broadcast""#)
                    }
                    line.write(UnsafeBufferPointer(rebasing: rare[payloadEnd...]))
                }
                line.write(#","receivedAt":""#)
                line.write(timestamps.prefix)
                Timestamp.Writer.writeFraction(micros, to: line.pointer)
                line.pointer += Timestamp.Writer.fractionCount
                line.write("\"")
                line.write(connectionMembers)
                let count = line.pointer - buffer.baseAddress!
                assert(count <= capacity, "a log line overran the space sized for it")
                output.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<count]))
            }
        }

        /// Room for everything `append` writes besides the parts it counts: the member names
        /// and punctuation (under 130 bytes), four integers of up to 20 characters and the
        /// timestamp's fraction.
        private static let fixedCapacity = 256

        /// A write position in memory sized beforehand for the whole line.
        private struct LineCursor {
            var pointer: UnsafeMutablePointer<UInt8>

            init(_ pointer: UnsafeMutablePointer<UInt8>) {
                self.pointer = pointer
            }

            mutating func write(_ text: StaticString) {
                pointer.initialize(from: text.utf8Start, count: text.utf8CodeUnitCount)
                pointer += text.utf8CodeUnitCount
            }

            mutating func write(_ bytes: UnsafeBufferPointer<UInt8>) {
                guard let base = bytes.baseAddress else { return }
                pointer.initialize(from: base, count: bytes.count)
                pointer += bytes.count
            }

            mutating func write(_ bytes: [UInt8]) {
                bytes.withUnsafeBufferPointer { write($0) }
            }

            mutating func writeInteger(_ value: Int) {
                pointer += JSONWriter.writeInteger(value, at: pointer)
            }

            mutating func writeHex(_ token: DeviceToken) {
                pointer += token.writeHex(at: pointer)
            }
        }

        /// The payload member's value when the payload is not a one-line JSON object (which is
        /// copied as it came: checking it is many times faster than parsing and writing it
        /// again), and the members that explain a payload that is not JSON.
        private static func writePayloadFallback(_ payload: Payload, to output: inout [UInt8]) {
            if let json = payload.json, payload.parseError == nil {
                JSONWriter(sortedKeys: false).write(json, to: &output)
                return
            }
            JSONWriter.append("null", to: &output)
            if let text = payload.text {
                JSONWriter.append(#","payloadText":"#, to: &output)
                JSONWriter.writeString(text, to: &output)
            } else {
                JSONWriter.append(#","payloadBase64":"#, to: &output)
                JSONWriter.writeString(payload.data.base64EncodedString(), to: &output)
            }
            JSONWriter.append(#","payloadError":"#, to: &output)
            JSONWriter.writeString(payload.parseError.map { "\($0)" } ?? "not valid JSON", to: &output)
        }

        private static func writeHTTP2(_ http2: HTTP2Fields, to output: inout [UInt8]) {
            JSONWriter.append(#","apnsID":"#, to: &output)
            JSONWriter.writeString(http2.apnsID, to: &output)
            JSONWriter.append(#","topic":"#, to: &output)
            writeOptional(http2.topic, to: &output)
            JSONWriter.append(#","pushType":"#, to: &output)
            writeOptional(http2.pushType?.rawValue, to: &output)
            JSONWriter.append(#","collapseID":"#, to: &output)
            writeOptional(http2.collapseID, to: &output)
            if let token = http2.providerToken {
                JSONWriter.append(#","keyID":"#, to: &output)
                JSONWriter.writeString(token.keyID, to: &output)
                JSONWriter.append(#","teamID":"#, to: &output)
                JSONWriter.writeString(token.teamID, to: &output)
            }
            if let channelID = http2.channelID {
                JSONWriter.append(#","channel":"#, to: &output)
                JSONWriter.writeString(channelID, to: &output)
                JSONWriter.append(#","requestID":"#, to: &output)
                writeOptional(http2.requestID, to: &output)
                JSONWriter.append(#","uniqueID":"#, to: &output)
                writeOptional(http2.uniqueID, to: &output)
            }
        }

        /// The members from `connection` on, the closing brace and the line feed.
        private static func writeConnection(_ connection: ConnectionInfo, to output: inout [UInt8]) {
            JSONWriter.append(#","connection":"#, to: &output)
            JSONWriter.writeInteger(connection.id, to: &output)
            JSONWriter.append(#","peer":"#, to: &output)
            JSONWriter.writeString(connection.peer, to: &output)
            JSONWriter.append(#","transport":"#, to: &output)
            JSONWriter.writeString(connection.transport.rawValue, to: &output)
            if let certificate = connection.clientCertificate {
                JSONWriter.append(#","clientSubject":"#, to: &output)
                JSONWriter.writeString(certificate.subject, to: &output)
                if let topic = certificate.topic {
                    JSONWriter.append(#","clientTopic":"#, to: &output)
                    JSONWriter.writeString(topic, to: &output)
                }
            }
            JSONWriter.append("}\n", to: &output)
        }

        private static func writeOptional(_ string: String?, to output: inout [UInt8]) {
            if let string {
                JSONWriter.writeString(string, to: &output)
            } else {
                JSONWriter.append("null", to: &output)
            }
        }
    }
}
