#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Makes provider tokens (JWTs) the way APNs clients do, for tests and the daemon's client.
///
/// A token is `base64url(header).base64url(claims).base64url(signature)` with the header
/// `{"alg":"ES256","kid":"<key id>"}`, the claims `{"iss":"<team id>","iat":<seconds>}` and an
/// ECDSA P-256 SHA-256 signature. Send it as `authorization: bearer <token>`.
///
/// ```swift
/// let token = try ProviderTokenSigner.sign(keyID: TestCertificates.jwtKeyID, teamID: TestCertificates.jwtTeamID)
/// request.headers["authorization"] = "bearer \(token)"
/// ```
public enum ProviderTokenSigner {
    /// How the signature part of a token is encoded. APNs accepts both.
    public enum SignatureEncoding: Sendable, Hashable {
        /// The JOSE form (RFC 7518): 64 bytes, `r` then `s`, each 32 bytes big-endian. What
        /// golang-jwt (apns2) and most JWT libraries produce.
        case raw
        /// DER `SEQUENCE { INTEGER r, INTEGER s }`, 70 to 72 bytes. What Java's
        /// `SHA256withECDSA` (Pushy) and Apple's `openssl dgst -sign` recipe produce.
        case der
    }

    /// A provider token for `keyID` and `teamID`, issued at `issuedAt` (whole seconds, rounded
    /// down), signed with `privateKeyPEM` (the `.p8` contents; by default the built-in test key,
    /// which ``JWTSigningKey/test`` verifies).
    ///
    /// ```swift
    /// let stale = try ProviderTokenSigner.sign(
    ///     keyID: "ABC123DEFG", teamID: "DEF123GHIJ", issuedAt: Date().addingTimeInterval(-7200))
    /// ```
    ///
    /// - Throws: ``JWTKeyError`` when the key is not a PEM EC P-256 private key, or `issuedAt`
    ///   is beyond the range of whole seconds.
    public static func sign(
        keyID: String,
        teamID: String,
        issuedAt: Date = Date(),
        privateKeyPEM: String = TestCertificates.jwtSigningKeyPEM,
        signatureEncoding: SignatureEncoding = .raw
    ) throws(JWTKeyError) -> String {
        let key = try EVPKey.jwtPrivateKey(fromPEM: privateKeyPEM)
        try key.requireP256()
        guard let issuedAtSeconds = Int(exactly: issuedAt.timeIntervalSince1970.rounded(.down)) else {
            throw JWTKeyError(
                "issuedAt \(issuedAt.timeIntervalSince1970) is not a whole number of seconds that fits in Int")
        }
        let header = #"{"alg":"ES256","kid":\#(JSONValue.quoted(keyID))}"#
        let claims = #"{"iss":\#(JSONValue.quoted(teamID)),"iat":\#(issuedAtSeconds)}"#
        let signingInput = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
        guard let der = ECDSASignature.sign(Array(signingInput.utf8), with: key) else {
            throw JWTKeyError("OpenSSL could not sign with the key")
        }
        let signature: [UInt8]
        switch signatureEncoding {
        case .der:
            signature = der
        case .raw:
            guard let raw = ECDSASignature.raw(fromDER: der) else {
                throw JWTKeyError("OpenSSL produced a signature that does not convert to r‖s")
            }
            signature = raw
        }
        return signingInput + "." + Base64URL.encode(signature)
    }
}
