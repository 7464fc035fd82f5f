// The shims include the same C headers; importing both keeps their names in one place
// whichever module the compiler loads first.
internal import COpenSSLShims
internal import COpenSSL
import Foundation

// MARK: - Signing

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
        let key = try EVPKey.privateKey(fromPEM: privateKeyPEM)
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

// MARK: - Verification

/// Why a provider token was refused: the reason APNs answers with and a sentence for people.
///
/// ```swift
/// if case .failure(let failure) = verifier.verify(authorization: header, now: Date()) {
///     failure.reason   // .expiredProviderToken
///     failure.detail   // "the token's iat is 3601 seconds old; tokens expire after 3600 seconds"
/// }
/// ```
public struct ProviderTokenFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The reason for the response body: ``APNsReason/missingProviderToken``,
    /// ``APNsReason/invalidProviderToken``, ``APNsReason/expiredProviderToken`` or
    /// ``APNsReason/tooManyProviderTokenUpdates``.
    public let reason: APNsReason
    /// What exactly was wrong, as a sentence without a final period.
    public let detail: String

    /// A failure with `reason`, explained by `detail`.
    public init(_ reason: APNsReason, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }

    /// The reason string and the detail: `InvalidProviderToken: the token has 2 parts ...`.
    public var description: String { "\(reason.rawValue): \(detail)" }
}

/// Checks `authorization` headers against the keys a server trusts, by Apple's rules for
/// provider tokens. A value: share it freely, and ask it from any thread.
///
/// Accepted: `bearer <JWT>` (the scheme in any case), a JWT of three base64url parts without
/// padding, a header with `"alg":"ES256"` and the `kid` of a trusted key, claims with `iss` equal
/// to that key's team and an `iat` in seconds since 1970, and an ECDSA P-256 SHA-256 signature in
/// either the 64-byte JOSE form or DER. The `iat` may be a JSON integer (`1700000000`), a number
/// with a fraction (`1700000000.637`, truncated to whole seconds; the age and refresh rules see
/// the truncated value) or a string of decimal digits (`"1700000000"`), as clients send it.
/// Other header members (such as `"typ":"JWT"`) are ignored.
///
/// Refused:
/// - no header, another scheme, or nothing after `bearer`: ``APNsReason/missingProviderToken``;
/// - anything malformed (including an `iat` that is negative, beyond 64-bit seconds, or another
///   JSON value), an unknown `kid`, another team, a signature that does not verify, or an `iat`
///   more than ``clockSkew`` in the future: ``APNsReason/invalidProviderToken``;
/// - an `iat` more than ``maximumTokenAge`` (one hour) before `now`:
///   ``APNsReason/expiredProviderToken``.
///
/// ```swift
/// let verifier = ProviderTokenVerifier(keys: [.test])
/// let token = try ProviderTokenSigner.sign(keyID: TestCertificates.jwtKeyID, teamID: TestCertificates.jwtTeamID)
/// let claims = try verifier.verify(authorization: "bearer \(token)", now: Date()).get()
/// ```
///
/// Verification never traps, whatever the input: every length is checked, and a header value
/// longer than ``maximumTokenLength`` is refused before it is decoded.
public struct ProviderTokenVerifier: Sendable {
    /// How old a token's `iat` may be: one hour, as at Apple.
    public static let maximumTokenAge: TimeInterval = 3600
    /// The default allowance for a client clock that runs ahead: one minute. Apple documents
    /// none; RFC 7519 suggests "no more than a few minutes". A client and the fake usually share
    /// a clock, so a minute forgives rounding and slow tests while still catching a token whose
    /// `iat` is in milliseconds or deliberately post-dated.
    public static let defaultClockSkew: TimeInterval = 60
    /// The longest bearer token accepted, in bytes. APNs announces `MAX_HEADER_LIST_SIZE=8000`,
    /// and an ES256 token for Apple's 10-character IDs is about 200 bytes.
    public static let maximumTokenLength = 8192

    /// The trusted keys by key ID. When two keys share a key ID, the last one given wins.
    public let keys: [String: JWTSigningKey]
    /// How far in the future an `iat` may be before the token is invalid.
    public let clockSkew: TimeInterval

    /// A verifier trusting `keys`, forgiving clocks up to `clockSkew` seconds ahead.
    public init(keys: some Sequence<JWTSigningKey>, clockSkew: TimeInterval = defaultClockSkew) {
        var byID: [String: JWTSigningKey] = [:]
        for key in keys { byID[key.keyID] = key }
        self.keys = byID
        self.clockSkew = clockSkew
    }

