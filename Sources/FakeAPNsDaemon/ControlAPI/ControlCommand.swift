import FakeAPNs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// What a control API request asks, decoded strictly and purely: an `HTTPRequest` in, a
// `ControlCommand` or a `ControlError` out, with no server, clock or state involved, so any input
// can be fed to `ControlCommand(request:)` directly (tests, fuzzers).

// MARK: - Errors

/// A request the control API refuses, as the JSON error it answers:
/// `{"error":"<code>","message":"<sentence naming the problem>"}`.
struct ControlError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The HTTP status.
    let status: Int
    /// A short, stable code a client can switch on ("unknown_field").
    let code: String
    /// A sentence naming the problem.
    let message: String
    /// The methods a path allows, for a 405's `Allow` header.
    var allow: [String]? = nil

    var description: String { "\(status) \(code): \(message)" }

    static func notFound(_ message: String) -> ControlError {
        ControlError(status: 404, code: "not_found", message: message)
    }

    static func badRequest(_ code: String, _ message: String) -> ControlError {
        ControlError(status: 400, code: code, message: message)
    }

    /// An app description over a bound of the catalog: 400 `limit_reached`, the message
    /// naming the bound (and the field, for a part of the description).
    static func appRefused(_ refusal: AppCatalogError) -> ControlError {
        var part: AppBundle.Part?
        switch refusal {
        case .tooManyNames(_, let named, _, _), .nameTooLong(_, let named, _, _): part = named
        case .tooManyApps, .tooLarge: part = nil
        }
        let field = part.map { $0 == .bundleID ? "" : "field '\($0)': " } ?? ""
        return .badRequest("limit_reached", field + refusal.description)
    }
}

// MARK: - Commands

/// Which notifications a list or a wait wants.
struct NotificationFilter: Sendable, Equatable {
    var token: DeviceToken?
    /// HTTP/2: the `apns-topic`; binary: the topic of the client certificate.
    var topic: String?

    func matches(_ notification: PushNotification) -> Bool {
        if let token, notification.deviceToken != token { return false }
        if let topic, (notification.http2?.topic ?? notification.connection.clientCertificate?.topic) != topic {
            return false
        }
        return true
    }

    /// What the filter asks for, for a timeout message; nil when it asks nothing.
    var summary: String? {
        let parts = [token.map { "token \($0.hex)" }, topic.map { "topic \($0)" }].compactMap { $0 }
        return parts.isEmpty ? nil : parts.joined(separator: " and ")
    }
}

/// Which rejections a list or a wait wants.
struct RejectionFilter: Sendable, Equatable {
    var token: DeviceToken?
    /// Compared with `Rejection.reason` ("BadDeviceToken", "Invalid token", …).
    var reason: String?

    func matches(_ rejection: Rejection) -> Bool {
        if let token, rejection.deviceToken != token { return false }
        if let reason, rejection.reason != reason { return false }
        return true
    }

    var summary: String? {
        let parts = [token.map { "token \($0.hex)" }, reason.map { "reason \($0)" }].compactMap { $0 }
        return parts.isEmpty ? nil : parts.joined(separator: " and ")
    }
}

/// Which broadcast deliveries a list or a wait wants.
struct DeliveryFilter: Sendable, Equatable {
    var channelID: String?
    var token: DeviceToken?

    func matches(_ delivery: BroadcastDelivery) -> Bool {
        if let channelID, delivery.channelID != channelID { return false }
        if let token, delivery.deviceToken != token { return false }
        return true
    }

    var summary: String? {
        let parts = [channelID.map { "channel \($0)" }, token.map { "token \($0.hex)" }].compactMap { $0 }
        return parts.isEmpty ? nil : parts.joined(separator: " and ")
    }
}

/// A page of a history: items after `since`, at most `limit` of them.
struct Page: Sendable, Equatable {
    var since: UInt64 = 0
    var limit: Int?
    /// How long to wait for an item when none is there yet (a long poll, the web page's live
    /// list); nil: answer at once.
    var wait: Duration?
}

