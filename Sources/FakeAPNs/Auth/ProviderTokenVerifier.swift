#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
/// - anything malformed (including an `iat` that is negative, after year 9999, or another JSON
///   value), an unknown `kid`, another team, a signature that does not verify, or an `iat`
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
/// Verification never traps, whatever the input: every length is checked, a header value
/// longer than ``maximumTokenLength`` is refused before it is decoded, and an `iat` enters as a
/// ``UnixTime``.
///
/// A server judges a token it has not seen yet at the real time
/// (``FakeAPNsServer/Configuration/clock``), as its signer signed it on real time, and a token
/// it has seen at that first age plus how far its clock (``FakeAPNsServer/clock``) has moved
/// since, never less: a test that moves the clock an hour sees a token it used expire, and one
/// that moves it 31 days can still push with tokens signed now.
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
    /// The reason a key not valid for the server's environment is answered with:
    /// `BadEnvironmentKeyInToken` (the default, the spelling APNs was seen to send) or Apple's
    /// documented `BadEnvironmentKeyIdInToken` (``FakeAPNsServer/Configuration``'s
    /// `badEnvironmentKeyReason`).
    var badEnvironmentReason = APNsReason.badEnvironmentKeyInToken
    /// Whether a connection answered `ExpiredProviderToken` stays so until it closes
    /// (``FakeAPNsServer/Configuration``'s `expiredProviderTokenWedgesConnection`; off by default).
    var expiredTokenWedgesConnection = false

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
        let verified = try verifiedToken(authorization: authorization) { _ in now }
        return (verified.token, verified.claims)
    }

    /// Verifies as ``verify(authorization:now:)`` does, at the time `judgedAt` gives for the
    /// token (without the scheme), which a server reads from when it first saw the token; also
    /// returns the token and that time.
    func verifiedToken(
        authorization: String?, judgedAt: (String) -> Date
    ) throws(ProviderTokenFailure) -> (token: String, claims: ProviderTokenClaims, judgedAt: Date) {
        let bytes = try Self.bearerToken(in: authorization)
        let token = String(decoding: bytes, as: UTF8.self)
        let now = judgedAt(token)
        return (token, try verify(token: bytes, now: now), now)
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
        let issuedAt = try Self.issuedAt(iat)

        let signingInput = Array(token[token.startIndex..<parts[1].endIndex])
        guard let der = ECDSASignature.derCandidates(for: signature) else {
            throw invalid(
                "the token's signature is \(signature.count) bytes and neither 64-byte r‖s nor a DER ECDSA signature")
        }
        guard der.contains(where: { ECDSASignature.verify($0, of: signingInput, with: key.publicKey) }) else {
            throw invalid("the token's signature does not verify with key \(key.keyID)")
        }

        // Within UnixTime.range, so that no iat can overflow the arithmetic.
        let age = now.timeIntervalSince1970 - Double(issuedAt.seconds)
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
            keyID: key.keyID, teamID: key.teamID, issuedAt: issuedAt.date)
    }

    // MARK: Helpers

    /// The whole seconds since 1970 an `iat` stands for. RFC 7519 allows a NumericDate with a
    /// fraction, which clients that read a float clock send (PyAPNs2, aioapns:
    /// `1796106773.637287`), and some clients send the digits as a string (`"1796106849"`);
    /// APNs serves both, so both are read, a fraction truncated. Signs, blanks, exponents in a
    /// string, and times after year 9999 (``UnixTime/range``) are refused.
    private static func issuedAt(_ iat: JSONValue) throws(ProviderTokenFailure) -> UnixTime {
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
        guard let seconds, let time = UnixTime(seconds: seconds) else {
            throw ProviderTokenFailure(
                .invalidProviderToken, "the token's iat \(quote(iat)) is after year 9999, the last a date may be")
        }
        return time
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
