import FakeAPNs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The strict readers `ControlCommand(request:)` decodes with: percent escapes, query
// parameters, JSON bodies. Each refusal is a `ControlError` that names the problem.

/// A device token wherever the API takes one (path, query, body, fault rule): hex as
/// `DeviceToken(hex:)` reads it, 1 to `DeviceToken.maximumByteCount` bytes, since APNs takes no
/// other. `subject` names where it stood ("field 'token'"). Throws 400 `invalid_token`.
func deviceToken(_ text: String, in subject: String) throws -> DeviceToken {
    let limit = "a device token is 1 to \(DeviceToken.maximumByteCount) bytes "
        + "(2 to \(2 * DeviceToken.maximumByteCount) hex digits)"
    // A `Result`: typed throws trips the optimizer of Swift 6.3 here.
    switch Result(catching: { () throws(DeviceTokenError) in try DeviceToken(hex: text) }) {
    case .failure(.empty):
        throw ControlError.badRequest("invalid_token", "\(subject) holds no hex digits; \(limit)")
    case .failure(let error):
        throw ControlError.badRequest("invalid_token", "\(subject) is not a device token: \(error)")
    case .success(let token) where token.count > DeviceToken.maximumByteCount:
        throw ControlError.badRequest(
            "invalid_token", "\(subject) is \(token.count) bytes long, longer than APNs takes: \(limit)")
    case .success(let token):
        return token
    }
}

/// Text from the request as a message shows it: quoted, and cut at 64 characters.
func shown(_ text: some StringProtocol) -> String {
    JSONValue.quoted(String(text.prefix(64)))
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}

// MARK: - Percent decoding

enum PercentDecoding {
    /// `%XX` escapes decoded (and `+` as a space, for query strings); nil when an escape is
    /// malformed or the result is not UTF-8.
    static func decode(_ text: Substring, plusIsSpace: Bool) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(HexDigit.value), let low = iterator.next().flatMap(HexDigit.value) else {
                    return nil
                }
                bytes.append(high << 4 | low)
            case UInt8(ascii: "+") where plusIsSpace:
                bytes.append(UInt8(ascii: " "))
            default:
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}

// MARK: - Query

/// The query string's parameters, decoded; each name at most once.
struct QueryParameters {
    private(set) var values: [(name: String, value: String)] = []

