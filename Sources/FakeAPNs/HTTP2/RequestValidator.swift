#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Which topics a request may push to, as its connection's authentication decides.
enum TopicAuthority: Sendable, Hashable {
    /// No authentication: `apns-topic` is optional and any topic is allowed. A request without
    /// it has no topic: it belongs to no app (the lenient mode's simplest tests send none).
    case any
    /// No authentication, from a client that presented a certificate: any topic is allowed,
    /// and a request without `apns-topic` takes the certificate's topic when it has exactly
    /// one, as Apple takes it; none otherwise.
    case anyWithCertificate(topics: [String])
    /// Token (JWT) authentication: `apns-topic` is required, and any topic is allowed here:
    /// the token check (`ProviderTokenSession`) refuses a topic a topic-specific key does not
    /// list, once it knows the token's key.
    case token
    /// Certificate authentication: the topics the client certificate covers, that is its
    /// subject UID and the topics of Apple's topics extension (``CertificateTopics``).
    /// Repeats are harmless (a universal certificate's UID is usually also its `app` topic).
    /// A request without `apns-topic` gets the certificate's topic when it has exactly one.
    case certificate(topics: [String])
}

/// What ``RequestValidator`` decided about one request.
enum RequestValidation: Sendable {
    /// APNs would accept the request: here is what it says.
    case accepted(ValidatedRequest)
    /// APNs would refuse the request with `reason` (whose `status` is the HTTP status);
    /// `detail` says what was wrong, for logs and test failures, never for the response body;
    /// `deviceToken` is the path's token whenever the path held a valid one, so that the
    /// refusal's record names the device.
    case rejected(APNsReason, detail: String, deviceToken: DeviceToken? = nil)
}

/// A request that passed every check: the notification's fields, parsed and defaulted.
struct ValidatedRequest: Sendable {
    /// The device token from the path.
    var deviceToken: DeviceToken
    /// The client's `apns-id` (with the case it was sent in), or a new random UUID, as its bits.
    var apnsIDBits: UUIDBits
    /// The `apns-id` to answer: the client's as sent, or the new one (lowercase).
    var apnsID: String { apnsIDBits.text }
    /// Whether ``apnsID`` was made up because the client sent none.
    var apnsIDWasGenerated: Bool
    /// `apns-expiration` in UNIX seconds (0: deliver once, do not store); nil when absent.
    var expiration: UInt32?
    /// `apns-priority`; 10 when absent.
    var priority: Priority
    /// `apns-topic`, or the certificate's only topic when absent; nil when absent with no
    /// authentication.
    var topic: String? { present.contains(.topic) ? topicText : nil }
    /// `apns-push-type`, when sent.
    var pushType: PushType? { present.contains(.pushType) ? pushTypeValue : nil }
    /// `apns-collapse-id`, when sent.
    var collapseID: String? { present.contains(.collapseID) ? collapseIDText : nil }
    /// The raw `authorization` header (`bearer <JWT>`), for the transport's token check.
    var authorization: String? { present.contains(.authorization) ? authorizationText : nil }
    /// The body. Invalid JSON is accepted: APNs documents no reason for it, so the payload
    /// only records its problem in ``Payload/parseError``.
    var payload: Payload

    // The optional fields as plain values with a set of those present: an optional field is
    // copied through its type's value witnesses, several times a request.
    private var topicText: String
    private var pushTypeValue: PushType
    private var collapseIDText: String
    private var authorizationText: String
    private var present: Present

    private struct Present: OptionSet {
        let rawValue: UInt8
        static let topic = Present(rawValue: 1)
        static let pushType = Present(rawValue: 2)
        static let collapseID = Present(rawValue: 4)
        static let authorization = Present(rawValue: 8)
    }

    init(
        deviceToken: DeviceToken, apnsIDBits: UUIDBits, apnsIDWasGenerated: Bool, expiration: UInt32?,
        priority: Priority, topic: String?, pushType: PushType?, collapseID: String?, authorization: String?,
        payload: Payload
    ) {
        self.deviceToken = deviceToken
        self.apnsIDBits = apnsIDBits
        self.apnsIDWasGenerated = apnsIDWasGenerated
        self.expiration = expiration
        self.priority = priority
        self.payload = payload
        var present: Present = []
        if topic != nil { present.insert(.topic) }
        if pushType != nil { present.insert(.pushType) }
        if collapseID != nil { present.insert(.collapseID) }
        if authorization != nil { present.insert(.authorization) }
        self.present = present
        topicText = topic ?? ""
        pushTypeValue = pushType ?? .alert
        collapseIDText = collapseID ?? ""
        authorizationText = authorization ?? ""
    }
}