    /// Verifies an `authorization` header value (`bearer <JWT>`) at the time `now`.
    ///
    /// - Returns: the verified claims, or why the token is refused.
    public func verify(authorization: String?, now: Date) -> Result<ProviderTokenClaims, ProviderTokenFailure> {
        Result { () throws(ProviderTokenFailure) in try verifiedToken(authorization: authorization, now: now).claims }
    }

    /// Verifies as ``verify(authorization:now:)`` does, and also returns the token itself
    /// (without the scheme), which a connection compares with the token it holds.
    func verifiedToken(authorization: String?, now: Date) throws(ProviderTokenFailure) -> (
        token: String, claims: ProviderTokenClaims
    ) {
        let token = try Self.bearerToken(in: authorization)
        let claims = try verify(token: token, now: now)
        return (String(decoding: token, as: UTF8.self), claims)
    }

    // MARK: Steps

    /// The bytes after `bearer ` in the header value, leading and trailing blanks removed.
    private static func bearerToken(in authorization: String?) throws(ProviderTokenFailure) -> ArraySlice<UInt8> {
        guard let authorization else {
            throw ProviderTokenFailure(
                .missingProviderToken, "the request has no authorization header; send `authorization: bearer <JWT>`")
        }
        let bytes = Array(authorization.utf8)
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, isBlank(bytes[start]) { start += 1 }
        while end > start, isBlank(bytes[end - 1]) { end -= 1 }
        guard start < end else {
            throw ProviderTokenFailure(
                .missingProviderToken, "the authorization header is empty; send `authorization: bearer <JWT>`")
        }
        let scheme = Array("bearer".utf8)
        let hasScheme =
            end - start > scheme.count
            && zip(bytes[start..<start + scheme.count], scheme).allSatisfy { $0 | 0x20 == $1 }
            && bytes[start + scheme.count] == UInt8(ascii: " ")
        guard hasScheme || (end - start == scheme.count && bytes[start..<end].map { $0 | 0x20 } == scheme) else {
            throw ProviderTokenFailure(
                .missingProviderToken, "the authorization header does not use the bearer scheme (`bearer <JWT>`)")
        }
        var tokenStart = start + scheme.count
        while tokenStart < end, isBlank(bytes[tokenStart]) { tokenStart += 1 }
        guard tokenStart < end else {
            throw ProviderTokenFailure(.missingProviderToken, "the authorization header has no token after `bearer`")
        }
        return bytes[tokenStart..<end]
    }

    private func verify(token: ArraySlice<UInt8>, now: Date) throws(ProviderTokenFailure) -> ProviderTokenClaims {
        guard token.count <= Self.maximumTokenLength else {
            throw invalid("the token is \(token.count) bytes long; at most \(Self.maximumTokenLength) are accepted")
        }
        let parts = token.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw invalid(
                "the token has \(parts.count) part(s) separated by '.'; a JWT has 3 (header.claims.signature)")
        }
        let header = try Self.jsonObject(parts[0], named: "header")
        let claims = try Self.jsonObject(parts[1], named: "claims")
        let signature = try Self.decode(parts[2], named: "signature")

        guard let alg = header["alg"] else {
            throw invalid("the token's header has no alg; APNs needs \"alg\":\"ES256\"")
        }
        guard alg == .string("ES256") else {
            throw invalid("the token's alg is \(Self.quote(alg)); APNs accepts only \"ES256\"")
        }
        guard let kid = header["kid"] else { throw invalid("the token's header has no kid (the key ID)") }
        guard let keyID = kid.stringValue, let key = keys[keyID] else {
            throw invalid("the token's kid \(Self.quote(kid)) is not a key this server trusts")
        }
        guard let iss = claims["iss"] else { throw invalid("the token's claims have no iss (the team ID)") }
        guard iss.stringValue == key.teamID else {
            throw invalid("the token's iss \(Self.quote(iss)) is not the team \(key.teamID) of key \(key.keyID)")
        }
        guard let iat = claims["iat"] else { throw invalid("the token's claims have no iat (the time it was issued)") }
        let issuedAt = try Self.issuedAtSeconds(iat)

