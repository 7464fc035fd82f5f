// The shims include the same C headers; importing both keeps their names in one place
// whichever module the compiler loads first.
internal import COpenSSLShims
internal import COpenSSL

/// An OpenSSL `EVP_PKEY`, freed with its owner. Immutable after creation; OpenSSL allows
/// concurrent signing and verification with one key, which makes it safe to share.
final class EVPKey: @unchecked Sendable {
    let pointer: OpaquePointer

    private init(_ pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        EVP_PKEY_free(pointer)
    }

    /// A public key from SubjectPublicKeyInfo PEM, or nil.
    static func publicKey(fromPEM pem: String) -> EVPKey? {
        defer { ERR_clear_error() }
        var bytes = Array(pem.utf8)
        guard bytes.count <= Int(Int32.max) else { return nil }
        return bytes.withUnsafeMutableBytes { buffer -> EVPKey? in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PUBKEY(bio, nil, nil, nil).map(EVPKey.init)
        }
    }

    /// A public key from SubjectPublicKeyInfo DER, or nil.
    static func publicKey(fromDER der: [UInt8]) -> EVPKey? {
        defer { ERR_clear_error() }
        return der.withUnsafeBufferPointer { buffer -> EVPKey? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count).map(EVPKey.init)
        }
    }

    /// A private key from PEM (PKCS#8 or traditional), unencrypted.
    ///
    /// - Throws: ``TLSError`` with OpenSSL's words.
    static func privateKey(fromPEM pem: String) throws -> EVPKey {
        EVPKey(try TLSContext.privateKey(fromPEM: pem, passphrase: nil))
    }

    /// The public half of this key as a key of its own, or nil when OpenSSL cannot encode it.
    func publicHalf() -> EVPKey? {
        subjectPublicKeyInfoDER().flatMap(Self.publicKey(fromDER:))
    }

    /// The public half as SubjectPublicKeyInfo DER, or nil when OpenSSL cannot encode it.
    func subjectPublicKeyInfoDER() -> [UInt8]? {
        defer { ERR_clear_error() }
        let length = i2d_PUBKEY(pointer, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_PUBKEY(pointer, &cursor)
        }
        return written == length ? der : nil
    }

    /// Nil when this is an EC key on P-256 (the curve of ES256 and of APNs auth keys); otherwise
    /// what it is instead, as a sentence fragment.
    func p256Mismatch() -> String? {
        let type = EVP_PKEY_get0_type_name(pointer).map { String(cString: $0) } ?? "unknown"
        guard EVP_PKEY_is_a(pointer, "EC") == 1 else {
            return "an \(type) key; ES256 needs an EC key on the P-256 curve"
        }
        var name = [CChar](repeating: 0, count: 80)
        var length = 0
        guard EVP_PKEY_get_group_name(pointer, &name, name.count, &length) == 1, length < name.count else {
            ERR_clear_error()
            return "an EC key with no named curve; ES256 needs the P-256 curve"
        }
        let curve = String(decoding: name[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard ["prime256v1", "P-256", "secp256r1"].contains(curve) else {
            return "an EC key on the \(curve) curve; ES256 needs the P-256 curve (prime256v1)"
        }
        return nil
    }
}