/// Checks one HTTP/2 request against the provider API's rules and answers as APNs would: the
/// notification's fields, or the reason Apple gives for refusing it.
///
/// Pure and total: no I/O, no force unwraps on input, time linear in the request's size, any
/// bytes in any field give an answer. Header values are compared exactly, without trimming.
///
/// ## Order of checks
/// When several things are wrong, the first failing check in this fixed order is the answer
/// (tests pin it):
///
/// 1. `:method` is `POST`, else 405 `MethodNotAllowed`.
/// 2. `:path` is `/3/device/<token>`, else 404 `BadPath`; `/3/device` and `/3/device/` give
///    400 `MissingDeviceToken`. A `<token>` holding `/` is another path (`BadPath`); one
///    holding a query string is a bad token (step 4).
/// 3. No header name, pseudo-headers and unknown headers included, appears twice, else
///    `DuplicateHeaders`.
/// 4. The token is 2 to ``maximumDeviceTokenHexDigits`` hex digits (either case), an even
///    number, and nothing else, else `BadDeviceToken`.
/// 5. `apns-id`, when present, is a canonical 8-4-4-4-12 UUID (either case), else
///    `BadMessageId`. It is answered as sent: APNs echoes "the same value found in" the
///    request, and clients match answers to requests by it.
/// 6. `apns-expiration`, when present, is decimal digits only whose value fits `UInt32`,
///    else `BadExpirationDate`.
/// 7. `apns-priority`, when present, is exactly `10`, `5` or `1`, else `BadPriority`.
/// 8. `apns-push-type`, when present, is a type Apple documents (``PushType/known``), else
///    `InvalidPushType`.
/// 9. `apns-collapse-id`, when present, is at most 64 UTF-8 bytes, else `BadCollapseId`.
/// 10. `apns-topic`, when present, is not empty and holds no whitespace or control
///     character, else `BadTopic`.
/// 11. The topic is allowed by the ``TopicAuthority``, else `MissingTopic` or
///     `TopicDisallowed`.
/// 12. The topic's suffix agrees with the push type (when both are known), else
///     `InvalidPushType` (`DeviceTokenNotForTopic` for a `liveactivity` push).
/// 13. The body is not empty, else `PayloadEmpty`.
/// 14. The body fits the limit, else 413 `PayloadTooLarge`.
///
/// A `background` push at priority 10 (the default) is accepted: Apple calls it an error, but
/// APNs is seen to answer it 200, so the push lint reports it (``LintRule/backgroundAtPriority10``).
///
/// ```swift
/// let validator = RequestValidator()
/// switch validator.validate(request, topics: .certificate(topics: ["com.example.app"])) {
/// case .accepted(let fields): deliver(fields)
/// case .rejected(let reason, let detail): respond(reason.status, reason.rawValue, log: detail)
/// }
/// ```
struct RequestValidator: Sendable {
    /// The longest token accepted in the path, in hex digits: 100 bytes. Today's tokens are
    /// 32 bytes; Apple warns they vary and will grow, and 100 bytes is the size it once
    /// announced as the ceiling. Anything longer is `BadDeviceToken`.
    static let maximumDeviceTokenHexDigits = 2 * DeviceToken.maximumByteCount
    /// The longest `apns-collapse-id`, in UTF-8 bytes.
    static let maximumCollapseIDBytes = 64

    /// The largest body accepted for every push type but VoIP (Apple: 4096).
    var maximumPayloadSize: Int
    /// The largest body accepted for VoIP pushes (Apple: 5120). A request without
    /// `apns-push-type` whose topic ends in `.voip` is a VoIP push here too, as PushKit
    /// clients from before push types send them.
    var maximumVoIPPayloadSize: Int

    /// A validator with Apple's payload limits, or others.
    init(maximumPayloadSize: Int = 4096, maximumVoIPPayloadSize: Int = 5120) {
        self.maximumPayloadSize = maximumPayloadSize
        self.maximumVoIPPayloadSize = maximumVoIPPayloadSize
    }