    init(_ query: String?) throws {
        guard let query, !query.isEmpty else { return }
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = PercentDecoding.decode(parts[0], plusIsSpace: true),
                let value = PercentDecoding.decode(parts.count > 1 ? parts[1] : "", plusIsSpace: true)
            else {
                throw ControlError.badRequest(
                    "invalid_parameter", "the query string has a malformed percent escape or is not UTF-8")
            }
            guard parts.count > 1 else {
                throw ControlError.badRequest("invalid_parameter", "query parameter '\(name.prefix(64))' needs a value")
            }
            guard !values.contains(where: { $0.name == name }) else {
                throw ControlError.badRequest(
                    "invalid_parameter", "query parameter '\(name.prefix(64))' is given twice")
            }
            values.append((name, value))
        }
    }

    func value(_ name: String) -> String? {
        values.first { $0.name == name }?.value
    }

    func expectNone() throws {
        try expectOnly([])
    }

    func expectOnly(_ names: [String]) throws {
        if let unknown = values.first(where: { !names.contains($0.name) }) {
            let known = names.isEmpty ? "this endpoint takes none" : "known: " + names.joined(separator: ", ")
            throw ControlError.badRequest(
                "unknown_parameter", "unknown query parameter '\(unknown.name.prefix(64))' (\(known))")
        }
    }

    func token() throws -> DeviceToken? {
        try value("token").map { try deviceToken($0, in: "query parameter 'token'") }
    }

    func nonEmpty(_ name: String) throws -> String? {
        guard let text = value(name) else { return nil }
        guard !text.isEmpty else {
            throw ControlError.badRequest("invalid_parameter", "query parameter '\(name)' is empty")
        }
        return text
    }

    func notificationFilter() throws -> NotificationFilter {
        NotificationFilter(token: try token(), topic: try nonEmpty("topic"))
    }

    func rejectionFilter() throws -> RejectionFilter {
        RejectionFilter(token: try token(), reason: try nonEmpty("reason"))
    }

    func deliveryFilter() throws -> DeliveryFilter {
        DeliveryFilter(channelID: try nonEmpty("channel"), token: try token())
    }

    func page() throws -> Page {
        var page = Page()
        if let text = value("since") {
            guard let since = Self.digits(text).flatMap({ UInt64($0) }) else {
                throw ControlError.badRequest(
                    "invalid_parameter",
                    "query parameter 'since' must be a sequence number (a non-negative integer), not \(shown(text))")
            }
            page.since = since
        }
        if let text = value("limit") {
            guard let limit = Self.digits(text).flatMap({ Int($0) }), limit > 0 else {
                throw ControlError.badRequest(
                    "invalid_parameter", "query parameter 'limit' must be a positive integer, not \(shown(text))")
            }
            page.limit = limit
        }
        if value("wait") != nil {
            page.wait = try timeout(named: "wait")
        }
        return page
    }

    /// `cursor` (a subscription number a page's `next` gave; nil when absent) and `limit`
    /// (1 to ``ChannelRegistry/maximumPageSize``, the default) of a page of subscribers.
    func subscriberPage() throws -> (cursor: UInt64?, limit: Int) {
        var cursor: UInt64?
        if let text = value("cursor") {
            guard let number = Self.digits(text).flatMap({ UInt64($0) }) else {
                throw ControlError.badRequest(
                    "invalid_parameter",
                    "query parameter 'cursor' must be the 'next' of the page before (a non-negative integer), not \(shown(text))")
            }
            cursor = number
        }
        let maximum = ChannelRegistry.maximumPageSize
        guard let text = value("limit") else { return (cursor, maximum) }
        guard let limit = Self.digits(text).flatMap({ Int($0) }), (1...maximum).contains(limit) else {
            throw ControlError.badRequest(
                "invalid_parameter", "query parameter 'limit' must be an integer from 1 to \(maximum), not \(shown(text))")
        }
        return (cursor, limit)
    }

    /// The `timeout` parameter (or `name`) in seconds (fractions allowed), 0 to the maximum wait; the default when absent.
    func timeout(named name: String = "timeout") throws -> Duration {
        guard let text = value(name) else { return .milliseconds(Int(ControlLimits.defaultWait * 1000)) }
        let problem = ControlError.badRequest(
            "invalid_parameter",
            "query parameter '\(name)' must be seconds from 0 to \(Int(ControlLimits.maximumWait)), such as 5 or 0.5, "
                + "not \(shown(text))")
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard text.count <= 16, !parts[0].isEmpty, parts.allSatisfy({ $0.allSatisfy(\.isASCIIDigit) }),
            parts.count == 1 || !parts[1].isEmpty, let seconds = Double(text), seconds <= ControlLimits.maximumWait
        else { throw problem }
        return .milliseconds(Int((seconds * 1000).rounded()))
    }

    /// The text when it is 1 to 20 ASCII digits.
    private static func digits(_ text: String) -> String? {
        !text.isEmpty && text.count <= 20 && text.allSatisfy(\.isASCIIDigit) ? text : nil
    }
}

// MARK: - Body

/// A JSON object body read strictly: valid JSON, an object, no duplicate or unknown fields,
/// every field of the type it must have. `path` names nested objects in messages ("action.").
struct BodyFields {
    let object: JSONObject
    let path: String

