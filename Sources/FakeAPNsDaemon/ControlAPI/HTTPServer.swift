internal import CMicroHTTPDShims
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
    /// Whether the client has closed the connection meanwhile; for a handler that waits.
    var peerClosed: @Sendable () -> Bool = { false }
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
    /// The body.
    var body: [UInt8]
    /// More headers, such as the web page's `Content-Security-Policy`; names and values must
    /// hold no CR or LF.
    var headers: [(name: String, value: String)] = []

    /// A JSON body, serialized with a final newline (for people reading it in a terminal).
    static func json(_ status: Int, _ value: JSONValue) -> HTTPResponse {
        HTTPResponse(
            status: status, contentType: "application/json", body: Array((value.serialized() + "\n").utf8))
    }

    /// 204, no body.
    static let noContent = HTTPResponse(status: 204, contentType: nil, body: [])
}

/// Why the server could not start.
struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    let description: String
}

/// A plain HTTP/1.1 server on GNU libmicrohttpd: one thread per connection, so a handler may
/// block (waiting for a notification, say) while other requests are served. Connections beyond
/// the limit are still accepted, 64 of them, for one answer each (the handler sees them as
/// ``HTTPRequest/beyondConnectionLimit``); clients beyond those wait in the listen backlog.
///
/// ```swift
/// let server = HTTPServer()
/// let port = try server.start(host: "127.0.0.1", port: 0) { request in .json(200, ["status": "ok"]) }
/// defer { server.stop() }
/// ```
final class HTTPServer: @unchecked Sendable {
    typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse

    /// The largest body read: a larger one is answered by the handler with `bodyTooLarge` set
    /// (a declared `Content-Length`), or closes the connection (a chunked body).
    let maximumBodySize: Int
    /// The connections served at once, as asked; ``servedConnectionLimit`` says how many the
    /// descriptors allowed.
    let connectionLimit: Int
    /// Seconds a connection may stay silent before it is closed. The timer does not run while a
    /// handler runs, so a handler may wait longer than this.
    let idleTimeout: Int

    private let lock = ConditionLock()
    // Protected by `lock`:
    private var running: OpaquePointer?
    private var retained: Unmanaged<Box>?

    /// What the C callbacks reach through their context pointer.
    private final class Box: Sendable {
        let handler: Handler
        init(_ handler: @escaping Handler) { self.handler = handler }
    }

    init(maximumBodySize: Int = 64 * 1024, connectionLimit: Int = 1024, idleTimeout: Int = 30) {
        self.maximumBodySize = maximumBodySize
        self.connectionLimit = connectionLimit
        self.idleTimeout = idleTimeout
    }

    deinit {
        stop()
    }

    /// Binds `host:port` (port 0: the system picks) and serves every request with `handler`,
    /// on the connection's thread. Returns the bound port.
    func start(host: String, port: Int, handler: @escaping Handler) throws -> Int {
        try lock.withLock {
            guard running == nil else { throw HTTPServerError(description: "the HTTP server is already running") }
            guard (0...65535).contains(port) else {
                throw HTTPServerError(description: "port \(port) is not from 0 to 65535")
            }
            let box = Unmanaged.passRetained(Box(handler))
            var error = [CChar](repeating: 0, count: 256)
            let server = fakeapns_http_start(
                host, Int32(port), UInt32(connectionLimit), UInt32(idleTimeout), maximumBodySize, Self.handle,
                box.toOpaque(), &error, error.count)
            guard let server else {
                box.release()
                let reason = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                throw HTTPServerError(description: "control API on \(host):\(port): \(reason)")
            }
            running = server
            retained = box
            return Int(fakeapns_http_port(server))
        }
    }

    /// Closes the listener and every connection and joins every thread; the port is free when
    /// it returns. Between the two, waits up to `drainMilliseconds` for the requests being
    /// answered to finish, so answers already given leave before their connections close.
    /// Handlers still running must return first (a blocked one holds this up). Safe to call twice.
    func stop(drainMilliseconds: Int = 0) {
        let (server, box) = lock.withLock {
            defer {
                running = nil
                retained = nil
            }
            return (running, retained)
        }
        if let server {
            fakeapns_http_close_listener(server)
            fakeapns_http_drain(server, drainMilliseconds)
            fakeapns_http_stop(server)
        }
        box?.release()
    }

    /// The connections served at once: ``connectionLimit``, or fewer when RLIMIT_NOFILE does not
    /// leave descriptors for that many; 0 when not running.
    var servedConnectionLimit: Int {
        lock.withLock { running.map { Int(fakeapns_http_connection_limit($0)) } ?? 0 }
    }

    /// Connections open, those beyond the limit included (for tests).
    var openConnections: Int {
        lock.withLock { running.map { Int(fakeapns_http_open_connections($0)) } ?? 0 }
    }

    /// Requests begun and not finished (for tests that prove nothing is left behind).
    var openRequests: Int {
        lock.withLock { running.map { Int(fakeapns_http_open_requests($0)) } ?? 0 }
    }

    // MARK: - C callbacks

    private static let handle: fakeapns_http_handler = {
        context, connection, method, target, body, length, tooLarge, beyondLimit in
        guard let context, let connection, let method, let target else { return 0 }
        let box = Unmanaged<Box>.fromOpaque(context).takeUnretainedValue()
        let bytes = body.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) } ?? []
        var request = HTTPRequest(
            method: String(cString: method), target: String(cString: target), headers: headers(of: connection),
            body: bytes, bodyTooLarge: tooLarge != 0)
        let probe = ConnectionProbe(connection: connection)
        request.peerClosed = { fakeapns_http_peer_closed(probe.connection) != 0 }
        request.beyondConnectionLimit = beyondLimit != 0
        let response = box.handler(request)
        let extra = response.headers.map { "\($0.name): \($0.value)\n" }.joined()
        return response.body.withUnsafeBytes { buffer in
            fakeapns_http_respond(
                connection, UInt32(clamping: response.status), response.contentType, response.allow,
                extra.isEmpty ? nil : extra, buffer.baseAddress, buffer.count)
        }
    }

    /// The connection, for a check made on its own thread while its handler runs.
    private struct ConnectionProbe: @unchecked Sendable {
        let connection: OpaquePointer
    }

    private final class HeaderList {
        var headers: [(name: String, value: String)] = []
    }

    private static func headers(of connection: OpaquePointer) -> [(name: String, value: String)] {
        let list = HeaderList()
        withExtendedLifetime(list) {
            fakeapns_http_headers(connection, { context, name, value in
                guard let context, let name, let value else { return }
                let list = Unmanaged<HeaderList>.fromOpaque(context).takeUnretainedValue()
                list.headers.append((String(cString: name), String(cString: value)))
            }, Unmanaged.passUnretained(list).toOpaque())
        }
        return list.headers
    }
}
