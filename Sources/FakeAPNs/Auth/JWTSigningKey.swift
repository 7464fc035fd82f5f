#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A key the server trusts for token authentication: the public half of an APNs auth key
/// (`AuthKey_<key id>.p8`), with the key ID and the team ID Apple issued it under.
///
/// A provider token is accepted when its header's `kid` names a trusted key, its `iss` claim is
/// that key's team, and its ES256 signature verifies with that key. Users hold the `.p8`, so the
/// usual way to make one is from the private key; the server keeps only the public key.
///
/// ```swift
/// let key = try JWTSigningKey(keyID: "ABC123DEFG", teamID: "DEF123GHIJ", p8File: "AuthKey_ABC123DEFG.p8")
/// let same = try JWTSigningKey(keyID: "ABC123DEFG", teamID: "DEF123GHIJ", publicKeyPEM: publicPEM)
/// key == same   // true: keys compare by key ID, team ID, public key and scope
/// ```
///
/// Every initialiser checks that the key is an EC key on the P-256 curve (ES256), and throws a
/// ``JWTKeyError`` that says what is wrong otherwise.
///
/// A key made this way works in both environments and for every topic of its team, as the keys
/// Apple issued before February 2025 do. ``scoped(to:topics:relatedKeyID:)`` limits it as Apple's
/// newer keys are limited: a team-scoped key to sandbox or production, a topic-specific key to
/// one environment and a list of topics, with at most one related key:
///
/// ```swift
/// let sandboxOnly = try key.scoped(to: [.sandbox])
/// let appKey = try key.scoped(to: [.production], topics: ["com.example.app"], relatedKeyID: "REL123KEY0")
/// ```
public struct JWTSigningKey: Sendable, Hashable {
    /// The key ID: the `kid` of the tokens it verifies (10 characters at Apple).
    public let keyID: String
    /// The team ID: the `iss` claim of the tokens it verifies (10 characters at Apple).
    public let teamID: String
    /// The public key as SubjectPublicKeyInfo DER.
    let publicKeyDER: [UInt8]
    /// The parsed public key, kept so verification does not parse it again.
    let publicKey: EVPKey
    /// The environments whose endpoints accept the key's tokens: both (the default, as for
    /// the keys Apple issued before February 2025), or one. A token of a key not valid for the
    /// server's environment is answered 403 `BadEnvironmentKeyInToken`.
    public private(set) var environments: Set<PushEnvironment> = Set(PushEnvironment.allCases)
    /// The topics a topic-specific key may push to (bundle IDs; a push type's suffix such as
    /// `.voip` is allowed after each); nil (the default): a team-scoped key, valid for every
    /// topic of its team.
    public private(set) var topics: Set<String>?
    /// The key ID of the one key related to this topic-specific key: a connection whose first
    /// push used either may go on with the other. Nil: none.
    public private(set) var relatedKeyID: String?

    /// The most topics one topic-specific key lists, as at Apple.
    public static let maximumTopicCount = 400

    /// Whether the key is topic-specific (it lists its topics).
    public var isTopicSpecific: Bool { topics != nil }

    /// This key, limited to `environments` and, for a topic-specific key, to `topics` (with the
    /// key ID of its related key, if it has one), as Apple's keys made since February 2025
    /// are: a team-scoped key to one environment, a topic-specific key to one environment and
    /// at most ``maximumTopicCount`` topics.
    ///
    /// - Throws: ``JWTKeyError`` when `environments` is empty, `topics` is empty, too long or
    ///   has an empty topic, or `relatedKeyID` is given without topics or names this key.
    public func scoped(
        to environments: Set<PushEnvironment>, topics: Set<String>? = nil, relatedKeyID: String? = nil
    ) throws(JWTKeyError) -> JWTSigningKey {
        guard !environments.isEmpty else { throw JWTKeyError("key \(keyID) is limited to no environment") }
        if let topics {
            guard !topics.isEmpty else { throw JWTKeyError("topic-specific key \(keyID) lists no topic") }
            guard topics.count <= Self.maximumTopicCount else {
                throw JWTKeyError(
                    "key \(keyID) lists \(topics.count) topics; a topic-specific key has at most "
                        + "\(Self.maximumTopicCount)")
            }
            guard !topics.contains(where: \.isEmpty) else { throw JWTKeyError("key \(keyID) lists an empty topic") }
        }
        if let relatedKeyID {
            guard topics != nil else {
                throw JWTKeyError("only a topic-specific key has a related key; key \(keyID) lists no topics")
            }
            guard !relatedKeyID.isEmpty, relatedKeyID != keyID else {
                throw JWTKeyError("key \(keyID)'s related key must be another key, not '\(relatedKeyID)'")
            }
        }
        var key = self
        key.environments = environments
        key.topics = topics
        key.relatedKeyID = relatedKeyID
        return key
    }

