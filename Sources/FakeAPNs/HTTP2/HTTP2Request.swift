/// One complete HTTP/2 request as the transport received it: its header block and its body.
///
/// Plain data with no socket or nghttp2 behind it, so ``RequestValidator`` can be unit-tested
/// and fuzzed.
///
/// `headers` holds **every** field of the request's header block in arrival order,
/// pseudo-headers (`:method`, `:scheme`, `:authority`, `:path`) included, repeats included:
/// what the transport sees, one entry per nghttp2 `on_header` call. Keeping repeats and
/// pseudo-headers in the one list is what lets the validator answer `DuplicateHeaders` for a
/// repeated `:path` as for a repeated `apns-topic`. ``method`` and ``path`` read the first
/// `:method` and `:path` from it. The transport itself never builds this list: it feeds each
/// field to ``RequestHeaderFields`` as it arrives, which the validator reads the same way.
///
/// Names should be lowercase, as HTTP/2 requires (nghttp2 resets streams that break this);
/// the validator compares them ASCII-case-insensitively anyway. Values are kept exactly as
/// sent: nothing is trimmed.
///
/// ```swift
/// let request = HTTP2Request(
///     path: "/3/device/fe15a27d5df3c347",
///     headers: [("apns-topic", "com.example.app"), ("apns-push-type", "alert")],
///     body: Array(#"{"aps":{"alert":"Hi"}}"#.utf8))
/// request.headers.map(\.name)   // [":method", ":scheme", ":path", "apns-topic", "apns-push-type"]
/// ```
struct HTTP2Request: Sendable {
    /// Every header field in arrival order, pseudo-headers and repeats included.
    var headers: [(name: String, value: String)]
    /// The body: the DATA frames' payloads, concatenated.
    var body: [UInt8]

    /// A request from its full header list, as the transport collects it.
    init(headers: [(name: String, value: String)], body: [UInt8]) {
        self.headers = headers
        self.body = body
    }

    /// A request whose header list starts with `:method`, `:scheme: https` and `:path`, then
    /// `headers`; for tests. Putting a pseudo-header in `headers` as well repeats it.
    init(method: String = "POST", path: String, headers: [(name: String, value: String)] = [], body: [UInt8]) {
        self.headers = [(":method", method), (":scheme", "https"), (":path", path)] + headers
        self.body = body
    }

    /// The first `:method`, or "" when there is none.
    var method: String {
        firstValue(of: ":method") ?? ""
    }

    /// The first `:path`, or "" when there is none.
    var path: String {
        firstValue(of: ":path") ?? ""
    }

    /// The value of the first header named `name` (compared ASCII-case-insensitively).
    func firstValue(of name: String) -> String? {
        let wanted = Self.asciiLowercased(name)
        return headers.first { Self.asciiLowercased($0.name) == wanted }?.value
    }

    /// The `apns-id` to echo in an error response: the client's, lowercased, when it sent
    /// exactly one and it is a canonical UUID; nil otherwise, and the transport makes one up.
    /// Accepted requests carry theirs in ``ValidatedRequest/apnsID``.
    var clientAPNsID: String? {
        RequestHeaderFields(headers).clientAPNsID
    }

    /// `text` with ASCII capitals lowered and every other character kept; header names are
    /// ASCII, and a Unicode-aware lowering could merge names HTTP/2 keeps apart.
    static func asciiLowercased(_ text: String) -> String {
        guard text.utf8.contains(where: isASCIICapital) else { return text }
        return String(decoding: asciiLowercased(text.utf8), as: UTF8.self)
    }

    /// `bytes` with ASCII capitals lowered: a header name as a request's fields are matched.
    static func asciiLowercased(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        bytes.map { isASCIICapital($0) ? $0 + 32 : $0 }
    }

    /// Whether `byte` is `A` to `Z`.
    static func isASCIICapital(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")
    }
}
