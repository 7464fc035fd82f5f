internal import CNGHTTP2Shims
internal import CNGHTTP2

/// What an HTTP/2 session reports, one event at a time, on the thread that feeds it bytes.
protocol HTTP2SessionDelegate: AnyObject {
    /// A stream's header block begins (a request on a server, a response on a client).
    func streamBegan(_ stream: Int32)
    /// One header field of a stream's header block, as raw bytes valid during the call (a
    /// server turns into text only the fields it reads).
    func header(_ stream: Int32, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>)
    /// Body bytes of a stream.
    func data(_ stream: Int32, _ bytes: UnsafeRawBufferPointer)
    /// A complete header block arrived; `endsStream` when no body follows.
    func headersEnded(_ stream: Int32, endsStream: Bool)
    /// The peer finished sending on a stream (END_STREAM on HEADERS or DATA).
    func streamEnded(_ stream: Int32)
    /// The stream closed, normally or by RST_STREAM (`errorCode` non-zero).
    func streamClosed(_ stream: Int32, errorCode: UInt32)
    /// The peer sent GOAWAY.
    func goAwayReceived(lastStream: Int32, errorCode: UInt32, debugData: [UInt8])
    /// This side's GOAWAY left, whoever submitted it (the owner, or nghttp2 defending the
    /// connection): the peer's streams above `lastStream` are not processed.
    func goAwaySent(lastStream: Int32)
    /// A server's peer sent HEADERS on stream `stream`, not above `highest`, the highest it
    /// used, for a stream neither open nor reset by this side: not trailers but a request on
    /// an id it may not use (RFC 9113 §5.1.1), a connection error PROTOCOL_ERROR that nghttp2
    /// would ignore. The session reads nothing after it: `receive` throws.
    func oldStreamIDUsed(_ stream: Int32, highest: Int32)
    /// A plaintext connection's first bytes said which protocol it speaks.
    func transportChosen(_ transport: ConnectionTransport)
    /// A server's peer opened `stream` over the stream limit in force (``StreamLimit``); the
    /// session has queued RST_STREAM REFUSED_STREAM for it and reports nothing else of it.
    /// `pastAcknowledged`: over a limit the peer had acknowledged.
    func streamRefused(_ stream: Int32, pastAcknowledged: Bool)
    /// A server's peer opened `stream` after it had read this side's GOAWAY (it answered the
    /// PING sent right after it), which RFC 9113 §6.8 forbids; the stream is above the
    /// GOAWAY's last stream, so nghttp2 ignores it.
    func streamOpenedAfterGoAway(_ stream: Int32)
}

extension HTTP2SessionDelegate {
    func headersEnded(_ stream: Int32, endsStream: Bool) {}
    func goAwayReceived(lastStream: Int32, errorCode: UInt32, debugData: [UInt8]) {}
    func goAwaySent(lastStream: Int32) {}
    func oldStreamIDUsed(_ stream: Int32, highest: Int32) {}
    func transportChosen(_ transport: ConnectionTransport) {}
    func streamRefused(_ stream: Int32, pastAcknowledged: Bool) {}
    func streamOpenedAfterGoAway(_ stream: Int32) {}
}

/// An nghttp2 session (server or client side) in memory: bytes in with `receive`, bytes out
/// with `takeOutput`, events to the delegate. Not thread-safe: one connection thread owns it.
final class NGHTTP2Session: RequestFraming {
    private var session: OpaquePointer?
    /// Whom the session reports to, held strongly so that a callback reaches it without a
    /// reference count round trip (a dozen callbacks a request). That makes a cycle with an
    /// owner that holds the session: the owner drops the session when done, or passes a
    /// forwarder that holds it weakly.
    private let delegate: any HTTP2SessionDelegate

    /// Header names are lowercase on the wire and header values bounded; nghttp2 checks both.
    init(server: Bool, delegate: any HTTP2SessionDelegate) throws {
        self.delegate = delegate
        isServer = server
        let userData = Unmanaged.passUnretained(self).toOpaque()
        var created: OpaquePointer?
        let callbacks = Callbacks.shared.pointer
        let result = fakeapns_h2_session_new(&created, callbacks, userData, server ? 1 : 0)
        guard result == 0, let created else {
            throw HTTP2Error("creating an HTTP/2 session: \(String(cString: nghttp2_strerror(result)))")
        }
        session = created
    }

