internal import CMicroHTTPD
internal import CMicroHTTPDShims
import FakeAPNs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A plain HTTP/1.1 server on GNU libmicrohttpd. One polling thread (epoll) serves every
/// connection and answers what is quick; work that may take a while goes to a small pool of
/// handler threads (``HTTPAnswer/handlerThread(_:)``), and a wait (``HTTPAnswer/waiting(_:)``)
/// runs as a task, each with its connection suspended meanwhile: a thousand waits hold no
/// thread. libmicrohttpd does not watch a suspended connection, so one watcher thread polls the
/// waiting ones and cancels the wait of a client that leaves. Connections are accepted here, only while there is room: the limit,
/// and 64 beyond it for one answer each (the handler sees them as
/// ``HTTPRequest/beyondConnectionLimit``); clients beyond those wait in the listen backlog.
///
/// ```swift
/// let server = HTTPServer()
/// let port = try server.start(host: "127.0.0.1", port: 0) { request in .json(200, ["status": "ok"]) }
/// defer { server.stop() }
/// ```
final class HTTPServer: @unchecked Sendable {
    typealias Handler = @Sendable (HTTPRequest) -> HTTPAnswer

    /// The largest body read: a larger one is answered by the handler with `bodyTooLarge` set
    /// (a declared `Content-Length`), or closes the connection (a chunked body).
    let maximumBodySize: Int
    /// The connections served at once, as asked; ``servedConnectionLimit`` says how many the
    /// descriptors allowed.
    let connectionLimit: Int
    /// Seconds a connection may stay silent before it is closed. The timer does not run while a
    /// handler runs or waits, so a handler may take longer than this.
    let idleTimeout: Int

    /// Connections accepted beyond the limit, so that each can be answered (503 for a wait).
    static let overflowConnections = 64
    /// Descriptors left to the rest of the process (the APNs listeners, files, the log).
    static let descriptorReserve = 256
    /// Threads that run handlers: waits do not hold them, so a few are enough.
    static let handlerThreads = 4
    /// The stack of the polling thread and of the handler threads. Reserved, not used, and
    /// there are five of them: room for the recursive JSON writer on the deepest payload the
    /// parser takes, with room to spare under the address sanitizer.
    static let threadStackSize = 16 * 1024 * 1024
    /// The largest piece of a streamed body libmicrohttpd asks for (and holds) at a time.
    static let streamBlockSize = 32 * 1024

    /// The handler threads' queue, apart so that its wake-ups wake no one else.
    private let jobsLock = ConditionLock()
    // Protected by `jobsLock`:
    private var jobs: [@Sendable () -> Void] = []
    private var jobsEnded = false

    private let lock = ConditionLock()
    // Protected by `lock` (its waiters, the accepting thread and a stop, are woken only when
    // what they wait for may have come):
    private var running: Running?
    private var handler: Handler?
    private var servedLimit = 0
    private var overflowLimit = 0
    private var handedOver = 0
    private var open = 0
    private var answering = 0
    private var lastID = 0
    private var unanswered: [Int: Exchange] = [:]
    private var watched: [Int: Exchange] = [:]
    private var stopping = false
    private var callsIntoServer = 0
    /// Whether the accepting thread waits for a connection to close.
    private var acceptorWaits = false

    private final class Running: @unchecked Sendable {
        let server: OpaquePointer
        let listener: Int32
        /// Pipes that wake the accepting thread and the watcher.
        let acceptorWake: Wake
        let watcherWake: Wake
        var threads: [OSThread] = []
        init(server: OpaquePointer, listener: Int32, acceptorWake: Wake, watcherWake: Wake) {
            self.server = server
            self.listener = listener
            self.acceptorWake = acceptorWake
            self.watcherWake = watcherWake
        }
    }

    /// A pipe that wakes a thread blocked in poll().
    private struct Wake {
        let read: Int32
        let write: Int32

        init() throws {
            var ends: [Int32] = [-1, -1]
            guard pipe(&ends) == 0 else {
                throw HTTPServerError(description: "pipe: \(String(cString: strerror(errno)))")
            }
            for end in ends {
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
                _ = fcntl(end, F_SETFL, O_NONBLOCK)
            }
            (read, write) = (ends[0], ends[1])
        }

