internal import COpenSSLShims
internal import COpenSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An OpenSSL context: certificates, keys, verification settings, shared by every connection
/// of one listener (or one client). Immutable once built, which makes it safe to share.
final class TLSContext: @unchecked Sendable {
    let context: OpaquePointer

    private init(context: OpaquePointer) {
        self.context = context
    }

    deinit {
        SSL_CTX_free(context)
    }

    /// What a context is built from: equal recipes make interchangeable contexts.
    private struct Recipe: Hashable {
        var isServer: Bool
        var certificateChainPEM: String?
        var privateKeyPEM: String?
        var passphrase: String?
        var clientCertificates: String?
        var trustedCAsPEM: String?
        var offerHTTP2 = false
    }

    /// Contexts built before, by recipe. Decoding the PEM key and certificates costs most of a
    /// server's start (about a millisecond each time), and a test suite starts servers and
    /// clients with the same identity over and over; contexts are immutable, so they are
    /// shared. Bounded: a process uses a handful of identities.
    private static let cache = ContextCache()

    private final class ContextCache: @unchecked Sendable {
        private let lock = ConditionLock()
        private var contexts: [Recipe: TLSContext] = [:]
        private var order: [Recipe] = []
        private let limit = 16

        func context(for recipe: Recipe, build: () throws -> TLSContext) throws -> TLSContext {
            if let context = lock.withLock({ contexts[recipe] }) { return context }
            let context = try build()
            return lock.withLock {
                if let existing = contexts[recipe] { return existing }
                if order.count == limit { contexts[order.removeFirst()] = nil }
                contexts[recipe] = context
                order.append(recipe)
                return context
            }
        }
    }

    /// A server context presenting `identity` and applying `clientCertificates`.
    static func server(
        identity: TLSIdentity, clientCertificates: ClientCertificatePolicy, offerHTTP2: Bool = false
    ) throws -> TLSContext {
        let recipe = Recipe(
            isServer: true, certificateChainPEM: identity.certificateChainPEM, privateKeyPEM: identity.privateKeyPEM,
            passphrase: identity.passphrase, clientCertificates: clientCertificates.mode.rawValue,
            trustedCAsPEM: clientCertificates.mode == .off ? nil : clientCertificates.trustedCAsPEM,
            offerHTTP2: offerHTTP2)
        return try cache.context(for: recipe) {
            try makeServer(identity: identity, clientCertificates: clientCertificates, offerHTTP2: offerHTTP2)
        }
    }

    /// A client context that trusts `trustedCAsPEM` (nil: verify nothing) and presents
    /// `identity` when given.
    static func client(trustedCAsPEM: String?, identity: TLSIdentity?) throws -> TLSContext {
        let recipe = Recipe(
            isServer: false, certificateChainPEM: identity?.certificateChainPEM, privateKeyPEM: identity?.privateKeyPEM,
            passphrase: identity?.passphrase, trustedCAsPEM: trustedCAsPEM)
        return try cache.context(for: recipe) { try makeClient(trustedCAsPEM: trustedCAsPEM, identity: identity) }
    }

    private static func makeServer(
        identity: TLSIdentity, clientCertificates: ClientCertificatePolicy, offerHTTP2: Bool
    ) throws -> TLSContext {
        guard let raw = SSL_CTX_new(TLS_server_method()) else {
            throw TLSError.fromErrorQueue("creating the server context")
        }
        let context = TLSContext(context: raw)
        guard fakeapns_ssl_ctx_configure(raw, 1) == 1 else {
            throw TLSError.fromErrorQueue("configuring the server context")
        }
        try context.use(identity: identity)
        // No TLS 1.3 session tickets. A ticket is a message the server sends after the
        // handshake; a binary-era client writes its notifications and closes without ever
        // reading, so the ticket sits unread in its socket, its kernel answers the close with a
        // reset, and the handshake's ticket write fails before the notifications are read: they
        // were lost. With no ticket, the server sends nothing a client must read. Apple's
        // gateway spoke TLS 1.2, where tickets come inside the handshake.
        _ = SSL_CTX_set_num_tickets(raw, 0)
        let sessionContext = Array("fake-apns".utf8)
        _ = SSL_CTX_set_session_id_context(raw, sessionContext, UInt32(sessionContext.count))
        switch clientCertificates.mode {
        case .off:
            SSL_CTX_set_verify(raw, SSL_VERIFY_NONE, nil)
        case .optional, .required:
            try context.trust(pem: clientCertificates.trustedCAsPEM, advertise: true)
            var flags = SSL_VERIFY_PEER
            if clientCertificates.mode == .required { flags |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT }
            SSL_CTX_set_verify(raw, flags, nil)
        }
        // HTTP/2 over TLS asks more than the binary era's clients had: TLS 1.2 or later (as
        // Apple asks of providers) and, under TLS 1.2, an AEAD suite (RFC 9113 §9.2).
        if offerHTTP2 && fakeapns_ssl_ctx_configure_h2(raw) != 1 {
            throw TLSError.fromErrorQueue("configuring the HTTP/2 server context")
        }
        return context
    }

