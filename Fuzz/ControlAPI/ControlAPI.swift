// libFuzzer target: the control API's input, `ControlCommand(request:)` and the JSON readers.
//
// The input is an HTTP request in short: a first line "METHOD TARGET" (split at its first
// space), then the body, every byte after the line break:
//
//     POST /api/v1/faults
//     {"match":{"nth":2},"action":{"respond":"TooManyRequests"},"times":3}
//
// Its request types are internal to FakeAPNsDaemon, which it imports testable, as it does
// FakeAPNs for the JSON validator. Invariants: decoding never traps and
// throws only ControlError (400, 404, or 405 with the allowed methods); a body flagged too large
// is always 400 body_too_large; a decoded command comes from a method that may ask it and holds
// values in range (timeouts 0-60 s, positive ids, an unregister time within UInt32, device tokens of
// 1 to 100 bytes, else 400 invalid_token); a fault rule
// written as `GET /api/v1/faults` lists it decodes back to the same rule. For the body itself:
// whenever `JSONValidator.isSingleLineObject` accepts it (the daemon's log then copies it
// unparsed), `JSONValue.parse` accepts it as an object, and the other way round unless it holds
// a line break or a \u escape of a surrogate (left to the parser); and whatever the parser
// accepts serializes to text that parses back to an equal value and serializes to the same text.

import Foundation
@testable import FakeAPNs
@testable import FakeAPNsDaemon

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let input = count > 0 ? Array(UnsafeRawBufferPointer(start: start, count: count)) : []
    let lineEnd = input.firstIndex(of: UInt8(ascii: "\n")) ?? input.count
    let line = input[..<lineEnd]
    let space = line.firstIndex(of: UInt8(ascii: " ")) ?? lineEnd
    let method = String(decoding: line[..<space], as: UTF8.self)
    let target = String(decoding: line[min(space + 1, lineEnd)...], as: UTF8.self)
    let body = Array(input[min(lineEnd + 1, input.count)...])

    checkCommand(HTTPRequest(method: method, target: target, body: body), method: method)
    do {
        _ = try ControlCommand(request: HTTPRequest(method: method, target: target, bodyTooLarge: true))
        require(false, "a body flagged too large was taken")
    } catch let error as ControlError {
        require(error.status == 400 && error.code == "body_too_large", "too large body: \(error)")
    } catch {
        require(false, "ControlCommand threw \(type(of: error)): \(error)")
    }
    checkJSON(body)
    return 0
}

