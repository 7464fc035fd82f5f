internal import CHTTPParser

/// The framing of a plaintext listener's connection, for test clients configured with an
/// `http://` URL. Apple speaks only HTTP/2 over TLS; this listener exists for those clients.
///
/// The client's first bytes decide:
/// - the HTTP/2 connection preface (prior knowledge): cleartext HTTP/2, through nghttp2;
/// - anything else: HTTP/1.1, parsed by http_parser. Each request is reported to the delegate
///   as an HTTP/2 stream (1, 3, 5, ...: the request line as `:method`, `:path`, `:scheme`
///   and `Host` as `:authority`, the other fields with lowercase names, minus those that
///   only concern the HTTP/1.1 connection) and answered in order, with `content-length`;
///   keep-alive, pipelining, chunked bodies and `Expect: 100-continue` are HTTP/1.1's.
///   A first request that asks `Upgrade: h2c` with one valid `HTTP2-Settings` is answered
///   `101 Switching Protocols`, and then on stream 1 of HTTP/2 (nghttp2's own upgrade).
///
/// What HTTP/1.1 cannot say of an HTTP/2 answer: a reset stream closes the connection
/// without an answer (and what was pipelined behind it goes unanswered), and a GOAWAY closes
/// it after the answers queued, the last of them saying `connection: close`.
final class PlaintextSession: RequestFraming {
    /// What the connection turned out to speak.
    private enum Mode {
        /// Nothing decided yet: this many bytes of the HTTP/2 preface came so far.
        case undecided(prefaceMatched: Int)
        case http1
        case http2(NGHTTP2Session)
    }

    /// `PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`.
    private static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    /// Fields of an HTTP/1.1 request that concern its connection only (RFC 9113 §8.2.2), or
    /// that become a pseudo-header field (`host`).
    private static let connectionFields: [String] = [
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "http2-settings",
        "expect", "host",
    ]

    /// Held strongly, as ``NGHTTP2Session`` holds its delegate: the owner drops the session
    /// when done.
    private let delegate: any HTTP2SessionDelegate
    private var mode = Mode.undecided(prefaceMatched: 0)
    private let parser: UnsafeMutablePointer<http_parser>
    private var callbacks = PlaintextSession.makeCallbacks()
    /// The SETTINGS the owner submitted: an HTTP/2 session made later starts with them.
    private var settings: [(id: Int32, value: UInt32)] = []
    private var output: [UInt8] = []
    /// Where, in `output`, the last HTTP/1.1 answer's header block ends (before its empty
    /// line), and whether it says `connection: close`: a GOAWAY that follows adds it.
    private var lastHeaderEnd: (offset: Int, closes: Bool)?
    /// No more is read or answered: the connection ends once `output` has left.
    private var closed = false

    // The HTTP/1.1 request being parsed.
    private var nextStream: Int32 = 1
    private var stream: Int32 = 0
    private var inMessage = false
    private var url: [UInt8] = []
    private var fields: [(name: [UInt8], value: [UInt8])] = []
    private var fieldIsComplete = true
    private var isHead = false
    private var keepAlive = true
    /// The request is HTTP/1.0, whose keep-alive an answer must confirm.
    private var isHTTP10 = false
    /// The decoded `HTTP2-Settings` of a first request that asks for h2c.
    private var upgradeSettings: [UInt8]?
    /// The HTTP/2 session the request of an upgrade switched to, once it is complete.
    private var upgraded: NGHTTP2Session?

    init(delegate: any HTTP2SessionDelegate) {
        self.delegate = delegate
        parser = .allocate(capacity: 1)
        http_parser_init(parser, HTTP_REQUEST)
        parser.pointee.data = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        parser.deallocate()
    }

    // MARK: - RequestFraming

    func submitSettings(_ settings: [(id: Int32, value: UInt32)]) {
        if case .http2(let session) = mode { return session.submitSettings(settings) }
        self.settings += settings
    }

    func submitResponse(_ stream: Int32, headers: [(String, String)], body: [UInt8]) {
        if case .http2(let session) = mode { return session.submitResponse(stream, headers: headers, body: body) }
        guard !closed else { return }
        var status = 200
        var rest: [(String, String)] = []
        for (name, value) in headers {
            if name == ":status" { status = Int(value) ?? 500 } else { rest.append((name, value)) }
        }
        answer(status: status, headers: rest, body: body)
    }