    /// Checks `request` in the documented order; `topics` says which topics its connection
    /// may push to; `newID` makes the `apns-id` of a request that has none (written in capitals).
    func validate(
        _ request: HTTP2Request, topics: TopicAuthority, newID: () -> UUIDBits = { RandomUUID.makeBits() }
    ) -> RequestValidation {
        var payloads = PayloadArena()
        return request.body.withUnsafeBytes { body in
            validate(RequestHeaderFields(request.headers), body: body, topics: topics, newID: newID, payloads: &payloads)
        }
    }

    /// Checks a request given as its collected header fields and its body, as a connection
    /// holds it; the same checks in the same order as ``validate(_:topics:newID:)``. An
    /// accepted request's payload is copied into `payloads`, the connection's chunks.
    func validate(
        _ fields: RequestHeaderFields, body: UnsafeRawBufferPointer, topics: TopicAuthority, newID: () -> UUIDBits,
        payloads: inout PayloadArena
    ) -> RequestValidation {
        // 1-4: method, path, duplicates, token.
        let method = fields.method ?? ""
        guard method == "POST" else {
            return .rejected(
                .methodNotAllowed, detail: "method \(Self.quoted(method)) is not POST", deviceToken: fields.pathDeviceToken)
        }
        let deviceToken: DeviceToken
        if fields.pathIsDeviceToken {
            // `/3/device/<lowercase hex>`, every request's path, passed steps 2 and 4 as the
            // field arrived; it skips the text route (an enum to build and destroy).
            if let duplicate = fields.firstDuplicate { return Self.duplicated(duplicate, deviceToken: fields.pathToken) }
            deviceToken = fields.pathToken
        } else {
            switch Self.checkedToken(fields) {
            case .token(let token): deviceToken = token
            case .rejected(let validation): return validation
            }
        }
        return validateHeaders(fields, deviceToken: deviceToken, body: body, topics: topics, newID: newID, payloads: &payloads)
    }

    /// The path's token, after steps 2 to 4 for a path given as text.
    private enum CheckedToken {
        case token(DeviceToken)
        case rejected(RequestValidation)
    }

    /// Steps 2 to 4 for a path that is not `/3/device/<lowercase hex>`: the path, duplicates,
    /// the token.
    private static func checkedToken(_ fields: RequestHeaderFields) -> CheckedToken {
        let path = fields.path ?? ""
        let tokenRange: Range<Int>
        switch Self.tokenRange(inPath: path) {
        case .token(let range): tokenRange = range
        case .missing:
            return .rejected(.rejected(.missingDeviceToken, detail: "path \(Self.quoted(path)) has no device token"))
        case .badPath:
            return .rejected(.rejected(.badPath, detail: "path \(Self.quoted(path)) is not /3/device/<token>"))
        }
        if let duplicate = fields.firstDuplicate {
            return .rejected(duplicated(duplicate, deviceToken: strictToken(path, tokenRange)))
        }
        guard let deviceToken = Self.strictToken(path, tokenRange) else {
            let tokenText = Substring(path.utf8.dropFirst(tokenRange.lowerBound))
            return .rejected(.rejected(
                .badDeviceToken,
                detail: "device token \(Self.quoted(String(tokenText))) is not an even number of hex digits, 2 to"
                    + " \(Self.maximumDeviceTokenHexDigits)"))
        }
        return .token(deviceToken)
    }

    /// Step 3's refusal: the header `name` came twice.
    private static func duplicated(_ name: String, deviceToken: DeviceToken?) -> RequestValidation {
        .rejected(.duplicateHeaders, detail: "header \(quoted(name)) appears more than once", deviceToken: deviceToken)
    }

