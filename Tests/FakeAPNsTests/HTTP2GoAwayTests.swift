import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: TLSClient, HTTP2SessionDelegate and ProviderAPIClient.exchange/goAway, to read the frames around GOAWAY.
@testable import FakeAPNs

/// GOAWAY on the provider API, whoever sends it (a fault rule, the server stopping, nghttp2
/// defending the connection): the answers it follows leave before it, nothing on a stream above
/// its last stream is queued, and what is recorded says what happened. Checked on the raw
/// frames and with python3-h2, a client that shares no code with the server and stops reading
/// at GOAWAY.
final class HTTP2GoAwayTests: XCTestCase {
    private let fixture = ServerFixture()
    private var server: FakeAPNsServer { fixture.server }

    override func setUpWithError() throws {
        try fixture.start(for: self)
    }

    // MARK: - Frame order

    func testGoAwayFaultSendsTheAnswersHeadersAndDataBeforeGoAway() throws {
        server.faults.add(FaultRule(match: .every, action: .goAway(.shutdown)))
        let frames = try exchangeRawFrames(settings: [])
        let headers = try XCTUnwrap(frames.firstIndex { $0.type == RawFrame.headers && $0.stream == 1 }, "\(frames)")
        let data = try XCTUnwrap(frames.firstIndex { $0.type == RawFrame.data && $0.stream == 1 }, "\(frames)")
        let goAway = try XCTUnwrap(frames.firstIndex { $0.type == RawFrame.goAway }, "\(frames)")
        XCTAssertLessThan(headers, data, "\(frames)")
        XCTAssertLessThan(data, goAway, "\(frames)")
        XCTAssertEqual(goAway, frames.count - 2, "GOAWAY is the last frame but its PING: \(frames)")
        XCTAssertEqual(frames.last?.type, RawFrame.ping, "\(frames)")
        XCTAssertEqual(String(decoding: frames[data].payload, as: UTF8.self), #"{"reason":"Shutdown"}"#)
        XCTAssertEqual(frames[goAway].goAwayLastStream, 1)
        XCTAssertEqual(frames[goAway].goAwayErrorCode, 0)
        XCTAssertEqual(String(decoding: frames[goAway].goAwayDebugData, as: UTF8.self), #"{"reason":"Shutdown"}"#)
    }

    func testClosedFlowControlWindowDoesNotHoldTheGoAway() throws {
        server.faults.add(FaultRule(match: .every, action: .goAway(.shutdown)))
        // With a window of 0 the answer's DATA may not leave; GOAWAY and the close still do.
        let frames = try exchangeRawFrames(settings: [(Int32(NGHTTP2Settings.initialWindowSize), 0)])
        XCTAssertTrue(frames.contains { $0.type == RawFrame.headers && $0.stream == 1 }, "\(frames)")
        XCTAssertFalse(frames.contains { $0.type == RawFrame.data && $0.stream == 1 }, "\(frames)")
        XCTAssertEqual(RawFrame.lastBeforePing(frames)?.type, RawFrame.goAway, "\(frames)")
    }

    // MARK: - Escaping

    func testReasonsAreEscapedInTheAnswerAndInTheGoAwayDebugData() throws {
        let reasons = [
            #"X","timestamp":1,"injected":"yes"#, #"back\slash \" and \\"#, "line\nbreak\ttab\r",
            "nul\u{0}unit\u{1f}end", "Überlastet ☃ 服务 🚀",
        ]
        for reason in reasons {
            server.faults.add(FaultRule(match: .every, action: .goAway(APNsReason(reason, status: 503))))
            let client = try server.connectHTTP2()
            let response = try client.send(.push())
            XCTAssertEqual(response.status, 503, reason.debugDescription)
            XCTAssertEqual(try JSONValue.parse(response.body), ["reason": .string(reason)], reason.debugDescription)
            let goAway = try XCTUnwrap(client.goAway, reason.debugDescription)
            XCTAssertEqual(try JSONValue.parse(goAway.debugData), ["reason": .string(reason)], reason.debugDescription)
            server.faults.removeAll()

            server.faults.add(FaultRule(match: .every, action: .respond(APNsReason(reason, status: 500))))
            let answer = try server.connectHTTP2().send(.push())
            XCTAssertEqual(try JSONValue.parse(answer.body), ["reason": .string(reason)], reason.debugDescription)
            server.faults.removeAll()
        }
    }

    // MARK: - Records

    func testGoAwayFaultRefusalSaysTheConnectionClosed() throws {
        server.faults.add(FaultRule(match: .every, action: .goAway(.shutdown)))
        XCTAssertEqual(try server.connectHTTP2().send(.push()).status, 503)
        let rejection = try server.rejections.pop(timeout: .seconds(5))
        XCTAssertEqual(rejection.answer, .reason(.shutdown))
        XCTAssertTrue(rejection.responseSent)
        XCTAssertTrue(rejection.connectionClosed)
        XCTAssertEqual(rejection.deviceToken, Fixtures.token)
    }

    func testRefusalsNameThePathsTokenWhenItIsValid() throws {
        let client = try server.connectHTTP2()
        let token = Fixtures.token
        let cases: [(ProviderAPIClient.Request, String, DeviceToken?)] = [
            (.init(path: "/3/device/\(token.hex)", method: "GET"), "MethodNotAllowed", token),
            (.push(extra: [("apns-topic", "com.example.app")]), "DuplicateHeaders", token),
            (.push(extra: [("apns-id", "not-a-uuid")]), "BadMessageId", token),
            (.push(extra: [("apns-priority", "7")]), "BadPriority", token),
            (.push(pushType: "telegram"), "InvalidPushType", token),
            (.push(topic: "com.example.app", pushType: "voip"), "InvalidPushType", token),
            (.push(body: []), "PayloadEmpty", token),
            (.init(path: "/3/device/zz", body: Fixtures.alert), "BadDeviceToken", nil),
            (.init(path: "/4/device/\(token.hex)", body: Fixtures.alert), "BadPath", nil),
        ]
        let responses = try client.exchange(cases.map(\.0))
        XCTAssertEqual(responses.map { $0.reason ?? "" }, cases.map(\.1))
        // Requests without a body end first: refusals are matched to requests by apns-id.
        let rejections = try server.rejections.pop(count: cases.count, timeout: .seconds(5))
        let byID = Dictionary(rejections.map { ($0.apnsID ?? "", $0) }, uniquingKeysWith: { first, _ in first })
        for (expected, response) in zip(cases, responses) {
            let rejection = try XCTUnwrap(byID[response.header("apns-id") ?? ""], expected.1)
            XCTAssertEqual(rejection.reason, expected.1)
            XCTAssertEqual(rejection.deviceToken, expected.2, expected.1)
        }
    }

    func testCertificateRefusalsNameThePathsToken() throws {
        server.stop()
        try fixture.restart(.init(authentication: .certificate))
        _ = try server.connectHTTP2().send(.push())
        _ = try server.connectHTTP2(identity: .testClient).send(.push(topic: "com.other.app"))
        let rejections = try server.rejections.pop(count: 2, timeout: .seconds(5))
        XCTAssertEqual(rejections.map(\.reason), ["MissingProviderToken", "TopicDisallowed"])
        XCTAssertEqual(rejections.map(\.deviceToken), [Fixtures.token, Fixtures.token])
    }

    // MARK: - With python3-h2

    func testGoAwayFaultReasonReachesTheClientAndRetriedStreamsArriveOnce() throws {
        server.faults.add(FaultRule(match: .nth(5), action: .goAway(.shutdown)))
        // Request 0 sends its headers only; requests 1 to 20 are whole, and 5 meets the fault.
        let run = try PythonH2Run.run("pipeline", against: server, ["--incomplete", "1", "--count", "20", "--retry"])
        let goAway = try XCTUnwrap(run.goaway, "\(run.frames)")
        let faulted = run.requests[5]
        XCTAssertEqual(goAway.lastStreamId, faulted.stream, "GOAWAY names the last stream processed")
        XCTAssertEqual(goAway.errorCode, 0)
        XCTAssertEqual(goAway.debug, #"{"reason":"Shutdown"}"#)
        XCTAssertEqual(faulted.status, 503)
        XCTAssertEqual(faulted.reason, "Shutdown", "the client read the answer before GOAWAY: \(run.frames)")
        XCTAssertEqual(run.frames.suffix(2), ["RST_STREAM 1", "GOAWAY 0"])
        XCTAssertEqual(run.requests[0].reset, 7, "the request still arriving is refused (REFUSED_STREAM)")
        XCTAssertEqual(run.requests[0].retry?.status, 200)
        for request in run.requests[1..<5] { XCTAssertEqual(request.status, 200, "\(request)") }
        for request in run.requests[6...] {
            XCTAssertGreaterThan(request.stream, goAway.lastStreamId)
            XCTAssertNil(request.status, "\(request)")
            XCTAssertEqual(request.retry?.status, 200, "\(request)")
        }
        let queued = PythonH2Run.indexes(of: try server.notifications.pop(count: 20, timeout: .seconds(10)))
        XCTAssertEqual(queued.sorted(), Array(0..<5) + Array(6...20), "each notification once")
        XCTAssertEqual(server.notifications.count, 0)
        let rejection = try server.rejections.pop(timeout: .seconds(5))
        XCTAssertTrue(rejection.connectionClosed)
        XCTAssertEqual(server.rejections.count, 0, "nothing past GOAWAY is recorded")
    }

    func testCloseConnectionFaultQueuesNothingThatCameAfterIt() throws {
        server.faults.add(FaultRule(match: .nth(5), action: .closeConnection))
        let run = try PythonH2Run.run("pipeline", against: server, ["--count", "20"])
        XCTAssertNil(run.goaway)
        XCTAssertTrue(run.ended)
        XCTAssertEqual(run.requests.map { $0.status ?? 0 }, Array(repeating: 200, count: 4) + Array(repeating: 0, count: 16))
        XCTAssertEqual(PythonH2Run.indexes(of: server.notifications.removeAll()).sorted(), [0, 1, 2, 3])
        let rejections = server.rejections.removeAll()
        XCTAssertEqual(rejections.map(\.reason), ["Connection closed"])
        XCTAssertEqual(rejections.first?.connectionClosed, true)
    }

    func testNghttp2ResetFloodGoAwayKeepsNothingAboveItsLastStream() throws {
        // nghttp2 (1.52 as Debian patches it, and later releases) answers more than 1000 stream
        // resets in a burst with GOAWAY INTERNAL_ERROR naming the last stream it received; the
        // requests sent after the resets, in the same write, are above it.
        let run = try PythonH2Run.run("rapid-reset", against: server, ["--resets", "1100", "--count", "20", "--retry"])
        let goAway = try XCTUnwrap(run.goaway, "no GOAWAY; frames \(run.frames.suffix(20))")
        XCTAssertEqual(goAway.errorCode, 2)
        XCTAssertEqual(run.requests[0].stream, 1)
        XCTAssertEqual(run.requests[0].status, 200, "the request before the resets is answered")
        for request in run.requests[1...] {
            XCTAssertGreaterThan(request.stream, goAway.lastStreamId)
            XCTAssertNil(request.status, "\(request)")
            XCTAssertEqual(request.retry?.status, 200, "\(request)")
        }
        let queued = PythonH2Run.indexes(of: try server.notifications.pop(count: 21, timeout: .seconds(10)))
        XCTAssertEqual(queued.sorted(), Array(0...20), "each notification once")
        XCTAssertEqual(server.notifications.count, 0)
        XCTAssertEqual(server.rejections.count, 0)
    }

    func testStopSendsGoAwayNamingTheLastProcessedStream() throws {
        // Requests 0 and 1 send their headers only: they are still arriving when the server stops.
        let outcome = PythonH2Run.start(
            "keep-sending", against: server, ["--incomplete", "2", "--window", "20", "--seconds", "60"])
        XCTAssertTrue(eventually(timeout: .seconds(30)) { server.notifications.totalArrived >= 200 })
        let stopping = ContinuousClock.now
        server.stop()
        XCTAssertLessThan(ContinuousClock.now - stopping, .seconds(10))
        let run = try outcome.pop(timeout: .seconds(60)).get()
        let goAway = try XCTUnwrap(run.goaway, "no GOAWAY; frames \(run.frames.suffix(10))")
        XCTAssertEqual(goAway.errorCode, 0)
        XCTAssertGreaterThan(goAway.lastStreamId, 0)
        XCTAssertEqual(run.frames.last, "GOAWAY 0")
        XCTAssertEqual(run.requests[0..<2].map(\.reset), [7, 7], "requests still arriving are refused")
        for request in run.requests where request.stream <= goAway.lastStreamId {
            XCTAssertTrue(request.status == 200 || request.reset == 7, "answered or refused: \(request)")
        }
        let queued = PythonH2Run.indexes(of: server.notifications.removeAll())
        let answered = run.requests.filter { $0.status == 200 }.map(\.index)
        XCTAssertEqual(queued.sorted(), answered.sorted(), "queued: exactly the answered requests, once each")
        XCTAssertFalse(run.requests.contains { $0.stream > goAway.lastStreamId && $0.status != nil })
    }

    // MARK: - Raw frames

    /// Sends one push with the given client SETTINGS and returns every frame the server sent
    /// until it closed the connection, in order.
    private func exchangeRawFrames(settings: [(id: Int32, value: UInt32)]) throws -> [RawFrame] {
        let tls = try TLSClient(host: server.configuration.host, port: fixture.http2Port, offerHTTP2: true)
        defer { tls.close() }
        let session = try NGHTTP2Session(server: false, delegate: IgnoringDelegate())
        session.submitSettings(settings)
        let request = ProviderAPIClient.Request.push()
        _ = session.submitRequest(
            headers: [(":method", "POST"), (":scheme", "https"), (":authority", "localhost"), (":path", request.path)]
                + request.headers,
            body: request.body)
        try tls.send(try session.takeOutput())
        let bytes = try tls.readToEnd()
        let (frames, length) = RawFrame.parse(bytes)
        XCTAssertEqual(length, bytes.count, "whole frames only")
        return frames
    }
}

/// A session delegate for a client that reads the frames itself.
private final class IgnoringDelegate: HTTP2SessionDelegate {
    func streamBegan(_ stream: Int32) {}
    func header(_ stream: Int32, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {}
    func data(_ stream: Int32, _ bytes: UnsafeRawBufferPointer) {}
    func streamEnded(_ stream: Int32) {}
    func streamClosed(_ stream: Int32, errorCode: UInt32) {}
}
