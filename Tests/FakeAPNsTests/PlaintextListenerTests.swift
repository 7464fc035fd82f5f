import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

/// The plaintext listener, driven by clients the project did not write: curl over HTTP/1.1,
/// over cleartext HTTP/2 with prior knowledge and with `Upgrade: h2c`, Python's `http.client`,
/// python3-h2 over a plain socket, and raw bytes for what only a byte stream can show
/// (pipelining, `Expect: 100-continue`, malformed requests). Each gets the HTTP/2 listener's
/// answers: an accepted push, a refusal with its reason, and a fault.
final class PlaintextListenerTests: XCTestCase {
    private let fixture = ServerFixture()
    private var server: FakeAPNsServer { fixture.server }

    private func start(_ configure: (inout FakeAPNsServer.Configuration) -> Void = { _ in }) throws {
        var configuration = FakeAPNsServer.Configuration()
        configuration.plaintextPort = 0
        configure(&configuration)
        try fixture.start(configuration, for: self)
    }

    private var base: String { "http://127.0.0.1:\(fixture.plaintextPort)" }

    private func devicePath(_ token: DeviceToken = Fixtures.token) -> String { "/3/device/\(token.hex)" }

    /// curl's answer: status, protocol version, the headers (lowercase names) and the body.
    private func curl(_ mode: String, _ arguments: [String]) throws
        -> (status: Int, version: String, headers: [String: String], body: String)
    {
        let result = try runTool("/usr/bin/curl", [
            "--silent", "--show-error", mode, "--dump-header", "-",
            "--write-out", "\n%{http_code} %{http_version}",
        ] + arguments)
        XCTAssertEqual(result.status, 0, result.error)
        // By the byte: "\r\n" is one Character, which a split at "\n" would not cut.
        var lines = result.output.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .map { String(decoding: $0.last == UInt8(ascii: "\r") ? $0.dropLast() : $0, as: UTF8.self) }
        let last = lines.removeLast().split(separator: " ")
        var headers: [String: String] = [:]
        var bodyLines: [String] = []
        var inHeaders = true
        for line in lines {
            let trimmed = line
            if inHeaders {
                if trimmed.isEmpty {
                    // curl prints every header block it reads (101, 100): the last one counts.
                    inHeaders = false
                    continue
                }
                if let colon = trimmed.firstIndex(of: ":") {
                    headers[trimmed[..<colon].lowercased()] = trimmed[trimmed.index(after: colon)...]
                        .trimmingCharacters(in: .whitespaces)
                }
            } else if trimmed.hasPrefix("HTTP/") {
                inHeaders = true
                headers = [:]
            } else {
                bodyLines.append(trimmed)
            }
        }
        return (Int(last.first ?? "") ?? 0, String(last.last ?? ""), headers, bodyLines.joined(separator: "\n"))
    }