/// What one request asks the control API to do, fully decoded and checked.
enum ControlCommand: Sendable {
    case webAsset(WebPage.Asset)
    case health
    case metrics
    case listNotifications(NotificationFilter, Page)
    case notification(UInt64)
    case clearNotifications
    case nextNotification(NotificationFilter, timeout: Duration)
    case listRejections(RejectionFilter, Page)
    case rejection(UInt64)
    case clearRejections
    case nextRejection(RejectionFilter, timeout: Duration)
    case listDevices
    /// `GET /api/v1/phones`: the described phones' tokens only, however large the registry.
    case listPhones
    case device(DeviceToken)
    case registerDevice(DeviceToken, topic: String?, environment: PushEnvironment?)
    /// `at`: nil means now (the decoder reads no clock).
    case unregisterDevice(DeviceToken, at: Date?)
    case removeDevice(DeviceToken)
    case setStrict(Bool)
    case listFeedback
    /// `timestamp`: nil means now.
    case addFeedback(DeviceToken, timestamp: UInt32?)
    case listFaults
    case fault(Int)
    case addFault(FaultRule)
    case removeFault(Int)
    case clearFaults
    case listChannels(bundleID: String?)
    case channel(String)
    /// `id`: nil means the registry picks one, as Apple does.
    case createChannel(bundleID: String, storagePolicy: Channel.StoragePolicy, id: String?)
    case deleteChannel(String)
    case subscribe(DeviceToken, channelID: String)
    /// One page of a channel's subscribers: those after `cursor` (nil: from the first).
    case subscribers(channelID: String, cursor: UInt64?, limit: Int)
    case unsubscribe(DeviceToken, channelID: String)
    case listDeliveries(DeliveryFilter, Page)
    case delivery(UInt64)
    case clearDeliveries
    case nextDelivery(DeliveryFilter, timeout: Duration)
    case reset
    /// `GET /api/v1/keys`: the keys trusted for provider tokens, with their scopes.
    case keys
    case clock
    case moveClock(ClockMove)
    case updatePhone(DeviceToken, PhoneSettingsChange)
    case launchApp(DeviceToken, bundleID: String)
    case forceQuitApp(DeviceToken, bundleID: String)
    /// The app starts a Live Activity whose pushes go to the token.
    case startLiveActivity(DeviceToken, bundleID: String, attributesType: String?)
    case releaseBursts(DeviceToken)
    /// A phone's delivery log, all of it or one push's (by `apns-id` or `apns-unique-id`).
    case phoneLog(DeviceToken, apnsID: String?, uniqueID: String?)
    case screen(DeviceToken)
    case nextPhoneDelivery(DeviceToken, timeout: Duration)
    /// Every phone's steps of the push with this `apns-unique-id`.
    case deliveryLog(uniqueID: String)
    case senderReport(sender: String?)
    case app(bundleID: String)
    case describeApp(bundleID: String, AppBundle)

    /// Whether the command waits for something to arrive.
    var waits: Bool {
        switch self {
        case .nextNotification, .nextRejection, .nextDelivery, .nextPhoneDelivery: true
        case .listNotifications(_, let page), .listRejections(_, let page): page.wait != nil
        default: false
        }
    }
}

// MARK: - Limits

enum ControlLimits {
    /// The largest request body read.
    static let maximumBodySize = 64 * 1024
    /// How long `next` waits when the request does not say.
    static let defaultWait = 5.0
    /// The longest `next` may wait.
    static let maximumWait = 60.0
    /// The longest delay a fault may add.
    static let maximumDelayMilliseconds = 60_000
    /// The connections served at once unless `--web-max-connections` says otherwise: enough
    /// for hundreds of waits beside idle keep-alive connections.
    static let defaultMaximumConnections = 1024
}

// MARK: - Routing