    /// Streams whose body the shim still holds: a stream that closes hands its body back, but
    /// one still open when the connection ends would keep it, so deleting the session frees
    /// what is left. Only answers and requests with a body are here (no accepted push's).
    private var streamsWithBody: Set<Int32> = []

    private let isServer: Bool
    /// A server's stream limit, as announced and acknowledged; this session enforces it.
    private(set) var streamLimit = StreamLimit()
    /// The peer's streams open now (their request began and they have not closed).
    private var openPeerStreams = 0
    /// The stream limits of SETTINGS frames queued and not yet written, oldest first: nghttp2
    /// is given no limit (it would end the connection over one), and the frame it writes gets
    /// the announced value in place of ``unlimitedStreams``.
    private var limitsToWrite: [UInt32] = []
    /// What nghttp2 is told a server's stream limit is: HTTP/2's initial value, none.
    private static let unlimitedStreams = UInt32.max
    /// Where a server's peer is in its byte stream: between frames or inside one.
    private var boundary = HTTP2FrameBoundary()
    /// The highest stream id a HEADERS frame of the peer named.
    private var highestPeerStream: Int32 = 0
    /// The streams this side reset last, oldest first once full: frames the peer sent before
    /// it saw the RST_STREAM, trailers among them, are ignored (RFC 9113 §5.1). More than the
    /// streams a peer may have open at once.
    private var resetStreams: [Int32] = []
    private var nextReset = 0
    private static let resetStreamMemory = 1024

    /// Whether HEADERS on `stream` may come, or the peer used an old stream id; called as the
    /// frame begins, before nghttp2 reads it. nghttp2 ignores HEADERS on a stream id below the
    /// highest it saw unless it still holds the stream, closed after END_STREAM (then it
    /// answers STREAM_CLOSED): a client that reuses an id would wait for an answer forever.
    fileprivate func headersBegin(_ stream: Int32, _ session: OpaquePointer?) -> Bool {
        if stream > highestPeerStream {
            highestPeerStream = stream
            if goAwayRead { delegate.streamOpenedAfterGoAway(stream) }
            return true
        }
        guard isServer, stream & 1 == 1, !Self.isOpen(stream, in: session), !resetStreams.contains(stream) else {
            return true
        }
        delegate.oldStreamIDUsed(stream, highest: highestPeerStream)
        return false
    }

    /// Whether a stream is open or half-closed: nghttp2 also finds streams that closed a
    /// moment ago, and idle ones a PRIORITY frame made.
    private static func isOpen(_ stream: Int32, in session: OpaquePointer?) -> Bool {
        guard let found = nghttp2_session_find_stream(session, stream) else { return false }
        let state = nghttp2_stream_get_state(found)
        return state != NGHTTP2_STREAM_STATE_CLOSED && state != NGHTTP2_STREAM_STATE_IDLE
    }

    fileprivate func resetSent(_ stream: Int32) {
        if resetStreams.count < Self.resetStreamMemory {
            resetStreams.append(stream)
        } else {
            resetStreams[nextReset] = stream
            nextReset = (nextReset + 1) % Self.resetStreamMemory
        }
    }

    deinit {
        for stream in streamsWithBody { fakeapns_h2_release_stream_body(session, stream) }
        nghttp2_session_del(session)
    }

