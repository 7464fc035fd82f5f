import FakeAPNs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One HTTP request as it arrived: plain values, no C in sight, so the decoding that follows
/// can be called (and fuzzed) without a server.
struct HTTPRequest: Sendable {
    /// The method, as sent ("GET").
    var method: String
    /// The path of the request-target, still percent-encoded ("/api/v1/devices/fe15…").
    var path: String
    /// The query of the request-target without its `?`, still percent-encoded; nil when the
    /// target has no `?`.
    var query: String?
    /// The request headers, in order.
    var headers: [(name: String, value: String)]
    /// The body, at most ``HTTPServer/maximumBodySize`` bytes.
    var body: [UInt8]
    /// Whether the body was over the limit (and so was not read: `body` is empty).
    var bodyTooLarge: Bool
    /// Whether the connection was accepted beyond ``HTTPServer/connectionLimit``: it gets this
    /// one answer, then closes, so a handler should not hold it long.
    var beyondConnectionLimit = false

    /// A request; `target` is the request-target as sent ("/path?query").
    init(method: String, target: String, headers: [(name: String, value: String)] = [], body: [UInt8] = [],
         bodyTooLarge: Bool = false) {
        self.method = method
        if let mark = target.firstIndex(of: "?") {
            path = String(target[..<mark])
            query = String(target[target.index(after: mark)...])
        } else {
            path = target
            query = nil
        }
        self.headers = headers
        self.body = body
        self.bodyTooLarge = bodyTooLarge
    }
}

/// One HTTP response.
struct HTTPResponse: Sendable {
    /// The status code.
    var status: Int
    /// The `Content-Type`; nil for a response without a body.
    var contentType: String?
    /// The `Allow` header of a 405.
    var allow: String?
    /// The body, when it is made at once.
    var body: [UInt8]
    /// The body made as the client reads it (sent chunked), instead of `body`.
    var stream: HTTPBodyStream?
    /// More headers, such as the web page's `Content-Security-Policy`; names and values must
    /// hold no CR or LF.
    var headers: [(name: String, value: String)] = []
    /// Called when the answer did not reach its client (the client left first), for an answer
    /// that carries something taken for it, to put it back.
    var undelivered: (@Sendable () -> Void)?

    /// A JSON body, serialized with a final newline (for people reading it in a terminal).
    static func json(_ status: Int, _ value: JSONValue) -> HTTPResponse {
        HTTPResponse(
            status: status, contentType: "application/json", body: Array((value.serialized() + "\n").utf8))
    }

    /// A JSON body made as the client reads it; one that ends within its first piece is sent
    /// whole, with its length, as any other.
    static func json(_ status: Int, streaming stream: HTTPBodyStream) -> HTTPResponse {
        if let whole = stream.wholeIfShort() {
            return HTTPResponse(status: status, contentType: "application/json", body: whole)
        }
        return HTTPResponse(status: status, contentType: "application/json", body: [], stream: stream)
    }

    /// 204, no body.
    static let noContent = HTTPResponse(status: 204, contentType: nil, body: [])
}

/// A body made piece by piece as the client reads it: `next` gives the next piece, nil at the
/// end. Only the piece being sent is held, so a client that does not read costs one piece
/// (and libmicrohttpd's block), not the whole body.
final class HTTPBodyStream: @unchecked Sendable {
    private let next: () -> [UInt8]?
    // Touched by the server's polling thread only.
    private var piece: [UInt8] = []
    private var offset = 0
    private var ended = false

    init(_ next: @escaping @Sendable () -> [UInt8]?) {
        self.next = next
    }

    /// Copies up to `capacity` bytes into `buffer`; -1 at the end (libmicrohttpd's
    /// MHD_CONTENT_READER_END_OF_STREAM).
    func read(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        while offset == piece.count {
            guard !ended, let following = next() else {
                ended = true
                return -1
            }
            piece = following
            offset = 0
        }
        let count = min(capacity, piece.count - offset)
        piece.withUnsafeBytes { bytes in
            UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress! + offset, byteCount: count)
        }
        offset += count
        return count
    }

    /// The whole body when it ends with its first piece; otherwise nil, and the pieces made
    /// so far are sent first. Called before the stream is handed to the server.
    func wholeIfShort() -> [UInt8]? {
        guard let first = next() else { return [] }
        guard let second = next() else { return first }
        piece = first + second
        return nil
    }
}

/// What a handler gives: an answer now, an answer to make on a handler thread, or a wait that
/// answers when it ends. A wait holds no thread: it suspends, and its connection is set aside
/// until it answers.
enum HTTPAnswer: Sendable {
    /// The answer, made on the server's polling thread: it must not take long.
    case response(HTTPResponse)
    /// Made on one of the server's handler threads, for work that may take a while or block.
    case handlerThread(@Sendable () -> HTTPResponse)
    /// Ends with the response; cancelled (as a task) when its client leaves first.
    case waiting(@Sendable () async -> HTTPResponse)

    /// An answer now with a JSON body.
    static func json(_ status: Int, _ value: JSONValue) -> HTTPAnswer {
        .response(.json(status, value))
    }

    /// An answer now: 204, no body.
    static let noContent = HTTPAnswer.response(.noContent)
}

/// Why the server could not start.
struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    let description: String
}