        func signal() {
            var byte: UInt8 = 0
            while Glibc.write(write, &byte, 1) < 0 && errno == EINTR {}
        }

        func drain() {
            var bytes = [UInt8](repeating: 0, count: 256)
            while Glibc.read(read, &bytes, bytes.count) > 0 {}
        }

        func close() {
            _ = Glibc.close(read)
            _ = Glibc.close(write)
        }
    }

    /// A request handed to a handler, until it is answered.
    private final class Exchange: @unchecked Sendable {
        let id: Int
        let request: OpaquePointer
        let socket: Int32
        /// The wait answering it; set under the server's lock.
        var wait: Task<Void, Never>?
        init(id: Int, request: OpaquePointer, socket: Int32) {
            self.id = id
            self.request = request
            self.socket = socket
        }
    }

    init(maximumBodySize: Int = 64 * 1024, connectionLimit: Int = 1024, idleTimeout: Int = 30) {
        self.maximumBodySize = maximumBodySize
        self.connectionLimit = connectionLimit
        self.idleTimeout = idleTimeout
    }

    deinit {
        stop()
    }

    /// Binds `host:port` (port 0: the system picks) and answers every request with `handler`,
    /// on a handler thread. Returns the bound port.
    func start(host: String, port: Int, handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse) throws -> Int {
        try listen(host: host, port: port, answering: { request in .handlerThread { handler(request) } })
    }

    /// Binds `host:port` (port 0: the system picks) and answers every request with `handler`,
    /// called on the polling thread: it answers at once, or hands the work to a handler thread,
    /// or returns a wait that runs as a task. Returns the bound port.
    func listen(host: String, port: Int, answering handler: @escaping Handler) throws -> Int {
        let (running, port) = try lock.withLock { () throws -> (Running, Int) in
            guard self.running == nil, !stopping else { throw HTTPServerError(description: "the HTTP server is already running") }
            guard (0...65535).contains(port) else {
                throw HTTPServerError(description: "port \(port) is not from 0 to 65535")
            }
            let listener: (socket: Int32, port: Int)
            do {
                listener = try Socket.listen(host: host, port: port, backlog: SOMAXCONN)
            } catch {
                throw HTTPServerError(description: "control API on \(host):\(port): \(error)")
            }
            let wakes: (Wake, Wake)
            do {
                wakes = (try Wake(), try Wake())
            } catch {
                close(listener.socket)
                throw HTTPServerError(description: "control API on \(host):\(port): \(error)")
            }
            fitDescriptors()
            var error = [CChar](repeating: 0, count: 256)
            guard let server = fakeapns_http_start(
                UInt32(2 * (servedLimit + overflowLimit)), UInt32(idleTimeout), maximumBodySize, Self.threadStackSize,
                callbacks, &error, error.count)
            else {
                close(listener.socket)
                wakes.0.close()
                wakes.1.close()
                let reason = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                throw HTTPServerError(description: "control API on \(host):\(port): \(reason)")
            }
            let running = Running(server: server, listener: listener.socket, acceptorWake: wakes.0, watcherWake: wakes.1)
            self.running = running
            self.handler = handler
            return (running, listener.port)
        }
        do {
            running.threads.append(try OSThread(name: "control-accept") { [self] in accept(running) })
            running.threads.append(try OSThread(name: "control-waits") { [self] in watch(running) })
            for _ in 0..<Self.handlerThreads {
                running.threads.append(try OSThread(name: "control-handler", stackSize: Self.threadStackSize) {
                    [self] in runJobs()
                })
            }
        } catch {
            stop()
            throw HTTPServerError(description: "control API on \(host):\(port): \(error)")
        }
        return port
    }

