// libFuzzer target: HTTP/2 request validation (`RequestValidator`), headers and body to a
// notification or a reason.
//
// The input is text, so seeds read like requests:
//
//     com.example.app com.example.app.voip      <- line 1: the client certificate's topics
//     :method: POST                             <- header lines, "name: value", in order;
//     :path: /3/device/fe15a27d                    repeats kept (the name ends at the first
//     apns-topic: com.example.app                  ": " after its first character)
//                                               <- an empty line
//     {"aps":{"alert":"Hi"}}                    <- the body: every byte after it
//
// Each request is validated under every TopicAuthority (.any, .token, .certificate and
// .anyWithCertificate with the topics of line 1) by a validator with Apple's limits and by one with tiny ones. Invariants:
// an accepted request keeps Apple's rules (POST, /3/device/<even hex, 2-200 digits>, no
// repeated header, an apns-id 8-4-4-4-12 hex digits kept as sent, apns-expiration a UInt32, priority 10/5/1, a known
// push type whose topic suffix agrees, collapse id <= 64 bytes, an allowed
// well-formed topic, a body of 1...limit bytes carried unchanged); with an apns-topic header,
// .token, .any and .anyWithCertificate answer alike and .certificate accepts nothing .any
// refuses; without one, .anyWithCertificate takes a single-topic certificate's; a refusal is a
// 4xx with a detail, naming the path's token whenever the path held a valid one.
//
// The same input also goes through the channel management and broadcast rules: a path they
// route names a well-formed bundle and is never /3/device; a create body they accept is a JSON
// object; a channel id they accept decodes as base64.

import Foundation
@testable import FakeAPNs

private let validators = [
    RequestValidator(), RequestValidator(maximumPayloadSize: 48, maximumVoIPPayloadSize: 64),
]
private let generatedID = "0f0e0d0c-0b0a-4908-8706-050403020100"
private let generatedBits = UUIDBits(text: generatedID)!

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let input = count > 0 ? Array(UnsafeRawBufferPointer(start: start, count: count)) : []
    let (topics, request) = parseInput(input)
    _ = request.clientAPNsID
    for validator in validators {
        let any = validator.validate(request, topics: .any, newID: { generatedBits })
        let token = validator.validate(request, topics: .token, newID: { generatedBits })
        let certificate = validator.validate(request, topics: .certificate(topics: topics), newID: { generatedBits })
        check(any, request, authority: .any, validator)
        check(token, request, authority: .token, validator)
        check(certificate, request, authority: .certificate(topics: topics), validator)
        let lenient = validator.validate(request, topics: .anyWithCertificate(topics: topics), newID: { generatedBits })
        check(lenient, request, authority: .anyWithCertificate(topics: topics), validator)
        if request.firstValue(of: "apns-topic") != nil {
            require(same(any, token), "with apns-topic, .token and .any disagree: \(any) vs \(token)")
            require(same(any, lenient), "with apns-topic, .any and .anyWithCertificate disagree: \(any) vs \(lenient)")
            if case .accepted = certificate {
                require(same(any, certificate), ".certificate accepts what .any answers otherwise: \(any)")
            }
        }
    }
    checkChannelRules(request)
    return 0
}

/// The channel and broadcast APIs' pure rules on the same request.
private func checkChannelRules(_ request: HTTP2Request) {
    let path = request.path
    if let route = ChannelRoute(path: path) {
        require(!route.bundleID.isEmpty && !route.bundleID.contains("/"), "routed \(path) to bundle \(route.bundleID)")
        require(!path.hasPrefix("/3/"), "routed a device path \(path)")
        require(!route.methods.isEmpty, "no method for \(route)")
    }
    request.body.withUnsafeBytes { body in
        if case .success = ChannelRequests.storagePolicy(createBody: body) {
            require((try? JSONValue.parse(body))?.objectValue != nil, "accepted a create body that is not an object")
        }
    }
    if let id = request.firstValue(of: "apns-channel-id"), Channel.isWellFormedID(id) {
        require(Data(base64Encoded: id)?.isEmpty == false, "accepted channel id \(id)")
    }
    _ = ChannelRequests.clientRequestID(request.firstValue(of: "apns-request-id"))
}

