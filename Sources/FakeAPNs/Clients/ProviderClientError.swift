/// A provider client's failure that is neither a socket's nor OpenSSL's: no answer in time, a
/// connection closed without an answer, bytes that make no sense.
public struct ProviderClientError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a sentence.
    public let message: String

    /// An error with a message.
    public init(message: String) {
        self.message = message
    }

    public var description: String { message }
}
