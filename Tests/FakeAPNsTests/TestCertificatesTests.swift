import FakeAPNsTestSupport
import Foundation
import XCTest

import FakeAPNs

/// The built-in test identity must stay identical to the files in `TestCerts/`, which
/// `Scripts/make-test-certs.sh` rewrites together with `TestCertificates.swift`.
final class TestCertificatesTests: XCTestCase {
    /// Asserts that `constant` equals the file `TestCerts/<name>` byte for byte.
    private func assertBuiltIn(
        _ constant: String,
        equalsFile name: String,
        file: StaticString = #filePath,
        line: UInt = #line
    ) throws {
        let contents = try Data(contentsOf: URL(fileURLWithPath: testCertificatePath(name)))
        XCTAssertEqual(
            Data(constant.utf8),
            contents,
            "TestCertificates differs from TestCerts/\(name); run Scripts/make-test-certs.sh",
            file: file,
            line: line
        )
    }

    // MARK: - Constants equal their files

    func testBuiltInCAEqualsTestCertsFile() throws {
        try assertBuiltIn(TestCertificates.caPEM, equalsFile: "ca.pem")
    }

    func testBuiltInServerCertificateEqualsTestCertsFile() throws {
        try assertBuiltIn(TestCertificates.serverCertificatePEM, equalsFile: "server.pem")
    }

    func testBuiltInServerKeyEqualsTestCertsFile() throws {
        try assertBuiltIn(TestCertificates.serverKeyPEM, equalsFile: "server.key")
    }

    func testBuiltInClientCertificateEqualsTestCertsFile() throws {
        try assertBuiltIn(TestCertificates.clientCertificatePEM, equalsFile: "client.pem")
    }

    func testBuiltInClientKeyEqualsTestCertsFile() throws {
        try assertBuiltIn(TestCertificates.clientKeyPEM, equalsFile: "client.key")
    }

    func testBuiltInSandboxClientCertificateEqualsTestCertsFile() throws {
        try assertBuiltIn(TestCertificates.sandboxClientCertificatePEM, equalsFile: "client-sandbox.pem")
    }

    func testBuiltInSandboxClientKeyEqualsTestCertsFile() throws {
        try assertBuiltIn(TestCertificates.sandboxClientKeyPEM, equalsFile: "client-sandbox.key")
    }

    func testBuiltInExpiredClientCertificateEqualsTestCertsFile() throws {
        try assertBuiltIn(TestCertificates.expiredClientCertificatePEM, equalsFile: "client-expired.pem")
    }

    func testBuiltInExpiredClientKeyEqualsTestCertsFile() throws {
        try assertBuiltIn(TestCertificates.expiredClientKeyPEM, equalsFile: "client-expired.key")
    }

    func testBuiltInUntrustedCAEqualsTestCertsFile() throws {
        try assertBuiltIn(TestCertificates.untrustedCAPEM, equalsFile: "untrusted-ca.pem")
    }

    func testBuiltInUntrustedClientCertificateEqualsTestCertsFile() throws {
        try assertBuiltIn(TestCertificates.untrustedClientCertificatePEM, equalsFile: "client-untrusted.pem")
    }

    func testBuiltInUntrustedClientKeyEqualsTestCertsFile() throws {
        try assertBuiltIn(TestCertificates.untrustedClientKeyPEM, equalsFile: "client-untrusted.key")
    }

    func testBuiltInJWTSigningKeyEqualsTestCertsP8File() throws {
        try assertBuiltIn(TestCertificates.jwtSigningKeyPEM, equalsFile: "AuthKey_\(TestCertificates.jwtKeyID).p8")
    }

    func testBuiltInJWTPublicKeyEqualsTestCertsFile() throws {
        try assertBuiltIn(
            TestCertificates.jwtPublicKeyPEM,
            equalsFile: "AuthKey_\(TestCertificates.jwtKeyID).pub.pem"
        )
    }

    // MARK: - JWT key id and team id

    func testJWTKeyIDNamesTheOnlyP8FileInTestCerts() throws {
        let p8Files = try FileManager.default
            .contentsOfDirectory(atPath: repositoryRoot.appendingPathComponent("TestCerts").path)
            .filter { $0.hasSuffix(".p8") }
        XCTAssertEqual(p8Files, ["AuthKey_\(TestCertificates.jwtKeyID).p8"])
    }

    func testJWTKeyIDAndTeamIDAreTenUppercaseAlphanumericCharacters() {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        for id in [TestCertificates.jwtKeyID, TestCertificates.jwtTeamID] {
            XCTAssertEqual(id.count, 10, id)
            XCTAssertTrue(id.allSatisfy(allowed.contains), id)
        }
        XCTAssertNotEqual(TestCertificates.jwtKeyID, TestCertificates.jwtTeamID)
    }

    func testTestCertsReadmeNamesJWTKeyIDAndTeamID() throws {
        let readme = try String(
            contentsOf: URL(fileURLWithPath: testCertificatePath("README.md")),
            encoding: .utf8
        )
        XCTAssertTrue(readme.contains(TestCertificates.jwtKeyID))
        XCTAssertTrue(readme.contains(TestCertificates.jwtTeamID))
    }

    // MARK: - Client topic

    func testClientTopicIsTheClientCertificateSubjectUID() throws {
        let base64 = TestCertificates.clientCertificatePEM
            .split(separator: "\n")
            .filter { !$0.hasPrefix("-----") }
            .joined()
        let der = try XCTUnwrap(Data(base64Encoded: base64))
        let topic = Array(TestCertificates.clientTopic.utf8)
        // OID 0.9.2342.19200300.100.1.1 (UID), then a UTF8String holding the topic.
        let uidAttribute: [UInt8] =
            [0x06, 0x0A, 0x09, 0x92, 0x26, 0x89, 0x93, 0xF2, 0x2C, 0x64, 0x01, 0x01, 0x0C, UInt8(topic.count)] + topic
        XCTAssertNotNil(der.range(of: Data(uidAttribute)))
    }
}