    /// Stops accepting, waits up to `drainMilliseconds` for the requests being answered to
    /// finish (so answers already given leave before their connections close), then closes
    /// every connection and joins every thread; the port is free when it returns. A request
    /// still unanswered then is closed without an answer. `step` is told each step as it begins
    /// (a stop that hangs says where). Safe to call twice.
    func stop(drainMilliseconds: Int = 0, step: (String) -> Void = { _ in }) {
        guard let running = lock.withLock({ () -> Running? in
            guard let running, !stopping else { return nil }
            stopping = true
            lock.broadcast()
            return running
        }) else { return }
        running.acceptorWake.signal()
        running.watcherWake.signal()
        jobsLock.withLock {
            jobsEnded = true
            jobsLock.broadcast()
        }
        step("letting the control API's answers leave")
        let deadline = Deadline.after(.milliseconds(drainMilliseconds))
        let left: [Exchange] = lock.withLock {
            while answering > 0 && lock.wait(until: deadline) {}
            defer { unanswered.removeAll() }
            return Array(unanswered.values)
        }
        // libmicrohttpd must not stop with a suspended connection: those are closed unanswered.
        left.forEach { fakeapns_http_answer($0.request, 0, nil, nil) }
        step("waiting for the control API's answers being handed to libmicrohttpd")
        lock.withLock { while callsIntoServer > 0 { lock.wait() } }
        step("joining the control API's threads")
        for thread in running.threads { thread.join() }
        step("stopping libmicrohttpd")
        fakeapns_http_stop(running.server)
        close(running.listener)
        running.acceptorWake.close()
        running.watcherWake.close()
        lock.withLock {
            self.running = nil
            handler = nil
            watched.removeAll()
            stopping = false
        }
        jobsLock.withLock {
            jobs.removeAll()
            jobsEnded = false
        }
    }

    /// The connections served at once: ``connectionLimit``, or fewer when RLIMIT_NOFILE does not
    /// leave descriptors for that many; 0 when not running.
    var servedConnectionLimit: Int {
        lock.withLock { running != nil ? servedLimit : 0 }
    }

    /// Connections open, those beyond the limit included (for tests).
    var openConnections: Int {
        lock.withLock { open }
    }

    /// Requests handed to a handler and not finished (for tests that prove nothing is left behind).
    var openRequests: Int {
        lock.withLock { answering }
    }

    // MARK: - Accepting

    /// Sets the limits to fit the descriptors: the soft RLIMIT_NOFILE is raised (up to the hard
    /// one) when the connections and the reserve need more; when even the hard one is short, the
    /// connections share what the reserve leaves (half the descriptors at least), a fifth of them
    /// beyond the limit. Inside the lock.
    private func fitDescriptors() {
        servedLimit = max(1, connectionLimit)
        overflowLimit = Self.overflowConnections
        var limit = rlimit()
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        guard getrlimit(resource, &limit) == 0, limit.rlim_cur != rlim_t.max else { return }
        let needed = rlim_t(servedLimit + Self.overflowConnections + Self.descriptorReserve)
        if limit.rlim_cur < needed {
            var raised = limit
            raised.rlim_cur = limit.rlim_max == rlim_t.max || limit.rlim_max > needed ? needed : limit.rlim_max
            if setrlimit(resource, &raised) == 0 { limit.rlim_cur = raised.rlim_cur }
        }
        guard limit.rlim_cur < needed else { return }
        let reserve = rlim_t(Self.descriptorReserve)
        let left = Int(limit.rlim_cur > 2 * reserve ? limit.rlim_cur - reserve : limit.rlim_cur / 2)
        overflowLimit = min(left / 5, Self.overflowConnections)
        servedLimit = left > overflowLimit + 1 ? left - overflowLimit : 1
    }

    /// The accepting thread: accepts only while there is room (the clients beyond wait in the
    /// listen backlog, costing nothing here), and waits when descriptors run out instead of
    /// trying again at once.
    private func accept(_ running: Running) {
        while true {
            let go = lock.withLock { () -> Bool in
                while !stopping && handedOver >= servedLimit + overflowLimit {
                    acceptorWaits = true
                    lock.wait()
                    acceptorWaits = false
                }
                return !stopping
            }
            guard go else { return }
            var descriptors = [
                pollfd(fd: running.listener, events: Int16(POLLIN), revents: 0),
                pollfd(fd: running.acceptorWake.read, events: Int16(POLLIN), revents: 0),
            ]
            guard poll(&descriptors, 2, -1) >= 0 else { continue }
            if descriptors[1].revents != 0 { return }
            let client = Glibc.accept(running.listener, nil, nil)
            guard client >= 0 else {
                if [EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED].contains(errno) { continue }
                // Out of descriptors (or memory): the connection stays queued; try again when one
                // of ours closes, or after a while, since the shortage may be elsewhere.
                lock.withLock {
                    guard !stopping else { return }
                    acceptorWaits = true
                    _ = lock.wait(until: .after(.milliseconds(250)))
                    acceptorWaits = false
                }
                continue
            }
            _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            lock.withLock { handedOver += 1 }
            if fakeapns_http_add_connection(running.server, client) == 0 {
                // libmicrohttpd closed it without starting it.
                lock.withLock { handedOver -= 1 }
            }
        }
    }

