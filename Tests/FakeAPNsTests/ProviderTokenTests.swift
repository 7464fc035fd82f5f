import FakeAPNsTestSupport
import Foundation
import XCTest

// Reads internals on purpose: ProviderTokenSession, EVPKey and ECDSASignature, the token checks themselves.
@testable import FakeAPNs

/// JWT provider tokens: signing, verification by Apple's rules, the per-connection refresh and
/// team rules, and the keys a server trusts.
final class ProviderTokenTests: XCTestCase {
    // MARK: - Fixtures

    /// A fixed "now", so ages are exact.
    private static let now = Date(timeIntervalSince1970: 1_700_000_000)
    private static let keyID = TestCertificates.jwtKeyID
    private static let teamID = TestCertificates.jwtTeamID
    private let verifier = ProviderTokenVerifier(keys: [.test])

    /// A second trusted key of another team, whose private key is `TestCertificates.clientKeyPEM`.
    private static func otherTeamKey() throws -> JWTSigningKey {
        try JWTSigningKey(keyID: "XYZ987WVUT", teamID: "OTHERTEAM1", privateKeyPEM: TestCertificates.clientKeyPEM)
    }

    /// A P-384 public key, generated with `openssl ecparam -name secp384r1 -genkey | openssl pkey -pubout`.
    private static let p384PublicKeyPEM = """
        -----BEGIN PUBLIC KEY-----
        MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAE3QWv8cNOJEEo4edpYJRW0q/DTUZ0/rQO
        GT7w2lNAEe4H8gZCe2lPLvmX82ZCuWCqzW0wU4oQW9VOCcmfErH6MGYqiNJrP3cZ
        ar4CNyEb9ra7fCK80FfW2h/I/hZV1nqA
        -----END PUBLIC KEY-----

        """

    /// A P-384 private key (PKCS#8), as a .p8 on the wrong curve would hold.
    private static let p384PrivateKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIG2AgEAMBAGByqGSM49AgEGBSuBBAAiBIGeMIGbAgEBBDACCLkphZ14qWe+DgOT
        4y3QmlCB8Fhedn6o0/aOvFR0/21BteA+ktKv7NJCoRAj8+2hZANiAATg7EljHGbo
        VmDO3gEI+NAD8DJaJZfiXBxzHAzeiCbmA4PiLSOtAUBqzWVVBVPcaJpzyan+idwe
        4e4nCDhjvz0IynK/VN3Bl6YCAJ9anWXx71cJr41y6S26RNPXmbpodWI=
        -----END PRIVATE KEY-----

        """

    /// A 256-bit key on the wrong curve (secp256k1), which a bit-length check alone would pass.
    private static let secp256k1PublicKeyPEM = """
        -----BEGIN PUBLIC KEY-----
        MFYwEAYHKoZIzj0CAQYFK4EEAAoDQgAEBbUkm8wrzxLGV/8nZM/+IbrsCtND8EdM
        DbhgoSqQA+PX+etHxLIQ66rZsRj7/4d0vc2g1vUDaqHqN1DL0ZYS0A==
        -----END PUBLIC KEY-----

        """

    private static let ed25519PublicKeyPEM = """
        -----BEGIN PUBLIC KEY-----
        MCowBQYDK2VwAyEAl9/ISzMnZIq0vgsaHPt3a2Ng7CBRsN1/96rtA1jeJ2Q=
        -----END PUBLIC KEY-----

