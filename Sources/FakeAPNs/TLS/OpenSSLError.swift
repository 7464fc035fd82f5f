internal import COpenSSLShims
internal import COpenSSL

/// A failure reported by OpenSSL, with the library's own words.
public struct TLSError: Error, Sendable, CustomStringConvertible {
    /// What the project was doing when OpenSSL failed ("loading the private key", "handshake").
    public let operation: String
    /// OpenSSL's error queue, or the verification error, as one line.
    public let details: String

    public var description: String {
        details.isEmpty ? "TLS error while \(operation)" : "TLS error while \(operation): \(details)"
    }

    /// Builds an error from OpenSSL's thread-local error queue, emptying it.
    static func fromErrorQueue(_ operation: String, fallback: String = "") -> TLSError {
        var buffer = [CChar](repeating: 0, count: 2048)
        let length = buffer.withUnsafeMutableBufferPointer {
            fakeapns_drain_errors($0.baseAddress, Int32($0.count))
        }
        let text = String(decoding: buffer[0..<Int(length)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return TLSError(operation: operation, details: text.isEmpty ? fallback : text)
    }

    /// Discards whatever OpenSSL left in this thread's error queue.
    static func clearErrorQueue() {
        ERR_clear_error()
    }
}