private func checkCommand(_ request: HTTPRequest, method: String) {
    let command: ControlCommand
    do {
        command = try ControlCommand(request: request)
    } catch let error as ControlError {
        require([400, 404, 405].contains(error.status) && !error.code.isEmpty && !error.message.isEmpty, "\(error)")
        if error.status == 405 {
            let allow = error.allow ?? []
            require(!allow.isEmpty && !allow.contains(method), "405 for \(method) allowing \(allow)")
        }
        return
    } catch {
        require(false, "ControlCommand threw \(type(of: error)): \(error)")
        return
    }
    for token in tokens(of: command) {
        require((1...DeviceToken.maximumByteCount).contains(token.count), "a token of \(token.count) bytes was taken")
    }
    let expectedMethod: String
    switch command {
    case .webAsset, .health, .metrics, .listDevices, .listPhones, .device, .listFeedback, .listFaults, .listDeliveries:
        expectedMethod = "GET"
    case .listNotifications(_, let page), .listRejections(_, let page):
        if let wait = page.wait {
            require(wait >= .zero && wait <= .seconds(ControlLimits.maximumWait), "wait \(wait)")
        }
        expectedMethod = "GET"
    case .listChannels(let bundleID):
        require(bundleID?.isEmpty != true, "an empty bundle filter")
        expectedMethod = "GET"
    case .channel(let id):
        require(!id.isEmpty, "an empty channel id")
        expectedMethod = "GET"
    case .createChannel(let bundleID, _, let id):
        require(!bundleID.isEmpty, "a channel for an empty bundle")
        if let id { require(Channel.isWellFormedID(id), "a channel with the id \(id)") }
        expectedMethod = "POST"
    case .deleteChannel(let id), .unsubscribe(_, let id):
        require(!id.isEmpty, "an empty channel id")
        expectedMethod = "DELETE"
    case .subscribe(_, let id):
        require(!id.isEmpty, "an empty channel id")
        expectedMethod = "POST"
    case .subscribers(let id, _, let limit):
        require(!id.isEmpty, "an empty channel id")
        require((1...ChannelRegistry.maximumPageSize).contains(limit), "a page of \(limit) subscribers")
        expectedMethod = "GET"
    case .notification(let sequence), .rejection(let sequence), .delivery(let sequence):
        require(sequence > 0, "sequence number \(sequence)")
        expectedMethod = "GET"
    case .nextNotification(_, let timeout), .nextRejection(_, let timeout), .nextDelivery(_, let timeout):
        require(timeout >= .zero && timeout <= .seconds(ControlLimits.maximumWait), "timeout \(timeout)")
        expectedMethod = "GET"
    case .fault(let id):
        require(id > 0, "fault id \(id)")
        expectedMethod = "GET"
    case .removeFault(let id):
        require(id > 0, "fault id \(id)")
        expectedMethod = "DELETE"
    case .clearNotifications, .clearRejections, .removeDevice, .clearFaults, .clearDeliveries:
        expectedMethod = "DELETE"
    case .registerDevice(_, let topic, _):
        require(topic?.isEmpty != true, "an empty topic was registered")
        expectedMethod = "POST"
    case .unregisterDevice(_, let at):
        if let at { require((0...Double(UInt32.max)).contains(at.timeIntervalSince1970), "unregistered at \(at)") }
        expectedMethod = "POST"
    case .addFeedback, .reset:
        expectedMethod = "POST"
    case .addFault(let rule):
        checkRoundTrip(rule)
        expectedMethod = "POST"
    case .setStrict:
        expectedMethod = "PUT"
    case .clock, .keys, .phoneLog, .screen:
        expectedMethod = "GET"
    case .nextPhoneDelivery(_, let timeout):
        require(timeout >= .zero && timeout <= .seconds(ControlLimits.maximumWait), "timeout \(timeout)")
        expectedMethod = "GET"
    case .deliveryLog(let uniqueID):
        require(!uniqueID.isEmpty, "an empty apns-unique-id")
        expectedMethod = "GET"
    case .app(let bundleID):
        require(!bundleID.isEmpty, "an empty bundle ID")
        expectedMethod = "GET"
    case .senderReport(let sender):
        require(sender?.isEmpty != true, "an empty sender filter")
        expectedMethod = "GET"
    case .describeApp(let bundleID, _):
        require(!bundleID.isEmpty, "an empty bundle ID")
        expectedMethod = "PUT"
    case .moveClock(let move):
        if case .advance(let interval) = move { require(interval >= .zero, "the clock moved back by \(interval)") }
        expectedMethod = "POST"
    case .launchApp(_, let bundleID), .forceQuitApp(_, let bundleID):
        require(!bundleID.isEmpty, "an empty bundle ID")
        expectedMethod = "POST"
    case .releaseBursts:
        expectedMethod = "POST"
    case .startLiveActivity(_, let bundleID, let type):
        require(!bundleID.isEmpty && type?.isEmpty != true, "an empty bundle ID or attributes type")
        require(
            bundleID.utf8.count <= AppBundle.maximumNameLength
                && (type?.utf8.count ?? 0) <= AppBundle.maximumNameLength, "a name past the bound")
        expectedMethod = "POST"
    case .updatePhone(_, let change):
        require(change.apps.keys.allSatisfy { !$0.isEmpty }, "an app with an empty bundle ID")
        expectedMethod = "PATCH"
    }
    require(method == expectedMethod, "\(method) decoded as \(command)")
}