        """

    /// Apple's sample token from "Establishing a token-based connection to APNs". Illustrative
    /// only: its header has no alg, its iat is a string in milliseconds, its signature is DER.
    private static let appleSampleToken =
        "eyAia2lkIjogIjhZTDNHM1JSWDciIH0.eyAiaXNzIjogIkM4Nk5WOUpYM0QiLCAiaWF0IjogIjE0NTkxNDM1ODA2NTAiIH0."
        + "MEYCIQDzqyahmH1rz1s-LFNkylXEa2lZ_aOCX4daxxTZkVEGzwIhALvkClnx5m5eAT6Lxw7LZtEQcH6JENhJTMArwLf3sXwi"

    private static func token(
        issuedAt: Date = now, teamID: String = teamID, encoding: ProviderTokenSigner.SignatureEncoding = .raw
    ) throws -> String {
        try ProviderTokenSigner.sign(keyID: keyID, teamID: teamID, issuedAt: issuedAt, signatureEncoding: encoding)
    }

    /// A token with exactly this header and these claims, correctly signed with the test key, so
    /// a test reaches the rule it is about.
    private static func signed(
        header: String, claims: String, privateKeyPEM: String = TestCertificates.jwtSigningKeyPEM
    )
        throws -> String
    {
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
        let key = try EVPKey.privateKey(fromPEM: privateKeyPEM)
        let der = try XCTUnwrap(ECDSASignature.sign(Array(input.utf8), with: key))
        let raw = try XCTUnwrap(ECDSASignature.raw(fromDER: der))
        return input + "." + Base64URL.encode(raw)
    }

    private static var validHeader: String { #"{"alg":"ES256","kid":"\#(keyID)"}"# }

    private static func claims(iat: String) -> String { #"{"iss":"\#(teamID)","iat":\#(iat)}"# }

    private static func parts(of token: String) -> [String] {
        token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    private func verify(_ authorization: String?, now: Date = ProviderTokenTests.now)
        -> Result<ProviderTokenClaims, ProviderTokenFailure>
    {
        verifier.verify(authorization: authorization, now: now)
    }

    private func assertRefused(
        _ authorization: String?, with reason: APNsReason, now: Date = ProviderTokenTests.now,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        switch verify(authorization, now: now) {
        case .success(let claims):
            XCTFail("accepted (\(claims)), expected \(reason)", file: file, line: line)
        case .failure(let failure):
            XCTAssertEqual(failure.reason, reason, failure.detail, file: file, line: line)
            XCTAssertFalse(failure.detail.isEmpty, file: file, line: line)
        }
    }

    private func assertAccepted(
        _ authorization: String?, now: Date = ProviderTokenTests.now, file: StaticString = #filePath, line: UInt = #line
    ) {
        if case .failure(let failure) = verify(authorization, now: now) {
            XCTFail("refused: \(failure)", file: file, line: line)
        }
    }

    // MARK: - Round trips

    func testRawSignedTokenVerifiesWithTheTestKey() throws {
        let claims = try verify("bearer \(Self.token(encoding: .raw))").get()
        XCTAssertEqual(claims, ProviderTokenClaims(keyID: Self.keyID, teamID: Self.teamID, issuedAt: Self.now))
    }

    func testDERSignedTokenVerifiesWithTheTestKey() throws {
        let claims = try verify("bearer \(Self.token(encoding: .der))").get()
        XCTAssertEqual(claims, ProviderTokenClaims(keyID: Self.keyID, teamID: Self.teamID, issuedAt: Self.now))
    }

    func testSignerWritesAppleHeaderAndClaimsWithWholeSeconds() throws {
        let token = try ProviderTokenSigner.sign(
            keyID: Self.keyID, teamID: Self.teamID, issuedAt: Self.now.addingTimeInterval(0.9))
        let parts = Self.parts(of: token)
        XCTAssertEqual(parts.count, 3)
        let header = try XCTUnwrap(Base64URL.decode(Array(parts[0].utf8)))
        let claims = try XCTUnwrap(Base64URL.decode(Array(parts[1].utf8)))
        XCTAssertEqual(String(decoding: header, as: UTF8.self), #"{"alg":"ES256","kid":"ABC123DEFG"}"#)
        XCTAssertEqual(String(decoding: claims, as: UTF8.self), #"{"iss":"DEF123GHIJ","iat":1700000000}"#)
        XCTAssertFalse(token.contains("="), "base64url without padding")
    }

    func testRawSignatureIs64BytesAndDERSignatureIsASequence() throws {
        let raw = try XCTUnwrap(Base64URL.decode(Array(Self.parts(of: Self.token(encoding: .raw))[2].utf8)))
        let der = try XCTUnwrap(Base64URL.decode(Array(Self.parts(of: Self.token(encoding: .der))[2].utf8)))
        XCTAssertEqual(raw.count, 64)
        XCTAssertEqual(der.first, 0x30)
        XCTAssertTrue((8...72).contains(der.count), "\(der.count) bytes")
    }

    func testTokenSignedByOpenSSLCommandLineVerifies() throws {
        let openssl = "/usr/bin/openssl"
        guard FileManager.default.isExecutableFile(atPath: openssl) else { throw XCTSkip("no openssl command") }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("jwt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = directory.appendingPathComponent("AuthKey.p8")
        let inputFile = directory.appendingPathComponent("input")
        let signatureFile = directory.appendingPathComponent("signature")
        try TestCertificates.jwtSigningKeyPEM.write(to: keyFile, atomically: true, encoding: .utf8)
        let input =
            Base64URL.encode(Array(Self.validHeader.utf8)) + "."
            + Base64URL.encode(Array(Self.claims(iat: "1700000000").utf8))
        try input.write(to: inputFile, atomically: true, encoding: .utf8)

        // Apple's recipe: openssl dgst -sha256 -sign AuthKey.p8, which writes DER.
        let signing = try runTool(
            openssl, ["dgst", "-sha256", "-sign", keyFile.path, "-out", signatureFile.path, inputFile.path])
        XCTAssertEqual(signing.status, 0, signing.error)
        let signature = try [UInt8](Data(contentsOf: signatureFile))

        assertAccepted("bearer \(input).\(Base64URL.encode(signature))")
    }

    func testTokenWithPushyTypHeaderIsAccepted() throws {
        let token = try Self.signed(
            header: #"{"alg":"ES256","typ":"JWT","kid":"\#(Self.keyID)"}"#, claims: Self.claims(iat: "1700000000"))
        assertAccepted("bearer \(token)")
    }

    // MARK: - Authorization header

    func testMissingAuthorizationHeaderIsMissingProviderToken() {
        assertRefused(nil, with: .missingProviderToken)
    }

    func testEmptyAuthorizationHeaderIsMissingProviderToken() {
        assertRefused("", with: .missingProviderToken)
        assertRefused("  \t ", with: .missingProviderToken)
    }

    func testBearerWithoutTokenIsMissingProviderToken() {
        assertRefused("bearer", with: .missingProviderToken)
        assertRefused("bearer    ", with: .missingProviderToken)
    }

    func testOtherSchemeIsMissingProviderToken() throws {
        let token = try Self.token()
        assertRefused("Basic \(token)", with: .missingProviderToken)
        assertRefused(token, with: .missingProviderToken)
        assertRefused("bearer\(token)", with: .missingProviderToken)
    }

    func testBearerSchemeIsCaseInsensitive() throws {
        let token = try Self.token()
        assertAccepted("Bearer \(token)")
        assertAccepted("BEARER \(token)")
        assertAccepted("bEaReR \(token)")
    }

    func testBlanksAroundTheTokenAreIgnored() throws {
        assertAccepted(" bearer   \(try Self.token())\t ")
    }

    // MARK: - Tampering

    func testTamperedClaimsAreInvalid() throws {
        let parts = Self.parts(of: try Self.token())
        let laterClaims = Base64URL.encode(Array(Self.claims(iat: "1700000060").utf8))
        assertRefused("bearer \(parts[0]).\(laterClaims).\(parts[2])", with: .invalidProviderToken)
    }

    func testTamperedHeaderIsInvalid() throws {
        let parts = Self.parts(of: try Self.token())
        let otherHeader = Base64URL.encode(Array(#"{"alg":"ES256","kid":"\#(Self.keyID)","typ":"JWT"}"#.utf8))
        assertRefused("bearer \(otherHeader).\(parts[1]).\(parts[2])", with: .invalidProviderToken)
    }

    func testTamperedSignatureIsInvalid() throws {
        for encoding in [ProviderTokenSigner.SignatureEncoding.raw, .der] {
            let parts = Self.parts(of: try Self.token(encoding: encoding))
            var signature = try XCTUnwrap(Base64URL.decode(Array(parts[2].utf8)))
            signature[signature.count / 2] ^= 0x01
            assertRefused("bearer \(parts[0]).\(parts[1]).\(Base64URL.encode(signature))", with: .invalidProviderToken)
        }
    }

    func testTokenSignedWithAnotherKeyIsInvalid() throws {
        let token = try ProviderTokenSigner.sign(
            keyID: Self.keyID, teamID: Self.teamID, issuedAt: Self.now, privateKeyPEM: TestCertificates.clientKeyPEM)
        assertRefused("bearer \(token)", with: .invalidProviderToken)
    }

    func testSignatureThatIsNeither64BytesNorDERIsInvalid() throws {
        let parts = Self.parts(of: try Self.token())
        let signature = try XCTUnwrap(Base64URL.decode(Array(parts[2].utf8)))
        for wrong in [Array(signature.dropLast()), signature + [0], [0x30, 0x00], [UInt8](repeating: 0, count: 64)] {
            assertRefused("bearer \(parts[0]).\(parts[1]).\(Base64URL.encode(wrong))", with: .invalidProviderToken)
        }
    }

    func testDERSignatureWithTrailingBytesIsInvalid() throws {
        let parts = Self.parts(of: try Self.token(encoding: .der))
        let signature = try XCTUnwrap(Base64URL.decode(Array(parts[2].utf8)))
        assertRefused(
            "bearer \(parts[0]).\(parts[1]).\(Base64URL.encode(signature + [0, 0]))", with: .invalidProviderToken)
    }

    func testSignatureWithNonZeroUnusedBase64BitsIsInvalid() throws {
        // 64 bytes are 86 characters; the last one carries 4 bits of data and 4 unused bits.
        var parts = Self.parts(of: try Self.token(encoding: .raw))
        let last = try XCTUnwrap(parts[2].last)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let index = try XCTUnwrap(alphabet.firstIndex(of: last))
        parts[2] = String(parts[2].dropLast()) + String(alphabet[index ^ 0x01])
        assertRefused("bearer \(parts.joined(separator: "."))", with: .invalidProviderToken)
    }

    // MARK: - Header and claims

    func testAlgNoneIsInvalid() throws {
        let token = try Self.signed(
            header: #"{"alg":"none","kid":"\#(Self.keyID)"}"#, claims: Self.claims(iat: "1700000000"))
        assertRefused("bearer \(token)", with: .invalidProviderToken)
        let unsigned = Self.parts(of: token).prefix(2).joined(separator: ".") + "."
        assertRefused("bearer \(unsigned)", with: .invalidProviderToken)
    }

    func testAlgHS256IsInvalid() throws {
        let token = try Self.signed(
            header: #"{"alg":"HS256","kid":"\#(Self.keyID)"}"#, claims: Self.claims(iat: "1700000000"))
        assertRefused("bearer \(token)", with: .invalidProviderToken)
    }

    func testMissingAlgIsInvalid() throws {
        let token = try Self.signed(header: #"{"kid":"\#(Self.keyID)"}"#, claims: Self.claims(iat: "1700000000"))
        assertRefused("bearer \(token)", with: .invalidProviderToken)
    }

    func testUnknownKidIsInvalid() throws {
        let token = try ProviderTokenSigner.sign(keyID: "UNKNOWN123", teamID: Self.teamID, issuedAt: Self.now)
        assertRefused("bearer \(token)", with: .invalidProviderToken)
    }

    func testMissingOrNonStringKidIsInvalid() throws {
        let claims = Self.claims(iat: "1700000000")
        assertRefused(
            "bearer \(try Self.signed(header: #"{"alg":"ES256"}"#, claims: claims))", with: .invalidProviderToken)
        assertRefused(
            "bearer \(try Self.signed(header: #"{"alg":"ES256","kid":12}"#, claims: claims))",
            with: .invalidProviderToken)
    }

    func testIssuerOfAnotherTeamIsInvalid() throws {
        let token = try Self.token(teamID: "OTHERTEAM1")
        assertRefused("bearer \(token)", with: .invalidProviderToken)
    }

    func testMissingIssIsInvalid() throws {
        let token = try Self.signed(header: Self.validHeader, claims: #"{"iat":1700000000}"#)
        assertRefused("bearer \(token)", with: .invalidProviderToken)
    }

    func testMissingIatIsInvalid() throws {
        let token = try Self.signed(header: Self.validHeader, claims: #"{"iss":"\#(Self.teamID)"}"#)
        assertRefused("bearer \(token)", with: .invalidProviderToken)
    }

    /// The claims of a token with this `iat`, as the verifier reads them at `now`.
    private func verifiedClaims(iat: String, now: Date = ProviderTokenTests.now) throws -> ProviderTokenClaims {
        let token = try Self.signed(header: Self.validHeader, claims: Self.claims(iat: iat))
        return try verify("bearer \(token)", now: now).get()
    }

    func testIatWithAFractionIsTruncatedToWholeSeconds() throws {
        // Python's time.time(), as PyAPNs2 and aioapns put it in the token.
        XCTAssertEqual(try verifiedClaims(iat: "1699999999.637287").issuedAt, Self.now - 1)
        XCTAssertEqual(try verifiedClaims(iat: "1700000000.0").issuedAt, Self.now)
    }

    func testIatAsAStringOfDigitsIsAccepted() throws {
        XCTAssertEqual(try verifiedClaims(iat: #""1700000000""#).issuedAt, Self.now)
        XCTAssertEqual(try verifiedClaims(iat: #""01699999990""#).issuedAt, Self.now - 10)
    }

    func testIatInExponentFormWithinRangeIsAccepted() throws {
        XCTAssertEqual(try verifiedClaims(iat: "1.7e9").issuedAt, Self.now)
        XCTAssertEqual(try verifiedClaims(iat: "16999999995E-1").issuedAt, Self.now - 1)
    }

    func testAgeRulesJudgeTheTruncatedIat() throws {
        // 3599.6 s old as sent, 3600.5 s once truncated: expired.
        let token = try Self.signed(header: Self.validHeader, claims: Self.claims(iat: "1699996400.9"))
        assertRefused("bearer \(token)", with: .expiredProviderToken, now: Self.now + 0.5)
        // 60.9 s ahead as sent, 60 s once truncated: within the clock skew.
        XCTAssertEqual(try verifiedClaims(iat: "1700000060.9").issuedAt, Self.now + 60)
    }

    func testIatThatIsNotANonNegativeNumberOfSecondsIsInvalidNamingTheClaim() throws {
        let refused = [
            "-1", "-1700000000", "-0.5", "-1.7e9", "1e30", "1.7e19",
            #""abc""#, #""""#, #""+1700000000""#, #"" 1700000000""#, #""1700000000 ""#, #""-1700000000""#,
            #""1700000000.5""#, #""1.7e9""#, #""0x6553F100""#, #""١٧٠٠٠٠٠٠٠٠""#, #""99999999999999999999""#,
            "true", "false", "null", "[1700000000]", #"{"seconds":1700000000}"#,
        ]
        for iat in refused {
            let token = try Self.signed(header: Self.validHeader, claims: Self.claims(iat: iat))
            switch verify("bearer \(token)") {
            case .success(let claims):
                XCTFail("iat \(iat) accepted as \(claims)")
            case .failure(let failure):
                XCTAssertEqual(failure.reason, .invalidProviderToken, "iat \(iat): \(failure)")
                XCTAssertTrue(failure.detail.contains("the token's iat"), "iat \(iat): \(failure)")
            }
        }
    }

    func testIatBeyondDoubleRangeIsInvalidAsJSON() throws {
        let token = try Self.signed(header: Self.validHeader, claims: Self.claims(iat: "1e999"))
        guard case .failure(let failure) = verify("bearer \(token)") else { return XCTFail("1e999 accepted") }
        XCTAssertEqual(failure.reason, .invalidProviderToken)
        XCTAssertTrue(failure.detail.contains("out of range"), failure.detail)
    }

    func testHugeIatNumbersAreRefusedWithoutTrapping() throws {
        for iat in ["\(Int.max)", "\(Int.min)", "99999999999999999999999999", "-99999999999999999999999999", "1e308"] {
            let token = try Self.signed(header: Self.validHeader, claims: Self.claims(iat: iat))
            assertRefused("bearer \(token)", with: .invalidProviderToken)
        }
    }

    func testRepeatedHeaderMemberIsInvalid() throws {
        let token = try Self.signed(
            header: #"{"alg":"ES256","kid":"\#(Self.keyID)","alg":"none"}"#, claims: Self.claims(iat: "1700000000"))
        assertRefused("bearer \(token)", with: .invalidProviderToken)
    }

    func testApplesDocumentedSampleTokenIsInvalid() throws {
        // Trust a key under the sample's own kid and team, so only the token's shape refuses it.
        let sampleKey = try JWTSigningKey(
            keyID: "8YL3G3RRX7", teamID: "C86NV9JX3D", publicKeyPEM: TestCertificates.jwtPublicKeyPEM)
        let verifier = ProviderTokenVerifier(keys: [sampleKey])
        let result = verifier.verify(
            authorization: "bearer \(Self.appleSampleToken)", now: Date(timeIntervalSince1970: 1_459_143_580))
        XCTAssertEqual(result.failureReason, .invalidProviderToken)
    }

    // MARK: - Age

    func testIatMoreThanAnHourOldIsExpired() throws {
        assertRefused("bearer \(try Self.token(issuedAt: Self.now - 3601))", with: .expiredProviderToken)
    }

    func testIatJustUnderAnHourOldIsAccepted() throws {
        assertAccepted("bearer \(try Self.token(issuedAt: Self.now - 3599))")
    }

    func testIatAnHourInTheFutureIsInvalid() throws {
        assertRefused("bearer \(try Self.token(issuedAt: Self.now + 3601))", with: .invalidProviderToken)
    }

    func testIatBeyondTheClockSkewIsInvalid() throws {
        let skew = ProviderTokenVerifier.defaultClockSkew
        assertRefused("bearer \(try Self.token(issuedAt: Self.now + skew + 1))", with: .invalidProviderToken)
    }

    func testIatWithinTheClockSkewIsAccepted() throws {
        assertAccepted("bearer \(try Self.token(issuedAt: Self.now + ProviderTokenVerifier.defaultClockSkew))")
    }

    func testIatInMillisecondsIsInvalid() throws {
        let token = try Self.signed(header: Self.validHeader, claims: Self.claims(iat: "1700000000000"))
        assertRefused("bearer \(token)", with: .invalidProviderToken)
    }

    func testForgedExpiredTokenIsInvalidNotExpired() throws {
        let parts = Self.parts(of: try Self.token(issuedAt: Self.now - 7200))
        let otherSignature = Self.parts(of: try Self.token(issuedAt: Self.now - 7201))[2]
        assertRefused("bearer \(parts[0]).\(parts[1]).\(otherSignature)", with: .invalidProviderToken)
    }

    // MARK: - Malformed input

    func testTokenWithoutThreePartsIsInvalid() throws {
        let parts = Self.parts(of: try Self.token())
        for token in [
            parts.joined(), parts.prefix(2).joined(separator: "."), (parts + [parts[2]]).joined(separator: "."),
        ] {
            assertRefused("bearer \(token)", with: .invalidProviderToken)
        }
        assertRefused("bearer ..", with: .invalidProviderToken)
        assertRefused("bearer .", with: .invalidProviderToken)
    }

    func testEmptyPartIsInvalid() throws {
        let parts = Self.parts(of: try Self.token())
        for index in 0..<3 {
            var broken = parts
            broken[index] = ""
            assertRefused("bearer \(broken.joined(separator: "."))", with: .invalidProviderToken)
        }
    }

    func testPartThatIsNotBase64URLIsInvalid() throws {
        let parts = Self.parts(of: try Self.token())
        let padded = Base64URL.encode(Array(Self.validHeader.utf8)) + "=="
        let standardAlphabet = parts[2].replacingOccurrences(of: "-", with: "+").replacingOccurrences(
            of: "_", with: "/")
        let tokens = [
            "\(padded).\(parts[1]).\(parts[2])",
            "\(parts[0]).\(parts[1]).\(parts[2])=",
            "\(parts[0]).\(parts[1]).\(parts[2].dropLast())*",
            "\(parts[0]).\(parts[1]).\(parts[2].dropLast())é",
            "\(parts[0]).\(parts[1]).A",
            "\(parts[0]).e30 .\(parts[2])",
        ]
        for token in tokens {
            assertRefused("bearer \(token)", with: .invalidProviderToken)
        }
        if standardAlphabet != parts[2] {
            assertRefused("bearer \(parts[0]).\(parts[1]).\(standardAlphabet)", with: .invalidProviderToken)
        }
    }

    func testHeaderOrClaimsThatAreNotJSONObjectsAreInvalid() throws {
        let signature = Self.parts(of: try Self.token())[2]
        let header = Base64URL.encode(Array(Self.validHeader.utf8))
        let claims = Base64URL.encode(Array(Self.claims(iat: "1700000000").utf8))
        for text in ["not json", "[1,2,3]", #""ES256""#, "42", "null", "{", #"{"alg":"ES256"} x"#, "\u{0}"] {
            let encoded = Base64URL.encode(Array(text.utf8))
            assertRefused("bearer \(encoded).\(claims).\(signature)", with: .invalidProviderToken)
            assertRefused("bearer \(header).\(encoded).\(signature)", with: .invalidProviderToken)
        }
    }

    func testDeeplyNestedJSONIsInvalid() throws {
        let signature = Self.parts(of: try Self.token())[2]
        let nested = Base64URL.encode(
            Array((String(repeating: "[", count: 600) + String(repeating: "]", count: 600)).utf8))
        assertRefused("bearer \(nested).\(nested).\(signature)", with: .invalidProviderToken)
    }

    func testHundredKilobytesOfGarbageIsInvalid() {
        var generator = SeededRandom(seed: 100)
        let garbage = String((0..<100_000).map { _ in Character(Unicode.Scalar(UInt8(33 + generator.next() % 94))) })
        assertRefused("bearer \(garbage)", with: .invalidProviderToken)
        assertRefused("bearer " + String(repeating: "A", count: 100_000), with: .invalidProviderToken)
        let dots = String(repeating: "AAAA.", count: 20_000)
        assertRefused("bearer \(dots)", with: .invalidProviderToken)
    }

    func testRandomMutationsOfAValidTokenNeverTrapAndNeverPass() throws {
        let token = Array(try Self.token().utf8)
        var generator = SeededRandom(seed: 7)
        for _ in 0..<3000 {
            var mutated = token
            for _ in 0...(generator.next() % 3) {
                let position = Int(generator.next() % UInt64(mutated.count))
                switch generator.next() % 3 {
                case 0: mutated[position] = UInt8(truncatingIfNeeded: generator.next())
                case 1: mutated.remove(at: position)
                default: mutated.insert(UInt8(truncatingIfNeeded: generator.next()), at: position)
                }
                if mutated.isEmpty { mutated = [0x2E] }
            }
            let text = String(decoding: mutated, as: UTF8.self)
            // Blanks around the token are not part of it.
            if text.trimmingCharacters(in: CharacterSet(charactersIn: " \t")).utf8.elementsEqual(token) { continue }
            if case .success = verify("bearer " + text) {
                XCTFail("a mutated token was accepted: \(text)")
            }
        }
    }

    func testRandomBytesNeverTrap() {
        var generator = SeededRandom(seed: 42)
        for _ in 0..<3000 {
            let length = Int(generator.next() % 300)
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            let text = String(decoding: bytes, as: UTF8.self)
            for authorization in [text, "bearer " + text] {
                if case .success = verify(authorization) { XCTFail("random bytes were accepted") }
            }
        }
    }

    // MARK: - Connection session

    /// A session whose first token, issued and accepted at `now`, is `first`.
    private func session(startingWith first: String) throws -> ProviderTokenSession {
        var session = ProviderTokenSession()
        _ = try session.authenticate(authorization: "bearer \(first)", verifier: verifier, now: Self.now).get()
        return session
    }

    func testFirstTokenBindsTheConnectionToItsTeam() throws {
        let session = try session(startingWith: try Self.token())
        XCTAssertEqual(session.boundTeamID, Self.teamID)
        XCTAssertEqual(session.currentClaims?.issuedAt, Self.now)
    }

    func testSameTokenReusedAfterThirtyMinutesIsAccepted() throws {
        let token = try Self.token()
        var session = try session(startingWith: token)
        let result = session.authenticate(authorization: "Bearer \(token)", verifier: verifier, now: Self.now + 30 * 60)
        XCTAssertNoThrow(try result.get())
    }

    func testNewTokenAfterTenMinutesIsTooManyProviderTokenUpdates() throws {
        var session = try session(startingWith: try Self.token())
        let later = Self.now + 10 * 60
        let result = session.authenticate(
            authorization: "bearer \(try Self.token(issuedAt: later))", verifier: verifier, now: later)
        XCTAssertEqual(result.failureReason, .tooManyProviderTokenUpdates)
    }

    func testNewTokenAfterTwentyOneMinutesIsAccepted() throws {
        var session = try session(startingWith: try Self.token())
        let later = Self.now + 21 * 60
        let newToken = try Self.token(issuedAt: later)
        let result = session.authenticate(authorization: "bearer \(newToken)", verifier: verifier, now: later)
        XCTAssertNoThrow(try result.get())
        XCTAssertEqual(session.currentToken, newToken)
    }

    func testReSignedTokenWithTheSameIatIsAnUpdate() throws {
        // ECDSA signatures are randomized: signing the same claims twice gives two tokens.
        let first = try Self.token()
        var second = try Self.token()
        while second == first { second = try Self.token() }
        var session = try session(startingWith: first)
        let result = session.authenticate(authorization: "bearer \(second)", verifier: verifier, now: Self.now + 1)
        XCTAssertEqual(result.failureReason, .tooManyProviderTokenUpdates)
    }

    func testRefusedUpdateKeepsTheConnectionsToken() throws {
        let first = try Self.token()
        var session = try session(startingWith: first)
        let later = Self.now + 10 * 60
        _ = session.authenticate(
            authorization: "bearer \(try Self.token(issuedAt: later))", verifier: verifier, now: later)
        XCTAssertEqual(session.currentToken, first)
        XCTAssertNoThrow(
            try session.authenticate(authorization: "bearer \(first)", verifier: verifier, now: later).get())
    }

    func testTokenOfAnotherTeamOnABoundConnectionIsInvalid() throws {
        let otherKey = try Self.otherTeamKey()
        let verifier = ProviderTokenVerifier(keys: [.test, otherKey])
        var session = ProviderTokenSession()
        _ = try session.authenticate(authorization: "bearer \(try Self.token())", verifier: verifier, now: Self.now)
            .get()
        let later = Self.now + 30 * 60
        let otherToken = try ProviderTokenSigner.sign(
            keyID: otherKey.keyID, teamID: otherKey.teamID, issuedAt: later,
            privateKeyPEM: TestCertificates.clientKeyPEM)
        XCTAssertNoThrow(try verifier.verify(authorization: "bearer \(otherToken)", now: later).get())
        let result = session.authenticate(authorization: "bearer \(otherToken)", verifier: verifier, now: later)
        XCTAssertEqual(result.failureReason, .invalidProviderToken)
    }

    func testRefreshRuleJudgesTheTruncatedIat() throws {
        // 1199.1 s apart as sent, 1200 s once the first iat is truncated: a refresh on time.
        let first = try Self.signed(header: Self.validHeader, claims: Self.claims(iat: "1700000000.9"))
        var session = try session(startingWith: first)
        let later = Self.now + 20 * 60
        let second = try Self.signed(header: Self.validHeader, claims: Self.claims(iat: #""1700001200""#))
        XCTAssertNoThrow(
            try session.authenticate(authorization: "bearer \(second)", verifier: verifier, now: later).get())
        XCTAssertEqual(session.currentClaims?.issuedAt, later)
    }

    func testReusedTokenOlderThanAnHourIsExpired() throws {
        let token = try Self.token()
        var session = try session(startingWith: token)
        let result = session.authenticate(authorization: "bearer \(token)", verifier: verifier, now: Self.now + 3601)
        XCTAssertEqual(result.failureReason, .expiredProviderToken)
    }

    // MARK: - Signing keys

    func testKeyFromP8EqualsKeyFromPublicPEM() throws {
        let fromP8 = try JWTSigningKey(
            keyID: Self.keyID, teamID: Self.teamID, privateKeyPEM: TestCertificates.jwtSigningKeyPEM)
        let fromPublic = try JWTSigningKey(
            keyID: Self.keyID, teamID: Self.teamID, publicKeyPEM: TestCertificates.jwtPublicKeyPEM)
        XCTAssertEqual(fromP8, fromPublic)
        XCTAssertEqual(fromP8.hashValue, fromPublic.hashValue)
        XCTAssertEqual(fromP8, .test)
    }

    func testKeyFromP8FileEqualsTheBuiltInTestKey() throws {
        let file = testCertificatePath("AuthKey_\(Self.keyID).p8")
        XCTAssertEqual(try JWTSigningKey(keyID: Self.keyID, teamID: Self.teamID, p8File: file), .test)
    }

    func testPublicKeyPEMIsInOpenSSLLayout() {
        XCTAssertEqual(JWTSigningKey.test.publicKeyPEM, TestCertificates.jwtPublicKeyPEM)
    }

    func testKeysWithDifferentTeamsAreNotEqual() throws {
        let other = try JWTSigningKey(
            keyID: Self.keyID, teamID: "OTHERTEAM1", publicKeyPEM: TestCertificates.jwtPublicKeyPEM)
        XCTAssertNotEqual(other, .test)
    }

    func testP384PublicKeyIsRefusedWithTheCurveName() {
        XCTAssertThrowsError(
            try JWTSigningKey(keyID: Self.keyID, teamID: Self.teamID, publicKeyPEM: Self.p384PublicKeyPEM)
        ) { error in
            XCTAssertTrue("\(error)".contains("secp384r1"), "\(error)")
            XCTAssertTrue("\(error)".contains("P-256"), "\(error)")
        }
    }

    func testSecp256k1PublicKeyIsRefused() {
        XCTAssertThrowsError(
            try JWTSigningKey(keyID: Self.keyID, teamID: Self.teamID, publicKeyPEM: Self.secp256k1PublicKeyPEM)
        ) { error in
            XCTAssertTrue("\(error)".contains("secp256k1"), "\(error)")
        }
    }

    func testEd25519PublicKeyIsRefused() {
        XCTAssertThrowsError(
            try JWTSigningKey(keyID: Self.keyID, teamID: Self.teamID, publicKeyPEM: Self.ed25519PublicKeyPEM)
        ) { error in
            XCTAssertTrue("\(error)".contains("ED25519"), "\(error)")
        }
    }

    func testP384PrivateKeyIsRefused() {
        XCTAssertThrowsError(
            try JWTSigningKey(keyID: Self.keyID, teamID: Self.teamID, privateKeyPEM: Self.p384PrivateKeyPEM))
        XCTAssertThrowsError(
            try ProviderTokenSigner.sign(keyID: Self.keyID, teamID: Self.teamID, privateKeyPEM: Self.p384PrivateKeyPEM))
    }

    func testTextThatIsNotPEMIsAClearError() {
        XCTAssertThrowsError(try JWTSigningKey(keyID: Self.keyID, teamID: Self.teamID, publicKeyPEM: "hello")) {
            error in
            XCTAssertTrue("\(error)".contains("not a PEM public key"), "\(error)")
        }
        XCTAssertThrowsError(try JWTSigningKey(keyID: Self.keyID, teamID: Self.teamID, privateKeyPEM: "hello")) {
            error in
            XCTAssertTrue("\(error)".contains("not a PEM private key"), "\(error)")
        }
    }

    func testPrivateKeyGivenAsPublicKeyPointsToTheRightInitialiser() {
        XCTAssertThrowsError(
            try JWTSigningKey(keyID: Self.keyID, teamID: Self.teamID, publicKeyPEM: TestCertificates.jwtSigningKeyPEM)
        ) { error in
            XCTAssertTrue("\(error)".contains("privateKeyPEM"), "\(error)")
        }
    }

    func testMissingP8FileIsAClearError() {
        XCTAssertThrowsError(
            try JWTSigningKey(keyID: Self.keyID, teamID: Self.teamID, p8File: "/nonexistent/AuthKey_X.p8")
        ) { error in
            XCTAssertTrue("\(error)".contains("/nonexistent/AuthKey_X.p8"), "\(error)")
            XCTAssertTrue("\(error)".hasSuffix(": No such file or directory"), "\(error)")
        }
    }

    func testEmptyKeyIDIsRefused() {
        XCTAssertThrowsError(
            try JWTSigningKey(keyID: "", teamID: Self.teamID, publicKeyPEM: TestCertificates.jwtPublicKeyPEM))
        XCTAssertThrowsError(
            try JWTSigningKey(keyID: Self.keyID, teamID: "", publicKeyPEM: TestCertificates.jwtPublicKeyPEM))
    }
}

// MARK: - Helpers

extension Result where Failure == ProviderTokenFailure {
    /// The reason of a failure; nil on success.
    fileprivate var failureReason: APNsReason? {
        if case .failure(let failure) = self { return failure.reason }
        return nil
    }
}

