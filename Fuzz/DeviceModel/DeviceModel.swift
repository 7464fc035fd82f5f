// libFuzzer target: the device model (`FakeAPNsServer.device(_:)`), the server clock and the push
// lint, driven by a sequence of operations on a server never started. Pushes come in by the real
// front door, in process: an `HTTP2Connection` reads one end of a socket pair (HTTP/2 through
// nghttp2, or HTTP/1.1 through the plaintext listener's `PlaintextSession`), so the validator,
// the policy, the intake, the lint stage and the model run as for a client's request.
//
// The input is text: one operation a line (at most 256), words split at spaces; an empty line, a
// `#` line and an unknown operation do nothing. PHONE: a, b, c or d (any word: its first byte
// picks one of four tokens). Numbers are Int64 text, or max, min.
//
//   push PHONE TOPIC FIELD...    a device push; TOPIC: app (com.example.app), la (its
//                                .push-type.liveactivity), voip (its .voip), or as written
//   cast CHANNEL FIELD...        a broadcast to a channel of com.example.app (id: the word in
//                                base64); push type liveactivity and priority 10 by default
//   channel CHANNEL [store] PHONE...  creates it (store: policy 1, else 0), subscribes phones
//     FIELDs, any order. Headers: via=h1 (HTTP/1.1, else HTTP/2), type= (empty: none; default
//     liveactivity on an la topic), prio=, exp= (apns-expiration), collapse=. The aps: alert[=T]
//     badge=N sound[=S] ca (content-available) category=C level=L (interruption-level) event=E
//     ts=N (timestamp) stale=N (stale-date) dismiss=N (dismissal-date) relevance=N state[=N]
//     (content-state {"n":N}) attrs (attributes-type, attributes); or json=BODY, the rest of the
//     line. A value of digits, signs, dots and e goes in as written (1e300, -1), others as strings.
//   advance SECONDS [ATTOSECONDS] | set SECONDS|future|past | realtime
//                                server.clock: advance(by:); set(to:) a Double since 1970 (1e300,
//                                nan, inf) or .distantFuture/.distantPast; returnToRealTime()
//                                ("real time" is fixed at 1750000000 so that seeds replay alike)
//   update PHONE KEY=VALUE...    phone.update {}: online= power= awake= lowpower= refresh=
//                                debugger= frequent= replace= (1: true); perhour= perday= (or nil)
//                                la= (budgets); seed=N|latest; grace=SECONDS; then app=BUNDLE and
//                                its installed= auth= state= present=banner,list,sound,badge
//   launch PHONE BUNDLE | quit PHONE BUNDLE | bursts PHONE
//   app BUNDLE categories=A,B sounds=A,B entitlements=time-sensitive,critical-alerts
//   screen PHONE | log PHONE | pop PHONE | describe PHONE   reads: a delivery popped without
//                                waiting; the daemon's JSON of the phone, as `update` answers too
//   trace                        server.deliveryLog(uniqueID:) of the last push, its record's JSON
//
// Invariants, after each operation and for every phone described at the end: nothing traps; the
// clock's currentDate stays within UnixTime.range; every date read (log, screen, deliveries) is
// written by Timestamp.rfc3339 as RFC 3339 with a year of UnixTime.range; a phone's log names
// only its token, within the log limit; a trace finds a device push's entries and only its unique
// id's; the daemon's JSON of a phone or a record parses back.

import Foundation
@testable import FakeAPNs
@testable import FakeAPNsDaemon

private let realTime = Date(timeIntervalSince1970: 1_750_000_000)
private let logLimit = 64
private let tokens: [DeviceToken] = (0..<4).map { phone in
    DeviceToken(bytes: (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ phone &* 64) })
}
private let topicAliases = [
    "app": "com.example.app", "la": "com.example.app.push-type.liveactivity", "voip": "com.example.app.voip",
]
/// What a connection asks of its listener (timeouts, whether it stops): one never started.
private let listener = TLSListener(
    name: "fuzz", host: "127.0.0.1", port: 0, context: nil, connectionIDs: ConnectionCounter(),
    budget: ConnectionBudget(perListener: 1, total: 1, reservedDescriptors: 0)
) { _ in }

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let input = count > 0 ? Array(UnsafeRawBufferPointer(start: start, count: count)) : []
    var configuration = FakeAPNsServer.Configuration(clock: { realTime })
    configuration.deviceLogLimit = logLimit
    let server = FakeAPNsServer(configuration: configuration)
    let policy = Policy(strict: false, environment: .sandbox, feedback: server.feedback, clock: server.clock)
    let context = HTTP2Context(
        validator: RequestValidator(), authentication: .none, verifier: nil, policy: policy, intake: server.intake,
        clock: server.clock, tokenSightings: server.tokenSightings, managementOnly: false, audit: server.audit)
    for line in input.split(separator: UInt8(ascii: "\n")).prefix(256) {
        let text = String(decoding: line, as: UTF8.self)
        perform(text, text.split(separator: " ").map(String.init), server, context)
        let now = server.clock.currentDate.timeIntervalSince1970
        require(
            now >= Double(UnixTime.range.lowerBound) && now < Double(UnixTime.range.upperBound) + 1,
            "after \(text.debugDescription) the clock reads \(now) s since 1970, outside UnixTime.range")
    }
    for token in server.describedDevices { check(server.device(token)) }
    return 0
}