extension ControlCommand {
    /// Decodes a request: route, method, query and body. Throws `ControlError` (404, 405, 400).
    init(request: HTTPRequest) throws {
        if request.bodyTooLarge || request.body.count > ControlLimits.maximumBodySize {
            throw ControlError.badRequest(
                "body_too_large", "the request body is over \(ControlLimits.maximumBodySize) bytes (64 KiB)")
        }
        let segments = try Self.pathSegments(request.path)
        let query = try QueryParameters(request.query)
        let body = request.body
        func allow(_ methods: String...) throws {
            guard methods.contains(request.method) else {
                let choices = methods.count == 1
                    ? methods[0] : methods.dropLast().joined(separator: ", ") + " or " + methods[methods.count - 1]
                throw ControlError(
                    status: 405, code: "method_not_allowed",
                    message: "\(request.method.prefix(32)) is not allowed on \(request.path.prefix(200)); "
                        + "use \(choices)",
                    allow: methods)
            }
        }

        switch segments {
        case let path where path == [""] || (path.count == 2 && path[0] == "web"):
            try allow("GET")
            try query.expectNone()
            guard let asset = WebPage.asset(named: segments.last ?? "") else {
                throw ControlError.notFound("the web page has no file \(request.path.prefix(200))")
            }
            self = .webAsset(asset)
        case ["healthz"]:
            try allow("GET")
            try query.expectNone()
            self = .health
        case ["metrics"]:
            try allow("GET")
            try query.expectNone()
            self = .metrics
        case ["api", "v1", "notifications"]:
            try allow("GET", "DELETE")
            if request.method == "DELETE" {
                try query.expectNone()
                self = .clearNotifications
            } else {
                try query.expectOnly(["token", "topic", "since", "limit", "wait"])
                self = .listNotifications(try query.notificationFilter(), try query.page())
            }
        case ["api", "v1", "notifications", "next"]:
            try allow("GET")
            try query.expectOnly(["timeout", "token", "topic"])
            self = .nextNotification(try query.notificationFilter(), timeout: try query.timeout())
        case let path where path.count == 4 && path.starts(with: ["api", "v1", "notifications"]):
            try allow("GET")
            try query.expectNone()
            self = .notification(try Self.sequence(path[3], of: "notification"))
        case ["api", "v1", "rejections"]:
            try allow("GET", "DELETE")
            if request.method == "DELETE" {
                try query.expectNone()
                self = .clearRejections
            } else {
                try query.expectOnly(["token", "reason", "since", "limit", "wait"])
                self = .listRejections(try query.rejectionFilter(), try query.page())
            }
        case ["api", "v1", "rejections", "next"]:
            try allow("GET")
            try query.expectOnly(["timeout", "token", "reason"])
            self = .nextRejection(try query.rejectionFilter(), timeout: try query.timeout())
        case let path where path.count == 4 && path.starts(with: ["api", "v1", "rejections"]):
            try allow("GET")
            try query.expectNone()
            self = .rejection(try Self.sequence(path[3], of: "rejection"))
        case ["api", "v1", "devices"]:
            try allow("GET", "POST")
            try query.expectNone()
            if request.method == "GET" {
                self = .listDevices
            } else {
                let fields = try BodyFields(body, allowed: ["token", "topic", "environment"])
                self = .registerDevice(
                    try fields.token("token"), topic: try fields.string("topic", nonEmpty: true),
                    environment: try fields.environment("environment"))
            }
        case ["api", "v1", "phones"]:
            try allow("GET")
            try query.expectNone()
            self = .listPhones
        case ["api", "v1", "devices", "strict"]:
            try allow("PUT")
            try query.expectNone()
            let fields = try BodyFields(body, allowed: ["strict"])
            self = .setStrict(try fields.required("strict", fields.bool("strict")))
        case let path where path.count == 4 && path.starts(with: ["api", "v1", "devices"]):
            try allow("GET", "PATCH", "DELETE")
            try query.expectNone()
            let token = try deviceToken(path[3], in: "the path's device token")
            switch request.method {
            case "GET": self = .device(token)
            case "DELETE": self = .removeDevice(token)
            default: self = .updatePhone(token, try PhoneSettingsChange(BodyFields(body, allowed: PhoneJSON.settingKeys)))
            }
        case let path where path.count == 5 && path.starts(with: ["api", "v1", "devices"])
            && ["launch", "force-quit"].contains(path[4]):
            try allow("POST")
            try query.expectNone()
            let token = try deviceToken(path[3], in: "the path's device token")
            let fields = try BodyFields(body, allowed: ["app"])
            let bundleID = try fields.required("app", fields.string("app", nonEmpty: true))
            self = path[4] == "launch" ? .launchApp(token, bundleID: bundleID) : .forceQuitApp(token, bundleID: bundleID)
        case let path where path.count == 5 && path.starts(with: ["api", "v1", "devices"])
            && path[4] == "start-live-activity":
            try allow("POST")
            try query.expectNone()
            let token = try deviceToken(path[3], in: "the path's device token")
            let fields = try BodyFields(body, allowed: ["app", "attributesType"])
            let bundleID = try fields.required("app", fields.string("app", nonEmpty: true))
            let type = try fields.string("attributesType", nonEmpty: true)
            for (name, value) in [("app", bundleID), ("attributesType", type ?? "")]
            where value.utf8.count > AppBundle.maximumNameLength {
                let limit = AppBundle.maximumNameLength
                throw ControlError.badRequest(
                    "limit_reached", "field '\(name)' is \(value.utf8.count) bytes long; at most \(limit)")
            }
            self = .startLiveActivity(token, bundleID: bundleID, attributesType: type)
        case let path where path.count == 5 && path.starts(with: ["api", "v1", "devices"]) && path[4] == "release-bursts":
            try allow("POST")
            try query.expectNone()
            _ = try BodyFields(body, allowed: [], emptyAllowed: true)
            self = .releaseBursts(try deviceToken(path[3], in: "the path's device token"))
        case let path where path.count == 5 && path.starts(with: ["api", "v1", "devices"]) && path[4] == "log":
            try allow("GET")
            try query.expectOnly(["apns-id", "unique-id"])
            let token = try deviceToken(path[3], in: "the path's device token")
            let apnsID = try query.nonEmpty("apns-id")
            let uniqueID = try query.nonEmpty("unique-id")
            if apnsID != nil && uniqueID != nil {
                throw ControlError.badRequest("invalid_parameter", "give 'apns-id' or 'unique-id', not both")
            }
            self = .phoneLog(token, apnsID: apnsID, uniqueID: uniqueID)
        case let path where path.count == 5 && path.starts(with: ["api", "v1", "devices"]) && path[4] == "screen":
            try allow("GET")
            try query.expectNone()
            self = .screen(try deviceToken(path[3], in: "the path's device token"))
        case let path where path.count == 6 && path.starts(with: ["api", "v1", "devices"])
            && path[4] == "deliveries" && path[5] == "next":
            try allow("GET")
            try query.expectOnly(["timeout"])
            self = .nextPhoneDelivery(try deviceToken(path[3], in: "the path's device token"), timeout: try query.timeout())
        case let path where path.count == 4 && path.starts(with: ["api", "v1", "delivery-log"]):
            try allow("GET")
            try query.expectNone()
            guard !path[3].isEmpty else { throw ControlError.badRequest("invalid_path", "the apns-unique-id is empty") }
            self = .deliveryLog(uniqueID: path[3])
        case ["api", "v1", "keys"]:
            try allow("GET")
            try query.expectNone()
            self = .keys
        case ["api", "v1", "sender-report"]:
            try allow("GET")
            try query.expectOnly(["sender"])
            self = .senderReport(sender: try query.nonEmpty("sender"))
        case ["api", "v1", "clock"]:
            try allow("GET", "POST")
            try query.expectNone()
            self = request.method == "GET"
                ? .clock : .moveClock(try ClockMove(BodyFields(body, allowed: ["advance", "set", "real"])))
        case let path where path.count == 4 && path.starts(with: ["api", "v1", "apps"]):
            try allow("GET", "PUT")
            try query.expectNone()
            guard !path[3].isEmpty else { throw ControlError.badRequest("invalid_path", "the bundle ID is empty") }
            if request.method == "GET" {
                self = .app(bundleID: path[3])
            } else {
                let bundle = try AppBundle(BodyFields(body, allowed: PhoneJSON.appBundleKeys, emptyAllowed: true))
                if let problem = bundle.boundsProblem(bundleID: path[3]) { throw ControlError.appRefused(problem) }
                self = .describeApp(bundleID: path[3], bundle)
            }
        case let path where path.count == 5 && path.starts(with: ["api", "v1", "devices"]) && path[4] == "unregister":
            try allow("POST")
            try query.expectNone()
            let token = try deviceToken(path[3], in: "the path's device token")
            let fields = try BodyFields(body, allowed: ["at"], emptyAllowed: true)
            let at = try fields.number("at", in: 0...Double(UInt32.max), meaning: "UNIX seconds")
            self = .unregisterDevice(token, at: at.map { Date(timeIntervalSince1970: $0) })
        case ["api", "v1", "feedback"]:
            try allow("GET", "POST")
            try query.expectNone()
            if request.method == "GET" {
                self = .listFeedback
            } else {
                let fields = try BodyFields(body, allowed: ["token", "timestamp"])
                let timestamp = try fields.integer("timestamp", in: 0...Int(UInt32.max), meaning: "UNIX seconds")
                self = .addFeedback(try fields.token("token"), timestamp: timestamp.map { UInt32($0) })
            }
        case ["api", "v1", "faults"]:
            try allow("GET", "POST", "DELETE")
            try query.expectNone()
            switch request.method {
            case "GET": self = .listFaults
            case "DELETE": self = .clearFaults
            default: self = .addFault(try FaultRuleDecoder.decode(body))
            }
        case let path where path.count == 4 && path.starts(with: ["api", "v1", "faults"]):
            try allow("GET", "DELETE")
            try query.expectNone()
            guard let id = Int(path[3]), id > 0, path[3].allSatisfy(\.isASCIIDigit) else {
                throw ControlError.badRequest("invalid_path", "fault id must be a positive integer, not '\(path[3])'")
            }
            self = request.method == "GET" ? .fault(id) : .removeFault(id)
        case ["api", "v1", "channels"]:
            try allow("GET", "POST")
            if request.method == "GET" {
                try query.expectOnly(["bundle"])
                self = .listChannels(bundleID: try query.nonEmpty("bundle"))
            } else {
                try query.expectNone()
                let fields = try BodyFields(body, allowed: ["bundle", "storagePolicy", "id"])
                let policy = try fields.integer("storagePolicy", in: 0...1, meaning: "0: no storage, 1: most recent message")
                let id = try fields.string("id", nonEmpty: true)
                if let id, !Channel.isWellFormedID(id) {
                    throw ControlError.badRequest("invalid_value", "field 'id': \(ChannelRegistryError.invalidChannelID(id))")
                }
                self = .createChannel(
                    bundleID: try fields.required("bundle", fields.string("bundle", nonEmpty: true)),
                    storagePolicy: Channel.StoragePolicy(rawValue: policy ?? 0)!, id: id)
            }
        case let path where path.count == 4 && path.starts(with: ["api", "v1", "channels"]):
            try allow("GET", "DELETE")
            try query.expectNone()
            self = request.method == "GET" ? .channel(path[3]) : .deleteChannel(path[3])
        case let path where path.count == 5 && path.starts(with: ["api", "v1", "channels"]) && path[4] == "subscriptions":
            try allow("GET", "POST")
            if request.method == "GET" {
                try query.expectOnly(["cursor", "limit"])
                let (cursor, limit) = try query.subscriberPage()
                self = .subscribers(channelID: path[3], cursor: cursor, limit: limit)
            } else {
                try query.expectNone()
                let fields = try BodyFields(body, allowed: ["token"])
                self = .subscribe(try fields.token("token"), channelID: path[3])
            }
        case let path where path.count == 6 && path.starts(with: ["api", "v1", "channels"]) && path[4] == "subscriptions":
            try allow("DELETE")
            try query.expectNone()
            self = .unsubscribe(try deviceToken(path[5], in: "the path's device token"), channelID: path[3])
        case ["api", "v1", "deliveries"]:
            try allow("GET", "DELETE")
            if request.method == "DELETE" {
                try query.expectNone()
                self = .clearDeliveries
            } else {
                try query.expectOnly(["channel", "token", "since", "limit"])
                self = .listDeliveries(try query.deliveryFilter(), try query.page())
            }
        case ["api", "v1", "deliveries", "next"]:
            try allow("GET")
            try query.expectOnly(["timeout", "channel", "token"])
            self = .nextDelivery(try query.deliveryFilter(), timeout: try query.timeout())
        case let path where path.count == 4 && path.starts(with: ["api", "v1", "deliveries"]):
            try allow("GET")
            try query.expectNone()
            self = .delivery(try Self.sequence(path[3], of: "delivery"))
        case ["api", "v1", "reset"]:
            try allow("POST")
            try query.expectNone()
            self = .reset
        default:
            throw ControlError.notFound(
                "no endpoint at \(request.path.prefix(200)); see the README's control API section")
        }
    }

    /// The path split at `/`, each segment percent-decoded (after splitting, so `%2F` stays
    /// inside its segment).
    static func pathSegments(_ path: String) throws -> [String] {
        guard path.hasPrefix("/") else {
            throw ControlError.badRequest("invalid_path", "the request path must start with '/'")
        }
        return try path.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map { segment in
            guard let decoded = PercentDecoding.decode(segment, plusIsSpace: false) else {
                throw ControlError.badRequest(
                    "invalid_path", "the request path has a malformed percent escape or is not UTF-8")
            }
            return decoded
        }
    }

    private static func sequence(_ text: String, of noun: String) throws -> UInt64 {
        guard !text.isEmpty, text.count <= 20, text.allSatisfy(\.isASCIIDigit), let value = UInt64(text), value > 0
        else {
            throw ControlError.badRequest(
                "invalid_path", "a \(noun) sequence number must be a positive integer, not '\(text.prefix(64))'")
        }
        return value
    }
}
