internal import CPOSIXShims
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// Accepts TLS connections on one address and runs each on its own thread, so a client that
/// never handshakes, stalls mid-frame or floods garbage holds only its own thread. Without a
/// TLS context it accepts plaintext connections the same way (the plaintext listener).
///
/// A connection the listener cannot serve (its `ConnectionBudget` is spent, or no descriptor,
/// thread or TLS state can be had for it) is accepted and closed at once, so its client sees
/// the end instead of waiting in the backlog, and costs no other connection anything.
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
    /// nil for a plaintext listener.
    private let context: TLSContext?
    private let connectionIDs: ConnectionCounter
    private let budget: ConnectionBudget
    /// This listener's number in `budget`.
    private let budgetSlot: Int
    let timeouts: ConnectionTimeouts
    private let handler: @Sendable (Connection) -> Void
    private let onHandshakeFailure: @Sendable (String, TLSError) -> Void
    private let onRefusal: @Sendable (String, ConnectionRefusal) -> Void
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
    /// The most connections open at once since memory was last given back.
    private var peakSinceRelease = 0
    private var drainDeadline: Deadline?
    private var stopDeadline: Deadline?
    /// Async stops waiting for the last connection to end.
    private var endWaiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    private var lastEndWaiter: UInt64 = 0
    private var boundPort = 0

    /// How long a stopping listener goes on reading from a client that keeps sending.
    static let drainTime: Duration = .milliseconds(300)
    /// How long a stopping listener waits for its connections to end before cutting them.
    static let stopGrace: Duration = .seconds(1)

    init(
        name: String, host: String, port: Int, context: TLSContext?, connectionIDs: ConnectionCounter,
        budget: ConnectionBudget,
        timeouts: ConnectionTimeouts = ConnectionTimeouts(),
        onHandshakeFailure: @escaping @Sendable (String, TLSError) -> Void = { _, _ in },
        onRefusal: @escaping @Sendable (String, ConnectionRefusal) -> Void = { _, _ in },
        onConnection: @escaping @Sendable (ConnectionInfo, _ opened: Bool) -> Void = { _, _ in },
        handler: @escaping @Sendable (Connection) -> Void
    ) {
        self.name = name
        self.host = host
        self.requestedPort = port
        self.context = context
        self.connectionIDs = connectionIDs
        self.budget = budget
        self.budgetSlot = budget.join()
        self.timeouts = timeouts
        self.onHandshakeFailure = onHandshakeFailure
        self.onRefusal = onRefusal
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
        // Non-blocking, so an accept that finds the backlog empty (the client left) returns.
        Socket.setNonBlocking(socket)
        let wake = fakeapns_eventfd()
        guard wake >= 0 else {
            close(socket)
            throw SocketError("creating the listener's wake-up descriptor")
        }
        let spare = SpareDescriptor.copy(of: wake)
        guard spare >= 0 else {
            let error = SocketError("opening the \(name) listener's spare descriptor")
            [socket, wake].forEach { close($0) }
            throw error
        }
        try lock.withLock {
            do {
                acceptThread = try OSThread(name: "\(name)-accept") { [self] in
                    acceptLoop(socket: socket, wake: wake, spare: spare)
                }
            } catch {
                [socket, wake, spare].forEach { close($0) }
                throw error
            }
            listenSocket = socket
            wakeSocket = wake
            boundPort = port
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

    /// ``finishStop()`` for async code: the task is suspended, not a thread blocked, while the
    /// connections end (up to `stopGrace`); only the joins of threads already ending block.
    func finishStop() async {
        if let stopDeadline = lock.withLock({ stopDeadline }) {
            await connectionsEnd(by: stopDeadline)
        }
        lock.withLock {
            for stream in streams.values { stream.interrupt() }
        }
        await connectionsEnd(by: nil)
        waitForConnections()
    }

    /// Suspends until no connection is open, or `deadline` passes.
    private func connectionsEnd(by deadline: Deadline?) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let id: UInt64? = lock.withLock {
                if streams.isEmpty || deadline?.hasPassed == true { return nil }
                lastEndWaiter += 1
                endWaiters[lastEndWaiter] = continuation
                return lastEndWaiter
            }
            guard let id else { return continuation.resume() }
            guard let deadline else { return }
            // A timeout that comes after the connections ended finds no waiter and does nothing.
            DeadlineTimer.shared.schedule(at: deadline) { [weak self] in
                guard let self else { return }
                lock.withLock { endWaiters.removeValue(forKey: id) }?.resume()
            }
        }
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

    /// Accepts until woken by `beginStop()`. `spare` is a descriptor held in reserve (see
    /// `SpareDescriptor`), a copy of `wake`.
    private func acceptLoop(socket: Int32, wake: Int32, spare: Int32) {
        var spare = SpareDescriptor(spare, copying: wake)
        var descriptors = [
            pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
            pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
        ]
        // While accepting fails for want of resources: milliseconds to wait before trying again,
        // doubled at each failure, so a starved listener neither spins nor sleeps for long.
        var backoff: Int32 = 0
        while true {
            descriptors[0].revents = 0
            descriptors[1].revents = 0
            if backoff > 0 {
                if poll(&descriptors, 1, backoff) > 0 { return }
            }
            let ready = poll(&descriptors, 2, -1)
            if ready < 0 && errno == EINTR { continue }
            if descriptors[0].revents != 0 { return }
            guard descriptors[1].revents != 0 else { continue }
            if accept(from: socket, spare: &spare) {
                backoff = 0
            } else {
                backoff = min(max(backoff * 2, 10), 80)
            }
        }
    }

    /// Accepts one connection and starts it, or refuses it. False when accepting failed for
    /// want of resources (no descriptor, even the spare; no kernel memory), so the caller backs
    /// off.
    private func accept(from socket: Int32, spare: inout SpareDescriptor) -> Bool {
        let client = fakeapns_accept(socket)
        guard client >= 0 else {
            switch errno {
            case EMFILE, ENFILE:
                return refuseWithSpare(from: socket, spare: &spare, reason: String(cString: strerror(errno)))
            case ENOBUFS, ENOMEM:
                return false
            default:
                // The client left before it was accepted, or a signal: nothing is waiting.
                return true
            }
        }
        // Without its spare the listener could not take the next connection when descriptors
        // run out, and that one would wait in the backlog: so a spare lost to another thread
        // (see `refuseWithSpare`) comes first, and when no descriptor is left for it, this
        // connection's becomes the spare.
        guard spare.restore() else {
            refuse(client, .noDescriptor(String(cString: strerror(errno)))) { spare.close(replacing: $0) }
            return true
        }
        if let refusal = budget.admit(client, listener: budgetSlot) {
            refuse(client, refusal)
            return true
        }
        Socket.setNoDelay(client)
        let id = connectionIDs.next()
        let stream: TLSStream
        do {
            if let context {
                stream = try TLSStream(acceptedSocket: client, context: context)
            } else {
                stream = TLSStream(plaintextSocket: client)
            }
        } catch {
            budget.release(listener: budgetSlot)
            refuse(client, .noTLSState("\(error)"))
            return true
        }
        joinFinished()
        let failure = lock.withLock { () -> ThreadStartError? in
            do throws(ThreadStartError) {
                threads[id] = try OSThread(name: "\(name)-\(id)") { [self] in serve(stream, id: id) }
                streams[id] = stream
                return nil
            } catch {
                return error
            }
        }
        if let failure {
            budget.release(listener: budgetSlot)
            let peer = Socket.peerAddress(of: client)
            stream.close(notifyPeer: false)
            onRefusal(peer, .noThread(String(cString: strerror(failure.code))))
        }
        return true
    }

    /// With no descriptor left in the process: gives up the spare one to accept the connection
    /// waiting and close it. Another thread of the process may take the number between its
    /// release and the accept (a thread's first allocation reads the processor count from a
    /// file; a runtime opens its timer descriptor lazily), and hold it but a moment: so a lost
    /// number is sought again at once, a bounded number of times, before the caller backs off.
    /// False when every attempt found no descriptor.
    private func refuseWithSpare(from socket: Int32, spare: inout SpareDescriptor, reason: String) -> Bool {
        for _ in 0..<Self.spareAttempts {
            guard spare.restore() else {
                sched_yield()
                continue
            }
            spare.release()
            let client = fakeapns_accept(socket)
            let code = errno
            guard client >= 0 else {
                if code == EMFILE || code == ENFILE { continue }
                _ = spare.restore()
                return code != ENOBUFS && code != ENOMEM
            }
            refuse(client, .noDescriptor(reason)) { spare.close(replacing: $0) }
            return true
        }
        _ = spare.restore()
        return false
    }

    /// How many times a listener out of descriptors seeks a number for its spare and accepts
    /// with it before it backs off: each attempt is two or three system calls.
    private static let spareAttempts = 256

    /// Closes a connection just accepted with `closing` and reports why (the report may wait
    /// for the event log, so it comes last).
    private func refuse(_ client: Int32, _ refusal: ConnectionRefusal, closing: (Int32) -> Void = { close($0) }) {
        let peer = Socket.peerAddress(of: client)
        closing(client)
        onRefusal(peer, refusal)
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
                id: id, peer: peer, clientCertificate: stream.peerCertificate(), tlsVersion: stream.protocolVersion,
                transport: stream.isTLS ? .tls : .plaintext)
            onConnection(info, true)
            handler(Connection(stream: stream, info: info, listener: self))
            HeapReserve.release()
            stream.sendCloseNotify()
            onConnection(info, false)
        } catch let error as TLSError {
            if !isStopping { onHandshakeFailure(peer, error) }
        } catch {
        }
        let (burstEnded, stopsWaiting) = lock.withLock { () -> (Bool, [CheckedContinuation<Void, Never>]) in
            streams[id] = nil
            stream.close(notifyPeer: false)
            finished.append(id)
            lock.broadcast()
            guard streams.isEmpty, !endWaiters.isEmpty else { return (burstPassed(), []) }
            defer { endWaiters.removeAll() }
            return (burstPassed(), Array(endWaiters.values))
        }
        stopsWaiting.forEach { $0.resume() }
        budget.release(listener: budgetSlot)
        if burstEnded { MemoryRelease.freeHeap() }
    }

    /// Whether a burst of connections has just ended: at least `burstSize` were open at once
    /// since the last one, and three quarters of them have gone. Then the memory they held,
    /// free in the allocator's per-thread arenas, is given back to the system, so a flood
    /// leaves the process as small as it found it. With the lock held.
    private func burstPassed() -> Bool {
        peakSinceRelease = max(peakSinceRelease, streams.count + 1)
        guard peakSinceRelease >= Self.burstSize, streams.count <= peakSinceRelease / 4 else { return false }
        peakSinceRelease = streams.count
        return true
    }

    /// Connections at once that count as a burst worth giving memory back after.
    private static let burstSize = 128
}