    /// Whether the key's tokens may push to `topic`: every topic for a team-scoped key; for a
    /// topic-specific one, a listed topic, or a listed topic followed by a push type's suffix
    /// (`com.example.app.voip` for `com.example.app`).
    public func allows(topic: String) -> Bool {
        guard let topics else { return true }
        if topics.contains(topic) { return true }
        guard let suffix = PushType.named(byTopic: topic)?.topicSuffix, topic.count > suffix.count else {
            return false
        }
        return topics.contains(String(topic.dropLast(suffix.count)))
    }

    /// Whether a connection whose first push used this key may go on with `other`: the same
    /// key, a key named as related by either, or, when neither is topic-specific, any key of
    /// the same team (keys of one team are related, as they were before topic-specific keys).
    func isRelated(to other: JWTSigningKey) -> Bool {
        if other.keyID == keyID || relatedKeyID == other.keyID || other.relatedKeyID == keyID { return true }
        return !isTopicSpecific && !other.isTopicSpecific
    }

    /// The public key as SubjectPublicKeyInfo PEM (`-----BEGIN PUBLIC KEY-----`), in OpenSSL's
    /// layout (64-character lines) whatever layout it was given in.
    public var publicKeyPEM: String {
        let base64 = Data(publicKeyDER).base64EncodedString()
        var lines = ["-----BEGIN PUBLIC KEY-----"]
        var start = base64.startIndex
        while start < base64.endIndex {
            let end = base64.index(start, offsetBy: 64, limitedBy: base64.endIndex) ?? base64.endIndex
            lines.append(String(base64[start..<end]))
            start = end
        }
        lines.append("-----END PUBLIC KEY-----")
        return lines.joined(separator: "\n") + "\n"
    }

    /// A trusted key from its public key in PEM (`-----BEGIN PUBLIC KEY-----`).
    ///
    /// - Throws: ``JWTKeyError`` when the IDs are empty, the text is not a PEM public key, or
    ///   the key is not EC P-256.
    public init(keyID: String, teamID: String, publicKeyPEM: String) throws(JWTKeyError) {
        guard let key = EVPKey.publicKey(fromPEM: publicKeyPEM) else {
            let hint =
                publicKeyPEM.contains("PRIVATE KEY-----")
                ? " (this is a private key: use init(keyID:teamID:privateKeyPEM:))" : ""
            throw JWTKeyError("not a PEM public key (-----BEGIN PUBLIC KEY-----)\(hint)")
        }
        try self.init(keyID: keyID, teamID: teamID, key: key)
    }

    /// A trusted key from the private key of an APNs auth key (the `.p8` contents, PKCS#8 PEM),
    /// keeping only its public half.
    ///
    /// ```swift
    /// let key = try JWTSigningKey(keyID: "ABC123DEFG", teamID: "DEF123GHIJ", privateKeyPEM: p8Text)
    /// ```
    ///
    /// - Throws: ``JWTKeyError`` when the IDs are empty, the text is not a PEM private key, or
    ///   the key is not EC P-256.
    public init(keyID: String, teamID: String, privateKeyPEM: String) throws(JWTKeyError) {
        try self.init(keyID: keyID, teamID: teamID, key: EVPKey.jwtPublicHalf(ofPrivateKeyPEM: privateKeyPEM))
    }

    /// A trusted key from an APNs auth key file (`AuthKey_<key id>.p8`) at `p8File`.
    ///
    /// - Throws: ``JWTKeyError`` when the file cannot be read, or as
    ///   ``init(keyID:teamID:privateKeyPEM:)``.
    public init(keyID: String, teamID: String, p8File: String) throws(JWTKeyError) {
        let text: String
        do {
            text = try String(contentsOfFile: p8File, encoding: .utf8)
        } catch {
            // What the system said (FoundationEssentials has no localized descriptions).
            let reason = ((error as? CocoaError)?.underlying as? POSIXError).map { String(cString: strerror($0.code.rawValue)) }
            throw JWTKeyError("cannot read the .p8 file \(p8File): \(reason ?? "\(error)")")
        }
        let key: EVPKey
        do {
            key = try EVPKey.jwtPublicHalf(ofPrivateKeyPEM: text)
            try key.requireP256()
        } catch {
            throw JWTKeyError("\(p8File): \(error.message)")
        }
        try self.init(keyID: keyID, teamID: teamID, key: key)
    }