private func perform(_ line: String, _ words: [String], _ server: FakeAPNsServer, _ context: HTTP2Context) {
    guard let operation = words.first else { return }
    let arguments = Array(words.dropFirst())
    let phone = { server.device(token(arguments.first ?? "")) }
    let pairs = arguments.dropFirst().map { word -> (key: String, value: String) in
        let split = word.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        return (key: split[0], value: split.count > 1 ? split[1] : "")
    }[...]
    switch operation {
    case "push" where arguments.count >= 2:
        let topic = topicAliases[arguments[1]] ?? arguments[1]
        let fields = pairs.dropFirst().reduce(into: [:]) { $0[$1.key] = $1.value }
        var headers = [(":path", "/3/device/" + token(arguments[0]).hex), ("apns-topic", topic)]
        if fields["type"] == nil, topic.hasSuffix(".liveactivity") {
            headers.append(("apns-push-type", "liveactivity"))
        }
        send(headers, fields, payload(fields, line), context)
    case "cast" where !arguments.isEmpty:
        let fields = pairs.reduce(into: [:]) { $0[$1.key] = $1.value }
        var headers = [(":path", "/4/broadcasts/apps/com.example.app"), ("apns-channel-id", channelID(arguments[0]))]
        if fields["type"] == nil { headers.append(("apns-push-type", "liveactivity")) }
        if fields["prio"] == nil { headers.append(("apns-priority", "10")) }
        send(headers, fields, payload(fields, line), context)
    case "channel" where !arguments.isEmpty:
        let id = channelID(arguments[0])
        let policy: Channel.StoragePolicy = arguments.contains("store") ? .mostRecentMessage : .noStorage
        _ = try? server.channels.create(bundleID: "com.example.app", storagePolicy: policy, id: id)
        for word in arguments.dropFirst() where word != "store" { try? server.channels.subscribe(token(word), to: id) }
    case "advance":
        let (seconds, attoseconds) = (int64(arguments.first ?? ""), int64(arguments.count > 1 ? arguments[1] : ""))
        server.clock.advance(by: Duration(secondsComponent: seconds, attosecondsComponent: attoseconds))
    case "set":
        let word = arguments.first ?? ""
        server.clock.set(to: word == "future" ? .distantFuture : word == "past" ? .distantPast
            : Date(timeIntervalSince1970: Double(word) ?? 0))
    case "realtime": server.clock.returnToRealTime()
    case "update":
        // The control API answers a change with the phone.
        phone().update { change(&$0, pairs) }
        check(phone())
    case "launch": phone().launchApp(arguments.count > 1 ? arguments[1] : "com.example.app")
    case "quit": phone().forceQuit(arguments.count > 1 ? arguments[1] : "com.example.app")
    case "bursts": phone().releaseBursts()
    case "app" where !arguments.isEmpty:
        var bundle = AppBundle()
        for (key, value) in pairs {
            let names = Set(value.split(separator: ",").map(String.init))
            if key == "categories" { bundle.categories = names }
            if key == "sounds" { bundle.sounds = names }
            if key == "entitlements" { bundle.entitlements = Set(names.compactMap(AppBundle.Entitlement.init)) }
        }
        server.apps[arguments[0]] = bundle
    case "screen": checkScreen(phone().screen)
    case "log": checkLog(phone().log, of: phone().token)
    case "pop":
        if let delivery = try? phone().deliveries.pop(timeout: .zero) {
            checkDate(delivery.deliveredAt, "a delivery")
            roundTrip(PhoneJSON.delivery(delivery), "a delivery")
        }
    case "describe": check(phone())
    case "trace":
        guard let last = server.notificationHistory.list().last else { return }
        roundTrip(last.jsonObject, "a record")
        guard let uniqueID = last.uniqueID else { return }
        let entries = server.deliveryLog(uniqueID: uniqueID)
        require(last.format == .broadcast || !entries.isEmpty, "no log entry traces device push \(uniqueID)")
        for entry in entries {
            require(entry.uniqueID?.lowercased() == uniqueID.lowercased(), "trace \(uniqueID) found \(entry)")
            checkDate(entry.at, "a traced entry")
        }
    default: break
    }
}

