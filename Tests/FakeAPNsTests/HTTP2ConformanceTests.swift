import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: HTTP2Connection, to write frames by hand.
@testable import FakeAPNs

/// RFC 9113's rules the provider API holds to where nghttp2 alone would not: TLS 1.2 or later
/// with an AEAD cipher suite (§9.2), new streams above every stream id used (§5.1.1), and the
/// SETTINGS_MAX_HEADER_LIST_SIZE it announces (§6.5.2). Checked with openssl s_client, curl
/// and nghttp, and with frames written by hand.
final class HTTP2ConformanceTests: XCTestCase {
    private let fixture = ServerFixture()
    private var server: FakeAPNsServer { fixture.server }

    override func setUpWithError() throws {
        try fixture.start(for: self)
    }

    private var devicePath: String { "/3/device/\(Fixtures.token.hex)" }

    // MARK: - TLS (RFC 9113 §9.2)

    /// `openssl s_client` on `port` with `arguments`; whether the handshake completed, and
    /// what it printed.
    private func handshake(port: Int, _ arguments: [String]) throws -> (completed: Bool, output: String) {
        let result = try runTool("/usr/bin/openssl", ["s_client", "-brief", "-connect", "127.0.0.1:\(port)"] + arguments)
        return (result.status == 0 && result.error.contains("CONNECTION ESTABLISHED"), result.output + result.error)
    }

    func testHTTP2RefusesTLS1_0And1_1InTheHandshakeWithOrWithoutALPN() throws {
        for version in ["-tls1", "-tls1_1"] {
            for alpn in [["-alpn", "h2"], []] {
                let arguments = [version, "-cipher", "DEFAULT:@SECLEVEL=0"] + alpn
                let attempt = try handshake(port: fixture.http2Port, arguments)
                XCTAssertFalse(attempt.completed, "\(arguments): \(attempt.output)")
                XCTAssertTrue(attempt.output.contains("alert protocol version"), "\(arguments): \(attempt.output)")
            }
        }
        XCTAssertEqual(server.notifications.count, 0)
    }

    func testHTTP2RefusesTLS1_2CipherSuitesRFC9113Forbids() throws {
        // CBC suites, with ephemeral key exchange even: not AEAD. The test identity's key is
        // ECDSA, so these are the forbidden suites it could otherwise have served.
        for cipher in ["ECDHE-ECDSA-AES128-SHA", "ECDHE-ECDSA-AES256-SHA", "ECDHE-ECDSA-AES128-SHA256", "ECDHE-ECDSA-AES256-SHA384"] {
            let attempt = try handshake(port: fixture.http2Port, ["-tls1_2", "-cipher", cipher, "-alpn", "h2"])
            XCTAssertFalse(attempt.completed, "\(cipher): \(attempt.output)")
            XCTAssertTrue(attempt.output.contains("alert handshake failure"), "\(cipher): \(attempt.output)")
        }
    }