    /// Steps 5 to 14, for a request whose path named `deviceToken`.
    private func validateHeaders(
        _ fields: RequestHeaderFields, deviceToken: DeviceToken, body: UnsafeRawBufferPointer, topics: TopicAuthority,
        newID: () -> UUIDBits, payloads: inout PayloadArena
    ) -> RequestValidation {
        // 5-9: each header on its own.
        let apnsID: UUIDBits
        var apnsIDWasGenerated = true
        if let value = fields.apnsID {
            guard let canonical = UUIDBits(text: value) else {
                return .rejected(
                    .badMessageId, detail: "apns-id \(Self.quoted(value)) is not a UUID 8-4-4-4-12",
                    deviceToken: deviceToken)
            }
            apnsID = canonical
            apnsIDWasGenerated = false
        } else {
            // APNs makes its ids in capitals.
            apnsID = newID().upperCased
        }
        var expiration: UInt32?
        if let value = fields.expiration {
            guard let seconds = Self.decimalUInt32(value) else {
                return .rejected(
                    .badExpirationDate,
                    detail: "apns-expiration \(Self.quoted(value)) is not a decimal number of seconds from 0 to"
                        + " \(UInt32.max)",
                    deviceToken: deviceToken)
            }
            expiration = seconds
        }
        var priority = Priority.immediately
        if let value = fields.priority {
            guard let known = Self.priority(value) else {
                return .rejected(
                    .badPriority, detail: "apns-priority \(Self.quoted(value)) is not 10, 5 or 1",
                    deviceToken: deviceToken)
            }
            priority = known
        }
        var pushType: PushType?
        if let value = fields.pushType {
            let type = PushType(rawValue: value)
            guard type.isKnown else {
                return .rejected(
                    .invalidPushType, detail: "apns-push-type \(Self.quoted(value)) is not a known type",
                    deviceToken: deviceToken)
            }
            pushType = type
        }
        if let collapseID = fields.collapseID, collapseID.utf8.count > Self.maximumCollapseIDBytes {
            return .rejected(
                .badCollapseId,
                detail: "apns-collapse-id is \(collapseID.utf8.count) bytes, over \(Self.maximumCollapseIDBytes)",
                deviceToken: deviceToken)
        }

        // 10-12: the topic, and how it agrees with the push type.
        if let value = fields.topic, !Self.isWellFormedTopic(value) {
            return .rejected(
                .badTopic,
                detail: "apns-topic \(Self.quoted(value)) is empty or holds whitespace or control characters",
                deviceToken: deviceToken)
        }
        let topic: String?
        switch Self.resolveTopic(fields.topic, authority: topics) {
        case .topic(let resolved): topic = resolved
        case .rejected(let reason, let detail): return .rejected(reason, detail: detail, deviceToken: deviceToken)
        }
        if let pushType, let topic, let problem = Self.suffixDisagreement(pushType: pushType, topic: topic) {
            // Apple documents no reason for a topic whose suffix contradicts the push type;
            // InvalidPushType, with a detail naming both, is the mapping the transport's
            // integrator accepted. A Live Activity push to a topic without
            // `.push-type.liveactivity` is answered DeviceTokenNotForTopic instead, the reason
            // the device-delivery notes choose (a guess: Apple names none): the token is the
            // activity's, and the topic is not its app's Live Activity topic.
            let reason: APNsReason = pushType == .liveactivity ? .deviceTokenNotForTopic : .invalidPushType
            return .rejected(reason, detail: problem, deviceToken: deviceToken)
        }

        // 13-14: the body.
        guard body.count > 0 else {
            return .rejected(.payloadEmpty, detail: "the body is empty", deviceToken: deviceToken)
        }
        let isVoIP = pushType == .voip || (pushType == nil && topic.map { Self.hasSuffix($0, ".voip") } == true)
        let limit = isVoIP ? maximumVoIPPayloadSize : maximumPayloadSize
        guard body.count <= limit else {
            return .rejected(
                .payloadTooLarge,
                detail: "the body is \(body.count) bytes, over the \(isVoIP ? "VoIP " : "")limit of \(limit)",
                deviceToken: deviceToken)
        }

        return .accepted(
            ValidatedRequest(
                deviceToken: deviceToken, apnsIDBits: apnsID, apnsIDWasGenerated: apnsIDWasGenerated,
                expiration: expiration, priority: priority, topic: topic, pushType: pushType,
                collapseID: fields.collapseID, authorization: fields.authorization,
                payload: payloads.payload(copying: body)))
    }

    // MARK: - Path and token

    /// What the path says about the token.
    private enum PathToken {
        /// The token's place in the path's UTF-8 bytes.
        case token(Range<Int>)
        case missing
        case badPath
    }

    private static func tokenRange(inPath path: String) -> PathToken {
        var path = path
        return path.withUTF8 { bytes in
            let prefix: StaticString = "/3/device"
            let prefixLength = prefix.utf8CodeUnitCount
            guard bytes.count >= prefixLength, memcmp(bytes.baseAddress!, prefix.utf8Start, prefixLength) == 0 else {
                return .badPath
            }
            guard bytes.count > prefixLength else { return .missing }
            guard bytes[prefixLength] == UInt8(ascii: "/") else { return .badPath }
            let token = prefixLength + 1..<bytes.count
            if token.isEmpty { return .missing }
            if bytes[token].contains(UInt8(ascii: "/")) { return .badPath }
            return .token(token)
        }
    }