    /// The built-in test key: key ID ``TestCertificates/jwtKeyID``, team ID
    /// ``TestCertificates/jwtTeamID`` and the public key ``TestCertificates/jwtPublicKeyPEM``.
    /// Tokens from ``ProviderTokenSigner/sign(keyID:teamID:issuedAt:privateKeyPEM:signatureEncoding:)``
    /// with its defaults verify with it.
    public static let test: JWTSigningKey = {
        do {
            return try JWTSigningKey(
                keyID: TestCertificates.jwtKeyID, teamID: TestCertificates.jwtTeamID,
                publicKeyPEM: TestCertificates.jwtPublicKeyPEM)
        } catch {
            // The fixture is a constant of this module; ProviderTokenTests guards it.
            fatalError("the built-in JWT public key does not load: \(error)")
        }
    }()

    private init(keyID: String, teamID: String, key: EVPKey) throws(JWTKeyError) {
        guard !keyID.isEmpty else { throw JWTKeyError("the key ID is empty") }
        guard !teamID.isEmpty else { throw JWTKeyError("the team ID is empty") }
        try key.requireP256()
        guard let der = key.subjectPublicKeyInfoDER() else {
            throw JWTKeyError("could not encode the public key")
        }
        self.keyID = keyID
        self.teamID = teamID
        self.publicKeyDER = der
        self.publicKey = key
    }

    /// Keys are equal when their key IDs, team IDs, public keys and scopes (environments,
    /// topics, related key) are.
    public static func == (lhs: JWTSigningKey, rhs: JWTSigningKey) -> Bool {
        lhs.keyID == rhs.keyID && lhs.teamID == rhs.teamID && lhs.publicKeyDER == rhs.publicKeyDER
            && lhs.environments == rhs.environments && lhs.topics == rhs.topics && lhs.relatedKeyID == rhs.relatedKeyID
    }

    /// Hashes the key ID, team ID, public key and scopes.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(keyID)
        hasher.combine(teamID)
        hasher.combine(publicKeyDER)
        hasher.combine(environments)
        hasher.combine(topics)
        hasher.combine(relatedKeyID)
    }
}

// MARK: - JWTKeyError

/// Why a JWT key could not be used: bad PEM, a key that is not EC P-256, an unreadable file.
///
/// ```swift
/// do {
///     _ = try JWTSigningKey(keyID: "ABC123DEFG", teamID: "DEF123GHIJ", publicKeyPEM: rsaPEM)
/// } catch {
///     print(error)   // JWT key error: an RSA key; ES256 needs an EC key on the P-256 curve
/// }
/// ```
public struct JWTKeyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, as one sentence fragment.
    public let message: String

    /// An error saying `message`.
    public init(_ message: String) {
        self.message = message
    }

    /// `JWT key error: ` and the message.
    public var description: String { "JWT key error: \(message)" }
}

// MARK: - Loading keys for ES256

extension EVPKey {
    /// A private key from PEM (PKCS#8 or traditional), unencrypted.
    static func jwtPrivateKey(fromPEM pem: String) throws(JWTKeyError) -> EVPKey {
        do {
            return try privateKey(fromPEM: pem)
        } catch {
            throw JWTKeyError(
                "not a PEM private key (an APNs .p8 is -----BEGIN PRIVATE KEY-----): "
                    + ((error as? TLSError)?.details ?? "\(error)")
            )
        }
    }

    /// The public key of a private key in PEM.
    static func jwtPublicHalf(ofPrivateKeyPEM pem: String) throws(JWTKeyError) -> EVPKey {
        guard let key = try jwtPrivateKey(fromPEM: pem).publicHalf() else {
            throw JWTKeyError("could not derive the public key from the private key")
        }
        return key
    }

    /// Throws unless this is an EC key on P-256, the only curve ES256 allows.
    func requireP256() throws(JWTKeyError) {
        if let mismatch = p256Mismatch() { throw JWTKeyError(mismatch) }
    }
}
