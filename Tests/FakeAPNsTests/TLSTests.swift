import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

/// Identities, client certificates, and what the TLS layer records.
final class TLSTests: XCTestCase {
    private func send(to server: FakeAPNsServer, identity: TLSIdentity?) throws -> PushNotification {
        let client = try BinaryProviderClient(host: "127.0.0.1", port: server.gatewayPort, identity: identity)
        try client.send(BinaryEncoder.enhanced(identifier: 1, token: Fixtures.token, payload: Fixtures.alert))
        return try server.notifications.pop(timeout: .seconds(5))
    }

    func testServerPresentsTheBuiltInIdentityThatTheTestCAVerifies() throws {
        try withFakeAPNs { server in
            // The client verifies the chain against TestCerts/ca.pem and the name "127.0.0.1".
            let notification = try send(to: server, identity: nil)
            XCTAssertFalse(notification.connection.tlsVersion.isEmpty)
        }
    }

    func testClientThatTrustsAnotherCARefusesTheServer() throws {
        try withFakeAPNs { server in
            XCTAssertThrowsError(try BinaryProviderClient(
                host: "127.0.0.1", port: server.gatewayPort, trustedCAsPEM: TestCertificates.untrustedCAPEM))
        }
    }

    func testCustomIdentityWithPassphraseIsPresented() throws {
        let identity = try TLSIdentity(
            certificateFile: testCertificatePath("server.pem"),
            privateKeyFile: testCertificatePath("server-encrypted.key"),
            passphrase: "fake-apns")
        try withFakeAPNs(configuration: .init(identity: identity)) { server in
            XCTAssertEqual(try send(to: server, identity: nil).identifier, 1)
        }
    }

    func testWrongPassphraseIsAClearError() throws {
        let identity = try TLSIdentity(
            certificateFile: testCertificatePath("server.pem"),
            privateKeyFile: testCertificatePath("server-encrypted.key"),
            passphrase: "wrong")
        XCTAssertThrowsError(try FakeAPNsServer.started(configuration: .init(identity: identity))) { error in
            XCTAssertTrue("\(error)".contains("private key"), "\(error)")
        }
    }

    func testKeyThatDoesNotMatchTheCertificateIsRefused() {
        let mismatched = TLSIdentity(
            certificateChainPEM: TestCertificates.serverCertificatePEM, privateKeyPEM: TestCertificates.clientKeyPEM)
        XCTAssertThrowsError(try FakeAPNsServer.started(configuration: .init(identity: mismatched)))
    }

    func testClientCertificateSubjectAndTopicAreRecorded() throws {
        try withFakeAPNs(configuration: .init(clientCertificates: .optional())) { server in
            let certificate = try XCTUnwrap(try send(to: server, identity: .testClient).connection.clientCertificate)
            XCTAssertEqual(certificate.topic, "com.example.app")
            XCTAssertTrue(certificate.subject.contains("CN=Apple Push Services: com.example.app"), certificate.subject)
            XCTAssertTrue(certificate.subject.contains("UID=com.example.app"), certificate.subject)
        }
    }

    func testOptionalClientCertificateLetsClientsWithoutOneIn() throws {
        try withFakeAPNs(configuration: .init(clientCertificates: .optional())) { server in
            XCTAssertNil(try send(to: server, identity: nil).connection.clientCertificate)
        }
    }

    func testRequiredClientCertificateRefusesClientsWithoutATrustedOne() throws {
        try withFakeAPNs(configuration: .init(clientCertificates: .required())) { server in
            for (name, identity) in [("none", nil), ("untrusted", TLSIdentity.untrustedClient), ("expired", .expiredClient)] {
                // TLS 1.3 clients learn of the refusal on their first read, which `finish` does.
                do {
                    let client = try BinaryProviderClient(
                        host: "127.0.0.1", port: server.gatewayPort, identity: identity)
                    try? client.send(BinaryEncoder.enhanced(identifier: 1, token: Fixtures.token, payload: Fixtures.alert))
                    XCTAssertThrowsError(try client.finish(), "client certificate: \(name)")
                } catch {
                    // Refused during the handshake itself: also right.
                }
            }
            XCTAssertEqual(server.notifications.count, 0)
            XCTAssertEqual(try send(to: server, identity: .testClient).connection.clientCertificate?.topic, "com.example.app")
        }
    }

    func testSandboxCertificateTopicComesFromItsUID() throws {
        try withFakeAPNs(configuration: .init(clientCertificates: .required())) { server in
            let sandbox = TLSIdentity(
                certificateChainPEM: TestCertificates.sandboxClientCertificatePEM,
                privateKeyPEM: TestCertificates.sandboxClientKeyPEM)
            let certificate = try send(to: server, identity: sandbox).connection.clientCertificate
            XCTAssertEqual(certificate?.topic, "com.example.sandbox")
            XCTAssertTrue(certificate?.subject.contains("Apple Development IOS Push Services") == true)
        }
    }
}
