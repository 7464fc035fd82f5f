internal import CFakeAPNsShims
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Accepts TLS connections on one address and runs each on its own thread, so a client that
/// never handshakes, stalls mid-frame or floods garbage holds only its own thread.
///
/// Stopping closes the listening socket (the port is free at once), then lets connections end
/// the way Apple's servers did: their reads end once what the client had sent is read (a
/// client still sending is read for at most `drainTime`), while writes still work, so a
/// handler can decode everything received and say goodbye (binary: status 10; HTTP/2:
/// GOAWAY). Connections still open after `stopGrace` are cut; then every thread is joined.
final class TLSListener: @unchecked Sendable {
    /// What a connection handler gets: the stream, its record, and whether the listener is
    /// stopping (then an abrupt end is the server's doing, not the client's).
    struct Connection {
        let stream: TLSStream
        let info: ConnectionInfo
        let listener: TLSListener
    }

    let name: String
    private let host: String
    private let requestedPort: Int
    private let context: TLSContext
    private let connectionIDs: ConnectionCounter
    let timeouts: ConnectionTimeouts
    private let handler: @Sendable (Connection) -> Void
    private let onHandshakeFailure: @Sendable (String, TLSError) -> Void
    private let onConnection: @Sendable (ConnectionInfo, _ opened: Bool) -> Void

    private let lock = ConditionLock()
    // Protected by `lock`:
    private var listenSocket: Int32 = -1
    private var wakeSocket: Int32 = -1
    private var acceptThread: OSThread?
    private var streams: [Int: TLSStream] = [:]
    private var threads: [Int: OSThread] = [:]
    private var finished: [Int] = []
    private var stopping = false
    private var drainDeadline: Deadline?
    private var stopDeadline: Deadline?
    private var boundPort = 0

    /// How long a stopping listener goes on reading from a client that keeps sending.
    static let drainTime: Duration = .milliseconds(300)
    /// How long a stopping listener waits for its connections to end before cutting them.
    static let stopGrace: Duration = .seconds(1)

    init(
        name: String, host: String, port: Int, context: TLSContext, connectionIDs: ConnectionCounter,
        timeouts: ConnectionTimeouts = ConnectionTimeouts(),
        onHandshakeFailure: @escaping @Sendable (String, TLSError) -> Void = { _, _ in },
        onConnection: @escaping @Sendable (ConnectionInfo, _ opened: Bool) -> Void = { _, _ in },
        handler: @escaping @Sendable (Connection) -> Void
    ) {
        self.name = name
        self.host = host
        self.requestedPort = port
        self.context = context
        self.connectionIDs = connectionIDs
        self.timeouts = timeouts
        self.onHandshakeFailure = onHandshakeFailure
        self.onConnection = onConnection
        self.handler = handler
    }

    /// The bound port, once started.
    var port: Int { lock.withLock { boundPort } }

    /// Whether `stop()` has begun.
    var isStopping: Bool { lock.withLock { stopping } }

    /// Whether a connection should read on: until the listener stops, and then while it
    /// drains. A handler that finds it false stops reading and ends its connection.
    var mayKeepReading: Bool {
        lock.withLock { drainDeadline.map { !$0.hasPassed } ?? true }
    }

    /// How many connections are open.
    var openConnectionCount: Int { lock.withLock { streams.count } }

    /// Binds and starts accepting. Returns the bound port.
    func start() throws -> Int {
        let (socket, port) = try Socket.listen(host: host, port: requestedPort)
        let wake = fakeapns_eventfd()
        guard wake >= 0 else {
            close(socket)
            throw SocketError("creating the listener's wake-up descriptor")
        }
        lock.withLock {
            listenSocket = socket
            wakeSocket = wake
            boundPort = port
            acceptThread = OSThread(name: "\(name)-accept") { [self] in acceptLoop(socket: socket, wake: wake) }
        }
        return port
    }

    /// Stops accepting, lets every connection end (see the type's description) and waits for
    /// every thread. Safe to call more than once, and before `start()`.
    func stop() {
        beginStop()
        finishStop()
    }