    // MARK: - Answering

    /// The handler threads' loop.
    private func runJobs() {
        while true {
            let job: (@Sendable () -> Void)? = jobsLock.withLock {
                while jobs.isEmpty && !jobsEnded { jobsLock.wait() }
                return jobs.isEmpty ? nil : jobs.removeFirst()
            }
            guard let job else { return }
            job()
        }
    }

    /// A complete request, on the polling thread.
    private func received(_ request: HTTPRequest, exchange: Exchange) {
        guard let handler = lock.withLock({ self.handler }) else { return }
        switch handler(request) {
        case .response(let response):
            answer(exchange, response)
        case .handlerThread(let make):
            jobsLock.withLock {
                jobs.append { [self] in answer(exchange, make()) }
                jobsLock.broadcast()
            }
        case .waiting(let wait):
            let task = Task { [self] in answer(exchange, await wait()) }
            let watching = lock.withLock { () -> Bool in
                guard unanswered[exchange.id] != nil, !stopping else { return false }
                exchange.wait = task
                watched[exchange.id] = exchange
                return true
            }
            if watching, let running = lock.withLock({ running }) { running.watcherWake.signal() }
        }
    }

    /// Answers once; an answer that carries something taken for its client and finds the client
    /// gone hands it back instead.
    private func answer(_ exchange: Exchange, _ response: HTTPResponse) {
        let answering = lock.withLock { () -> Bool in
            guard unanswered.removeValue(forKey: exchange.id) != nil else { return false }
            _ = watched.removeValue(forKey: exchange.id)
            callsIntoServer += 1
            return true
        }
        defer {
            lock.withLock {
                callsIntoServer -= 1
                if stopping { lock.broadcast() }
            }
        }
        guard answering else {
            response.undelivered?()
            return
        }
        if let undelivered = response.undelivered, Self.peerClosed(exchange.socket) {
            undelivered()
            fakeapns_http_answer(exchange.request, 0, nil, nil)
            return
        }
        guard let made = Self.make(response) else {
            fakeapns_http_answer(exchange.request, 0, nil, nil)
            return
        }
        let token = response.undelivered.map { Unmanaged.passRetained(Undelivered($0)).toOpaque() }
        fakeapns_http_answer(exchange.request, UInt32(clamping: response.status), made, token)
    }

    /// The libmicrohttpd response for `response`; nil when it could not be made.
    private static func make(_ response: HTTPResponse) -> OpaquePointer? {
        let made: OpaquePointer?
        if let stream = response.stream {
            let context = Unmanaged.passRetained(stream).toOpaque()
            made = MHD_create_response_from_callback(
                UInt64.max, streamBlockSize,
                { context, _, buffer, capacity in
                    guard let context, let buffer else { return -1 }
                    return Unmanaged<HTTPBodyStream>.fromOpaque(context).takeUnretainedValue()
                        .read(into: buffer, capacity: capacity)
                }, context, { Unmanaged<HTTPBodyStream>.fromOpaque($0!).release() })
            if made == nil { Unmanaged<HTTPBodyStream>.fromOpaque(context).release() }
        } else {
            made = response.body.withUnsafeBytes {
                MHD_create_response_from_buffer($0.count, UnsafeMutableRawPointer(mutating: $0.baseAddress), .RESPMEM_MUST_COPY)
            }
        }
        guard let made else { return nil }
        var headers = [(name: "Cache-Control", value: "no-store")] + response.headers
        if let contentType = response.contentType { headers.append(("Content-Type", contentType)) }
        if let allow = response.allow { headers.append(("Allow", allow)) }
        for header in headers where MHD_add_response_header(made, header.name, header.value) != .YES {
            MHD_destroy_response(made)
            return nil
        }
        return made
    }

    /// What an answer's token holds until the answer leaves or fails.
    private final class Undelivered {
        let action: @Sendable () -> Void
        init(_ action: @escaping @Sendable () -> Void) { self.action = action }
    }

