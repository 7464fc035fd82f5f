internal import COpenSSL
internal import COpenSSLShims
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One X.509 certificate as OpenSSL reads it from PEM text: its DER bytes, its subject, whether
/// it may sign other certificates, and its SHA-256 and SHA-1 fingerprints. The daemon's
/// `trust` command names the file it puts in the system trust store after the fingerprint.
package struct X509Certificate: Sendable, Equatable {
    /// The certificate's DER encoding, the bytes its fingerprints are taken of.
    package let der: [UInt8]
    /// The subject, RFC 2253 (`CN=FakeAPNs Test CA,O=FakeAPNs`).
    package let subject: String
    /// Whether OpenSSL takes it as a CA (basic constraints `CA:TRUE`, a key usage with
    /// `keyCertSign`, or a self-signed version 1 certificate).
    package let isCA: Bool

    /// Every certificate of a PEM text, in order.
    ///
    /// - Throws: ``TLSError`` when the text holds no certificate, or one OpenSSL cannot read.
    package static func certificates(inPEM pem: String) throws -> [X509Certificate] {
        let certificates = try TLSContext.certificates(fromPEM: pem, what: "the certificate")
        defer { certificates.forEach { X509_free($0) } }
        return try certificates.map(X509Certificate.init(reading:))
    }

    private init(reading certificate: OpaquePointer) throws {
        let length = i2d_X509(certificate, nil)
        guard length > 0 else { throw TLSError.fromErrorQueue("encoding the certificate") }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        let written = bytes.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return i2d_X509(certificate, &cursor)
        }
        guard written == length else { throw TLSError.fromErrorQueue("encoding the certificate") }
        der = bytes
        var name = [CChar](repeating: 0, count: 1024)
        let nameLength = name.withUnsafeMutableBufferPointer {
            fakeapns_x509_subject_rfc2253(certificate, $0.baseAddress, Int32($0.count))
        }
        subject = nameLength > 0 ? String(decoding: name[0..<Int(nameLength)].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        isCA = X509_check_ca(certificate) != 0
    }

    /// The SHA-256 fingerprint: the digest of ``der``.
    package var sha256: [UInt8] { digest(EVP_sha256()) }

    /// The SHA-1 fingerprint, which older tools (and macOS's `security`) also name a certificate by.
    package var sha1: [UInt8] { digest(EVP_sha1()) }

    private func digest(_ algorithm: OpaquePointer?) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var size: UInt32 = 0
        let done = der.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &output, &size, algorithm, nil)
        }
        // EVP_Digest fails only when memory runs out or the algorithm is unavailable, neither
        // of which a fingerprint can recover from; an empty one then matches nothing.
        return done == 1 ? Array(output[0..<Int(size)]) : []
    }

    /// The certificate in PEM, base64 in lines of 64 characters: what a trust store takes.
    package var pem: String {
        let base64 = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN CERTIFICATE-----\n\(base64)\n-----END CERTIFICATE-----\n"
    }
}