/// The device tokens a command carries.
private func tokens(of command: ControlCommand) -> [DeviceToken] {
    switch command {
    case .listNotifications(let filter, _), .nextNotification(let filter, _): [filter.token].compactMap { $0 }
    case .listRejections(let filter, _), .nextRejection(let filter, _): [filter.token].compactMap { $0 }
    case .device(let token), .registerDevice(let token, _, _), .unregisterDevice(let token, _), .removeDevice(let token),
        .addFeedback(let token, _), .subscribe(let token, _), .unsubscribe(let token, _), .updatePhone(let token, _),
        .launchApp(let token, _), .forceQuitApp(let token, _), .releaseBursts(let token), .phoneLog(let token, _, _),
        .startLiveActivity(let token, _, _),
        .screen(let token), .nextPhoneDelivery(let token, _):
        [token]
    case .listDeliveries(let filter, _), .nextDelivery(let filter, _): [filter.token].compactMap { $0 }
    case .addFault(let rule):
        if case .token(let token) = rule.match { [token] } else { [] }
    default: []
    }
}

/// A fault rule as the API lists it, posted back, is the same rule.
private func checkRoundTrip(_ rule: FaultRule) {
    switch rule.match {
    case .nth(let n): require(n >= 1, "nth \(n)")
    case .topic(let topic): require(!topic.isEmpty, "empty topic")
    case .channel(let channelID): require(!channelID.isEmpty, "empty channel")
    case .token, .every: break
    }
    if case .delay(let delay) = rule.action {
        require(delay >= .zero && delay <= .milliseconds(ControlLimits.maximumDelayMilliseconds), "delay \(delay)")
    }
    if case .count(let count) = rule.times { require(count > 0, "times \(count)") }
    let listed: JSONValue = [
        "match": ControlJSON.match(rule.match), "action": ControlJSON.action(rule.action),
        "times": ControlJSON.times(rule.times),
    ]
    do {
        let again = try FaultRuleDecoder.decode(Array(listed.serialized().utf8))
        require(
            again.match == rule.match && again.action == rule.action && again.times == rule.times,
            "the rule \(rule) comes back as \(again)")
    } catch {
        require(false, "the listed rule \(listed.serialized()) does not decode: \(error)")
    }
}

private func checkJSON(_ body: [UInt8]) {
    let valid = body.withUnsafeBufferPointer { JSONValidator.isSingleLineObject($0) }
    let parsed = Result { () throws(JSONParseError) in try JSONValue.parse(body) }
    if valid {
        switch parsed {
        case .success(let value):
            require(value.objectValue != nil, "the validator accepts a body that parses to \(value)")
            require(!body.contains(0x0A) && !body.contains(0x0D), "the validator accepts a line break")
        case .failure(let error):
            require(false, "the validator accepts a body the parser refuses: \(error)")
        }
    }
    guard case .success(let value) = parsed else { return }
    // The other way round: the validator leaves only \u escapes of surrogates to the parser.
    let hasSurrogateEscape = body.indices.dropLast(2).contains {
        body[$0] == UInt8(ascii: "\\") && body[$0 + 1] == UInt8(ascii: "u") && body[$0 + 2] | 0x20 == UInt8(ascii: "d")
    }
    if value.objectValue != nil && !body.contains(0x0A) && !body.contains(0x0D) && !hasSurrogateEscape {
        require(valid, "the parser accepts an object on one line that the validator refuses")
    }
    let text = value.serialized()
    do {
        let again = try JSONValue(parsing: text)
        require(again == value, "\(text) parses back to another value")
        require(again.serialized() == text, "\(text) serializes again differently")
    } catch {
        require(false, "the serialized value \(text) does not parse: \(error)")
    }
}

private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("ControlAPI invariant: \(message())") }
}