/// The settings `pairs` change, in order (an `app=` names the app the next app keys change).
private func change(_ settings: inout DeviceSettings, _ pairs: ArraySlice<(key: String, value: String)>) {
    var app = "com.example.app"
    for (key, value) in pairs {
        let on = value == "1"
        switch key {
        case "online": settings.isOnline = on
        case "power": settings.isPowerRestricted = on
        case "awake": settings.isAwake = on
        case "lowpower": settings.isLowPowerMode = on
        case "refresh": settings.backgroundAppRefresh = on
        case "debugger": settings.isDebuggerAttached = on
        case "frequent": settings.frequentLiveActivityUpdates = on
        case "replace": settings.replacementPresentsAgain = on
        case "perhour": settings.backgroundPushesPerHour = Int(int64(value))
        case "perday": settings.backgroundPushesPerDay = value == "nil" ? nil : Int(int64(value))
        case "la": settings.liveActivityUpdatesPerHour = Int(int64(value))
        case "seed": settings.storage = value == "latest" ? .latest : .seededRandom(UInt64(bitPattern: int64(value)))
        case "grace": settings.expirationGrace = .seconds(int64(value))
        case "app": app = value
        case "installed": settings[app: app].isInstalled = on
        case "auth": settings[app: app].authorization = AppSettings.Authorization(rawValue: value) ?? .authorized
        case "state": settings[app: app].state = AppSettings.AppState(rawValue: value) ?? .background
        case "present":
            settings[app: app].foregroundPresentation = Set(value.split(separator: ",").compactMap {
                AppSettings.Presentation(rawValue: String($0))
            })
        default: break
        }
    }
}

// MARK: - Requests

