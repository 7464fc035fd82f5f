import FakeAPNsTestSupport
import Foundation
import FakeAPNs

#if canImport(Glibc)
import Glibc
#endif

/// A raw-socket HTTP/1.1 client for the control API tests: one request per connection
/// (`Connection: close`), so what the server sends is read to its end.
struct HTTPTestClient: Sendable {
    let host: String
    let port: Int

    init(host: String = "127.0.0.1", port: Int) {
        self.host = host
        self.port = port
    }

    /// One response.
    struct Response: Sendable {
        let status: Int
        let headers: [(name: String, value: String)]
        let body: [UInt8]

        func header(_ name: String) -> String? {
            headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
        }

        var text: String { String(decoding: body, as: UTF8.self) }
        var json: JSONValue? { try? JSONValue.parse(body) }
        /// `error` of a JSON error body.
        var error: String? { json?["error"]?.stringValue }
        /// `message` of a JSON error body.
        var message: String { json?["message"]?.stringValue ?? "" }
    }

    /// Why a response could not be read.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    @discardableResult
    func get(_ target: String, timeout: Duration = .seconds(10)) throws -> Response {
        try request("GET", target, timeout: timeout)
    }

    @discardableResult
    func delete(_ target: String) throws -> Response {
        try request("DELETE", target)
    }

    @discardableResult
    func post(_ target: String, _ json: String = "") throws -> Response {
        try request("POST", target, body: Array(json.utf8))
    }

    @discardableResult
    func put(_ target: String, _ json: String) throws -> Response {
        try request("PUT", target, body: Array(json.utf8))
    }

    @discardableResult
    func request(
        _ method: String, _ target: String, body: [UInt8] = [], timeout: Duration = .seconds(10)
    ) throws -> Response {
        let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(authority)\r\nConnection: close\r\n"
        if !body.isEmpty || method == "POST" || method == "PUT" {
            head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n"
        }
        let bytes = try exchange(Array((head + "\r\n").utf8) + body, timeout: timeout)
        return try Self.parse(bytes)
    }

    /// Sends `bytes` as they are and reads until the server closes (or `timeout` passes).
    func exchange(_ bytes: [UInt8], timeout: Duration = .seconds(10)) throws -> [UInt8] {
        let socket = try Socket.connect(host: host, port: port)
        defer { close(socket) }
        let (seconds, attoseconds) = timeout.components
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { break }
            offset += sent
        }
        return Self.readToEnd(socket)
    }

    /// What `socket` receives until the server closes it (or its receive timeout passes).
    static func readToEnd(_ socket: Int32) -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        return received
    }

    /// The body of a chunked message: the chunks' data, joined.
    static func dechunked(_ bytes: [UInt8]) throws -> [UInt8] {
        var body: [UInt8] = []
        var position = 0
        while true {
            guard let lineEnd = bytes[position...].firstIndex(of: 10),
                let size = Int(String(decoding: bytes[position..<lineEnd], as: UTF8.self)
                    .trimmingCharacters(in: .whitespacesAndNewlines), radix: 16)
            else { throw Failure(description: "bad chunk size at byte \(position)") }
            if size == 0 { return body }
            guard lineEnd + 1 + size <= bytes.count else { throw Failure(description: "a chunk is cut short") }
            body += bytes[(lineEnd + 1)..<(lineEnd + 1 + size)]
            position = lineEnd + 1 + size + 2
            guard position <= bytes.count else { throw Failure(description: "a chunk is cut short") }
        }
    }

    static func parse(_ bytes: [UInt8]) throws -> Response {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else {
            throw Failure(description: "no complete response head in \(bytes.count) bytes")
        }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw Failure(description: "bad status line '\(lines[0])'")
        }
        let headers = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var body = Array(bytes[(end + 4)...])
        if let length = headers.first(where: { $0.name.lowercased() == "content-length" }).flatMap({ Int($0.value) }) {
            body = Array(body.prefix(length))
        } else if headers.contains(where: { $0.name.lowercased() == "transfer-encoding" && $0.value == "chunked" }) {
            body = try dechunked(body)
        }
        return Response(status: status, headers: headers, body: body)
    }
}