/// Line 1: the topics; then "name: value" lines to the first empty line; then the body.
private func parseInput(_ input: [UInt8]) -> (topics: [String], request: HTTP2Request) {
    var lines: [ArraySlice<UInt8>] = []
    var body: [UInt8] = []
    var lineStart = 0
    var index = 0
    while index < input.count {
        if input[index] == UInt8(ascii: "\n") {
            let line = input[lineStart..<index]
            if line.isEmpty && !lines.isEmpty {
                body = Array(input[(index + 1)...])
                lineStart = input.count
                break
            }
            lines.append(line)
            lineStart = index + 1
        }
        index += 1
    }
    if lineStart < input.count { lines.append(input[lineStart...]) }
    let topics = lines.first.map { $0.split(separator: UInt8(ascii: " ")).map(text) } ?? []
    var headers: [(name: String, value: String)] = []
    for line in lines.dropFirst() {
        var split = line.endIndex
        var at = line.startIndex + 1
        while at + 1 < line.endIndex {
            if line[at] == UInt8(ascii: ":") && line[at + 1] == UInt8(ascii: " ") {
                split = at
                break
            }
            at += 1
        }
        let name = line[..<split]
        let value = split < line.endIndex ? line[(split + 2)...] : []
        headers.append((text(name), text(value)))
    }
    return (topics, HTTP2Request(headers: headers, body: body))
}

/// The token a refusal must name: the path's, lowercased, when it is `/3/device/` and 2 to 200
/// hex digits, an even number.
private func pathToken(_ path: String) -> String? {
    let prefix = Array("/3/device/".utf8)
    let bytes = Array(path.utf8)
    guard bytes.starts(with: prefix) else { return nil }
    let hex = bytes.dropFirst(prefix.count)
    guard hex.count % 2 == 0, (2...200).contains(hex.count), hex.allSatisfy({ HexDigit.value($0) != nil }) else {
        return nil
    }
    return String(decoding: hex.map { $0 | 0x20 }, as: UTF8.self)
}

/// Bytes as the transport turns them into a String (invalid UTF-8 replaced).
private func text(_ bytes: ArraySlice<UInt8>) -> String {
    String(decoding: bytes, as: UTF8.self)
}

