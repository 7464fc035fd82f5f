internal import COpenSSLShims
internal import COpenSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// One TLS connection over a blocking socket. Only the thread that owns it reads, writes and
/// closes; any thread may `interrupt()` it, which wakes a blocked read or handshake.
///
/// A plaintext stream (``init(plaintextSocket:)``, for the plaintext listener) reads and writes
/// the socket as it is: it has no handshake, no certificate and no protocol version, and the
/// same reads, timeouts and writes as a TLS one.
final class TLSStream: @unchecked Sendable {
    let socket: Int32
    /// The TLS state; nil for a plaintext stream.
    private let ssl: OpaquePointer?
    private var closed = false

    /// Whether bytes go through TLS (false: a plaintext stream).
    var isTLS: Bool { ssl != nil }

    /// Wraps an accepted socket that speaks no TLS.
    init(plaintextSocket socket: Int32) {
        self.socket = socket
        self.ssl = nil
    }

    /// Wraps an accepted socket for the server side of a handshake.
    init(acceptedSocket socket: Int32, context: TLSContext) throws {
        guard let ssl = SSL_new(context.context) else {
            throw TLSError.fromErrorQueue("creating a connection")
        }
        self.socket = socket
        self.ssl = ssl
        SSL_set_fd(ssl, socket)
        SSL_set_accept_state(ssl)
    }

    /// Wraps a connected socket for the client side of a handshake.
    init(connectedSocket socket: Int32, context: TLSContext, serverName: String?) throws {
        guard let ssl = SSL_new(context.context) else {
            throw TLSError.fromErrorQueue("creating a connection")
        }
        self.socket = socket
        self.ssl = ssl
        SSL_set_fd(ssl, socket)
        SSL_set_connect_state(ssl)
        if let serverName, !serverName.isEmpty, serverName.first?.isNumber == false, !serverName.contains(":") {
            _ = fakeapns_ssl_set_host_name(ssl, serverName)
            _ = SSL_set1_host(ssl, serverName)
        }
    }

    deinit {
        close()
        if let ssl { SSL_free(ssl) }
    }

    /// Runs the handshake to its end (nothing to do on a plaintext stream).
    func handshake() throws {
        guard let ssl else { return }
        TLSError.clearErrorQueue()
        let result = SSL_do_handshake(ssl)
        if result != 1 { throw handshakeError(result) }
    }

    /// Runs the handshake to its end, giving up after `timeout`. The socket is non-blocking
    /// meanwhile, so the limit holds for the whole handshake, also against a client that sends
    /// it a byte at a time.
    func handshake(within timeout: Duration) throws {
        guard let ssl else { return }
        let deadline = ContinuousClock.now + timeout
        try Socket.withNonBlocking(socket) {
            while true {
                TLSError.clearErrorQueue()
                let result = SSL_do_handshake(ssl)
                if result == 1 { return }
                let events: Int32
                switch SSL_get_error(ssl, result) {
                case SSL_ERROR_WANT_READ: events = POLLIN
                case SSL_ERROR_WANT_WRITE: events = POLLOUT
                default: throw handshakeError(result)
                }
                guard wait(for: Int16(events), until: deadline) else {
                    throw TLSError(
                        operation: "handshake",
                        details: "the client did not finish the handshake within \(timeout.secondsText) s")
                }
            }
        }
    }

    private func handshakeError(_ result: Int32) -> TLSError {
        guard let ssl else { return TLSError(operation: "handshake", details: "no TLS") }
        let reason = fakeapns_ssl_verify_error(ssl).map { String(cString: $0) } ?? ""
        return TLSError.fromErrorQueue("handshake", fallback: reason.isEmpty ? describe(SSL_get_error(ssl, result)) : reason)
    }

    /// Waits until the socket is ready for `events`, or `deadline` (nil: no limit) passes;
    /// false when it passed first. A hang-up or an error counts as ready: the next call
    /// reports it.
    private func wait(for events: Int16, until deadline: ContinuousClock.Instant?) -> Bool {
        var descriptor = pollfd(fd: socket, events: events, revents: 0)
        while true {
            var milliseconds: Int32 = -1
            if let deadline {
                let remaining = max(deadline - ContinuousClock.now, .zero)
                milliseconds = Int32(min((remaining / .milliseconds(1)).rounded(.up), Double(Int32.max)))
            }
            let ready = poll(&descriptor, 1, milliseconds)
            if ready > 0 { return true }
            if ready < 0 && errno != EINTR { return true }
            if ready == 0, let deadline, ContinuousClock.now >= deadline { return false }
        }
    }

