#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The header fields of one request that ``RequestValidator`` reads, collected in one pass in
/// arrival order: the first value of each field it reads, the first repeated name, and how
/// many `apns-id` fields came.
///
/// A connection adds each field as nghttp2 hands it over, raw bytes that are only valid during
/// the callback, so that a request turns into text only the handful of values the validator
/// reads: at a hundred thousand requests a second, a `String` per header name and value was
/// a good part of the cost of a request. ``init(_:)`` collects an ``HTTP2Request``'s list
/// (tests, fuzzing) through the same code.
///
/// Names are compared ASCII-case-insensitively, values kept exactly as sent, as
/// ``HTTP2Request`` documents; invalid UTF-8 in a value becomes U+FFFD, as `String(decoding:)`
/// makes it.
struct RequestHeaderFields: Sendable {
    /// The first `:method`.
    var method: String? { has(.method) ? methodText : nil }
    /// The first `:path`.
    var path: String? {
        if pathIsDeviceToken { return "\(Self.devicePathPrefix)" + pathToken.hex }
        return has(.path) ? pathText : nil
    }
    /// Whether the first `:path` is `/3/device/` and a valid token in lowercase hex, as every
    /// client sends it: then ``pathToken`` holds the token, ``path`` is made from it when asked
    /// for, and the validator reads the token without parsing text.
    private(set) var pathIsDeviceToken = false
    /// The token of the first `:path` when ``pathIsDeviceToken``; empty otherwise.
    private(set) var pathToken = DeviceToken(copying: UnsafeRawBufferPointer(start: nil, count: 0))
    /// The device token of the path when it is `/3/device/<token>` with a valid token, in
    /// either case, for a refusal decided before validation that should still name the device.
    var pathDeviceToken: DeviceToken? {
        if pathIsDeviceToken { return pathToken }
        return has(.path) ? RequestValidator.deviceToken(inPath: pathText) : nil
    }
    /// The first `apns-id`.
    var apnsID: String? { has(.apnsID) ? apnsIDText : nil }
    /// The first `apns-expiration`.
    var expiration: String? { has(.expiration) ? expirationText : nil }
    /// The first `apns-priority`.
    var priority: String? { has(.priority) ? priorityText : nil }
    /// The first `apns-push-type`.
    var pushType: String? { has(.pushType) ? pushTypeText : nil }
    /// The first `apns-collapse-id`.
    var collapseID: String? { has(.collapseID) ? collapseIDText : nil }
    /// The first `apns-topic`.
    var topic: String? { has(.topic) ? topicText : nil }
    /// The first `authorization`.
    var authorization: String? { has(.authorization) ? authorizationText : nil }
    /// The first `apns-request-id` (channel management and broadcasts).
    var requestID: String? { has(.requestID) ? requestIDText : nil }
    /// The first `apns-channel-id` (channel management and broadcasts).
    var channelID: String? { has(.channelID) ? channelIDText : nil }

    // The first value of each field the validator reads, empty until it came (its bit in
    // `seenWellKnown` says whether it did): plain strings, as an optional string field is
    // copied through its type's value witnesses, several times a request.
    private var methodText = ""
    private var pathText = ""
    private var apnsIDText = ""
    private var expirationText = ""
    private var priorityText = ""
    private var pushTypeText = ""
    private var collapseIDText = ""
    private var topicText = ""
    private var authorizationText = ""
    private var requestIDText = ""
    private var channelIDText = ""

    /// The first name, lowercased, that appeared a second time.
    private(set) var firstDuplicate: String?
    /// How many `apns-id` fields came, repeats included.
    private(set) var apnsIDCount = 0

    /// Which ``WellKnown`` names came: one bit each, so the duplicate check of a usual request
    /// compares no text.
    private var seenWellKnown: UInt32 = 0
    /// Other names seen, lowercased; compared as `String`s (canonical equivalence), as the
    /// list they replace was. A hostile list of many names moves to a set, so the check stays
    /// linear.
    private var seenOthers: [String] = []
    private var seenOthersSet: Set<String> = []

    /// No fields yet.
    init() {}

    /// No fields again, in place: the texts of the last request stay until overwritten, but
    /// nothing reads a text whose name has not come (``has(_:)``), so a stream's slot is
    /// emptied by clearing a few words instead of building and moving a whole new value.
    mutating func reset() {
        seenWellKnown = 0
        pathIsDeviceToken = false
        apnsIDCount = 0
        if firstDuplicate != nil { firstDuplicate = nil }
        if !seenOthers.isEmpty {
            seenOthers.removeAll(keepingCapacity: true)
            seenOthersSet.removeAll()
        }
    }

    /// The fields of `headers`, in order.
    init(_ headers: [(name: String, value: String)]) {
        for header in headers {
            var name = header.name
            var value = header.value
            name.withUTF8 { name in value.withUTF8 { value in add(name: name, value: value) } }
        }
    }

    /// The `apns-id` to echo in an error response: the client's, as sent, when it sent
    /// exactly one and it is a canonical UUID; nil otherwise, and the transport makes one up.
    var clientAPNsID: String? {
        guard apnsIDCount == 1, let apnsID else { return nil }
        return RequestValidator.canonicalUUID(apnsID)
    }

    /// Adds the next field of the header block.
    mutating func add(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        guard name.contains(where: HTTP2Request.isASCIICapital) else {
            return add(lowercaseName: name, value: value)
        }
        HTTP2Request.asciiLowercased(name).withUnsafeBufferPointer { add(lowercaseName: $0, value: value) }
    }