/// The body: the aps the FIELDs name, or the rest of the line after `json=`.
private func payload(_ fields: [String: String], _ line: String) -> [UInt8] {
    if let json = line.range(of: "json=") { return Array(line[json.upperBound...].utf8) }
    var members: [String] = []
    let named = [
        ("badge", "badge"), ("relevance", "relevance-score"), ("ts", "timestamp"), ("stale", "stale-date"),
        ("dismiss", "dismissal-date"), ("event", "event"), ("category", "category"), ("level", "interruption-level"),
    ]
    for (field, key) in named { if let value = fields[field] { members.append("\"\(key)\":\(json(value))") } }
    if let alert = fields["alert"] {
        members.append("\"alert\":" + (alert.isEmpty ? #"{"title":"T","body":"B"}"# : json(alert)))
    }
    if let sound = fields["sound"] { members.append("\"sound\":" + json(sound.isEmpty ? "default" : sound)) }
    if fields["ca"] != nil { members.append("\"content-available\":1") }
    if let state = fields["state"] { members.append("\"content-state\":{\"n\":\(state.isEmpty ? "1" : json(state))}") }
    if fields["attrs"] != nil { members.append(#""attributes-type":"A","attributes":{}"#) }
    return Array("{\"aps\":{\(members.joined(separator: ","))}}".utf8)
}

/// A number as written; any other word as a JSON string.
private func json(_ word: String) -> String {
    if !word.isEmpty, word.utf8.allSatisfy({ "0123456789+-.eE".utf8.contains($0) }) { return word }
    var bytes: [UInt8] = []
    JSONWriter.writeString(word, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
}

/// Sends one request on a new connection, read to its end by `HTTP2Connection` on this thread.
private func send(_ headers: [(String, String)], _ fields: [String: String], _ body: [UInt8], _ context: HTTP2Context) {
    var headers = [(":method", "POST"), (":scheme", "https"), (":authority", "fuzz")] + headers
    for (field, name) in [("type", "apns-push-type"), ("prio", "apns-priority"), ("exp", "apns-expiration"),
        ("collapse", "apns-collapse-id")]
    {
        if let value = fields[field], !(field == "type" && value.isEmpty) { headers.append((name, value)) }
    }
    let http1 = fields["via"] == "h1"
    var sockets: [Int32] = [0, 0]
    require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &sockets) == 0, "socketpair failed")
    let bytes = http1 ? http1Request(headers, body) : http2Request(headers, body)
    var written = 0
    while written < bytes.count {
        let result = bytes[written...].withUnsafeBytes { write(sockets[1], $0.baseAddress, $0.count) }
        require(result > 0, "writing the request failed")
        written += result
    }
    shutdown(sockets[1], Int32(SHUT_WR))
    let info = ConnectionInfo(id: 1, peer: "fuzz", transport: http1 ? .plaintext : .tls)
    let stream = TLSStream(plaintextSocket: sockets[0])
    let connection = TLSListener.Connection(stream: stream, info: info, listener: listener)
    if http1 {
        HTTP2Connection(connection: connection, context: context) { PlaintextSession(delegate: $0) }.run(on: connection)
    } else {
        HTTP2Connection(connection: connection, context: context).run(on: connection)
    }
    close(sockets[1])
}

private func http1Request(_ headers: [(String, String)], _ body: [UInt8]) -> [UInt8] {
    var text = "POST \(headers.first { $0.0 == ":path" }?.1 ?? "/") HTTP/1.1\r\nhost: fuzz\r\n"
    for (name, value) in headers where !name.hasPrefix(":") { text += "\(name): \(value)\r\n" }
    return Array("\(text)content-length: \(body.count)\r\n\r\n".utf8) + body
}

/// The preface, an empty SETTINGS, then stream 1: HEADERS (HPACK literals, no Huffman) and DATA.
private func http2Request(_ headers: [(String, String)], _ body: [UInt8]) -> [UInt8] {
    var block: [UInt8] = []
    for (name, value) in headers {
        block.append(0)
        for text in [name, value] {
            integer(text.utf8.count, to: &block)
            block += text.utf8
        }
    }
    var bytes = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    frame(type: 4, flags: 0, stream: 0, [], to: &bytes)
    frame(type: 1, flags: body.isEmpty ? 5 : 4, stream: 1, block, to: &bytes)
    if !body.isEmpty { frame(type: 0, flags: 1, stream: 1, body, to: &bytes) }
    return bytes
}

/// An HPACK integer with a 7-bit prefix (RFC 7541 §5.1).
private func integer(_ value: Int, to output: inout [UInt8]) {
    guard value >= 127 else { return output.append(UInt8(value)) }
    output.append(127)
    var rest = value - 127
    while rest >= 128 {
        output.append(UInt8(rest & 127 | 128))
        rest >>= 7
    }
    output.append(UInt8(rest))
}

private func frame(type: UInt8, flags: UInt8, stream: UInt8, _ payload: [UInt8], to output: inout [UInt8]) {
    let count = payload.count
    output += [UInt8(count >> 16 & 255), UInt8(count >> 8 & 255), UInt8(count & 255), type, flags, 0, 0, 0, stream]
    output += payload
}

// MARK: - Words

private func token(_ word: String) -> DeviceToken { tokens[Int(word.utf8.first ?? 0) % tokens.count] }

private func channelID(_ word: String) -> String { Data(word.utf8).base64EncodedString() }

private func int64(_ word: String) -> Int64 { Int64(word) ?? (word == "max" ? .max : word == "min" ? .min : 0) }

// MARK: - Invariants

/// A phone's log and screen, and the daemon's JSON of it.
private func check(_ phone: Phone) {
    checkLog(phone.log, of: phone.token)
    checkScreen(phone.screen)
    roundTrip(PhoneJSON.device(phone, registered: nil), "phone \(phone.token.hex)")
}

private func checkLog(_ log: [DeliveryLogEntry], of token: DeviceToken) {
    require(log.count <= logLimit, "a log of \(log.count) entries, over the limit of \(logLimit)")
    for entry in log {
        require(entry.deviceToken == token, "phone \(token.hex) logs \(entry)")
        checkDate(entry.at, "log entry \(entry.status)")
    }
}

private func checkScreen(_ screen: Screen) {
    for entry in screen.notificationCenter { checkDate(entry.deliveredAt, "a notification's deliveredAt") }
    for wake in screen.wakes { checkDate(wake.at, "a wake") }
    for activity in screen.liveActivities {
        checkDate(activity.timestamp, "a Live Activity's timestamp")
        checkDate(activity.staleDate, "a Live Activity's stale date")
        checkDate(activity.dismissalDate, "a Live Activity's dismissal date")
    }
}

/// `date` as Timestamp.rfc3339 writes it: "dddd-dd-ddTdd:dd:dd.ddddddZ", a year of
/// UnixTime.range (1970 to 9999), a month and a day.
private func checkDate(_ date: Date?, _ what: @autoclosure () -> String) {
    guard let date else { return }
    let text = Timestamp.rfc3339(date)
    let shape = String(text.map { $0.isASCII && $0.isNumber ? "d" : $0 })
    let number = { (at: Int, count: Int) in Int(text.dropFirst(at).prefix(count)) ?? 0 }
    require(
        shape == "dddd-dd-ddTdd:dd:dd.ddddddZ" && (1970...9999).contains(number(0, 4))
            && (1...12).contains(number(5, 2)) && (1...31).contains(number(8, 2)),
        "\(what()) at \(date.timeIntervalSince1970) s is written \(text)")
}

private func roundTrip(_ value: JSONValue, _ what: String) {
    let text = value.serialized()
    require((try? JSONValue(parsing: text)) != nil, "the JSON of \(what) does not parse: \(text)")
}

private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("DeviceModel invariant: \(message())") }
}