        let signingInput = Array(token[token.startIndex..<parts[1].endIndex])
        guard let der = ECDSASignature.derCandidates(for: signature) else {
            throw invalid(
                "the token's signature is \(signature.count) bytes and neither 64-byte r‖s nor a DER ECDSA signature")
        }
        guard der.contains(where: { ECDSASignature.verify($0, of: signingInput, with: key.publicKey) }) else {
            throw invalid("the token's signature does not verify with key \(key.keyID)")
        }

        // Compared as Double so that no iat, however large or small, can overflow.
        let age = now.timeIntervalSince1970 - Double(issuedAt)
        guard age >= -clockSkew else {
            throw invalid(
                "the token's iat is \(wholeNumber(-age)) seconds in the future; "
                    + "at most \(wholeNumber(clockSkew)) are allowed for clock skew"
            )
        }
        guard age <= Self.maximumTokenAge else {
            throw ProviderTokenFailure(
                .expiredProviderToken,
                "the token's iat is \(wholeNumber(age)) seconds old; "
                    + "tokens expire after \(wholeNumber(Self.maximumTokenAge)) seconds"
            )
        }
        return ProviderTokenClaims(
            keyID: key.keyID, teamID: key.teamID, issuedAt: Date(timeIntervalSince1970: Double(issuedAt)))
    }

    // MARK: Helpers

    /// The whole seconds since 1970 an `iat` stands for. RFC 7519 allows a NumericDate with a
    /// fraction, which clients that read a float clock send (PyAPNs2, aioapns:
    /// `1796106773.637287`), and some clients send the digits as a string (`"1796106849"`);
    /// APNs serves both, so both are read, a fraction truncated. Signs, blanks, exponents in a
    /// string, and values past 64-bit seconds are refused.
    private static func issuedAtSeconds(_ iat: JSONValue) throws(ProviderTokenFailure) -> Int {
        let seconds: Int?
        switch iat {
        case .int(let value) where value >= 0:
            seconds = value
        case .double(let value) where value >= 0:
            seconds = Int(exactly: value.rounded(.towardZero))
        case .string(let text) where !text.isEmpty && text.utf8.allSatisfy({ (0x30...0x39).contains($0) }):
            seconds = Int(text)
        case .int, .double:
            throw ProviderTokenFailure(.invalidProviderToken, "the token's iat \(quote(iat)) is negative")
        default:
            throw ProviderTokenFailure(
                .invalidProviderToken,
                "the token's iat \(quote(iat)) is not a number of seconds since 1970 "
                    + "(an integer, a number with a fraction, or a string of decimal digits)"
            )
        }
        guard let seconds else {
            throw ProviderTokenFailure(
                .invalidProviderToken, "the token's iat \(quote(iat)) is beyond the range of 64-bit seconds")
        }
        return seconds
    }

    private func invalid(_ detail: String) -> ProviderTokenFailure {
        ProviderTokenFailure(.invalidProviderToken, detail)
    }

    private static func decode(_ part: ArraySlice<UInt8>, named name: String) throws(ProviderTokenFailure) -> [UInt8] {
        guard !part.isEmpty else {
            throw ProviderTokenFailure(.invalidProviderToken, "the token's \(name) part is empty")
        }
        guard let bytes = Base64URL.decode(part) else {
            throw ProviderTokenFailure(
                .invalidProviderToken, "the token's \(name) part is not base64url without padding")
        }
        return bytes
    }

    private static func jsonObject(_ part: ArraySlice<UInt8>, named name: String) throws(ProviderTokenFailure)
        -> JSONObject
    {
        let bytes = try decode(part, named: name)
        let value: JSONValue
        do {
            value = try JSONValue.parse(bytes)
        } catch {
            throw ProviderTokenFailure(.invalidProviderToken, "the token's \(name) is not JSON: \(error.message)")
        }
        guard let object = value.objectValue else {
            throw ProviderTokenFailure(.invalidProviderToken, "the token's \(name) is JSON but not an object")
        }
        // RFC 7515 section 4: a JOSE header with a repeated member must be rejected (or read by
        // its last value, which would differ from what the JSON layer keeps).
        if let repeated = object.duplicateKeys.first {
            throw ProviderTokenFailure(
                .invalidProviderToken, "the token's \(name) repeats the member \(JSONValue.quoted(repeated))")
        }
        return object
    }

    /// A JSON value for a message, cut short so a huge claim cannot make a huge message.
    private static func quote(_ value: JSONValue) -> String {
        let text = value.serialized()
        return text.count <= 40 ? text : String(text.prefix(40)) + "…"
    }

}