    /// Queues a SETTINGS frame. A server's stream limit is announced to the peer and enforced
    /// by this session (see ``StreamLimit``).
    func submitSettings(_ settings: [(id: Int32, value: UInt32)]) {
        var limits: [UInt32] = []
        var entries = settings.map { setting in
            guard isServer, Int(setting.id) == NGHTTP2Settings.maxConcurrentStreams else {
                return nghttp2_settings_entry(settings_id: setting.id, value: setting.value)
            }
            limits.append(setting.value)
            return nghttp2_settings_entry(settings_id: setting.id, value: Self.unlimitedStreams)
        }
        guard nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &entries, entries.count) == 0,
            isServer
        else { return }
        limitsToWrite += limits
        // The last value of a frame is the one the peer holds to.
        streamLimit.announced(limits.last)
    }

    /// Writes the announced stream limits over the value nghttp2 wrote in the SETTINGS frames
    /// of `output` from `start`, which begins with a whole frame.
    private func writeStreamLimits(in output: inout [UInt8], from start: Int) {
        var frame = start
        while frame + 9 <= output.count, !limitsToWrite.isEmpty {
            let length = Int(output[frame]) << 16 | Int(output[frame + 1]) << 8 | Int(output[frame + 2])
            let payload = frame + 9
            guard payload + length <= output.count else { return }
            // SETTINGS (type 4) without ACK: entries of a 16-bit id and a 32-bit value.
            if output[frame + 3] == 4 && output[frame + 4] & 1 == 0 {
                var entry = payload
                while entry + 6 <= payload + length, !limitsToWrite.isEmpty {
                    let id = Int(output[entry]) << 8 | Int(output[entry + 1])
                    if id == NGHTTP2Settings.maxConcurrentStreams {
                        let value = limitsToWrite.removeFirst()
                        for index in 0..<4 { output[entry + 2 + index] = UInt8(truncatingIfNeeded: value >> (24 - 8 * index)) }
                    }
                    entry += 6
                }
            }
            frame = payload + length
        }
    }

    /// Whether a request beginning on `stream` is within the stream limit; one that is not is
    /// refused with RST_STREAM REFUSED_STREAM and reported to the delegate.
    fileprivate func requestBegins(_ stream: Int32) -> Bool {
        let admission = streamLimit.admits(open: openPeerStreams)
        openPeerStreams += 1
        guard case .refused(let pastAcknowledged) = admission else { return true }
        nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream, Self.refusedStream)
        delegate.streamRefused(stream, pastAcknowledged: pastAcknowledged)
        return false
    }

    /// RST_STREAM's REFUSED_STREAM: the request was not processed, and may be sent again.
    static let refusedStream: UInt32 = 7

    fileprivate func peerStreamClosed(_ stream: Int32) {
        if isServer, stream & 1 == 1, openPeerStreams > 0 { openPeerStreams -= 1 }
    }

    /// Queues a response: headers, and the body (as DATA ending the stream) when not empty.
    func submitResponse(_ stream: Int32, headers: [(String, String)], body: [UInt8]) {
        let result = Self.withNameValues(headers) { nva, count in
            body.withUnsafeBufferPointer { bytes in
                fakeapns_h2_submit_response(session, stream, nva, count, bytes.baseAddress, bytes.count)
            }
        }
        if result == 0 && !body.isEmpty { streamsWithBody.insert(stream) }
    }

    /// Queues the answer to an accepted notification: `:status: 200`, `apns-id`, and
    /// `apns-unique-id` when given (36 bytes of text, or nil). The same HEADERS frame a
    /// `submitResponse` with those three headers queues, without building the header list:
    /// every accepted request is answered this way.
    func submitAccepted(_ stream: Int32, apnsID: UnsafeBufferPointer<UInt8>, uniqueID: UnsafeBufferPointer<UInt8>?) {
        _ = fakeapns_h2_submit_accepted(
            session, stream, apnsID.baseAddress, apnsID.count, uniqueID?.baseAddress, uniqueID?.count ?? 0,
            idNamesIndexed ? 0 : 1)
        idNamesIndexed = true
    }

    /// Whether an accepted answer went, putting the ids' names in the HPACK table.
    private var idNamesIndexed = false

    /// Queues a request; returns its stream id (negative on failure).
    func submitRequest(headers: [(String, String)], body: [UInt8]) -> Int32 {
        submitRequest(pseudoHeaders: [], headers: headers, body: body)
    }

    /// Queues a request whose header list is `pseudoHeaders` then `headers`, without joining
    /// them first; returns its stream id (negative on failure).
    func submitRequest(pseudoHeaders: [(String, String)], headers: [(String, String)], body: [UInt8]) -> Int32 {
        let stream = Self.withNameValues(pseudoHeaders, headers) { nva, count in
            body.withUnsafeBufferPointer { bytes in
                fakeapns_h2_submit_request(session, nva, count, bytes.baseAddress, bytes.count)
            }
        }
        if stream > 0 && !body.isEmpty { streamsWithBody.insert(stream) }
        return stream
    }

    /// Queues RST_STREAM.
    func submitReset(_ stream: Int32, errorCode: UInt32) {
        nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream, errorCode)
    }

    /// Queues GOAWAY with debug data. A server follows each GOAWAY it writes with a PING: the
    /// peer reads frames in order, so its answer to the PING says it has read the GOAWAY.
    func submitGoAway(lastStream: Int32, errorCode: UInt32, debugData: [UInt8]) {
        debugData.withUnsafeBufferPointer { bytes in
            _ = nghttp2_submit_goaway(
                session, UInt8(NGHTTP2_FLAG_NONE.rawValue), lastStream, errorCode, bytes.baseAddress, bytes.count)
        }
    }

    /// The PING a server sends after its GOAWAY.
    private static let goAwayPing: [UInt8] = Array("goaway".utf8) + [0, 0]
    /// A GOAWAY left and its PING is still to be queued (nghttp2 would send a PING submitted
    /// with the GOAWAY first).
    private var pingAfterGoAway = false
    /// Whether the peer answered the PING sent after this side's GOAWAY.
    private var goAwayRead = false
    /// Whether a GOAWAY of this side (a server's) left.
    private var goAwayWritten = false
    /// nghttp2 reads nothing more (a GOAWAY left, no stream is open): this session reads the
    /// frame headers itself.
    private var readsFramesItself = false
    private var framesAfterGoAway = FramesAfterGoAway()

    /// Reads what the peer sends once nghttp2 no longer does: the answer to the PING after the
    /// GOAWAY, and the streams opened after it.
    private func readFramesItself(_ bytes: UnsafeRawBufferPointer) {
        readsFramesItself = true
        boundary.advance(over: bytes)
        framesAfterGoAway.read(bytes) { seen in
            switch seen {
            case .pingAnswer(let payload):
                if payload == Self.goAwayPing { goAwayRead = true }
            case .headers(let stream):
                guard stream > highestPeerStream, stream & 1 == 1 else { return }
                highestPeerStream = stream
                if goAwayRead { delegate.streamOpenedAfterGoAway(stream) }
            }
        }
    }

    /// A SETTINGS value the peer announced (acknowledged or not), e.g. its stream limit.
    func remoteSetting(_ id: Int) -> UInt32 {
        nghttp2_session_get_remote_settings(session, nghttp2_settings_id(rawValue: UInt32(id)))
    }

    /// Feeds received bytes; throws on a protocol error (nghttp2 has then queued GOAWAY).
    func receive(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress else { return }
        if goAwayWritten, readsFramesItself || (nghttp2_session_want_read(session) == 0 && boundary.isBetweenFrames) {
            return readFramesItself(bytes)
        }
        if isServer { boundary.advance(over: bytes) }
        let result = fakeapns_h2_mem_recv(session, base.assumingMemoryBound(to: UInt8.self), bytes.count)
        if result < 0 {
            throw HTTP2Error("HTTP/2 protocol error: \(String(cString: nghttp2_strerror(Int32(result))))")
        }
    }

    /// Everything nghttp2 wants to send now, in one buffer (empty when nothing).
    func takeOutput() throws -> [UInt8] {
        var output: [UInt8] = []
        try takeOutput(appendingTo: &output)
        return output
    }

    /// Appends everything nghttp2 wants to send now to `output`: a connection reuses one
    /// buffer, and sends every frame of a round in one TLS write.
    func takeOutput(appendingTo output: inout [UInt8]) throws {
        let start = output.count
        defer { if !limitsToWrite.isEmpty { writeStreamLimits(in: &output, from: start) } }
        while true {
            var data: UnsafePointer<UInt8>?
            let length = fakeapns_h2_mem_send(session, &data)
            if length < 0 {
                throw HTTP2Error("HTTP/2 send error: \(String(cString: nghttp2_strerror(Int32(length))))")
            }
            guard length > 0, let data else {
                guard pingAfterGoAway else { return }
                pingAfterGoAway = false
                Self.goAwayPing.withUnsafeBufferPointer { _ = nghttp2_submit_ping(session, 0, $0.baseAddress) }
                continue
            }
            output.append(contentsOf: UnsafeBufferPointer(start: data, count: length))
        }
    }

    /// Whether a server's peer rests between frames, past the connection preface.
    var isBetweenMessages: Bool { boundary.isBetweenFrames }

    /// Makes a server session out of an HTTP/1.1 request that asked for `Upgrade: h2c`
    /// (RFC 7540 §3.2): `settings` is the decoded `HTTP2-Settings` payload; the request becomes
    /// stream 1, half-closed, and its answer goes out on it. Throws when the payload is not
    /// SETTINGS.
    func upgrade(settings: [UInt8], headRequest: Bool) throws {
        let result = settings.withUnsafeBufferPointer { payload in
            nghttp2_session_upgrade2(session, payload.baseAddress, payload.count, headRequest ? 1 : 0, nil)
        }
        if result != 0 {
            throw HTTP2Error("HTTP2-Settings: \(String(cString: nghttp2_strerror(result)))")
        }
        highestPeerStream = max(highestPeerStream, 1)
        openPeerStreams += 1
    }

    /// Whether the session still reads or writes; false once both sides are done (after GOAWAY).
    var isAlive: Bool {
        nghttp2_session_want_read(session) != 0 || nghttp2_session_want_write(session) != 0
    }

    // MARK: - nghttp2 callbacks

    /// Calls `body` with the delegate of the session behind `userData`. nghttp2 calls back
    /// only from inside `receive` or `takeOutput`, while the session's owner holds it, so
    /// neither the session nor its delegate is retained for the call.
    private static func withDelegate(_ userData: UnsafeMutableRawPointer?, _ body: (any HTTP2SessionDelegate) -> Void) {
        Unmanaged<NGHTTP2Session>.fromOpaque(userData!)._withUnsafeGuaranteedRef { body($0.delegate) }
    }

    /// The callback table, made once for every session.
    private final class Callbacks: @unchecked Sendable {
        static let shared = Callbacks()
        let pointer: OpaquePointer

        private init() {
            var callbacks: OpaquePointer?
            nghttp2_session_callbacks_new(&callbacks)
            // Every frame passes here: a request's HEADERS costs a comparison and a store more.
            nghttp2_session_callbacks_set_on_begin_frame_callback(callbacks) { session, header, userData in
                guard let header, header.pointee.type == UInt8(NGHTTP2_HEADERS.rawValue) else { return 0 }
                let allowed = Unmanaged<NGHTTP2Session>.fromOpaque(userData!)._withUnsafeGuaranteedRef {
                    $0.headersBegin(header.pointee.stream_id, session)
                }
                return allowed ? 0 : NGHTTP2_ERR_CALLBACK_FAILURE.rawValue
            }
            nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks) { _, frame, userData in
                guard let frame, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) else { return 0 }
                let stream = frame.pointee.hd.stream_id
                Unmanaged<NGHTTP2Session>.fromOpaque(userData!)._withUnsafeGuaranteedRef { owner in
                    if owner.isServer, frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST,
                        !owner.requestBegins(stream)
                    {
                        return
                    }
                    owner.delegate.streamBegan(stream)
                }
                return 0
            }
            nghttp2_session_callbacks_set_on_header_callback(callbacks) { _, frame, name, nameLength, value, valueLength, _, userData in
                guard let frame, let name, let value else { return 0 }
                NGHTTP2Session.withDelegate(userData) {
                    $0.header(
                        frame.pointee.hd.stream_id,
                        name: UnsafeBufferPointer(start: name, count: nameLength),
                        value: UnsafeBufferPointer(start: value, count: valueLength))
                }
                return 0
            }
            nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, stream, data, length, userData in
                guard let data else { return 0 }
                NGHTTP2Session.withDelegate(userData) { $0.data(stream, UnsafeRawBufferPointer(start: data, count: length)) }
                return 0
            }
            nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, userData in
                guard let frame else { return 0 }
                let header = frame.pointee.hd
                let endsStream = header.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
                NGHTTP2Session.withDelegate(userData) { delegate in
                    switch UInt32(header.type) {
                    case NGHTTP2_HEADERS.rawValue:
                        delegate.headersEnded(header.stream_id, endsStream: endsStream)
                        if endsStream { delegate.streamEnded(header.stream_id) }
                    case NGHTTP2_DATA.rawValue:
                        if endsStream { delegate.streamEnded(header.stream_id) }
                    case NGHTTP2_SETTINGS.rawValue where header.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) != 0:
                        Unmanaged<NGHTTP2Session>.fromOpaque(userData!)._withUnsafeGuaranteedRef {
                            $0.streamLimit.acknowledgedOne()
                        }
                    case NGHTTP2_PING.rawValue where header.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) != 0:
                        let data = frame.pointee.ping.opaque_data
                        if withUnsafeBytes(of: data, { $0.elementsEqual(NGHTTP2Session.goAwayPing) }) {
                            Unmanaged<NGHTTP2Session>.fromOpaque(userData!)._withUnsafeGuaranteedRef { $0.goAwayRead = true }
                        }
                    case NGHTTP2_GOAWAY.rawValue:
                        let goAway = frame.pointee.goaway
                        let debug = goAway.opaque_data.map { Array(UnsafeBufferPointer(start: $0, count: goAway.opaque_data_len)) } ?? []
                        delegate.goAwayReceived(lastStream: goAway.last_stream_id, errorCode: goAway.error_code, debugData: debug)
                    default:
                        break
                    }
                }
                return 0
            }
            nghttp2_session_callbacks_set_on_frame_send_callback(callbacks) { _, frame, userData in
                guard let frame else { return 0 }
                switch UInt32(frame.pointee.hd.type) {
                case NGHTTP2_GOAWAY.rawValue:
                    Unmanaged<NGHTTP2Session>.fromOpaque(userData!)._withUnsafeGuaranteedRef {
                        if $0.isServer {
                            $0.pingAfterGoAway = true
                            $0.goAwayWritten = true
                        }
                    }
                    NGHTTP2Session.withDelegate(userData) { $0.goAwaySent(lastStream: frame.pointee.goaway.last_stream_id) }
                case NGHTTP2_RST_STREAM.rawValue:
                    Unmanaged<NGHTTP2Session>.fromOpaque(userData!)._withUnsafeGuaranteedRef {
                        $0.resetSent(frame.pointee.hd.stream_id)
                    }
                default:
                    break
                }
                return 0
            }
            nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { session, stream, errorCode, userData in
                fakeapns_h2_release_stream_body(session, stream)
                Unmanaged<NGHTTP2Session>.fromOpaque(userData!)._withUnsafeGuaranteedRef { owner in
                    if !owner.streamsWithBody.isEmpty { owner.streamsWithBody.remove(stream) }
                    owner.peerStreamClosed(stream)
                }
                NGHTTP2Session.withDelegate(userData) { $0.streamClosed(stream, errorCode: errorCode) }
                return 0
            }
            pointer = callbacks!
        }
    }

    /// Calls `body` with an nghttp2_nv array for `headers`, valid during the call: the names
    /// and values copied end to end into one temporary buffer, the array in another (a request
    /// or an answer costs no heap allocation here).
    private static func withNameValues<T>(
        _ headers: [(String, String)], _ body: (UnsafePointer<nghttp2_nv>, Int) -> T
    ) -> T {
        withNameValues([], headers, body)
    }

    /// The same for `first` then `second`.
    private static func withNameValues<T>(
        _ first: [(String, String)], _ second: [(String, String)], _ body: (UnsafePointer<nghttp2_nv>, Int) -> T
    ) -> T {
        var size = 1
        for (name, value) in first { size += name.utf8.count + value.utf8.count }
        for (name, value) in second { size += name.utf8.count + value.utf8.count }
        let count = first.count + second.count
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: size) { storage in
            withUnsafeTemporaryAllocation(of: nghttp2_nv.self, capacity: max(count, 1)) { nva in
                var offset = 0
                func copy(_ text: String) -> (UnsafeMutablePointer<UInt8>, Int) {
                    let start = storage.baseAddress! + offset
                    let copied = text.utf8.withContiguousStorageIfAvailable { bytes in
                        if let source = bytes.baseAddress { start.initialize(from: source, count: bytes.count) }
                        return bytes.count
                    } ?? {
                        let bytes = Array(text.utf8)
                        start.initialize(from: bytes, count: bytes.count)
                        return bytes.count
                    }()
                    offset += copied
                    return (start, copied)
                }
                var index = 0
                func add(_ list: [(String, String)]) {
                    for header in list {
                        let (namePointer, nameCount) = copy(header.0)
                        let (valuePointer, valueCount) = copy(header.1)
                        (nva.baseAddress! + index).initialize(to: nghttp2_nv(
                            name: namePointer, value: valuePointer, namelen: nameCount, valuelen: valueCount,
                            flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)))
                        index += 1
                    }
                }
                add(first)
                add(second)
                storage[offset] = 0
                return body(UnsafePointer(nva.baseAddress!), count)
            }
        }
    }
}

/// A failure of the HTTP/2 layer.
struct HTTP2Error: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