    private static func peerClosed(_ socket: Int32) -> Bool {
        var descriptor = pollfd(fd: socket, events: fakeapns_http_peer_closed_events(), revents: 0)
        return poll(&descriptor, 1, 0) > 0 && descriptor.revents & fakeapns_http_peer_closed_events() != 0
    }

    // MARK: - Watching waits

    /// The watcher's loop: polls the sockets of the waiting requests (libmicrohttpd does not
    /// while they are suspended) and cancels the wait of a client that closed or reset its
    /// connection, so that it takes nothing nobody will read.
    private func watch(_ running: Running) {
        let closedEvents = fakeapns_http_peer_closed_events()
        while true {
            let waiting: [Exchange]? = lock.withLock { stopping ? nil : Array(watched.values) }
            guard let waiting else { return }
            var descriptors = [pollfd(fd: running.watcherWake.read, events: Int16(POLLIN), revents: 0)]
            descriptors += waiting.map { pollfd(fd: $0.socket, events: closedEvents, revents: 0) }
            guard poll(&descriptors, nfds_t(descriptors.count), -1) > 0 else { continue }
            if descriptors[0].revents != 0 { running.watcherWake.drain() }
            let gone: [Task<Void, Never>] = lock.withLock {
                zip(waiting, descriptors.dropFirst()).compactMap { exchange, descriptor in
                    guard descriptor.revents & closedEvents != 0 else { return nil }
                    return watched.removeValue(forKey: exchange.id)?.wait
                }
            }
            gone.forEach { $0.cancel() }
        }
    }

    // MARK: - C callbacks

    private var callbacks: fakeapns_http_callbacks {
        fakeapns_http_callbacks(
            context: Unmanaged.passUnretained(self).toOpaque(),
            request: { context, connection, request, method, target, body, length, tooLarge, beyondLimit in
                let server = Unmanaged<HTTPServer>.fromOpaque(context!).takeUnretainedValue()
                guard let connection, let request, let method, let target else { return }
                let bytes = body.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) } ?? []
                var decoded = HTTPRequest(
                    method: String(cString: method), target: String(cString: target),
                    headers: HTTPServer.headers(of: connection), body: bytes, bodyTooLarge: tooLarge != 0)
                decoded.beyondConnectionLimit = beyondLimit != 0
                let exchange = server.lock.withLock { () -> Exchange? in
                    server.answering += 1 // until `finished`
                    guard !server.stopping else { return nil }
                    server.lastID += 1
                    let exchange = Exchange(id: server.lastID, request: request, socket: fakeapns_http_socket(connection))
                    server.unanswered[exchange.id] = exchange
                    return exchange
                }
                // A request that comes while the server stops is closed unanswered.
                guard let exchange else { return _ = fakeapns_http_answer(request, 0, nil, nil) }
                server.received(decoded, exchange: exchange)
            },
            finished: { context, token, delivered in
                let server = Unmanaged<HTTPServer>.fromOpaque(context!).takeUnretainedValue()
                if let token {
                    let undelivered = Unmanaged<Undelivered>.fromOpaque(token).takeRetainedValue()
                    if delivered == 0 { undelivered.action() }
                }
                server.lock.withLock {
                    server.answering -= 1
                    if server.stopping { server.lock.broadcast() }
                }
            },
            connection: { context, started in
                let server = Unmanaged<HTTPServer>.fromOpaque(context!).takeUnretainedValue()
                return server.lock.withLock {
                    if started != 0 {
                        server.open += 1
                        return server.open > server.servedLimit ? 1 : 0
                    }
                    server.open -= 1
                    server.handedOver -= 1
                    if server.acceptorWaits { server.lock.broadcast() }
                    return 0
                }
            })
    }

    private final class HeaderList {
        var headers: [(name: String, value: String)] = []
    }

    private static func headers(of connection: OpaquePointer) -> [(name: String, value: String)] {
        let list = HeaderList()
        withExtendedLifetime(list) {
            _ = MHD_get_connection_values(connection, .HEADER_KIND, { context, _, name, value in
                guard let context, let name else { return .YES }
                let list = Unmanaged<HeaderList>.fromOpaque(context).takeUnretainedValue()
                list.headers.append((String(cString: name), value.map { String(cString: $0) } ?? ""))
                return .YES
            }, Unmanaged.passUnretained(list).toOpaque())
        }
        return list.headers
    }
}