    private static func makeClient(trustedCAsPEM: String?, identity: TLSIdentity?) throws -> TLSContext {
        guard let raw = SSL_CTX_new(TLS_client_method()) else {
            throw TLSError.fromErrorQueue("creating the client context")
        }
        let context = TLSContext(context: raw)
        guard fakeapns_ssl_ctx_configure(raw, 0) == 1 else {
            throw TLSError.fromErrorQueue("configuring the client context")
        }
        if let identity { try context.use(identity: identity) }
        if let trustedCAsPEM {
            try context.trust(pem: trustedCAsPEM, advertise: false)
            SSL_CTX_set_verify(raw, SSL_VERIFY_PEER, nil)
        } else {
            SSL_CTX_set_verify(raw, SSL_VERIFY_NONE, nil)
        }
        return context
    }

    private func use(identity: TLSIdentity) throws {
        let certificates = try Self.certificates(fromPEM: identity.certificateChainPEM, what: "the certificate chain")
        guard let leaf = certificates.first else {
            throw TLSError(operation: "loading the certificate chain", details: "no certificate in the PEM text")
        }
        defer { certificates.forEach { X509_free($0) } }
        guard SSL_CTX_use_certificate(context, leaf) == 1 else {
            throw TLSError.fromErrorQueue("using the certificate")
        }
        for intermediate in certificates.dropFirst() {
            // add1: the context takes its own reference.
            guard SSL_CTX_ctrl(context, SSL_CTRL_CHAIN_CERT, 1, UnsafeMutableRawPointer(intermediate)) == 1 else {
                throw TLSError.fromErrorQueue("adding an intermediate certificate")
            }
        }
        let key = try Self.privateKey(fromPEM: identity.privateKeyPEM, passphrase: identity.passphrase)
        defer { EVP_PKEY_free(key) }
        guard SSL_CTX_use_PrivateKey(context, key) == 1 else {
            throw TLSError.fromErrorQueue("using the private key")
        }
        guard SSL_CTX_check_private_key(context) == 1 else {
            throw TLSError.fromErrorQueue("checking the private key", fallback: "the key does not match the certificate")
        }
    }

    private func trust(pem: String, advertise: Bool) throws {
        let certificates = try Self.certificates(fromPEM: pem, what: "the trusted CA certificates")
        defer { certificates.forEach { X509_free($0) } }
        guard !certificates.isEmpty else {
            throw TLSError(operation: "loading the trusted CA certificates", details: "no certificate in the PEM text")
        }
        guard let store = SSL_CTX_get_cert_store(context) else {
            throw TLSError.fromErrorQueue("opening the certificate store")
        }
        for certificate in certificates {
            guard X509_STORE_add_cert(store, certificate) == 1 else {
                throw TLSError.fromErrorQueue("trusting a CA certificate")
            }
            if advertise {
                _ = SSL_CTX_add_client_CA(context, certificate)
            }
        }
    }

    /// Every certificate in a PEM text, in order; the caller frees them.
    static func certificates(fromPEM pem: String, what: String) throws -> [OpaquePointer] {
        TLSError.clearErrorQueue()
        return try withMemoryBIO(pem) { bio in
            var result: [OpaquePointer] = []
            while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
                result.append(certificate)
            }
            // The loop ends on "no start line" at the end of the text; anything else is a real error.
            let last = ERR_peek_last_error()
            if result.isEmpty || (last != 0 && ERR_GET_REASON_shim(last) != PEM_R_NO_START_LINE) {
                result.forEach { X509_free($0) }
                throw TLSError.fromErrorQueue("loading \(what)", fallback: "no certificate in the PEM text")
            }
            TLSError.clearErrorQueue()
            return result
        }
    }

    /// A private key from PEM text, decrypting it with `passphrase` when it is encrypted.
    static func privateKey(fromPEM pem: String, passphrase: String?) throws -> OpaquePointer {
        TLSError.clearErrorQueue()
        return try withMemoryBIO(pem) { bio in
            let key: OpaquePointer? = (passphrase ?? "").withCString { secret in
                PEM_read_bio_PrivateKey(bio, nil, nil, UnsafeMutableRawPointer(mutating: secret))
            }
            guard let key else {
                throw TLSError.fromErrorQueue(
                    "loading the private key",
                    fallback: passphrase == nil ? "not a PEM private key, or it needs a passphrase" : "wrong passphrase")
            }
            return key
        }
    }

    private static func withMemoryBIO<T>(_ text: String, _ body: (OpaquePointer) throws -> T) throws -> T {
        var bytes = Array(text.utf8)
        return try bytes.withUnsafeMutableBytes { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else {
                throw TLSError.fromErrorQueue("reading PEM text")
            }
            defer { BIO_free(bio) }
            return try body(bio)
        }
    }
}

/// OpenSSL's ERR_GET_REASON is a macro in 3.0: the reason is the low 23 bits.
private func ERR_GET_REASON_shim(_ code: UInt) -> Int32 {
    Int32(code & 0x7F_FFFF)
}
