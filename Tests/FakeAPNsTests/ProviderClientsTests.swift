import FakeAPNs
import FakeAPNsTestSupport
import Foundation
import XCTest

/// The public provider clients, as a user of the library calls them (no `@testable`).
final class ProviderClientsTests: XCTestCase {
    private static let payload = Array(#"{"aps":{"alert":"Hello"}}"#.utf8)
    private static let token: DeviceToken = "fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2"

    private let fixture = ServerFixture()
    private var server: FakeAPNsServer { fixture.server }

    override func setUpWithError() throws {
        try fixture.start(for: self)
    }

    private func push(topic: String? = "com.example.app", apnsID: String? = nil) -> ProviderAPIClient.Request {
        ProviderAPIClient.Request(
            token: Self.token, payload: Self.payload, topic: topic, pushType: .alert, apnsID: apnsID)
    }

    // MARK: - Binary

    func testBinaryFinishReturnsNothingWhenEveryNotificationWasAccepted() throws {
        let client = try fixture.binaryClient()
        defer { client.close() }
        try client.send(
            BinaryEncoder.frame(token: Self.token, payload: Self.payload, identifier: 1)
                + BinaryEncoder.enhanced(identifier: 2, token: Self.token, payload: Self.payload))
        XCTAssertNil(try client.finish(waitingUpTo: .seconds(5)))
        XCTAssertEqual(try server.notifications.pop(count: 2, timeout: .seconds(5)).map(\.identifier), [1, 2])
    }

    func testBinaryFinishReturnsTheErrorResponseOfARefusal() throws {
        server.faults.add(FaultRule(match: .nth(2), action: .reject(.invalidToken)))
        let client = try fixture.binaryClient()
        defer { client.close() }
        try client.send(
            (1...3).flatMap { BinaryEncoder.frame(token: Self.token, payload: Self.payload, identifier: $0) })
        XCTAssertEqual(
            try client.finish(waitingUpTo: .seconds(5)), BinaryErrorResponse(status: .invalidToken, identifier: 2))
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).identifier, 1)
        XCTAssertEqual(server.notifications.count, 0, "what follows a refusal is dropped")
    }

    func testBinaryFinishReadsAResponseThatCameBeforeIt() throws {
        server.faults.add(FaultRule(match: .every, action: .reject(.shutdown)))
        let client = try fixture.binaryClient()
        defer { client.close() }
        try client.send(BinaryEncoder.frame(token: Self.token, payload: Self.payload, identifier: 9))
        XCTAssertNotNil(try server.rejections.pop(timeout: .seconds(5)), "the gateway has answered and closed")
        XCTAssertEqual(try client.finish(waitingUpTo: .seconds(5))?.status, .shutdown)
    }

    func testBinaryFinishWaitsTheQuietPeriodBeforeItCallsSilenceAcceptance() throws {
        let client = try fixture.binaryClient()
        defer { client.close() }
        try client.send(BinaryEncoder.frame(token: Self.token, payload: Self.payload, identifier: 1))
        let sent = ContinuousClock.now
        XCTAssertNil(try client.finish(quietPeriod: .milliseconds(400)))
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - sent, .milliseconds(400))
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).identifier, 1)
    }

    func testBinaryFinishThrowsWhenTheServerRefusesTheHandshakeAfterTheClientsSideCompleted() throws {
        server.stop()
        try fixture.restart(.init(clientCertificates: .required()))
        let client = try fixture.binaryClient()
        defer { client.close() }
        // The write may already meet the refusal; finish still reads the alert.
        try? client.send(BinaryEncoder.frame(token: Self.token, payload: Self.payload, identifier: 1))
        XCTAssertThrowsError(try client.finish()) { error in
            XCTAssertTrue(error is ProviderClientError, "\(error)")
            XCTAssertEqual("\(error)", "the server refused the handshake: tlsv13 alert certificate required")
        }
        XCTAssertEqual(server.notifications.count, 0)
    }

    func testBinaryFinishThrowsWhenTheGatewayClosesWithoutAnErrorResponse() throws {
        server.faults.add(FaultRule(match: .every, action: .closeConnection))
        let client = try fixture.binaryClient()
        defer { client.close() }
        try client.send(BinaryEncoder.frame(token: Self.token, payload: Self.payload, identifier: 1))
        XCTAssertThrowsError(try client.finish()) { error in
            XCTAssertTrue("\(error)".contains("closed the connection without an error response"), "\(error)")
        }
    }

    /// Sends one notification to a Python peer that ends the connection as told, and finishes.
    private func finish(
        against ending: PythonTLSPeer.Ending, quietPeriod: Duration, waitingUpTo wait: Duration = .seconds(10)
    ) throws -> BinaryErrorResponse? {
        let peer = try PythonTLSPeer(ending: ending)
        let client = try BinaryProviderClient(host: "127.0.0.1", port: peer.port)
        defer { client.close() }
        try client.send(BinaryEncoder.frame(token: Self.token, payload: Self.payload, identifier: 1))
        return try client.finish(quietPeriod: quietPeriod, waitingUpTo: wait)
    }

    func testBinaryFinishThrowsWhenThePeerClosesWithoutCloseNotify() throws {
        XCTAssertThrowsError(try finish(against: .closeWithoutCloseNotify, quietPeriod: .seconds(5))) { error in
            XCTAssertTrue("\(error)".contains("without an error response or close_notify"), "\(error)")
            XCTAssertTrue("\(error)".contains("without close_notify"), "\(error)")
        }
    }

    func testBinaryFinishThrowsWhenThePeerResetsTheConnection() throws {
        XCTAssertThrowsError(try finish(against: .reset, quietPeriod: .seconds(5))) { error in
            XCTAssertTrue("\(error)".contains("Connection reset by peer"), "\(error)")
        }
    }

    func testBinaryFinishThrowsWhenThePeerAnswersCloseNotifyWithoutOne() throws {
        XCTAssertThrowsError(
            try finish(against: .closeWithoutCloseNotifyAfterTheClients, quietPeriod: .milliseconds(200))
        ) { error in
            XCTAssertTrue("\(error)".contains("answered close_notify by ending the connection"), "\(error)")
        }
    }

    func testBinaryFinishThrowsWhenThePeerNeverAnswersCloseNotify() throws {
        XCTAssertThrowsError(
            try finish(against: .never, quietPeriod: .milliseconds(200), waitingUpTo: .milliseconds(300))
        ) { error in
            XCTAssertTrue("\(error)".contains("did not answer close_notify within 0.3 seconds"), "\(error)")
        }
    }

    func testBinaryFinishAcceptsAPeerThatAnswersCloseNotifyWithCloseNotify() throws {
        XCTAssertNil(try finish(against: .closeNotifyAfterTheClients, quietPeriod: .milliseconds(200)))
    }

    // MARK: - HTTP/2

    func testHTTP2SendReturnsTheStatusAndTheApnsIDOfTheRequest() throws {
        let client = try fixture.http2Client()
        defer { client.close() }
        XCTAssertEqual(client.negotiatedProtocol, "h2")
        let id = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
        let response = try client.send(push(apnsID: id))
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.apnsID, id)
        XCTAssertNil(response.reason)
        XCTAssertNil(response.resetCode)
        let notification = try server.notifications.pop(timeout: .seconds(5))
        XCTAssertEqual(notification.topic, "com.example.app")
        XCTAssertEqual(notification.payload.bytes, Self.payload)
    }

    func testHTTP2SendsSeveralRequestsOnOneConnection() throws {
        let client = try fixture.http2Client()
        defer { client.close() }
        for _ in 1...3 { XCTAssertEqual(try client.send(push()).status, 200) }
        XCTAssertEqual(try server.notifications.pop(count: 3, timeout: .seconds(5)).count, 3)
    }

    func testHTTP2RefusalCarriesTheReason() throws {
        server.faults.add(FaultRule(match: .every, action: .respond(.tooManyRequests)))
        let client = try fixture.http2Client()
        defer { client.close() }
        let response = try client.send(push())
        XCTAssertEqual(response.status, 429)
        XCTAssertEqual(response.reason, "TooManyRequests")
        XCTAssertNotNil(response.apnsID)
    }

    func testHTTP2UnregisteredCarriesTheTimestampInMilliseconds() throws {
        server.devices.unregister(Self.token, at: Date(timeIntervalSince1970: 1_700_000_000.25))
        let client = try fixture.http2Client()
        defer { client.close() }
        let response = try client.send(push())
        XCTAssertEqual(response.status, 410)
        XCTAssertEqual(response.reason, "Unregistered")
        XCTAssertEqual(response.timestamp, 1_700_000_000_250)
    }

    func testHTTP2ResetStreamGivesTheResetCode() throws {
        server.faults.add(FaultRule(match: .every, action: .resetStream))
        let client = try fixture.http2Client()
        defer { client.close() }
        let response = try client.send(push())
        XCTAssertEqual(response.status, 0)
        XCTAssertEqual(response.resetCode, 7, "REFUSED_STREAM")
        XCTAssertEqual(try client.send(push()).status, 200, "the connection goes on")
    }

    func testHTTP2ClosedConnectionWithoutAnAnswerIsAnError() throws {
        server.faults.add(FaultRule(match: .every, action: .closeConnection))
        let client = try fixture.http2Client()
        defer { client.close() }
        XCTAssertThrowsError(try client.send(push())) { error in
            XCTAssertTrue(error is ProviderClientError, "\(error)")
            XCTAssertTrue("\(error)".contains("without answering"), "\(error)")
        }
    }

    func testHTTP2SilentServerTimesOut() throws {
        server.faults.add(FaultRule(match: .every, action: .delay(.seconds(3))))
        let client = try ProviderAPIClient(host: "127.0.0.1", port: fixture.http2Port, timeout: .milliseconds(300))
        defer { client.close() }
        XCTAssertThrowsError(try client.send(push())) { error in
            XCTAssertTrue("\(error)".contains("no answer within 0.3 seconds"), "\(error)")
        }
    }

    func testHTTP2ProviderTokenIsSentAsBearer() throws {
        server.stop()
        try fixture.restart(.init(authentication: .testToken))
        let client = try fixture.http2Client()
        defer { client.close() }
        let token = try ProviderTokenSigner.sign(keyID: TestCertificates.jwtKeyID, teamID: TestCertificates.jwtTeamID)
        let request = ProviderAPIClient.Request(
            token: Self.token, payload: Self.payload, topic: "com.example.app", providerToken: token)
        XCTAssertEqual(request.headers.last?.0, "authorization")
        XCTAssertEqual(try client.send(request).status, 200)
        XCTAssertEqual(
            try server.notifications.pop(timeout: .seconds(5)).providerToken?.teamID, TestCertificates.jwtTeamID)
    }

    // MARK: - Connection errors

    func testRefusedConnectionSaysSo() throws {
        let port = fixture.http2Port
        server.stop()
        XCTAssertThrowsError(try ProviderAPIClient(host: "127.0.0.1", port: port)) { error in
            XCTAssertTrue("\(error)".contains("Connection refused"), "\(error)")
        }
    }

    func testUntrustedServerFailsWithOpenSSLsWords() throws {
        XCTAssertThrowsError(
            try BinaryProviderClient(
                host: "127.0.0.1", port: server.gatewayPort, trustedCAsPEM: TestCertificates.untrustedCAPEM)
        ) { error in
            XCTAssertTrue(error is TLSError, "\(error)")
            XCTAssertTrue("\(error)".contains("certificate verify failed"), "\(error)")
        }
        let insecure = try BinaryProviderClient(host: "127.0.0.1", port: server.gatewayPort, trustedCAsPEM: nil)
        insecure.close()
    }
}