    /// Parses `body`; `emptyAllowed`: an empty body reads as `{}`.
    init(_ body: [UInt8], allowed: [String], emptyAllowed: Bool = false) throws {
        if emptyAllowed && body.allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) {
            self.init(object: JSONObject(), allowed: allowed, path: "")
            return
        }
        guard !body.isEmpty else {
            throw ControlError.badRequest("invalid_json", "the request body is empty; a JSON object is expected")
        }
        let parsed = Result { () throws(JSONParseError) in try JSONValue.parse(body) }
        switch parsed {
        case .failure(let error):
            throw ControlError.badRequest(
                "invalid_json", "the request body is not valid JSON: \(error.message)")
        case .success(let value):
            guard let object = value.objectValue else {
                throw ControlError.badRequest(
                    "wrong_type", "the request body must be a JSON object, not \(value.kindDescription)")
            }
            try self.init(checking: object, allowed: allowed, path: "")
        }
    }

    /// A nested object, checked like a body.
    init(checking object: JSONObject, allowed: [String], path: String) throws {
        if let duplicate = object.duplicateKeys.first {
            throw ControlError.badRequest("duplicate_field", "field '\(path)\(duplicate.prefix(64))' is given twice")
        }
        if let unknown = object.keys.first(where: { !allowed.contains($0) }) {
            let known = allowed.map { path + $0 }.joined(separator: ", ")
            throw ControlError.badRequest(
                "unknown_field", "unknown field '\(path)\(unknown.prefix(64))' (known: \(known))")
        }
        self.init(object: object, allowed: allowed, path: path)
    }

    private init(object: JSONObject, allowed: [String], path: String) {
        self.object = object
        self.path = path
    }

    /// The member, or nil when absent or null.
    func value(_ name: String) -> JSONValue? {
        guard let value = object[name], value != .null else { return nil }
        return value
    }

    func wrongType(_ name: String, _ expected: String, _ value: JSONValue) -> ControlError {
        ControlError.badRequest(
            "wrong_type", "field '\(path)\(name)' must be \(expected), not \(value.kindDescription)")
    }

    func invalid(_ name: String, _ problem: String) -> ControlError {
        ControlError.badRequest("invalid_value", "field '\(path)\(name)' \(problem)")
    }

    func required<T>(_ name: String, _ value: T?) throws -> T {
        guard let value else {
            throw ControlError.badRequest("missing_field", "field '\(path)\(name)' is required")
        }
        return value
    }

    func string(_ name: String, nonEmpty: Bool = false) throws -> String? {
        guard let value = value(name) else { return nil }
        guard let string = value.stringValue else { throw wrongType(name, "a string", value) }
        if nonEmpty && string.isEmpty { throw invalid(name, "must not be empty") }
        return string
    }

    func bool(_ name: String) throws -> Bool? {
        guard let value = value(name) else { return nil }
        guard let bool = value.boolValue else { throw wrongType(name, "true or false", value) }
        return bool
    }

    func integer(_ name: String, in range: ClosedRange<Int>, meaning: String) throws -> Int? {
        guard let value = value(name) else { return nil }
        guard let integer = value.intValue else { throw wrongType(name, "an integer (\(meaning))", value) }
        guard range.contains(integer) else {
            throw invalid(name, "must be from \(range.lowerBound) to \(range.upperBound) (\(meaning)), not \(integer)")
        }
        return integer
    }

    func number(_ name: String, in range: ClosedRange<Double>, meaning: String) throws -> Double? {
        guard let value = value(name) else { return nil }
        guard let number = value.doubleValue else { throw wrongType(name, "a number (\(meaning))", value) }
        guard range.contains(number) else {
            let bounds = "\(Int(range.lowerBound)) to \(Int(range.upperBound))"
            throw invalid(name, "must be from \(bounds) (\(meaning)), not \(number)")
        }
        return number
    }

    /// A required device token in hex.
    func token(_ name: String) throws -> DeviceToken {
        try deviceToken(try required(name, string(name)), in: "field '\(path)\(name)'")
    }

    func environment(_ name: String) throws -> PushEnvironment? {
        guard let text = try string(name) else { return nil }
        guard let environment = PushEnvironment(rawValue: text) else {
            throw invalid(name, "must be \"sandbox\" or \"production\", not \(shown(text))")
        }
        return environment
    }
}
