import FakeAPNsTestSupport
import Foundation
import XCTest

// Reads internals on purpose: CertificateTopics and DERReader, the certificate parsing itself.
@testable import FakeAPNs

final class CertificateTopicsTests: XCTestCase {
    /// The topics extension's value in `TestCerts/client.pem`, from
    /// `openssl asn1parse -in TestCerts/client.pem` (the OCTET STRING after OID
    /// 1.2.840.113635.100.6.3.6).
    private let clientCertificateTopics = CertificateTopicsTests.bytes(
        hex: "30640C0F636F6D2E6578616D706C652E61707030050C036170700C14636F6D2E6578616D706C652E6170702E766F6970"
            + "30060C04766F69700C1C636F6D2E6578616D706C652E6170702E636F6D706C69636174696F6E300E0C0C636F6D706C"
            + "69636174696F6E")

    private let expectedClientTopics = [
        Entry(topic: "com.example.app", kinds: ["app"]),
        Entry(topic: "com.example.app.voip", kinds: ["voip"]),
        Entry(topic: "com.example.app.complication", kinds: ["complication"]),
    ]

    /// An entry that compares, unlike the parser's tuple.
    private struct Entry: Equatable {
        var topic: String
        var kinds: [String]
    }

    private func parse(_ der: [UInt8]) -> [Entry]? {
        CertificateTopics.parse(extensionValue: der)?.map { Entry(topic: $0.topic, kinds: $0.kinds) }
    }

    // MARK: - Real certificates

    func testTopicsOfTheTestClientCertificateAreRead() {
        XCTAssertEqual(parse(clientCertificateTopics), expectedClientTopics)
    }

    func testTopicsExtensionFoundInTheBuiltInClientCertificateIsTheOneAsn1parseShows() throws {
        let value = try XCTUnwrap(Self.topicsExtensionValue(certificatePEM: TestCertificates.clientCertificatePEM))
        XCTAssertEqual(value, clientCertificateTopics)
        XCTAssertEqual(parse(value), expectedClientTopics)
    }

    func testExpiredClientCertificateListsItsOwnTopics() throws {
        let value = try XCTUnwrap(
            Self.topicsExtensionValue(certificatePEM: TestCertificates.expiredClientCertificatePEM))
        let expected = ["com.example.expired", "com.example.expired.voip", "com.example.expired.complication"]
        XCTAssertEqual(parse(value)?.map(\.topic), expected)
    }

    func testOldStyleSandboxCertificateHasNoTopicsExtension() {
        XCTAssertNil(Self.topicsExtensionValue(certificatePEM: TestCertificates.sandboxClientCertificatePEM))
    }

    // MARK: - Well-formed values

    func testEmptySequenceHasNoTopics() {
        XCTAssertEqual(parse([0x30, 0x00]), [])
    }

    func testTopicMayListSeveralKindsOrNone() {
        let value = der(0x30, utf8("com.x") + der(0x30, utf8("app") + utf8("voip")) + utf8("com.y") + der(0x30, []))
        XCTAssertEqual(
            parse(value), [Entry(topic: "com.x", kinds: ["app", "voip"]), Entry(topic: "com.y", kinds: [])])
    }

    func testLongFormLengthsAreRead() {
        let topic = String(repeating: "t", count: 300)
        let value = der(0x30, utf8(topic) + der(0x30, utf8("app")))
        XCTAssertEqual(Array(value.prefix(4)), [0x30, 0x82, 0x01, 0x37], "two-byte long form, as built")
        XCTAssertEqual(parse(value), [Entry(topic: topic, kinds: ["app"])])
    }

    func testNonASCIITopicIsReadAsUTF8() {
        XCTAssertEqual(
            parse(der(0x30, utf8("com.ü") + der(0x30, utf8("app")))), [Entry(topic: "com.ü", kinds: ["app"])])
    }

    // MARK: - Malformed values

    func testEmptyInputIsRejected() {
        XCTAssertNil(parse([]))
    }

    func testTopLevelOtherThanSequenceIsRejected() {
        XCTAssertNil(parse([0x31, 0x00]))
        XCTAssertNil(parse([0x04, 0x02, 0x30, 0x00]), "the OCTET STRING wrapper must be removed by the caller")
    }

    func testBytesAfterTheSequenceAreRejected() {
        XCTAssertNil(parse(clientCertificateTopics + [0x00]))
        XCTAssertNil(parse([0x30, 0x00, 0x30, 0x00]))
    }

    func testIndefiniteLengthIsRejected() {
        XCTAssertNil(parse([0x30, 0x80, 0x00, 0x00]))
    }

    func testLengthOfMoreThanFourBytesIsRejected() {
        XCTAssertNil(parse([0x30, 0x85, 0x00, 0x00, 0x00, 0x00, 0x00]))
        XCTAssertNil(parse([0x30, 0x88, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]))
    }

    func testNonMinimalLengthIsRejected() {
        XCTAssertNil(parse([0x30, 0x81, 0x00]), "0 written in long form")
        XCTAssertNil(parse([0x30, 0x81, 0x02, 0x30, 0x00]), "2 written in long form")
        XCTAssertNil(parse([0x30, 0x82, 0x00, 0x80] + [UInt8](repeating: 0, count: 0x80)), "leading zero byte")
    }