    func submitAccepted(_ stream: Int32, apnsID: UnsafeBufferPointer<UInt8>, uniqueID: UnsafeBufferPointer<UInt8>?) {
        if case .http2(let session) = mode { return session.submitAccepted(stream, apnsID: apnsID, uniqueID: uniqueID) }
        guard !closed else { return }
        var headers = [("apns-id", String(decoding: apnsID, as: UTF8.self))]
        if let uniqueID { headers.append(("apns-unique-id", String(decoding: uniqueID, as: UTF8.self))) }
        answer(status: 200, headers: headers, body: [])
    }

    func submitReset(_ stream: Int32, errorCode: UInt32) {
        if case .http2(let session) = mode { return session.submitReset(stream, errorCode: errorCode) }
        close()
    }

    func submitGoAway(lastStream: Int32, errorCode: UInt32, debugData: [UInt8]) {
        if case .http2(let session) = mode {
            return session.submitGoAway(lastStream: lastStream, errorCode: errorCode, debugData: debugData)
        }
        if let last = lastHeaderEnd, !last.closes {
            output.insert(contentsOf: "connection: close\r\n".utf8, at: last.offset)
            lastHeaderEnd = nil
        }
        close()
    }

    func receive(_ bytes: UnsafeRawBufferPointer) throws {
        switch mode {
        case .http2(let session):
            try session.receive(bytes)
        case .http1:
            try parse(bytes)
        case .undecided(let matched):
            var taken = 0
            var total = matched
            while taken < bytes.count && total < Self.preface.count && bytes[taken] == Self.preface[total] {
                taken += 1
                total += 1
            }
            if total == Self.preface.count {
                let session = try startHTTP2()
                try Self.preface.withUnsafeBytes { try session.receive($0) }
                try session.receive(UnsafeRawBufferPointer(rebasing: bytes[taken...]))
            } else if taken == bytes.count {
                mode = .undecided(prefaceMatched: total)
            } else {
                mode = .http1
                delegate.transportChosen(.http1)
                let before = total - taken
                if before > 0 { try Self.preface[..<before].withUnsafeBytes { try parse($0) } }
                try parse(bytes)
            }
        }
    }

    func takeOutput(appendingTo output: inout [UInt8]) throws {
        if !self.output.isEmpty {
            output.append(contentsOf: self.output)
            self.output.removeAll(keepingCapacity: true)
            lastHeaderEnd = nil
        }
        if case .http2(let session) = mode { try session.takeOutput(appendingTo: &output) }
    }

    var isAlive: Bool {
        if case .http2(let session) = mode { return session.isAlive }
        return !closed
    }

    var isBetweenMessages: Bool {
        switch mode {
        case .undecided(let matched): matched == 0
        case .http1: !inMessage
        case .http2(let session): session.isBetweenMessages
        }
    }

    // MARK: - HTTP/2

    /// Switches to cleartext HTTP/2: a server session, with the SETTINGS submitted so far.
    private func startHTTP2() throws -> NGHTTP2Session {
        let session = try NGHTTP2Session(server: true, delegate: delegate)
        if !settings.isEmpty { session.submitSettings(settings) }
        mode = .http2(session)
        delegate.transportChosen(.h2c)
        return session
    }

    // MARK: - HTTP/1.1

    /// Parses `bytes` as HTTP/1.1 requests, reporting each to the delegate.
    private func parse(_ bytes: UnsafeRawBufferPointer) throws {
        var rest = bytes
        while !closed, !rest.isEmpty {
            let base = rest.baseAddress!.assumingMemoryBound(to: CChar.self)
            let parsed = http_parser_execute(parser, &callbacks, base, rest.count)
            let error = http_errno(parser.pointee.http_errno)
            if error == HPE_PAUSED || closed { return }
            if error != HPE_OK { return try refuseMalformed(error) }
            rest = UnsafeRawBufferPointer(rebasing: rest[parsed...])
            // http_parser marks an upgrade as the header block ends; it stops after the request.
            guard parser.pointee.upgrade == 1, !inMessage else { return }
            // The request asked for an upgrade, and is complete: what follows is HTTP/2 when
            // it was to h2c, and more HTTP/1.1 otherwise (the upgrade was not granted).
            if let session = upgraded {
                upgraded = nil
                return try session.receive(rest)
            }
            http_parser_init(parser, HTTP_REQUEST)
            parser.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        }
    }

