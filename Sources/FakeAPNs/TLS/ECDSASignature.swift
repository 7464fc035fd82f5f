// The shims include the same C headers; importing both keeps their names in one place
// whichever module the compiler loads first.
internal import COpenSSLShims
internal import COpenSSL

/// ECDSA P-256 with SHA-256 through OpenSSL, and the two signature encodings.
enum ECDSASignature {
    /// The width of `r` and of `s` for P-256.
    private static let scalarLength = 32

    /// A DER signature of `message` with the private `key`, or nil when OpenSSL fails.
    static func sign(_ message: [UInt8], with key: EVPKey) -> [UInt8]? {
        defer { ERR_clear_error() }
        guard let context = EVP_MD_CTX_new() else { return nil }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key.pointer) == 1 else { return nil }
        var length = 0
        guard EVP_DigestSign(context, nil, &length, message, message.count) == 1, length > 0 else { return nil }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, message, message.count) == 1,
            length <= signature.count
        else { return nil }
        return Array(signature[..<length])
    }

    /// Whether the DER `signature` is `key`'s signature of `message`.
    static func verify(_ signature: [UInt8], of message: [UInt8], with key: EVPKey) -> Bool {
        defer { ERR_clear_error() }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key.pointer) == 1 else { return false }
        return EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
    }

    /// The DER signatures a token's signature bytes may stand for: 64 bytes are read as r‖s
    /// (and, in the unlikely case they are also strict DER, as DER too); anything else must be
    /// strict DER. Nil when it is neither.
    static func derCandidates(for signature: [UInt8]) -> [[UInt8]]? {
        var candidates: [[UInt8]] = []
        if signature.count == 2 * scalarLength, let der = der(fromRaw: signature) {
            candidates.append(der)
        }
        if isStrictDER(signature) {
            candidates.append(signature)
        }
        return candidates.isEmpty ? nil : candidates
    }

    /// `r‖s` (64 bytes) as DER.
    static func der(fromRaw raw: [UInt8]) -> [UInt8]? {
        guard raw.count == 2 * scalarLength else { return nil }
        defer { ERR_clear_error() }
        guard let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        let r = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32(scalarLength), nil) }
        let s = raw.withUnsafeBufferPointer {
            BN_bin2bn($0.baseAddress.map { $0 + scalarLength }, Int32(scalarLength), nil)
        }
        guard let r, let s, ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        return encode(signature)
    }

    /// A DER signature as `r‖s`, or nil when it is not DER or `r` or `s` is wider than 32 bytes.
    static func raw(fromDER der: [UInt8]) -> [UInt8]? {
        defer { ERR_clear_error() }
        guard let signature = decode(der) else { return nil }
        defer { ECDSA_SIG_free(signature) }
        var r: OpaquePointer?
        var s: OpaquePointer?
        ECDSA_SIG_get0(signature, &r, &s)
        guard let r, let s else { return nil }
        var raw = [UInt8](repeating: 0, count: 2 * scalarLength)
        let written = raw.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            return BN_bn2binpad(r, base, Int32(scalarLength)) == Int32(scalarLength)
                && BN_bn2binpad(s, base + scalarLength, Int32(scalarLength)) == Int32(scalarLength)
        }
        return written ? raw : nil
    }

    /// Whether `der` is an ECDSA signature in DER exactly as OpenSSL writes it: no trailing
    /// bytes, no BER length forms, no padded integers.
    private static func isStrictDER(_ der: [UInt8]) -> Bool {
        defer { ERR_clear_error() }
        guard !der.isEmpty, let signature = decode(der) else { return false }
        defer { ECDSA_SIG_free(signature) }
        return encode(signature) == der
    }

    private static func decode(_ der: [UInt8]) -> OpaquePointer? {
        der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let signature = d2i_ECDSA_SIG(nil, &cursor, buffer.count) else { return nil }
            guard let base = buffer.baseAddress, cursor == base + buffer.count else {
                ECDSA_SIG_free(signature)
                return nil
            }
            return signature
        }
    }

    private static func encode(_ signature: OpaquePointer) -> [UInt8]? {
        let length = i2d_ECDSA_SIG(signature, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_ECDSA_SIG(signature, &cursor)
        }
        return written == length ? der : nil
    }
}
