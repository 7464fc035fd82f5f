#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The certificate and private key a listener presents to clients.
///
/// The default is the built-in test identity (``TestCertificates``): a certificate for
/// `localhost`, `127.0.0.1` and `::1` signed by the test CA in `TestCerts/ca.pem`.
public struct TLSIdentity: Sendable, Equatable {
    /// The certificate chain in PEM, leaf first.
    public var certificateChainPEM: String
    /// The private key in PEM (PKCS#8, traditional or encrypted).
    public var privateKeyPEM: String
    /// The passphrase of an encrypted private key.
    public var passphrase: String?

    /// An identity from PEM text.
    public init(certificateChainPEM: String, privateKeyPEM: String, passphrase: String? = nil) {
        self.certificateChainPEM = certificateChainPEM
        self.privateKeyPEM = privateKeyPEM
        self.passphrase = passphrase
    }

    /// An identity read from PEM files.
    public init(certificateFile: String, privateKeyFile: String, passphrase: String? = nil) throws {
        self.init(
            certificateChainPEM: try String(contentsOfFile: certificateFile, encoding: .utf8),
            privateKeyPEM: try String(contentsOfFile: privateKeyFile, encoding: .utf8),
            passphrase: passphrase)
    }

    /// The built-in test identity, equal to `TestCerts/server.pem` and `TestCerts/server.key`.
    public static let testServer = TLSIdentity(
        certificateChainPEM: TestCertificates.serverCertificatePEM,
        privateKeyPEM: TestCertificates.serverKeyPEM)
}

/// Whether a listener asks clients for a certificate, as APNs does for provider certificates.
public struct ClientCertificatePolicy: Sendable, Equatable {
    /// How strongly a certificate is asked for.
    public enum Mode: String, Sendable, Equatable {
        /// No certificate is requested.
        case off
        /// A certificate is requested; a client without one still connects, one with a
        /// certificate that does not verify against the trusted CAs is refused.
        case optional
        /// A certificate that verifies against the trusted CAs is required.
        case required
    }

    /// How strongly a certificate is asked for.
    public var mode: Mode
    /// The CA certificates, in PEM, that client certificates must chain to.
    public var trustedCAsPEM: String

    /// A policy with a mode and trusted CAs.
    public init(mode: Mode, trustedCAsPEM: String = TestCertificates.caPEM) {
        self.mode = mode
        self.trustedCAsPEM = trustedCAsPEM
    }

    /// No client certificate requested (the default).
    public static let off = ClientCertificatePolicy(mode: .off)

    /// A certificate is requested and, when sent, must chain to `trustedCAsPEM`
    /// (by default the test CA, which signed `TestCerts/client.pem`).
    public static func optional(trustedCAsPEM: String = TestCertificates.caPEM) -> ClientCertificatePolicy {
        ClientCertificatePolicy(mode: .optional, trustedCAsPEM: trustedCAsPEM)
    }

    /// A certificate chaining to `trustedCAsPEM` is required to connect.
    public static func required(trustedCAsPEM: String = TestCertificates.caPEM) -> ClientCertificatePolicy {
        ClientCertificatePolicy(mode: .required, trustedCAsPEM: trustedCAsPEM)
    }
}