    /// Answers a request http_parser could not read, and closes: 431 when its header block
    /// is over http_parser's limit, 400 otherwise.
    private func refuseMalformed(_ error: http_errno) throws {
        let description = String(cString: http_errno_description(error))
        if error == HPE_HEADER_OVERFLOW {
            let reason = HTTP2Connection.headerListTooLarge
            answer(
                status: reason.status, headers: [("content-type", "application/json")],
                body: HTTP2Connection.errorBody(reason), closing: true)
        } else {
            answer(
                status: 400, headers: [("content-type", "text/plain; charset=utf-8")],
                body: Array("malformed HTTP/1.1 request: \(description)\n".utf8), closing: true)
        }
        throw HTTP2Error("HTTP/1.1: \(description)")
    }

    /// Queues an HTTP/1.1 answer; with `connection: close` (and nothing read after it) when
    /// the request asked for it or `closing`.
    private func answer(status: Int, headers: [(String, String)], body: [UInt8], closing: Bool = false) {
        let closes = closing || !keepAlive
        output.append(contentsOf: "HTTP/1.1 \(status) \(Self.reasonPhrase(status))\r\n".utf8)
        for (name, value) in headers {
            output.append(contentsOf: name.utf8)
            output.append(contentsOf: ": ".utf8)
            output.append(contentsOf: value.utf8)
            output.append(contentsOf: "\r\n".utf8)
        }
        output.append(contentsOf: "content-length: \(body.count)\r\n".utf8)
        if closes {
            output.append(contentsOf: "connection: close\r\n".utf8)
        } else if isHTTP10 {
            output.append(contentsOf: "connection: keep-alive\r\n".utf8)
        }
        lastHeaderEnd = (output.count, closes)
        output.append(contentsOf: "\r\n".utf8)
        if !isHead { output.append(contentsOf: body) }
        if closes { close() }
    }

    /// Reads nothing more: a parse under way stops after the current callback.
    private func close() {
        closed = true
        if http_errno(parser.pointee.http_errno) == HPE_OK { http_parser_pause(parser, 1) }
    }

    private func messageBegan() {
        inMessage = true
        stream = nextStream
        nextStream += 2
        url.removeAll(keepingCapacity: true)
        fields.removeAll(keepingCapacity: true)
        fieldIsComplete = true
        upgradeSettings = nil
    }

    private func fieldName(_ bytes: UnsafeRawBufferPointer) {
        if fieldIsComplete {
            fields.append(([], []))
            fieldIsComplete = false
        }
        fields[fields.count - 1].name.append(contentsOf: bytes)
    }

    private func fieldValue(_ bytes: UnsafeRawBufferPointer) {
        guard !fields.isEmpty else { return }
        fieldIsComplete = true
        fields[fields.count - 1].value.append(contentsOf: bytes)
    }

    /// The request's header block is complete: it goes to the delegate as a stream's.
    private func headersComplete() {
        let method = String(cString: http_method_str(http_method(parser.pointee.method)))
        isHead = method == "HEAD"
        keepAlive = http_should_keep_alive(parser) != 0
        isHTTP10 = parser.pointee.http_major == 1 && parser.pointee.http_minor == 0
        for index in fields.indices {
            fields[index].name = HTTP2Request.asciiLowercased(fields[index].name)
        }
        if stream == 1, parser.pointee.upgrade == 1 { upgradeSettings = h2cSettings() }
        delegate.streamBegan(stream)
        report(":method", Array(method.utf8))
        report(":scheme", Array("http".utf8))
        report(":path", url)
        if let host = value(of: "host") { report(":authority", host) }
        for field in fields where !Self.connectionFields.contains(where: { field.name.elementsEqual($0.utf8) }) {
            report(field.name, field.value)
        }
        let hasBody = parser.pointee.flags & UInt32(F_CHUNKED.rawValue) != 0 || parser.pointee.content_length > 0
            && parser.pointee.content_length != UInt64.max
        delegate.headersEnded(stream, endsStream: !hasBody)
        if hasBody, !isHTTP10,
            value(of: "expect").map({ String(decoding: $0, as: UTF8.self).lowercased() == "100-continue" }) == true
        {
            output.append(contentsOf: "HTTP/1.1 100 Continue\r\n\r\n".utf8)
        }
    }

