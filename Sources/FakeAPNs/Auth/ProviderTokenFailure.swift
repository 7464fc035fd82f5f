#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
    /// ``APNsReason/invalidProviderToken``, ``APNsReason/expiredProviderToken``,
    /// ``APNsReason/tooManyProviderTokenUpdates``, or for a scoped key (``JWTSigningKey``)
    /// ``APNsReason/badEnvironmentKeyInToken`` (or ``APNsReason/badEnvironmentKeyIdInToken``),
    /// ``APNsReason/unrelatedKeyIdInToken`` or ``APNsReason/topicDisallowed``.
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

/// `interval` rounded down, for messages; never traps, whatever its size.
func wholeNumber(_ interval: TimeInterval) -> String {
    guard let whole = Int(exactly: interval.rounded(.down)) else { return "\(interval)" }
    return "\(whole)"
}