    func testHTTP2ServesTLS1_2WithAnAEADSuiteAndTLS1_3() throws {
        let ca = testCertificatePath("ca.pem")
        let cases = [
            (["--tlsv1.2", "--tls-max", "1.2", "--ciphers", "ECDHE-ECDSA-AES128-GCM-SHA256"], "TLSv1.2"),
            (["--tlsv1.2", "--tls-max", "1.2", "--ciphers", "ECDHE-ECDSA-CHACHA20-POLY1305"], "TLSv1.2"),
            (["--tlsv1.3"], "TLSv1.3"),
        ]
        for (tls, version) in cases {
            let result = try runTool("/usr/bin/curl", [
                "--silent", "--show-error", "--http2", "--cacert", ca, "--write-out", "%{http_code} %{http_version}",
                "--header", "apns-topic: com.example.app", "--header", "apns-push-type: alert",
                "--data", #"{"aps":{"alert":"aead"}}"#, "https://127.0.0.1:\(fixture.http2Port)\(devicePath)",
            ] + tls)
            XCTAssertEqual(result.status, 0, "\(tls): \(result.error)")
            XCTAssertEqual(result.output, "200 2", "\(tls)")
            XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).connection.tlsVersion, version)
        }
    }

    func testWithAnRSAIdentityOnlyEphemeralAEADSuitesServeHTTP2() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rsa-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = directory.appendingPathComponent("server.pem").path
        let key = directory.appendingPathComponent("server.key").path
        let made = try runTool("/usr/bin/openssl", [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "2",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
        ])
        XCTAssertEqual(made.status, 0, made.error)
        server.stop()
        try fixture.restart(.init(
            identity: try TLSIdentity(certificateFile: certificate, privateKeyFile: key)))
        for cipher in ["ECDHE-RSA-AES128-GCM-SHA256", "DHE-RSA-AES256-GCM-SHA384", "DHE-RSA-CHACHA20-POLY1305"] {
            let result = try runTool("/usr/bin/curl", [
                "--silent", "--show-error", "--http2", "--cacert", certificate, "--tlsv1.2", "--tls-max", "1.2",
                "--ciphers", cipher, "--write-out", "%{http_code}", "--header", "apns-topic: com.example.app",
                "--data", #"{"aps":{}}"#, "https://127.0.0.1:\(fixture.http2Port)\(devicePath)",
            ])
            XCTAssertEqual(result.output, "200", "\(cipher): \(result.error)")
        }
        // AEAD without ephemeral key exchange, and CBC with or without it: all forbidden.
        for cipher in ["AES128-GCM-SHA256", "AES128-SHA", "ECDHE-RSA-AES128-SHA", "DHE-RSA-AES128-SHA256"] {
            let attempt = try handshake(port: fixture.http2Port, ["-tls1_2", "-cipher", cipher, "-alpn", "h2"])
            XCTAssertFalse(attempt.completed, "\(cipher): \(attempt.output)")
        }
        XCTAssertEqual(server.notifications.count, 3)
    }

    func testGatewayKeepsTLS1_0AndCBCSuitesForTheBinaryEra() throws {
        let attempt = try handshake(port: server.gatewayPort, ["-tls1", "-cipher", "ECDHE-ECDSA-AES128-SHA:@SECLEVEL=0"])
        XCTAssertTrue(attempt.completed, attempt.output)
        XCTAssertTrue(attempt.output.contains("Protocol version: TLSv1\n"), attempt.output)
    }

    // MARK: - Stream ids (RFC 9113 §5.1.1)

    func testHeadersOnAStreamIDUsedBeforeIsAProtocolErrorNamingTheLastStreamProcessed() throws {
        let connection = try RawHTTP2Connection(to: server)
        try connection.send(RawFrame.request(stream: 1, path: devicePath, [("apns-topic", "com.example.app")], body: Fixtures.alert))
        try connection.read { $0.type == RawFrame.headers && $0.stream == 1 }
        // Stream 3 is still arriving (its headers only) when stream 1 is used again.
        try connection.send(RawFrame.headerBlock(
            stream: 3, [(":method", "POST"), (":scheme", "https"), (":authority", "localhost"), (":path", devicePath)],
            endStream: false))
        try connection.send(RawFrame.request(stream: 1, path: devicePath, [("apns-topic", "com.example.app")], body: Fixtures.alert))
        try connection.readToEnd()
        let frames = connection.frames
        let goAway = try XCTUnwrap(RawFrame.lastBeforePing(frames), "\(frames)")
        XCTAssertEqual(goAway.type, RawFrame.goAway, "GOAWAY is the last frame but its PING: \(frames)")
        XCTAssertEqual(goAway.goAwayErrorCode, 1, "PROTOCOL_ERROR")
        XCTAssertEqual(goAway.goAwayLastStream, 1)
        XCTAssertEqual(
            String(decoding: goAway.goAwayDebugData, as: UTF8.self), "HEADERS on stream 1, not above stream 3 already used")
        let reset = try XCTUnwrap(frames.first { $0.type == RawFrame.rstStream }, "\(frames)")
        XCTAssertEqual(reset.stream, 3)
        XCTAssertEqual(reset.resetErrorCode, 7, "the request still arriving is refused (REFUSED_STREAM)")
        XCTAssertEqual(frames.filter { $0.type == RawFrame.headers }.count, 1, "one answer: \(frames)")
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).deviceToken, Fixtures.token)
        XCTAssertEqual(server.notifications.count, 0)
        XCTAssertEqual(server.rejections.count, 0)
    }

    func testHeadersOnAStreamIDSkippedIsAProtocolError() throws {
        let connection = try RawHTTP2Connection(to: server)
        try connection.send(RawFrame.request(stream: 1, path: devicePath, [("apns-topic", "com.example.app")], body: Fixtures.alert)
            + RawFrame.request(stream: 5, path: devicePath, [("apns-topic", "com.example.app")], body: Fixtures.alert))
        try connection.read { $0.type == RawFrame.headers && $0.stream == 5 }
        try connection.send(RawFrame.request(stream: 3, path: devicePath, [("apns-topic", "com.example.app")], body: Fixtures.alert))
        let goAway = try XCTUnwrap(try connection.read { $0.type == RawFrame.goAway }, "\(connection.frames)")
        XCTAssertEqual(goAway.goAwayErrorCode, 1)
        XCTAssertEqual(goAway.goAwayLastStream, 5)
        try connection.readToEnd()
        XCTAssertEqual(RawFrame.lastBeforePing(connection.frames)?.type, RawFrame.goAway)
        XCTAssertEqual(try server.notifications.pop(count: 2, timeout: .seconds(5)).count, 2)
        XCTAssertEqual(server.notifications.count, 0, "the request on stream 3 is not queued")
    }

    func testTrailersOnAStreamThisSideResetAreIgnored() throws {
        let connection = try RawHTTP2Connection(to: server)
        // nghttp2 resets a stream whose header names hold capitals; its client may have sent
        // more on it before it saw the reset.
        try connection.send(RawFrame.headerBlock(
            stream: 1,
            [(":method", "POST"), (":scheme", "https"), (":authority", "localhost"), (":path", devicePath), ("X-Capital", "1")],
            endStream: false))
        let reset = try XCTUnwrap(try connection.read { $0.type == RawFrame.rstStream }, "\(connection.frames)")
        XCTAssertEqual(reset.stream, 1)
        try connection.send(RawFrame.request(stream: 3, path: devicePath, [("apns-topic", "com.example.app")], body: Fixtures.alert))
        try connection.read { $0.type == RawFrame.headers && $0.stream == 3 }
        try connection.send(RawFrame.headerBlock(stream: 1, [("x-trailer", "late")], endStream: true)
            + RawFrame.request(stream: 5, path: devicePath, [("apns-topic", "com.example.app")], body: Fixtures.alert))
        try connection.read { $0.type == RawFrame.headers && $0.stream == 5 }
        XCTAssertFalse(connection.frames.contains { $0.type == RawFrame.goAway }, "\(connection.frames)")
        XCTAssertEqual(try server.notifications.pop(count: 2, timeout: .seconds(5)).count, 2)
    }

    // MARK: - Header list size (RFC 9113 §6.5.2)

    /// Headers that, after the pseudo-headers `client` sends and `extra`, make the header list
    /// exactly `size` bytes as RFC 9113 counts it (name + value + 32 a field).
    private func headers(totalling size: Int, after extra: [(String, String)] = []) -> [(String, String)] {
        let authority = "\(server.configuration.host):\(fixture.http2Port)"
        let sent = [(":method", "POST"), (":scheme", "https"), (":authority", authority), (":path", devicePath)]
            + [("apns-topic", "com.example.app"), ("apns-push-type", "alert")] + extra
        let used = sent.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count + 32 }
        let padding = size - used - "x-padding".count - 32
        return extra + [("x-padding", String(repeating: "p", count: padding))]
    }

    func testHeaderListOfTheAdvertisedSizeIsServed() throws {
        let response = try server.connectHTTP2().send(.push(extra: headers(totalling: 8000)))
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).deviceToken, Fixtures.token)
    }

    func testHeaderListOverTheAdvertisedSizeIsAnswered431AndRecordedButNeverQueued() throws {
        let client = try server.connectHTTP2()
        let response = try client.send(.push(extra: headers(totalling: 8001)))
        XCTAssertEqual(response.status, 431)
        XCTAssertEqual(response.header("content-type"), "application/json")
        XCTAssertNotNil(UUID(uuidString: response.header("apns-id") ?? ""))
        XCTAssertEqual(String(decoding: response.body, as: UTF8.self), #"{"reason":"RequestHeaderFieldsTooLarge"}"#)
        let rejection = try server.rejections.pop(timeout: .seconds(5))
        XCTAssertEqual(rejection.answer, .reason(HTTP2Connection.headerListTooLarge))
        XCTAssertEqual(rejection.reason, "RequestHeaderFieldsTooLarge")
        XCTAssertEqual(rejection.deviceToken, Fixtures.token)
        XCTAssertTrue(rejection.responseSent)
        XCTAssertFalse(rejection.connectionClosed)
        XCTAssertTrue(rejection.detail.contains("8001 bytes"), rejection.detail)
        XCTAssertEqual(server.notifications.count, 0)
        XCTAssertEqual(try client.send(.push()).status, 200, "the connection serves on")
    }

    func testEveryFieldOfAListWithinTheSizeIsJudged() throws {
        // 150 fields before a repeated apns-topic: the repeat is seen, however many came before.
        let many = (0..<150).map { ("x-f\($0)", "1") } + [("apns-topic", "com.example.app")]
        let response = try server.connectHTTP2().send(.push(extra: many))
        XCTAssertEqual(response.reason, "DuplicateHeaders")
        XCTAssertEqual(server.notifications.count, 0)
    }

    func testManySmallFieldsOverTheSizeAreAnswered431() throws {
        let many = (0..<300).map { ("x-f\($0)", "1") }
        let response = try server.connectHTTP2().send(.push(extra: many))
        XCTAssertEqual(response.status, 431)
        XCTAssertEqual(try server.rejections.pop(timeout: .seconds(5)).answer, .reason(HTTP2Connection.headerListTooLarge))
        XCTAssertEqual(server.notifications.count, 0)
    }

    func testA96KBHeaderBlockOverContinuationFramesIsAnswered431() throws {
        let connection = try RawHTTP2Connection(to: server)
        let big = (0..<12).map { ("x-big-\($0)", String(repeating: "b", count: 8000)) }
        let frames = RawFrame.request(stream: 1, path: devicePath, [("apns-topic", "com.example.app")] + big, body: Fixtures.alert)
        XCTAssertGreaterThan(frames.filter { $0.type == RawFrame.continuation }.count, 4)
        try connection.send(frames)
        let answer = try XCTUnwrap(try connection.read { $0.type == RawFrame.data && $0.stream == 1 }, "\(connection.frames)")
        XCTAssertEqual(String(decoding: answer.payload, as: UTF8.self), #"{"reason":"RequestHeaderFieldsTooLarge"}"#)
        XCTAssertEqual(try server.rejections.pop(timeout: .seconds(5)).answer, .reason(HTTP2Connection.headerListTooLarge))
        try connection.send(RawFrame.request(stream: 3, path: devicePath, [("apns-topic", "com.example.app")], body: Fixtures.alert))
        try connection.read { $0.type == RawFrame.headers && $0.stream == 3 }
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).deviceToken, Fixtures.token)
        XCTAssertFalse(connection.frames.contains { $0.type == RawFrame.goAway })
    }

    func testCurlAndNghttpGet431ForALongHeader() throws {
        let long = "x-long: " + String(repeating: "l", count: 9000)
        let url = "https://127.0.0.1:\(fixture.http2Port)\(devicePath)"
        let curl = try runTool("/usr/bin/curl", [
            "--silent", "--show-error", "--http2", "--cacert", testCertificatePath("ca.pem"),
            "--write-out", "\n%{http_code} %{http_version}", "--header", "apns-topic: com.example.app",
            "--header", long, "--data", #"{"aps":{}}"#, url,
        ])
        XCTAssertEqual(curl.status, 0, curl.error)
        XCTAssertEqual(curl.output, "{\"reason\":\"RequestHeaderFieldsTooLarge\"}\n431 2")

        let body = FileManager.default.temporaryDirectory.appendingPathComponent("nghttp-\(UUID().uuidString).json")
        try Data(Fixtures.alert).write(to: body)
        defer { try? FileManager.default.removeItem(at: body) }
        let nghttp = try runTool("/usr/bin/nghttp", [
            "--verbose", "--header", "apns-topic: com.example.app", "--header", long, "--data", body.path, url,
        ])
        XCTAssertTrue(nghttp.output.contains(":status: 431"), nghttp.output.suffix(2000).description)
        XCTAssertTrue(nghttp.output.contains(#"{"reason":"RequestHeaderFieldsTooLarge"}"#), nghttp.output.suffix(2000).description)
        XCTAssertEqual(
            try server.rejections.pop(count: 2, timeout: .seconds(5)).map(\.answer), Array(repeating: .reason(HTTP2Connection.headerListTooLarge), count: 2))
        XCTAssertEqual(server.notifications.count, 0)
    }
}