/// A descriptor number a listener holds in reserve, so that with none left in the process it can
/// still take a waiting connection, only to close it, and its client learns at once instead of
/// waiting in the backlog. It is a copy of another descriptor (the listener's wake-up one): a
/// copy needs no open file of its own, so one can be had even when the system's file table is
/// full; and a connection taken with the spare's number is closed by copying over it, so the
/// number is never free for another thread to take before the spare holds it again.
private struct SpareDescriptor: ~Copyable {
    private let source: Int32
    private var number: Int32

    /// A new copy of `source`, or -1 when the process has no descriptor left.
    static func copy(of source: Int32) -> Int32 {
        fcntl(source, F_DUPFD_CLOEXEC, 0)
    }

    /// Takes `number` (a copy of `source`, or -1) in charge.
    init(_ number: Int32, copying source: Int32) {
        self.source = source
        self.number = number
    }

    deinit {
        if number >= 0 { Glibc.close(number) }
    }

    /// Holds a number again if it had lost its own. False (with `errno` saying why) when the
    /// process has none left.
    mutating func restore() -> Bool {
        if number < 0 { number = Self.copy(of: source) }
        return number >= 0
    }

    /// Frees the number for the one accept that follows.
    mutating func release() {
        Glibc.close(number)
        number = -1
    }

    /// Closes `client`, a connection accepted with the spare's number or the last one free, and
    /// keeps its number as the spare, which has none then.
    mutating func close(replacing client: Int32) {
        if fakeapns_duplicate_over(source, client) == client {
            number = client
        } else {
            Glibc.close(client)
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
