/// How the HTTP/2 provider API authenticates providers.
public enum HTTP2Authentication: Sendable, Equatable {
    /// Accept every request, with or without credentials (the simplest tests). A request
    /// without `apns-topic` takes a single-topic client certificate's, as at Apple, and else
    /// has no topic (``PushNotification/topic`` nil).
    case none
    /// Provider certificates: the client certificate's topics (UID and Apple's topics
    /// extension) decide which topics are allowed; without a certificate a request gets
    /// 403 `MissingProviderToken`.
    case certificate
    /// JWT provider tokens, verified for real against these keys (ES256, `kid` → key,
    /// `iss` → team, `iat` age and refresh rules).
    case token([JWTSigningKey])

    /// Token authentication with the test key of `TestCerts/` (`AuthKey_ABC123DEFG.p8`).
    public static var testToken: HTTP2Authentication { .token([.test]) }
}