    /// Closes the listening socket and ends every connection's reads; returns at once, so
    /// several listeners can drain side by side before `finishStop()`.
    func beginStop() {
        let accepting: OSThread? = lock.withLock {
            guard !stopping else { return nil }
            stopping = true
            drainDeadline = .after(Self.drainTime)
            stopDeadline = .after(Self.stopGrace)
            lock.broadcast()
            return acceptThread
        }
        guard let accepting else { return }
        var one: UInt64 = 1
        _ = lock.withLock { write(wakeSocket, &one, 8) }
        accepting.join()
        lock.withLock {
            close(listenSocket)
            close(wakeSocket)
            listenSocket = -1
            wakeSocket = -1
            for stream in streams.values { stream.stopReading() }
        }
    }

    /// Waits for the connections to end, cuts those still open after `stopGrace`, and joins
    /// every thread.
    func finishStop() {
        lock.withLock {
            if let stopDeadline {
                while !streams.isEmpty && lock.wait(until: stopDeadline) {}
            }
            for stream in streams.values { stream.interrupt() }
        }
        waitForConnections()
    }

    /// Waits `duration` on a connection's behalf (a fault delay); returns false at once when
    /// the listener stops meanwhile.
    func pause(_ duration: Duration) -> Bool {
        let deadline = Deadline.after(duration)
        return lock.withLock {
            while !stopping {
                if !lock.wait(until: deadline) { return true }
            }
            return false
        }
    }

    private func waitForConnections() {
        let remaining: [OSThread] = lock.withLock {
            while !streams.isEmpty { lock.wait() }
            let all = Array(threads.values)
            threads.removeAll()
            finished.removeAll()
            return all
        }
        remaining.forEach { $0.join() }
    }

    private func acceptLoop(socket: Int32, wake: Int32) {
        var descriptors = [
            pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            descriptors[0].revents = 0
            descriptors[1].revents = 0
            let ready = poll(&descriptors, 2, -1)
            if ready < 0 && errno == EINTR { continue }
            if descriptors[1].revents != 0 { return }
            guard descriptors[0].revents != 0 else { continue }
            let client = fakeapns_accept(socket)
            if client < 0 {
                if errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM {
                    // Out of descriptors: let connections end before accepting more.
                    var pause = timespec(tv_sec: 0, tv_nsec: 10_000_000)
                    nanosleep(&pause, nil)
                }
                continue
            }
            Socket.setNoDelay(client)
            let id = connectionIDs.next()
            let stream: TLSStream
            do {
                stream = try TLSStream(acceptedSocket: client, context: context)
            } catch {
                close(client)
                continue
            }
            joinFinished()
            lock.withLock {
                streams[id] = stream
                threads[id] = OSThread(name: "\(name)-\(id)") { [self] in serve(stream, id: id) }
            }
        }
    }

    private func joinFinished() {
        let done: [OSThread] = lock.withLock {
            let ids = finished
            finished.removeAll()
            return ids.compactMap { threads.removeValue(forKey: $0) }
        }
        done.forEach { $0.join() }
    }

    private func serve(_ stream: TLSStream, id: Int) {
        let peer = Socket.peerAddress(of: stream.socket)
        do {
            if let timeout = timeouts.handshake {
                try stream.handshake(within: timeout)
            } else {
                try stream.handshake()
            }
            // Bounds each blocking read (see TLSListener.Connection.read(into:insideFrame:)).
            Socket.setTimeout(stream.socket, SO_RCVTIMEO, timeouts.receive)
            let info = ConnectionInfo(
                id: id, peer: peer, clientCertificate: stream.peerCertificate(), tlsVersion: stream.protocolVersion)
            onConnection(info, true)
            handler(Connection(stream: stream, info: info, listener: self))
            stream.sendCloseNotify()
            onConnection(info, false)
        } catch let error as TLSError {
            if !isStopping { onHandshakeFailure(peer, error) }
        } catch {
        }
        lock.withLock {
            streams[id] = nil
            stream.close(notifyPeer: false)
            finished.append(id)
            lock.broadcast()
        }
    }
}

/// Numbers connections from 1, across every listener of one server.
final class ConnectionCounter: @unchecked Sendable {
    private let lock = ConditionLock()
    private var last = 0

    func next() -> Int {
        lock.withLock {
            last += 1
            return last
        }
    }
}