    /// One client, three answers: accepted (200, `apns-id`, `apns-unique-id` in the sandbox,
    /// the push queued with its transport), refused (`BadDeviceToken`), and a fault's
    /// (`TooManyRequests`, recorded as a refusal).
    private func checkAcceptRefuseFault(
        transport: ConnectionTransport, file: StaticString = #filePath, line: UInt = #line,
        send: (_ alert: String, _ path: String) throws -> (status: Int, headers: [String: String], body: String)
    ) throws {
        let accepted = try send("accepted", devicePath())
        XCTAssertEqual(accepted.status, 200, accepted.body, file: file, line: line)
        let push = try server.notifications.pop(timeout: .seconds(5))
        XCTAssertEqual(push.payload.aps.alert?.body, "accepted", file: file, line: line)
        XCTAssertEqual(push.connection.transport, transport, file: file, line: line)
        XCTAssertEqual(accepted.headers["apns-id"], push.apnsID, file: file, line: line)
        XCTAssertEqual(accepted.headers["apns-unique-id"]?.count, 36, file: file, line: line)

        let refused = try send("refused", "/3/device/xyz")
        XCTAssertEqual(refused.status, 400, file: file, line: line)
        XCTAssertEqual(refused.body, #"{"reason":"BadDeviceToken"}"#, file: file, line: line)
        XCTAssertEqual(try server.rejections.pop(timeout: .seconds(5)).answer, .reason(.badDeviceToken), file: file, line: line)

        server.faults.add(FaultRule(match: .every, action: .respond(.tooManyRequests)))
        let faulted = try send("faulted", devicePath())
        XCTAssertEqual(faulted.status, 429, file: file, line: line)
        XCTAssertEqual(faulted.body, #"{"reason":"TooManyRequests"}"#, file: file, line: line)
        let rejection = try server.rejections.pop(timeout: .seconds(5))
        XCTAssertEqual(rejection.cause, .fault, file: file, line: line)
        XCTAssertEqual(rejection.connection.transport, transport, file: file, line: line)
        XCTAssertTrue(server.notifications.isEmpty, file: file, line: line)
    }

    /// A push as curl sends it in `mode`, checked to have spoken `version`.
    private func curlPush(_ mode: String, version: String) -> (_ alert: String, _ path: String) throws
        -> (status: Int, headers: [String: String], body: String)
    {
        { alert, path in
            let answer = try self.curl(mode, [
                "--header", "apns-topic: com.example.app", "--header", "apns-push-type: alert",
                "--data", #"{"aps":{"alert":"\#(alert)"}}"#, self.base + path,
            ])
            XCTAssertEqual(answer.version, version)
            return (answer.status, answer.headers, answer.body)
        }
    }

    func testCurlOverHTTP1() throws {
        try start()
        try checkAcceptRefuseFault(transport: .http1, send: curlPush("--http1.1", version: "1.1"))
    }

    func testCurlOverCleartextHTTP2WithPriorKnowledge() throws {
        try start()
        try checkAcceptRefuseFault(transport: .h2c, send: curlPush("--http2-prior-knowledge", version: "2"))
    }

    /// curl `--http2` on an `http://` URL asks `Upgrade: h2c` in its first request; the
    /// answer comes on stream 1 of HTTP/2 after `101 Switching Protocols`.
    func testCurlUpgradesToH2C() throws {
        try start()
        try checkAcceptRefuseFault(transport: .h2c, send: curlPush("--http2", version: "2"))
    }

    /// Python's `http.client` (HTTP/1.1 with keep-alive: every request on one connection,
    /// one of them with a chunked body): accepted, refused, and a fault's answer.
    func testPythonHTTPClientOnOneKeepAliveConnection() throws {
        try start()
        server.faults.add(FaultRule(match: .token(Fixtures.otherToken), action: .respond(.tooManyRequests)))
        let script = """
            import http.client, json, sys
            connection = http.client.HTTPConnection("127.0.0.1", \(fixture.plaintextPort), timeout=10)
            answers = []
            def send(path, alert, chunked=False):
                body = json.dumps({"aps": {"alert": alert}}).encode()
                headers = {"apns-topic": "com.example.app", "apns-push-type": "alert"}
                if chunked:
                    connection.request("POST", path, body=iter([body[:5], body[5:]]), headers=headers, encode_chunked=True)
                else:
                    connection.request("POST", path, body=body, headers=headers)
                response = connection.getresponse()
                answers.append({"status": response.status, "body": response.read().decode(),
                                "apns-id": response.getheader("apns-id"), "unique": response.getheader("apns-unique-id")})
            send("\(devicePath())", "one")
            send("\(devicePath())", "two", chunked=True)
            send("/3/device/xyz", "bad")
            send("\(devicePath(Fixtures.otherToken))", "faulted")
            print(json.dumps(answers))
            """
        let result = try runTool("/usr/bin/python3", ["-c", script])
        XCTAssertEqual(result.status, 0, result.error)
        let answers = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [[String: Any]])
        XCTAssertEqual(answers.map { $0["status"] as? Int }, [200, 200, 400, 429])
        XCTAssertEqual(answers[2]["body"] as? String, #"{"reason":"BadDeviceToken"}"#)
        XCTAssertEqual(answers[3]["body"] as? String, #"{"reason":"TooManyRequests"}"#)
        let pushes = try server.notifications.pop(count: 2, timeout: .seconds(5))
        XCTAssertEqual(pushes.map { $0.payload.aps.alert?.body }, ["one", "two"])
        XCTAssertEqual(pushes.map(\.apnsID), answers.prefix(2).map { $0["apns-id"] as? String })
        XCTAssertEqual(Set(pushes.map(\.connection.id)).count, 1, "one connection for both")
        let rejections = try server.rejections.pop(count: 2, timeout: .seconds(5))
        XCTAssertEqual(rejections.map(\.answer), [.reason(.badDeviceToken), .reason(.tooManyRequests)])
        XCTAssertEqual(rejections.map(\.cause), [.malformed, .fault])
    }

    /// python3-h2 over a plain socket, with prior knowledge: accepted, refused, faulted.
    func testPythonH2OverAPlainSocket() throws {
        try start()
        server.faults.add(FaultRule(match: .token(Fixtures.otherToken), action: .respond(.tooManyRequests)))
        let script = """
            import json, socket, h2.connection, h2.config, h2.events
            sock = socket.create_connection(("127.0.0.1", \(fixture.plaintextPort)), timeout=10)
            conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
            conn.initiate_connection()
            paths = ["\(devicePath())", "/3/device/xyz", "\(devicePath(Fixtures.otherToken))"]
            body = b'{"aps":{"alert":"h2"}}'
            for path in paths:
                stream = conn.get_next_available_stream_id()
                conn.send_headers(stream, [(":method", "POST"), (":scheme", "http"), (":authority", "127.0.0.1"),
                                           (":path", path), ("apns-topic", "com.example.app"), ("apns-push-type", "alert")])
                conn.send_data(stream, body, end_stream=True)
                sock.sendall(conn.data_to_send())
                status, data = None, b""
                while True:
                    events = conn.receive_data(sock.recv(65535))
                    done = False
                    for event in events:
                        if isinstance(event, h2.events.ResponseReceived):
                            status = dict(event.headers)[":status"]
                        elif isinstance(event, h2.events.DataReceived):
                            data += event.data
                            conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                        elif isinstance(event, h2.events.StreamEnded):
                            done = True
                    sock.sendall(conn.data_to_send())
                    if done:
                        break
                print(status, data.decode())
            """
        let result = try runTool("/usr/bin/python3", ["-c", script])
        XCTAssertEqual(result.status, 0, result.error)
        XCTAssertEqual(result.output.split(separator: "\n"), [
            "200 ", #"400 {"reason":"BadDeviceToken"}"#, #"429 {"reason":"TooManyRequests"}"#,
        ])
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).connection.transport, .h2c)
        let rejections = try server.rejections.pop(count: 2, timeout: .seconds(5))
        XCTAssertEqual(rejections.map(\.answer), [.reason(.badDeviceToken), .reason(.tooManyRequests)])
    }

    // MARK: - HTTP/1.1 by the byte

    /// Sends `bytes` on a new connection and reads until the server closes it or `until`
    /// holds of what came (or 10 s pass).
    private func exchange(_ bytes: String, until: (String) -> Bool = { _ in false }) throws -> String {
        let socket = try Socket.connect(host: "127.0.0.1", port: fixture.plaintextPort)
        defer { close(socket) }
        Socket.setTimeout(socket, SO_RCVTIMEO, .seconds(10))
        let data = Array(bytes.utf8)
        XCTAssertEqual(data.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }, data.count)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !until(String(decoding: received, as: UTF8.self)) {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }

    private func request(_ path: String, body: String = #"{"aps":{"alert":"raw"}}"#, extra: String = "") -> String {
        "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\napns-topic: com.example.app\r\n\(extra)content-length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    func testPipelinedRequestsAreAnsweredInOrder() throws {
        try start()
        let answers = try exchange(
            request(devicePath()) + request("/3/device/xyz") + request(devicePath(), extra: "connection: close\r\n"))
        let statuses = answers.components(separatedBy: "HTTP/1.1 ").dropFirst()
            .map { "HTTP/1.1 " + String(decoding: $0.utf8.prefix { $0 != UInt8(ascii: "\r") }, as: UTF8.self) }
        XCTAssertEqual(statuses, ["HTTP/1.1 200 OK", "HTTP/1.1 400 Bad Request", "HTTP/1.1 200 OK"])
        XCTAssertTrue(answers.contains(#"{"reason":"BadDeviceToken"}"#))
        XCTAssertTrue(answers.hasSuffix("connection: close\r\n\r\n"), answers)
        XCTAssertEqual(try server.notifications.pop(count: 2, timeout: .seconds(5)).count, 2)
    }

    /// HTTP/1.0 closes after each answer unless it asks to keep the connection, and then the
    /// answer says it is kept.
    func testHTTP10KeepsTheConnectionOnlyWhenAsked() throws {
        try start()
        let body = #"{"aps":{"alert":"1.0"}}"#
        let head = "POST \(devicePath()) HTTP/1.0\r\nHost: x\r\ncontent-length: \(body.utf8.count)\r\n"
        let closing = try exchange(head + "\r\n" + body)
        XCTAssertTrue(closing.hasPrefix("HTTP/1.1 200 OK\r\n"), closing)
        XCTAssertTrue(closing.contains("connection: close\r\n"), closing)
        let kept = try exchange(head + "connection: keep-alive\r\n\r\n" + body) { $0.hasSuffix("\r\n\r\n") }
        XCTAssertTrue(kept.contains("connection: keep-alive\r\n"), kept)
        XCTAssertEqual(try server.notifications.pop(count: 2, timeout: .seconds(5)).count, 2)
    }

    func testExpectContinueIsAnsweredBeforeTheBody() throws {
        try start()
        let body = #"{"aps":{"alert":"after 100"}}"#
        let head = "POST \(devicePath()) HTTP/1.1\r\nHost: x\r\nexpect: 100-continue\r\ncontent-length: \(body.utf8.count)\r\n\r\n"
        let socket = try Socket.connect(host: "127.0.0.1", port: fixture.plaintextPort)
        defer { close(socket) }
        Socket.setTimeout(socket, SO_RCVTIMEO, .seconds(10))
        func write(_ text: String) {
            let bytes = Array(text.utf8)
            XCTAssertEqual(bytes.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }, bytes.count)
        }
        func read() -> String {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            return String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self)
        }
        write(head)
        XCTAssertEqual(read(), "HTTP/1.1 100 Continue\r\n\r\n")
        write(body)
        XCTAssertTrue(read().hasPrefix("HTTP/1.1 200 OK\r\n"))
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).payload.aps.alert?.body, "after 100")
    }

    func testChunkedBodyAndTokenAuthentication() throws {
        try start { $0.authentication = .testToken }
        let missing = try exchange(request(devicePath(), extra: "connection: close\r\n"))
        XCTAssertTrue(missing.hasPrefix("HTTP/1.1 403 Forbidden\r\n"), missing)
        XCTAssertTrue(missing.hasSuffix(#"{"reason":"MissingProviderToken"}"#), missing)

        let token = try ProviderTokenSigner.sign(keyID: TestCertificates.jwtKeyID, teamID: TestCertificates.jwtTeamID)
        let chunked = "POST \(devicePath()) HTTP/1.1\r\nHost: x\r\nauthorization: bearer \(token)\r\n"
            + "apns-topic: com.example.app\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
            + "5\r\n{\"aps\r\n14\r\n\":{\"alert\":\"chunk\"}}\r\n0\r\n\r\n"
        let accepted = try exchange(chunked)
        XCTAssertTrue(accepted.hasPrefix("HTTP/1.1 200 OK\r\n"), accepted)
        let push = try server.notifications.pop(timeout: .seconds(5))
        XCTAssertEqual(push.payload.aps.alert?.body, "chunk")
        XCTAssertEqual(push.providerToken?.keyID, TestCertificates.jwtKeyID)
    }

    func testTheHTTP2ListenersLimitsApply() throws {
        try start()
        let big = String(repeating: "a", count: 9000)
        let tooManyHeaders = try exchange(request(devicePath(), extra: "x-big: \(big)\r\nconnection: close\r\n"))
        XCTAssertTrue(tooManyHeaders.hasPrefix("HTTP/1.1 431 "), tooManyHeaders)
        XCTAssertTrue(tooManyHeaders.hasSuffix(#"{"reason":"RequestHeaderFieldsTooLarge"}"#), tooManyHeaders)

        let payload = #"{"aps":{"alert":""# + String(repeating: "x", count: 5000) + #""}}"#
        let tooLarge = try exchange(request(devicePath(), body: payload, extra: "connection: close\r\n"))
        XCTAssertTrue(tooLarge.hasPrefix("HTTP/1.1 413 "), tooLarge)
        XCTAssertTrue(tooLarge.hasSuffix(#"{"reason":"PayloadTooLarge"}"#), tooLarge)

        let wrongMethod = try exchange("GET \(devicePath()) HTTP/1.1\r\nHost: x\r\nconnection: close\r\n\r\n")
        XCTAssertTrue(wrongMethod.hasPrefix("HTTP/1.1 405 "), wrongMethod)
        XCTAssertTrue(wrongMethod.hasSuffix(#"{"reason":"MethodNotAllowed"}"#), wrongMethod)

        let malformed = try exchange("POST /3/device/x HTTP/1.1\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\nxx")
        XCTAssertTrue(malformed.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), malformed)
        XCTAssertTrue(malformed.contains("malformed HTTP/1.1 request"), malformed)
        XCTAssertEqual(server.rejections.count, 3)
    }

    func testAStalledRequestIsClosedAfterTheFrameTimeout() throws {
        try start { $0.frameTimeout = .milliseconds(300) }
        let started = ContinuousClock.now
        let answer = try exchange("POST \(devicePath()) HTTP/1.1\r\nHost: x\r\ncontent-length: 10\r\n\r\n{")
        XCTAssertEqual(answer, "")
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(5))
        XCTAssertTrue(server.notifications.isEmpty)
    }

    func testChannelsAndBroadcastsOverHTTP1() throws {
        try start()
        let created = try curl("--http1.1", [
            "--data", #"{"message-storage-policy":0,"push-type":"LiveActivity"}"#, base + "/1/apps/com.example.app/channels",
        ])
        XCTAssertEqual(created.status, 201)
        let channel = try XCTUnwrap(created.headers["apns-channel-id"])
        XCTAssertNotNil(created.headers["apns-request-id"])
        let broadcast = try curl("--http1.1", [
            "--header", "apns-channel-id: \(channel)", "--header", "apns-push-type: LiveActivity",
            "--header", "apns-priority: 10",
            "--data", #"{"aps":{"event":"update","timestamp":1750000000,"content-state":{"score":"1-0"}}}"#,
            base + "/4/broadcasts/apps/com.example.app",
        ])
        XCTAssertEqual(broadcast.status, 200, broadcast.body)
        let push = try server.notifications.pop(timeout: .seconds(5))
        XCTAssertEqual(push.format, .broadcast)
        XCTAssertEqual(push.channelID, channel)
        XCTAssertEqual(broadcast.headers["apns-unique-id"], push.uniqueID)
    }

    func testCertificateAuthenticationCannotStartAPlaintextListener() {
        var configuration = FakeAPNsServer.Configuration(authentication: .certificate)
        configuration.plaintextPort = 0
        let server = FakeAPNsServer(configuration: configuration)
        XCTAssertThrowsError(try server.start()) { error in
            XCTAssertTrue("\(error)".contains("certificate authentication"), "\(error)")
        }
        XCTAssertNil(server.plaintextPort)
    }

    func testOffByDefault() throws {
        try fixture.start(for: self)
        XCTAssertNil(server.plaintextPort)
    }
}