/// `interval` rounded down, for messages; never traps, whatever its size.
private func wholeNumber(_ interval: TimeInterval) -> String {
    guard let whole = Int(exactly: interval.rounded(.down)) else { return "\(interval)" }
    return "\(whole)"
}

// MARK: - Per-connection rules

/// The provider-token state of one HTTP/2 connection: the token it currently holds and the
/// team its first accepted token bound it to. A pure value; the connection owns it and passes
/// the time in.
///
/// Rules, after the token itself verifies (``ProviderTokenVerifier``):
/// - The first accepted token binds the connection to its team. A later token from another
///   team is ``APNsReason/invalidProviderToken``, as Apple documents ("the first push binds the
///   connection to a team") and as Pushy's mock answers. Another key of the same team is
///   accepted: Apple's ``APNsReason/unrelatedKeyIdInToken`` is for keys unrelated to the first
///   one, and keys of one team are related.
/// - Sending the same token string again is never an update, however much later.
/// - A different token whose `iat` is less than ``minimumRefreshInterval`` (20 minutes) after
///   the `iat` of the token the connection holds is ``APNsReason/tooManyProviderTokenUpdates``,
///   and the connection keeps its token. Apple words the rule as "recreating" tokens, so it is
///   measured between issue times, not between arrivals: a client that shares one token among
///   connections and opens a connection late in the token's life can still refresh on time.
///   A token re-signed within the same 20 minutes (a new token per request) is refused.
struct ProviderTokenSession: Sendable {
    /// The least time between the `iat`s of two tokens used on one connection.
    static let minimumRefreshInterval: TimeInterval = 20 * 60

    /// The token (without `bearer `) the connection currently holds, if any was accepted.
    private(set) var currentToken: String?
    /// The claims of ``currentToken``.
    private(set) var currentClaims: ProviderTokenClaims?
    /// The team the first accepted token bound the connection to.
    private(set) var boundTeamID: String?

    /// Verifies `authorization` with `verifier` at `now`, then applies the connection's rules;
    /// on success the token becomes the connection's current token.
    mutating func authenticate(
        authorization: String?, verifier: ProviderTokenVerifier, now: Date
    ) -> Result<ProviderTokenClaims, ProviderTokenFailure> {
        Result { () throws(ProviderTokenFailure) in
            let verified = try verifier.verifiedToken(authorization: authorization, now: now)
            try admit(token: verified.token, claims: verified.claims)
            return verified.claims
        }
    }

    /// Applies the connection's rules to a token that has already verified.
    mutating func admit(token: String, claims: ProviderTokenClaims) throws(ProviderTokenFailure) {
        if let boundTeamID, claims.teamID != boundTeamID {
            throw ProviderTokenFailure(
                .invalidProviderToken,
                "the token is for team \(claims.teamID), but the first push bound this connection to team "
                    + "\(boundTeamID); open a new connection"
            )
        }
        if token == currentToken { return }
        if let currentClaims {
            let interval = claims.issuedAt.timeIntervalSince(currentClaims.issuedAt)
            guard interval >= Self.minimumRefreshInterval else {
                throw ProviderTokenFailure(
                    .tooManyProviderTokenUpdates,
                    "the token was issued \(wholeNumber(interval)) seconds after the one this connection holds; "
                        + "refresh tokens at most every 20 minutes"
                )
            }
        }
        boundTeamID = claims.teamID
        currentToken = token
        currentClaims = claims
    }
}

// MARK: - Encodings

/// Base64url without padding (RFC 4648 section 5), as JWTs use it.
enum Base64URL {
    /// `bytes` in base64url, unpadded.
    static func encode(_ bytes: [UInt8]) -> String {
        var text = Data(bytes).base64EncodedString()
        while text.last == "=" { text.removeLast() }
        return String(text.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
    }

    /// The bytes of unpadded base64url text, or nil for any other character, padding, an
    /// impossible length or non-zero unused bits (so each byte string has exactly one encoding,
    /// and flipping a character of a token always changes what it says).
    static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        guard text.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(text.count * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        for character in text {
            guard let value = sextet(character) else { return nil }
            buffer = (buffer << 6) | value
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
                buffer &= (1 << UInt32(bits)) - 1
            }
        }
        return buffer == 0 ? output : nil
    }

    private static func sextet(_ character: UInt8) -> UInt32? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): UInt32(character - UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): UInt32(character - UInt8(ascii: "a")) + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(character - UInt8(ascii: "0")) + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }
}

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