// MARK: - An independent peer

/// A TLS server in Python's `ssl` module (not OpenSSL through FakeAPNs's code) that takes one
/// connection, reads what the client sends, and ends it as told: the ways a gateway's side of a
/// connection can end, for the client to tell apart.
private final class PythonTLSPeer {
    enum Ending: String {
        /// Closes the socket without close_notify once the client's bytes are in.
        case closeWithoutCloseNotify = "eof"
        /// Resets the connection once the client's bytes are in.
        case reset
        /// Waits for the client's close_notify and closes without answering it.
        case closeWithoutCloseNotifyAfterTheClients = "eof-after-close-notify"
        /// Waits for the client's close_notify and answers it, as a gateway should.
        case closeNotifyAfterTheClients = "close-notify"
        /// Reads and never closes.
        case never
    }

    private static let script = """
        import os, socket, ssl, struct, sys, time
        ending, certificate, key = sys.argv[1:4]
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certificate, key)
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        print(listener.getsockname()[1], flush=True)
        connection = context.wrap_socket(listener.accept()[0], server_side=True)
        connection.recv(65536)
        if ending in ("eof-after-close-notify", "close-notify", "never"):
            while ending == "never" or connection.recv(65536):
                time.sleep(0.05) if ending == "never" else None
        if ending == "close-notify":
            connection.unwrap()
        if ending == "reset":
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        os.close(connection.fileno())
        os._exit(0)
        """

    private let peer: PythonPeer
    /// The port it listens on, on 127.0.0.1.
    var port: Int { peer.port }

    init(ending: Ending) throws {
        peer = try PythonPeer(
            ["-c", Self.script, ending.rawValue, testCertificatePath("server.pem"), testCertificatePath("server.key")],
            name: "the Python peer")
    }
}