    /// The device token of `path` when it is `/3/device/<token>` with a valid token, for a
    /// refusal decided before validation that should still name the device.
    static func deviceToken(inPath path: String) -> DeviceToken? {
        guard case .token(let range) = tokenRange(inPath: path) else { return nil }
        return strictToken(path, range)
    }

    /// The token's bytes when the path's bytes in `range` are only hex digits, an even number
    /// of them, within the limit; unlike ``DeviceToken/init(hex:)``, no spaces or brackets.
    private static func strictToken(_ path: String, _ range: Range<Int>) -> DeviceToken? {
        guard range.count >= 2, range.count <= maximumDeviceTokenHexDigits, range.count % 2 == 0 else { return nil }
        var path = path
        return path.withUTF8 { text in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: range.count / 2) { bytes in
                var index = range.lowerBound
                var count = 0
                let valid = hexValues.withUnsafeBufferPointer { values in
                    while index < range.upperBound {
                        let high = values[Int(text[index])]
                        let low = values[Int(text[index + 1])]
                        guard high | low < 16 else { return false }
                        bytes[count] = high << 4 | low
                        count += 1
                        index += 2
                    }
                    return true
                }
                guard valid else { return nil }
                return DeviceToken(copying: UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: bytes[0..<count])))
            }
        }
    }

    /// The value of each byte as a hex digit (either case), 0xFF for the others: a table, as
    /// the 64 digits of every request's token go through it.
    private static let hexValues: [UInt8] = (0...255).map { HexDigit.value(UInt8($0)) ?? 0xFF }

    // MARK: - Header values

    /// The priority an `apns-priority` value names: exactly `10`, `5` or `1`; nil otherwise.
    static func priority(_ value: String) -> Priority? {
        switch value {
        case "10": .immediately
        case "5": .consideringDevicePower
        case "1": .prioritizingPowerEfficiency
        default: nil
        }
    }

    /// `text`, as it is, when it is a canonical UUID: 8-4-4-4-12 hex digits in either case.
    /// APNs answers a client's `apns-id` and `apns-request-id` with the value it sent, never
    /// lowercased, as clients match answers to requests by it.
    static func canonicalUUID(_ text: String) -> String? {
        UUIDBits(text: text) == nil ? nil : text
    }

    /// The value of `text` when it is one or more decimal digits (no sign, no spaces) and
    /// fits `UInt32`.
    static func decimalUInt32(_ text: String) -> UInt32? {
        guard !text.utf8.isEmpty else { return nil }
        var value: UInt32 = 0
        for byte in text.utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (shifted, overflowMultiplying) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowAdding) = shifted.addingReportingOverflow(UInt32(byte - UInt8(ascii: "0")))
            guard !overflowMultiplying, !overflowAdding else { return nil }
            value = sum
        }
        return value
    }


    // MARK: - Topic

    /// A topic has at least one character and no whitespace or control character.
    static func isWellFormedTopic(_ topic: String) -> Bool {
        // Printable ASCII, as every real topic is, answers without Unicode tables.
        var text = topic
        if text.withUTF8({ bytes in !bytes.isEmpty && !bytes.contains { $0 <= 0x20 || $0 >= 0x7F } }) { return true }
        return !topic.isEmpty
            && !topic.unicodeScalars.contains {
                $0.properties.isWhitespace || $0.properties.generalCategory == .control
            }
    }

    /// The outcome of matching a topic with the connection's authority.
    private enum ResolvedTopic {
        case topic(String?)
        case rejected(APNsReason, detail: String)
    }

    private static func resolveTopic(_ topic: String?, authority: TopicAuthority) -> ResolvedTopic {
        switch authority {
        case .any:
            return .topic(topic)
        case .anyWithCertificate(let listed):
            if let topic { return .topic(topic) }
            var seen = Set<[UInt8]>()
            let distinct = listed.filter { seen.insert(Array($0.utf8)).inserted }
            return .topic(distinct.count == 1 ? distinct.first : nil)
        case .token:
            guard let topic else {
                return .rejected(.missingTopic, detail: "token authentication needs apns-topic")
            }
            return .topic(topic)
        case .certificate(let listed):
            // Byte equality: canonically equivalent Unicode spellings are different topics.
            if let topic, listed.contains(where: { sameBytes($0, topic) }) {
                return .topic(topic)
            }
            var allowed: [String] = []
            var seen = Set<[UInt8]>()
            for candidate in listed where seen.insert(Array(candidate.utf8)).inserted {
                allowed.append(candidate)
            }
            if let topic {
                // Byte equality: canonically equivalent Unicode spellings are different topics.
                guard allowed.contains(where: { $0.utf8.elementsEqual(topic.utf8) }) else {
                    return .rejected(
                        .topicDisallowed,
                        detail: "apns-topic \(quoted(topic)) is not among the certificate's topics \(allowed)")
                }
                return .topic(topic)
            }
            guard allowed.count == 1, let only = allowed.first else {
                let listing = allowed.isEmpty ? "none" : "\(allowed.count): \(allowed)"
                return .rejected(
                    .missingTopic,
                    detail: "no apns-topic, and the certificate's topics are not exactly one (\(listing))")
            }
            return .topic(only)
        }
    }

    /// Why `topic` does not suit `pushType`, or nil when it does. A type with a suffix needs a
    /// topic ending in it after a non-empty bundle ID; `alert` and `background` (no suffix)
    /// need a topic ending in no other type's suffix; `mdm` takes any topic.
    private static func suffixDisagreement(pushType: PushType, topic: String) -> String? {
        let suffix = knownSuffixes.first(where: { $0.type == pushType }).map(\.suffix) ?? pushType.topicSuffix
        guard let suffix else { return nil }
        if suffix.isEmpty {
            var topicText = topic
            let clash = topicText.withUTF8 { topic in
                suffixedTypes.first { Self.hasSuffix(topic, $0.bytes) }
            }
            guard let clash else { return nil }
            return "apns-push-type \(pushType) does not match apns-topic \(quoted(topic)):"
                + " the suffix \(clash.suffix) is for push type \(clash.type)"
        }
        guard topic.utf8.count > suffix.utf8.count, hasSuffix(topic, suffix) else {
            return "apns-push-type \(pushType) does not match apns-topic \(quoted(topic)):"
                + " it needs a topic <bundle>\(suffix)"
        }
        return nil
    }

    /// Every known push type with its topic suffix, made once: the `topicSuffix` switch
    /// compares text case by case, and every request with a push type asks.
    private static let knownSuffixes: [(type: PushType, suffix: String?)] = PushType.known.map { ($0, $0.topicSuffix) }

    /// The known push types whose topics end in a suffix, with it, in ``PushType/known``'s
    /// order: made once, as every `alert` request checks its topic against them all.
    private static let suffixedTypes: [(type: PushType, suffix: String, bytes: [UInt8])] =
        PushType.known.compactMap { type in
            guard let suffix = type.topicSuffix, !suffix.isEmpty else { return nil }
            return (type, suffix, Array(suffix.utf8))
        }

    // MARK: - Text

    /// Byte-wise suffix test, free of Unicode equivalence surprises.
    private static func hasSuffix(_ text: String, _ suffix: String) -> Bool {
        var text = text
        var suffix = suffix
        return text.withUTF8 { text in
            suffix.withUTF8 { suffix in
                guard text.count >= suffix.count else { return false }
                guard !suffix.isEmpty else { return true }
                return memcmp(text.baseAddress! + (text.count - suffix.count), suffix.baseAddress!, suffix.count) == 0
            }
        }
    }

    /// Whether `text` ends in `suffix`, compared from the last byte, where topics differ.
    private static func hasSuffix(_ text: UnsafeBufferPointer<UInt8>, _ suffix: [UInt8]) -> Bool {
        guard text.count >= suffix.count else { return false }
        let offset = text.count - suffix.count
        var index = suffix.count
        while index > 0 {
            index -= 1
            if text[offset + index] != suffix[index] { return false }
        }
        return true
    }

    /// Byte-wise equality, free of Unicode equivalence surprises.
    private static func sameBytes(_ text: String, _ other: String) -> Bool {
        text.utf8.count == other.utf8.count && hasSuffix(text, other)
    }

    /// `value` quoted and escaped for a detail, cut to 80 Unicode scalars so that a huge header
    /// makes a short log line.
    private static func quoted(_ value: String) -> String {
        let limit = 80
        guard value.unicodeScalars.count > limit else { return value.debugDescription }
        return String(String.UnicodeScalarView(value.unicodeScalars.prefix(limit))).debugDescription + "…"
    }
}
