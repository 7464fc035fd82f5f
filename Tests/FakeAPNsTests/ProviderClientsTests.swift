import FakeAPNs
import Foundation
import XCTest

/// The public provider clients, as a user of the library calls them (no `@testable`).
final class ProviderClientsTests: XCTestCase {
    private static let payload = Array(#"{"aps":{"alert":"Hello"}}"#.utf8)
    private static let token: DeviceToken = "fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2"

    private var server: FakeAPNsServer!

    override func setUpWithError() throws {
        server = try FakeAPNsServer.started()
    }

    override func tearDown() {
        server?.stop()
    }

    private func binaryClient() throws -> BinaryProviderClient {
        try BinaryProviderClient(host: "127.0.0.1", port: server.gatewayPort)
    }

    private func http2Client() throws -> ProviderAPIClient {
        try ProviderAPIClient(host: "127.0.0.1", port: server.http2Port)
    }

    private func push(topic: String? = "com.example.app", apnsID: String? = nil) -> ProviderAPIClient.Request {
        ProviderAPIClient.Request(
            token: Self.token, payload: Self.payload, topic: topic, pushType: .alert, apnsID: apnsID)
    }

    // MARK: - Binary

    func testBinaryFinishReturnsNothingWhenEveryNotificationWasAccepted() throws {
        let client = try binaryClient()
        defer { client.close() }
        try client.send(
            BinaryEncoder.frame(token: Self.token, payload: Self.payload, identifier: 1)
                + BinaryEncoder.enhanced(identifier: 2, token: Self.token, payload: Self.payload))
        XCTAssertNil(try client.finish(waitingUpTo: .seconds(5)))
        XCTAssertEqual(try server.notifications.pop(count: 2, timeout: .seconds(5)).map(\.identifier), [1, 2])
    }

    func testBinaryFinishReturnsTheErrorResponseOfARefusal() throws {
        server.faults.add(FaultRule(match: .nth(2), action: .reject(.invalidToken)))
        let client = try binaryClient()
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
        let client = try binaryClient()
        defer { client.close() }
        try client.send(BinaryEncoder.frame(token: Self.token, payload: Self.payload, identifier: 9))
        XCTAssertNotNil(try server.rejections.pop(timeout: .seconds(5)), "the gateway has answered and closed")
        XCTAssertEqual(try client.finish(waitingUpTo: .seconds(5))?.status, .shutdown)
    }

    // MARK: - HTTP/2

    func testHTTP2SendReturnsTheStatusAndTheApnsIDOfTheRequest() throws {
        let client = try http2Client()
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
        let client = try http2Client()
        defer { client.close() }
        for _ in 1...3 { XCTAssertEqual(try client.send(push()).status, 200) }
        XCTAssertEqual(try server.notifications.pop(count: 3, timeout: .seconds(5)).count, 3)
    }

    func testHTTP2RefusalCarriesTheReason() throws {
        server.faults.add(FaultRule(match: .every, action: .respond(.tooManyRequests)))
        let client = try http2Client()
        defer { client.close() }
        let response = try client.send(push())
        XCTAssertEqual(response.status, 429)
        XCTAssertEqual(response.reason, "TooManyRequests")
        XCTAssertNotNil(response.apnsID)
    }

    func testHTTP2UnregisteredCarriesTheTimestampInMilliseconds() throws {
        server.devices.unregister(Self.token, at: Date(timeIntervalSince1970: 1_700_000_000.25))
        let client = try http2Client()
        defer { client.close() }
        let response = try client.send(push())
        XCTAssertEqual(response.status, 410)
        XCTAssertEqual(response.reason, "Unregistered")
        XCTAssertEqual(response.timestamp, 1_700_000_000_250)
    }

    func testHTTP2ResetStreamGivesTheResetCode() throws {
        server.faults.add(FaultRule(match: .every, action: .resetStream))
        let client = try http2Client()
        defer { client.close() }
        let response = try client.send(push())
        XCTAssertEqual(response.status, 0)
        XCTAssertEqual(response.resetCode, 7, "REFUSED_STREAM")
        XCTAssertEqual(try client.send(push()).status, 200, "the connection goes on")
    }

    func testHTTP2ClosedConnectionWithoutAnAnswerIsAnError() throws {
        server.faults.add(FaultRule(match: .every, action: .closeConnection))
        let client = try http2Client()
        defer { client.close() }
        XCTAssertThrowsError(try client.send(push())) { error in
            XCTAssertTrue(error is ProviderClientError, "\(error)")
            XCTAssertTrue("\(error)".contains("without answering"), "\(error)")
        }
    }

    func testHTTP2SilentServerTimesOut() throws {
        server.faults.add(FaultRule(match: .every, action: .delay(.seconds(3))))
        let client = try ProviderAPIClient(host: "127.0.0.1", port: server.http2Port, timeout: .milliseconds(300))
        defer { client.close() }
        XCTAssertThrowsError(try client.send(push())) { error in
            XCTAssertTrue("\(error)".contains("no answer within 0.3 seconds"), "\(error)")
        }
    }

    func testHTTP2ProviderTokenIsSentAsBearer() throws {
        server.stop()
        server = try FakeAPNsServer.started(configuration: .init(authentication: .testToken))
        let client = try http2Client()
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
        let port = server.http2Port
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