    /// Reads what is available, up to the buffer's size. Returns 0 at the end of the stream
    /// (close_notify, or a peer closing without one).
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        guard let ssl else {
            switch try plainReceive(into: buffer) {
            case .bytes(let count): return count
            case .end: return 0
            case .quiet: throw SocketError("reading: no byte came within the receive timeout")
            }
        }
        let result = SSL_read(ssl, base, Int32(clamping: buffer.count))
        if result > 0 { return Int(result) }
        let error = SSL_get_error(ssl, result)
        if error == SSL_ERROR_ZERO_RETURN { return 0 }
        if error == SSL_ERROR_SYSCALL && ERR_peek_error() == 0 { return 0 }
        throw TLSError.fromErrorQueue("reading", fallback: describe(error))
    }

    // MARK: - Server reads

    /// How ``receive(into:)`` ended.
    enum Received: Equatable {
        /// This many bytes of application data arrived.
        case bytes(Int)
        /// The peer ended the stream (close_notify, or a close without it).
        case end
        /// No byte came for the socket's receive timeout (``Socket/setTimeout(_:_:_:)``),
        /// between records or inside one; the connection is still open.
        case quiet
    }

    /// Reads what is available, up to the buffer's size, blocking at most the socket's receive
    /// timeout for each wait.
    func receive(into buffer: UnsafeMutableRawBufferPointer) throws -> Received {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return .quiet }
        guard let ssl else { return try plainReceive(into: buffer) }
        let result = SSL_read(ssl, base, Int32(clamping: buffer.count))
        if result > 0 { return .bytes(Int(result)) }
        let error = SSL_get_error(ssl, result)
        switch error {
        case SSL_ERROR_ZERO_RETURN:
            return .end
        case SSL_ERROR_SYSCALL where ERR_peek_error() == 0:
            return .end
        case SSL_ERROR_WANT_READ:
            return .quiet
        default:
            throw TLSError.fromErrorQueue("reading", fallback: describe(error))
        }
    }

    /// ``receive(into:)`` of a plaintext stream: the socket's own read.
    private func plainReceive(into buffer: UnsafeMutableRawBufferPointer) throws -> Received {
        while true {
            let result = Glibc.read(socket, buffer.baseAddress, buffer.count)
            if result > 0 { return .bytes(result) }
            if result == 0 { return .end }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .quiet
            case ECONNRESET, ENOTCONN, EPIPE: return .end
            default: throw SocketError("reading")
            }
        }
    }

    /// Reads, without waiting, what OpenSSL read ahead and the socket holds, up to the
    /// buffer's size; nil when a wait would be needed (or the stream ended or failed: the next
    /// ``receive(into:)`` says so). Only between ``withoutWaiting(_:)``'s brackets.
    func receiveReadAhead(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        guard let base = buffer.baseAddress, buffer.count > 0, holdsReadAhead, let ssl else { return nil }
        let result = SSL_read(ssl, base, Int32(clamping: buffer.count))
        return result > 0 ? Int(result) : nil
    }

    /// Runs `body` with the socket non-blocking: for ``receiveReadAhead(into:)``.
    func withoutWaiting<T>(_ body: () throws -> T) rethrows -> T {
        try Socket.withNonBlocking(socket, body)
    }

    /// Whether bytes OpenSSL read ahead wait to be decrypted: whole records, or part of one.
    /// After a read found no whole record, that is part of a record waiting for the rest.
    var holdsReadAhead: Bool {
        guard let ssl else { return false }
        return SSL_has_pending(ssl) == 1
    }

    /// Frees OpenSSL's read and write buffers of this connection when they hold nothing: a
    /// connection keeps them while busy and gives them back when it goes quiet; the next read
    /// or write allocates them again.
    func releaseBuffers() {
        guard let ssl else { return }
        _ = SSL_free_buffers(ssl)
    }

    /// This connection's part in ``QuickClientPolling`` (see
    /// ``TLSListener/Connection/read(into:insideFrame:)``). Only the owning thread uses it.
    var polling = QuickClientPolling.State()

    /// Polls the socket, without sleeping, until it is readable (the end of the stream
    /// included) or the monotonic clock reaches `end` (nanoseconds); false when nothing came.
    func pollUntilReadable(until end: UInt64) -> Bool {
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        repeat {
            if poll(&descriptor, 1, 0) != 0 { return true }
        } while monotonicNanoseconds() < end
        return false
    }

    /// Waits until the socket is readable (the end of the stream included), at most `timeout`
    /// (nil: no limit); false when nothing came.
    func waitUntilReadable(atMost timeout: Duration?) -> Bool {
        wait(for: Int16(POLLIN), until: timeout.map { ContinuousClock.now + $0 })
    }

    /// Writes all of `bytes`.
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let ssl else { return try plainWrite(bytes) }
        var offset = 0
        while offset < bytes.count {
            let result = SSL_write(ssl, bytes.baseAddress! + offset, Int32(clamping: bytes.count - offset))
            if result <= 0 {
                throw TLSError.fromErrorQueue("writing", fallback: describe(SSL_get_error(ssl, result)))
            }
            offset += Int(result)
        }
    }

    /// ``write(_:)-(UnsafeRawBufferPointer)`` of a plaintext stream: the socket's own send,
    /// without SIGPIPE.
    private func plainWrite(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let result = send(socket, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if result < 0 {
                if errno == EINTR { continue }
                throw SocketError("writing")
            }
            offset += result
        }
    }

    /// Writes all of `bytes`.
    func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    /// The peer's certificate, verified (or the connection would not exist), as the project
    /// records it; nil when the peer sent none.
    func peerCertificate() -> ClientCertificateInfo? {
        guard let ssl, let certificate = SSL_get1_peer_certificate(ssl) else { return nil }
        defer { X509_free(certificate) }
        var buffer = [CChar](repeating: 0, count: 4096)
        let subjectLength = buffer.withUnsafeMutableBufferPointer {
            fakeapns_x509_subject_rfc2253(certificate, $0.baseAddress, Int32($0.count))
        }
        let subject = subjectLength > 0 ? Self.string(buffer, Int(subjectLength)) : ""
        let uidLength = buffer.withUnsafeMutableBufferPointer {
            fakeapns_x509_subject_uid(certificate, $0.baseAddress, Int32($0.count))
        }
        let topic = uidLength > 0 ? Self.string(buffer, Int(uidLength)) : nil
        var topics = topic.map { [$0] } ?? []
        for listed in Self.extensionValue(certificate, oid: "1.2.840.113635.100.6.3.6")
            .flatMap({ CertificateTopics.parse(extensionValue: $0) }) ?? [] where !topics.contains(listed.topic) {
            topics.append(listed.topic)
        }
        var environments: Set<PushEnvironment> = []
        if Self.extensionValue(certificate, oid: "1.2.840.113635.100.6.3.1") != nil { environments.insert(.sandbox) }
        if Self.extensionValue(certificate, oid: "1.2.840.113635.100.6.3.2") != nil { environments.insert(.production) }
        return ClientCertificateInfo(subject: subject, topic: topic, topics: topics, environments: environments)
    }

    /// The content of an extension's OCTET STRING, or nil when the certificate lacks it.
    private static func extensionValue(_ certificate: OpaquePointer, oid: String) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 8192)
        let length = buffer.withUnsafeMutableBufferPointer {
            fakeapns_x509_extension_value(certificate, oid, $0.baseAddress, Int32($0.count))
        }
        return length > 0 ? Array(buffer[0..<Int(length)]) : nil
    }

    /// Asks for ALPN "h2" (client side, before the handshake).
    func requestHTTP2() {
        guard let ssl else { return }
        _ = fakeapns_ssl_request_h2(ssl)
    }

    /// The protocol agreed with ALPN ("h2"), or nil when none was.
    var negotiatedProtocol: String? {
        guard let ssl else { return nil }
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// The negotiated protocol version, e.g. "TLSv1.3"; empty on a plaintext stream.
    var protocolVersion: String {
        guard let ssl else { return "" }
        return String(cString: SSL_get_version(ssl))
    }

    /// Ends reading, from any thread: reads return what the client had sent, then the end of
    /// the stream (a blocked read wakes). Writes still work, so the connection can say goodbye.
    func stopReading() {
        Glibc.shutdown(socket, Int32(SHUT_RD))
    }

    /// Wakes a blocked read, write or handshake from any thread; they then fail or end.
    func interrupt() {
        Glibc.shutdown(socket, Int32(SHUT_RDWR))
    }

    /// Sends close_notify, when the handshake finished and the socket is still open.
    /// Once only: a second `SSL_shutdown` would wait for the peer's close_notify.
    func sendCloseNotify() {
        guard !closed, let ssl, SSL_is_init_finished(ssl) == 1, !hasSentCloseNotify else { return }
        _ = SSL_shutdown(ssl)
    }

    /// Sends close_notify (when `notifyPeer`) and closes the socket.
    func close(notifyPeer: Bool = true) {
        guard !closed else { return }
        if notifyPeer { sendCloseNotify() }
        closed = true
        QuickClientPolling.stopWorking(&polling)
        Glibc.close(socket)
    }

    /// Closes the socket with a TCP reset instead of an orderly close, the way a crashed
    /// peer looks.
    func abort() {
        guard !closed else { return }
        QuickClientPolling.stopWorking(&polling)
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(socket, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        closed = true
        Glibc.close(socket)
    }

    private static func string(_ buffer: [CChar], _ length: Int) -> String {
        String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func describe(_ error: Int32) -> String {
        switch error {
        case SSL_ERROR_ZERO_RETURN: return "the peer closed the connection"
        case SSL_ERROR_SYSCALL:
            let code = errno
            return code == 0 ? "the connection ended unexpectedly" : String(cString: strerror(code))
        case SSL_ERROR_SSL: return "protocol error"
        default: return "OpenSSL error \(error)"
        }
    }

    // MARK: - Reading with a deadline

    /// How ``read(into:until:)`` ended.
    enum DeadlineRead: Equatable {
        /// This many bytes arrived.
        case bytes(Int)
        /// The peer sent close_notify: it ended its side cleanly.
        case closeNotify
        /// The peer closed without close_notify, or reset the connection; the words say which.
        case abruptEnd(String)
        /// Nothing arrived before the deadline; the connection is still open.
        case timedOut
    }

    /// A fatal alert the peer sent, in OpenSSL's words ("tlsv13 alert certificate required").
    struct PeerAlert: Error, Equatable {
        let reason: String
    }

    /// Reads what is available, waiting until `deadline` at most, and tells a clean end
    /// (close_notify) from an abrupt one (a close without it, or a reset), which ``read(into:)``
    /// does not. From the first call on, this connection no longer takes a close without
    /// close_notify for one.
    ///
    /// - Throws: ``PeerAlert`` when the peer sent a fatal alert, such as a server refusing the
    ///   client's certificate after a TLS 1.3 handshake the client saw complete; ``TLSError``
    ///   for anything else OpenSSL reports.
    func read(into buffer: UnsafeMutableRawBufferPointer, until deadline: ContinuousClock.Instant) throws
        -> DeadlineRead
    {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return .bytes(0) }
        guard let ssl else { throw TLSError(operation: "reading", details: "the stream has no TLS") }
        fakeapns_ssl_require_close_notify(ssl)
        var waitFor = Int16(POLLIN)
        // Records OpenSSL has already read (read-ahead) or decrypted do not show on the
        // socket: the first read tries them; after a "want read" only the socket can help.
        var mayHoldRecords = holdsReadAhead
        while true {
            if !mayHoldRecords && !wait(for: waitFor, until: deadline) { return .timedOut }
            mayHoldRecords = false
            // Non-blocking for this one read: a readable socket may hold only part of a record,
            // or a TLS 1.3 session ticket and no data, and a blocking read would wait past the
            // deadline.
            TLSError.clearErrorQueue()
            let (result, code, error) = Socket.withNonBlocking(socket) {
                let result = SSL_read(ssl, base, Int32(clamping: buffer.count))
                let code = errno
                return (result, code, SSL_get_error(ssl, result))
            }
            if result > 0 { return .bytes(Int(result)) }
            switch error {
            case SSL_ERROR_WANT_READ:
                waitFor = Int16(POLLIN)
            case SSL_ERROR_WANT_WRITE:
                waitFor = Int16(POLLOUT)
            case SSL_ERROR_ZERO_RETURN:
                return .closeNotify
            case SSL_ERROR_SYSCALL where ERR_peek_error() == 0:
                return .abruptEnd(
                    code == 0 ? "the peer closed the connection without close_notify" : String(cString: strerror(code)))
            default:
                let first = ERR_peek_error()
                if ERR_GET_LIB(first) == ERR_LIB_SSL {
                    if ERR_GET_REASON(first) == SSL_R_UNEXPECTED_EOF_WHILE_READING {
                        TLSError.clearErrorQueue()
                        return .abruptEnd("the peer closed the connection without close_notify")
                    }
                    if ERR_GET_REASON(first) >= SSL_AD_REASON_OFFSET, let words = ERR_reason_error_string(first) {
                        TLSError.clearErrorQueue()
                        throw PeerAlert(reason: String(cString: words))
                    }
                }
                throw TLSError.fromErrorQueue("reading", fallback: describe(error))
            }
        }
    }

    /// Whether close_notify went out. A second `SSL_shutdown` would wait for the peer's.
    var hasSentCloseNotify: Bool {
        guard let ssl else { return false }
        return SSL_get_shutdown(ssl) & SSL_SENT_SHUTDOWN != 0
    }
}
