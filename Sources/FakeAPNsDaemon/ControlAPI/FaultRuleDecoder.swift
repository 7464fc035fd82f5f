import FakeAPNs

/// `POST /api/v1/faults` bodies:
///
/// ```json
/// {"match": {"token": "fe15…"} | {"topic": "com.example.app"} | {"channel": "dHN…"} | {"nth": 3} | "every",
///  "action": {"reject": 8} | {"respond": "TooManyRequests", "status": 429} | {"goAway": "Shutdown"}
///            | "resetStream" | "closeConnection" | {"delayMilliseconds": 200},
///  "times": "once" | "always" | 5}
/// ```
enum FaultRuleDecoder {
    /// The binary statuses a rule may reject with: every one Apple documents but 0 (no error).
    static let rejectStatuses: [BinaryStatus] = [
        .processingError, .missingDeviceToken, .missingTopic, .missingPayload, .invalidTokenSize, .invalidTopicSize,
        .invalidPayloadSize, .invalidToken, .shutdown, .protocolError, .unknown,
    ]

    static func decode(_ body: [UInt8]) throws -> FaultRule {
        let fields = try BodyFields(body, allowed: ["match", "action", "times"])
        let match = try decodeMatch(fields.required("match", fields.value("match")))
        let action = try decodeAction(fields.required("action", fields.value("action")))
        let times = try fields.value("times").map(decodeTimes) ?? .once
        return FaultRule(match: match, action: action, times: times)
    }

    private static func decodeMatch(_ value: JSONValue) throws -> FaultRule.Match {
        if value == "every" { return .every }
        let expected = #"{"token": hex}, {"topic": string}, {"channel": string}, {"nth": integer} or "every""#
        guard let object = value.objectValue else {
            if let text = value.stringValue {
                throw ControlError.badRequest("invalid_value", "field 'match' must be \(expected), not \(shown(text))")
            }
            throw ControlError.badRequest(
                "wrong_type", "field 'match' must be \(expected), not \(value.kindDescription)")
        }
        let fields = try BodyFields(checking: object, allowed: ["token", "topic", "channel", "nth"], path: "match.")
        try exactlyOne(of: ["token", "topic", "channel", "nth"], in: object, field: "match")
        if object["token"] != nil { return .token(try fields.token("token")) }
        if let topic = try fields.string("topic", nonEmpty: true) { return .topic(topic) }
        if let channelID = try fields.string("channel", nonEmpty: true) { return .channel(channelID) }
        return .nth(try fields.required("nth", fields.integer("nth", in: 1...Int(Int32.max), meaning: "a count")))
    }

    private static func decodeAction(_ value: JSONValue) throws -> FaultRule.Action {
        let expected = #"{"reject": status}, {"respond": reason}, {"goAway": reason}, {"delayMilliseconds": integer}, "#
            + #""resetStream" or "closeConnection""#
        switch value {
        case "resetStream": return .resetStream
        case "closeConnection": return .closeConnection
        case .string(let text):
            throw ControlError.badRequest("invalid_value", "field 'action' must be \(expected), not \(shown(text))")
        case .object(let object):
            let fields = try BodyFields(
                checking: object, allowed: ["reject", "respond", "goAway", "delayMilliseconds", "status"],
                path: "action.")
            try exactlyOne(of: ["reject", "respond", "goAway", "delayMilliseconds"], in: object, field: "action")
            let status = try fields.integer("status", in: 400...599, meaning: "an HTTP status")
            if status != nil && object["respond"] == nil && object["goAway"] == nil {
                throw fields.invalid("status", "goes only with \"respond\" or \"goAway\"")
            }
            if object["reject"] != nil {
                let code = try fields.required(
                    "reject", fields.integer("reject", in: 0...255, meaning: "a binary status"))
                guard let status = rejectStatuses.first(where: { Int($0.rawValue) == code }) else {
                    let statuses = rejectStatuses.map { String($0.rawValue) }.joined(separator: ", ")
                    throw fields.invalid("reject", "must be a binary error status (\(statuses)), not \(code)")
                }
                return .reject(status)
            }
            if object["respond"] != nil {
                return .respond(try reason(fields, "respond", status: status))
            }
            if object["goAway"] != nil {
                return .goAway(try reason(fields, "goAway", status: status))
            }
            let milliseconds = try fields.required(
                "delayMilliseconds",
                fields.integer(
                    "delayMilliseconds", in: 0...ControlLimits.maximumDelayMilliseconds, meaning: "milliseconds"))
            return .delay(.milliseconds(milliseconds))
        default:
            throw ControlError.badRequest(
                "wrong_type", "field 'action' must be \(expected), not \(value.kindDescription)")
        }
    }

    private static func reason(_ fields: BodyFields, _ name: String, status: Int?) throws -> APNsReason {
        let text = try fields.required(name, fields.string(name, nonEmpty: true))
        if let status { return APNsReason(text, status: status) }
        guard let reason = APNsReason(documented: text) else {
            throw fields.invalid(
                name, "is \(shown(text)), not a reason Apple documents; add \"status\" to send it anyway")
        }
        return reason
    }

    private static func decodeTimes(_ value: JSONValue) throws -> FaultRule.Times {
        switch value {
        case "once": return .once
        case "always": return .always
        case .int(let count) where count > 0: return .count(count)
        case .int(let count):
            throw ControlError.badRequest("invalid_value", "field 'times' must be a positive count, not \(count)")
        default:
            throw ControlError.badRequest(
                "wrong_type", #"field 'times' must be "once", "always" or a positive integer, not "#
                    + (value.stringValue.map(shown) ?? value.kindDescription))
        }
    }

    private static func exactlyOne(of names: [String], in object: JSONObject, field: String) throws {
        let given = names.filter { object[$0] != nil }
        guard given.count == 1 else {
            let message = given.isEmpty
                ? "field '\(field)' needs one of \(names.joined(separator: ", "))"
                : "field '\(field)' takes one of \(names.joined(separator: ", ")), "
                    + "not several (\(given.joined(separator: ", ")))"
            throw ControlError.badRequest(given.isEmpty ? "missing_field" : "invalid_value", message)
        }
    }
}