    func testLengthBeyondTheInputIsRejected() {
        XCTAssertNil(parse([0x30, 0x05, 0x0C, 0x01, 0x61]))
        XCTAssertNil(parse([0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xFF]))
        XCTAssertNil(parse([0x30, 0x03, 0x0C, 0x05, 0x61]), "inner length beyond its sequence")
    }

    func testTopicWithoutKindSequenceIsRejected() {
        XCTAssertNil(parse(der(0x30, utf8("com.x"))))
        XCTAssertNil(parse(der(0x30, utf8("com.x") + utf8("app"))))
    }

    func testStringOfAnotherTypeIsRejected() {
        let printable = der(0x13, Array("com.x".utf8))
        XCTAssertNil(parse(der(0x30, printable + der(0x30, utf8("app")))))
        XCTAssertNil(parse(der(0x30, utf8("com.x") + der(0x30, der(0x16, Array("app".utf8))))))
    }

    func testInvalidUTF8IsRejected() {
        XCTAssertNil(parse(der(0x30, der(0x0C, [0x63, 0xFF, 0x78]) + der(0x30, utf8("app")))))
        XCTAssertNil(parse(der(0x30, utf8("com.x") + der(0x30, der(0x0C, [0xC3])))))
    }

    func testEveryTruncationOfTheRealValueIsRejected() {
        for count in 0..<clientCertificateTopics.count {
            XCTAssertNil(parse(Array(clientCertificateTopics.prefix(count))), "first \(count) bytes")
        }
    }

    func testRandomBytesAndMutationsOfTheRealValueNeverCrash() {
        var random = SeededRandom(seed: 0x0DE2_C327)
        for _ in 0..<20_000 {
            var value = clientCertificateTopics
            switch random.next() % 3 {
            case 0:
                value = (0..<Int(random.next() % 64)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            case 1:
                for _ in 0...(random.next() % 4) {
                    value[Int(random.next() % UInt64(value.count))] = UInt8(truncatingIfNeeded: random.next())
                }
            default:
                value.insert(UInt8(truncatingIfNeeded: random.next()), at: Int(random.next() % UInt64(value.count)))
            }
            if let entries = CertificateTopics.parse(extensionValue: value) {
                XCTAssertLessThanOrEqual(entries.count, value.count / 4, "each pair takes at least 4 bytes")
            }
        }
    }

    // MARK: - Helpers

    /// The content of the topics extension in a PEM certificate, found by walking the
    /// certificate's structure; nil when it has no such extension.
    private static func topicsExtensionValue(certificatePEM: String) -> [UInt8]? {
        let base64 = certificatePEM.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        guard let certificateDER = Data(base64Encoded: base64) else { return nil }
        var certificate = DERReader(Array(certificateDER)[...])
        guard let certificateContent = certificate.read(tag: 0x30) else { return nil }
        var certificateFields = DERReader(certificateContent)
        guard let tbsCertificate = certificateFields.read(tag: 0x30) else { return nil }
        var fields = DERReader(tbsCertificate)
        _ = fields.read(tag: 0xA0)  // [0] version
        // serial, signature algorithm, issuer, validity, subject, subject public key info
        for tag: UInt8 in [0x02, 0x30, 0x30, 0x30, 0x30, 0x30] {
            guard fields.read(tag: tag) != nil else { return nil }
        }
        _ = fields.read(tag: 0x81)  // [1] issuerUniqueID
        _ = fields.read(tag: 0x82)  // [2] subjectUniqueID
        guard let explicitExtensions = fields.read(tag: 0xA3) else { return nil }
        var wrapper = DERReader(explicitExtensions)
        guard let extensionList = wrapper.read(tag: 0x30) else { return nil }
        var extensions = DERReader(extensionList)
        let topicsOID: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x63, 0x64, 0x06, 0x03, 0x06]
        while let certificateExtension = extensions.read(tag: 0x30) {
            var parts = DERReader(certificateExtension)
            guard let oid = parts.read(tag: 0x06) else { return nil }
            _ = parts.read(tag: 0x01)  // critical
            guard let value = parts.read(tag: 0x04) else { return nil }
            if Array(oid) == topicsOID { return Array(value) }
        }
        return nil
    }

    private static func bytes(hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count - 1, by: 2).compactMap {
            UInt8(String(decoding: digits[$0...($0 + 1)], as: UTF8.self), radix: 16)
        }
    }

    /// A DER element: `tag`, the shortest length encoding, `content`.
    private func der(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var length: [UInt8] = []
        if content.count < 0x80 {
            length = [UInt8(content.count)]
        } else {
            var remaining = content.count
            while remaining > 0 {
                length.insert(UInt8(remaining & 0xFF), at: 0)
                remaining >>= 8
            }
            length.insert(0x80 | UInt8(length.count), at: 0)
        }
        return [tag] + length + content
    }

    private func utf8(_ text: String) -> [UInt8] {
        der(0x0C, Array(text.utf8))
    }
}