private func check(
    _ result: RequestValidation, _ request: HTTP2Request, authority: TopicAuthority, _ validator: RequestValidator
) {
    guard case .accepted(let fields) = result else {
        if case .rejected(let reason, let detail, let token) = result {
            require((400...499).contains(reason.status) && !detail.isEmpty, "refusal \(reason) \(reason.status)")
            let expected = pathToken(request.firstValue(of: ":path") ?? "")
            let named = token?.hex ?? "no token"
            require(token?.hex == expected, "refusal \(reason) names \(named), the path \(expected ?? "none")")
        }
        return
    }
    func first(_ name: String) -> String? { request.firstValue(of: name) }
    let lowered = request.headers.map { HTTP2Request.asciiLowercased($0.name) }
    require(Set(lowered).count == lowered.count, "accepted repeated headers \(lowered)")
    require(first(":method") == "POST", "accepted method \(first(":method") ?? "none")")

    let path = Array((first(":path") ?? "").utf8)
    let prefix = Array("/3/device/".utf8)
    require(path.starts(with: prefix), "accepted path \(path)")
    let hex = path.dropFirst(prefix.count)
    require(hex.count % 2 == 0 && (2...200).contains(hex.count), "accepted a token of \(hex.count) digits")
    require(hex.allSatisfy { HexDigit.value($0) != nil }, "accepted a token that is not hex")
    require(Array(fields.deviceToken.hex.utf8) == hex.map { $0 | 0x20 }, "token \(fields.deviceToken.hex) for \(hex)")

    if let id = first("apns-id") {
        // Answered and recorded as sent, capitals included: clients match answers by it.
        require(!fields.apnsIDWasGenerated && fields.apnsID == id, "apns-id \(id) became \(fields.apnsID)")
        require(request.clientAPNsID == fields.apnsID, "clientAPNsID differs from the accepted apns-id")
        let bytes = Array(fields.apnsID.utf8)
        require(bytes.count == 36, "apns-id \(fields.apnsID) is not 36 characters")
        for (offset, byte) in bytes.enumerated() {
            let dash = [8, 13, 18, 23].contains(offset)
            require(dash ? byte == UInt8(ascii: "-") : "0123456789abcdefABCDEF".utf8.contains(byte), "apns-id \(id)")
        }
    } else {
        // A generated id is written in capitals, as APNs makes them.
        require(
            fields.apnsIDWasGenerated && fields.apnsID == generatedID.uppercased(), "no apns-id, but \(fields.apnsID)")
    }

    if let expiration = first("apns-expiration") {
        require(expiration.utf8.allSatisfy { (0x30...0x39).contains($0) }, "apns-expiration \(expiration)")
        require(fields.expiration != nil && UInt32(expiration) == fields.expiration, "apns-expiration \(expiration)")
    } else {
        require(fields.expiration == nil, "no apns-expiration, but \(fields.expiration as Any)")
    }

    let priority = first("apns-priority") ?? "10"
    require(["10", "5", "1"].contains(priority) && fields.priority.rawValue == Int(priority), "priority \(priority)")

    if let type = first("apns-push-type") {
        require(PushType(rawValue: type).isKnown && fields.pushType?.rawValue == type, "push type \(type)")
    } else {
        require(fields.pushType == nil, "no apns-push-type, but \(fields.pushType as Any)")
    }

    require(fields.collapseID == first("apns-collapse-id"), "collapse id changed")
    require((fields.collapseID?.utf8.count ?? 0) <= 64, "collapse id over 64 bytes")
    require(fields.authorization == first("authorization"), "authorization changed")

    if let topic = first("apns-topic") {
        require(fields.topic?.utf8.elementsEqual(topic.utf8) == true, "topic \(topic) became \(fields.topic as Any)")
        require(
            !topic.isEmpty && !topic.unicodeScalars.contains {
                $0.properties.isWhitespace || $0.properties.generalCategory == .control
            }, "accepted topic \(topic.debugDescription)")
    }
    switch authority {
    case .any:
        if first("apns-topic") == nil { require(fields.topic == nil, "a topic from nowhere") }
    case .anyWithCertificate(let topics):
        let unique = Set(topics.map { Array($0.utf8) })
        if first("apns-topic") == nil {
            let expected = unique.count == 1 ? unique.first : nil
            require(fields.topic.map { Array($0.utf8) } == expected, "topic \(fields.topic as Any) is not the certificate's only one")
        }
    case .token:
        require(first("apns-topic") != nil, "token authentication accepted no apns-topic")
    case .certificate(let topics):
        let unique = Set(topics.map { Array($0.utf8) })
        let topic = Array((fields.topic ?? "").utf8)
        require(fields.topic != nil && unique.contains(topic), "topic \(fields.topic as Any) is not the certificate's")
        if first("apns-topic") == nil { require(unique.count == 1, "no apns-topic with \(unique.count) topics") }
    }
    if let type = fields.pushType, let suffix = type.topicSuffix, let topic = fields.topic.map({ Array($0.utf8) }) {
        if suffix.isEmpty {
            for other in PushType.known {
                guard let otherSuffix = other.topicSuffix, !otherSuffix.isEmpty else { continue }
                require(!topic.ends(with: otherSuffix), "\(type) accepted on a topic ending in \(otherSuffix)")
            }
        } else {
            require(topic.count > suffix.utf8.count && topic.ends(with: suffix), "\(type) accepted on topic \(topic)")
        }
    }

    let isVoIP = fields.pushType == .voip
        || (fields.pushType == nil && fields.topic.map { Array($0.utf8).ends(with: ".voip") } == true)
    let limit = isVoIP ? validator.maximumVoIPPayloadSize : validator.maximumPayloadSize
    require((1...limit).contains(request.body.count), "accepted a body of \(request.body.count) bytes, limit \(limit)")
    require(fields.payload.bytes == request.body, "the payload differs from the body")
    // What the server and its users read from an accepted payload.
    _ = fields.payload.json
    _ = fields.payload.aps
    _ = fields.payload.description
}

/// The same answer: the same reason, or the same fields.
private func same(_ a: RequestValidation, _ b: RequestValidation) -> Bool {
    switch (a, b) {
    case (.rejected(let x, _, let xToken), .rejected(let y, _, let yToken)):
        return x == y && xToken == yToken
    case (.accepted(let x), .accepted(let y)):
        return x.deviceToken == y.deviceToken && x.apnsID == y.apnsID && x.apnsIDWasGenerated == y.apnsIDWasGenerated
            && x.expiration == y.expiration && x.priority == y.priority && x.topic == y.topic
            && x.pushType == y.pushType && x.collapseID == y.collapseID && x.authorization == y.authorization
            && x.payload.bytes == y.payload.bytes
    default:
        return false
    }
}

extension Array where Element == UInt8 {
    fileprivate func ends(with tail: String) -> Bool {
        count >= tail.utf8.count && suffix(tail.utf8.count).elementsEqual(tail.utf8)
    }
}

private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("HTTP2Request invariant: \(message())") }
}