    private func report(_ name: String, _ value: [UInt8]) {
        report(Array(name.utf8), value)
    }

    private func report(_ name: [UInt8], _ value: [UInt8]) {
        name.withUnsafeBufferPointer { name in
            value.withUnsafeBufferPointer { value in delegate.header(stream, name: name, value: value) }
        }
    }

    /// The value of the request's first field named `name` (lowercase).
    private func value(of name: String) -> [UInt8]? {
        fields.first { $0.name.elementsEqual(name.utf8) }?.value
    }

    /// The decoded `HTTP2-Settings` when the request asks to upgrade to h2c as RFC 7540 §3.2
    /// says (`Upgrade: h2c`, `Connection` naming `Upgrade` and `HTTP2-Settings`, exactly one
    /// `HTTP2-Settings` in base64url); nil otherwise, and the upgrade is not granted.
    private func h2cSettings() -> [UInt8]? {
        func tokens(_ name: String) -> [String] {
            fields.filter { $0.name.elementsEqual(name.utf8) }.flatMap { field in
                field.value.split(separator: UInt8(ascii: ",")).map { token in
                    String(decoding: token.filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }, as: UTF8.self)
                        .lowercased()
                }
            }
        }
        guard tokens("upgrade").contains("h2c") else { return nil }
        let connection = tokens("connection")
        guard connection.contains("upgrade"), connection.contains("http2-settings") else { return nil }
        let settings = fields.filter { $0.name.elementsEqual("http2-settings".utf8) }
        guard settings.count == 1 else { return nil }
        let text = settings[0].value.filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
        return Base64URL.decode(text)
    }

    private func body(_ bytes: UnsafeRawBufferPointer) {
        delegate.data(stream, bytes)
    }

    /// The request is complete: an upgrade switches to HTTP/2 first (its answer goes out on
    /// stream 1 there), then the delegate handles it.
    private func messageComplete() {
        inMessage = false
        if let settings = upgradeSettings {
            upgradeSettings = nil
            if let session = try? NGHTTP2Session(server: true, delegate: delegate),
                (try? session.upgrade(settings: settings, headRequest: isHead)) != nil
            {
                output.append(contentsOf: "HTTP/1.1 101 Switching Protocols\r\nconnection: Upgrade\r\nupgrade: h2c\r\n\r\n".utf8)
                if !self.settings.isEmpty { session.submitSettings(self.settings) }
                mode = .http2(session)
                upgraded = session
                delegate.transportChosen(.h2c)
            }
        }
        delegate.streamEnded(stream)
    }

    private static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 101: "Switching Protocols"
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 410: "Gone"
        case 413: "Payload Too Large"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Status \(status)"
        }
    }

    // MARK: - http_parser callbacks

    private static func session(_ parser: UnsafeMutablePointer<http_parser>?) -> PlaintextSession {
        Unmanaged<PlaintextSession>.fromOpaque(parser!.pointee.data).takeUnretainedValue()
    }

    private static func bytes(_ data: UnsafePointer<CChar>?, _ count: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : count)
    }

    private static func makeCallbacks() -> http_parser_settings {
        var callbacks = http_parser_settings()
        callbacks.on_message_begin = { parser in
            PlaintextSession.session(parser).messageBegan()
            return 0
        }
        callbacks.on_url = { parser, data, count in
            PlaintextSession.session(parser).url.append(contentsOf: PlaintextSession.bytes(data, count))
            return 0
        }
        callbacks.on_header_field = { parser, data, count in
            PlaintextSession.session(parser).fieldName(PlaintextSession.bytes(data, count))
            return 0
        }
        callbacks.on_header_value = { parser, data, count in
            PlaintextSession.session(parser).fieldValue(PlaintextSession.bytes(data, count))
            return 0
        }
        callbacks.on_headers_complete = { parser in
            PlaintextSession.session(parser).headersComplete()
            return 0
        }
        callbacks.on_body = { parser, data, count in
            PlaintextSession.session(parser).body(PlaintextSession.bytes(data, count))
            return 0
        }
        callbacks.on_message_complete = { parser in
            PlaintextSession.session(parser).messageComplete()
            return 0
        }
        return callbacks
    }
}