    /// Adds the next field, whose name has no capital: a connection's fields come from
    /// nghttp2, which resets a stream whose header names hold capitals, so it need not look.
    mutating func add(lowercaseName name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        guard let known = WellKnown(name) else {
            let text = String(decoding: name, as: UTF8.self)
            if !insertOther(text), firstDuplicate == nil { firstDuplicate = text }
            return
        }
        if known == .apnsID { apnsIDCount += 1 }
        let bit = UInt32(1) << known.rawValue
        guard seenWellKnown & bit == 0 else {
            if firstDuplicate == nil { firstDuplicate = String(decoding: name, as: UTF8.self) }
            return
        }
        seenWellKnown |= bit
        switch known {
        case .method: methodText = Self.text(value, usually: Self.methods)
        case .path:
            if let token = Self.deviceToken(inDevicePath: value) {
                pathToken = token
                pathIsDeviceToken = true
            } else {
                pathText = String(decoding: value, as: UTF8.self)
            }
        case .apnsID: apnsIDText = String(decoding: value, as: UTF8.self)
        case .expiration: expirationText = String(decoding: value, as: UTF8.self)
        case .priority: priorityText = Self.text(value, usually: Self.priorities)
        case .pushType: pushTypeText = Self.text(value, usually: Self.pushTypes)
        case .collapseID: collapseIDText = String(decoding: value, as: UTF8.self)
        case .topic: topicText = String(decoding: value, as: UTF8.self)
        case .authorization: authorizationText = String(decoding: value, as: UTF8.self)
        case .requestID: requestIDText = String(decoding: value, as: UTF8.self)
        case .channelID: channelIDText = String(decoding: value, as: UTF8.self)
        case .scheme, .authority, .contentLength, .contentType, .userAgent, .accept, .acceptEncoding: break
        }
    }

    private static let devicePathPrefix: StaticString = "/3/device/"

    /// The token of `/3/device/<token>` when `<token>` is an even number of lowercase hex
    /// digits within ``RequestValidator/maximumDeviceTokenHexDigits``; nil otherwise, and
    /// the validator looks at the path's text.
    private static func deviceToken(inDevicePath path: UnsafeBufferPointer<UInt8>) -> DeviceToken? {
        let prefix = devicePathPrefix
        let prefixLength = prefix.utf8CodeUnitCount
        let digits = path.count - prefixLength
        guard digits >= 2, digits <= RequestValidator.maximumDeviceTokenHexDigits, digits % 2 == 0,
            memcmp(path.baseAddress!, prefix.utf8Start, prefixLength) == 0
        else { return nil }
        return withUnsafeTemporaryAllocation(byteCount: digits / 2, alignment: 8) { bytes in
            let text = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(path)[prefixLength...])
            guard HexDigit.decodeLowercase(text, into: bytes) else { return nil }
            return DeviceToken(copying: UnsafeRawBufferPointer(bytes))
        }
    }

    /// The values most requests send for `:method`, `apns-priority` and `apns-push-type`.
    private static let methods = ["POST"]
    private static let priorities = ["10", "5", "1"]
    private static let pushTypes = PushType.known.map(\.rawValue)

    /// `bytes` as text: one of `candidates` when it spells one, which spares checking the
    /// bytes as UTF-8 and making a string, else a new string.
    private static func text(_ bytes: UnsafeBufferPointer<UInt8>, usually candidates: [String]) -> String {
        for candidate in candidates where candidate.utf8.count == bytes.count {
            var candidate = candidate
            if candidate.withUTF8({ memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 }) { return candidate }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether a field of that name came.
    private func has(_ known: WellKnown) -> Bool {
        seenWellKnown & (UInt32(1) << known.rawValue) != 0
    }

    /// Records a name outside ``WellKnown``; false when it was seen before.
    private mutating func insertOther(_ name: String) -> Bool {
        if !seenOthersSet.isEmpty { return seenOthersSet.insert(name).inserted }
        if seenOthers.contains(name) { return false }
        if seenOthers.count < 24 {
            seenOthers.append(name)
        } else {
            seenOthersSet = Set(seenOthers)
            seenOthersSet.insert(name)
            seenOthers = []
        }
        return true
    }

    /// The names the validator reads, and those every client sends besides, recognised by
    /// their bytes.
    private enum WellKnown: UInt32 {
        case method, path, apnsID, expiration, priority, pushType, collapseID, topic, authorization
        case scheme, authority, contentLength, contentType, userAgent, accept, acceptEncoding
        case requestID, channelID

        /// The name `bytes` (lowercase) spell, if one of these.
        init?(_ bytes: UnsafeBufferPointer<UInt8>) {
            func equals(_ literal: StaticString) -> Bool {
                memcmp(bytes.baseAddress!, literal.utf8Start, bytes.count) == 0
            }
            switch bytes.count {
            case 5 where equals(":path"): self = .path
            case 6 where equals("accept"): self = .accept
            case 7 where equals(":method"): self = .method
            case 7 where equals("apns-id"): self = .apnsID
            case 7 where equals(":scheme"): self = .scheme
            case 10 where equals("apns-topic"): self = .topic
            case 10 where equals(":authority"): self = .authority
            case 10 where equals("user-agent"): self = .userAgent
            case 12 where equals("content-type"): self = .contentType
            case 13 where equals("apns-priority"): self = .priority
            case 13 where equals("authorization"): self = .authorization
            case 14 where equals("apns-push-type"): self = .pushType
            case 14 where equals("content-length"): self = .contentLength
            case 15 where equals("apns-expiration"): self = .expiration
            case 15 where equals("accept-encoding"): self = .acceptEncoding
            case 15 where equals("apns-request-id"): self = .requestID
            case 15 where equals("apns-channel-id"): self = .channelID
            case 16 where equals("apns-collapse-id"): self = .collapseID
            default: return nil
            }
        }
    }
}
