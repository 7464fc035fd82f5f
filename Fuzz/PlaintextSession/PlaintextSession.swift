// libFuzzer target: the plaintext listener's framing (`PlaintextSession`): HTTP/1.1 requests
// through http_parser, the h2c upgrade and prior knowledge through nghttp2, reported to a
// delegate as HTTP/2 streams.
//
// The input is the client's byte stream, as it would arrive: seeds read like requests. It is fed
// twice to two sessions, whole and cut in pieces (the first byte picks where), and a delegate
// that answers each complete request (accepted, refused, reset or GOAWAY, by its stream) checks:
// - the events of both feeds are the same (but when HTTP/2 streams close): how the bytes are
//   cut changes nothing;
// - a stream begins before its fields, its fields end before its body, and it ends once; streams
//   are odd and rise; pseudo-header fields come first; no field name holds a capital, and none is
//   a field that only concerns an HTTP/1.1 connection (RFC 9113 §8.2.2);
// - the transport is chosen once, except HTTP/1.1 that upgrades to h2c;
// - what an HTTP/1.1 session writes is HTTP/1.1 answers: each starts with "HTTP/1.1 ".

@testable import FakeAPNs

private let connectionFields: Set<String> = [
    "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "http2-settings", "expect",
    "host",
]

/// Answers and checks what the session reports; keeps the events in order.
private final class Recorder: HTTP2SessionDelegate {
    var session: (any RequestFraming)?
    var events: [String] = []
    var transport: ConnectionTransport = .plaintext
    private var open: [Int32: (fieldsEnded: Bool, regular: Bool)] = [:]
    private var highest: Int32 = 0

    func streamBegan(_ stream: Int32) {
        events.append("begin \(stream)")
        require(stream & 1 == 1, "even stream \(stream)")
        require(open[stream] == nil || transport == .h2c, "stream \(stream) began twice")
        if transport != .h2c { require(stream > highest, "stream \(stream) after \(highest)") }
        highest = max(highest, stream)
        open[stream] = (false, false)
    }

    func header(_ stream: Int32, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        let text = String(decoding: name, as: UTF8.self)
        events.append("field \(stream) \(text)=\(String(decoding: value, as: UTF8.self))")
        guard var state = open[stream] else { return require(false, "field on stream \(stream) not begun") }
        require(!state.fieldsEnded, "field \(text) after the header block")
        require(!name.contains { $0 >= 65 && $0 <= 90 }, "field name \(text) has a capital")
        if text.hasPrefix(":") {
            require(!state.regular, "pseudo-header field \(text) after a regular one")
        } else {
            state.regular = true
            if transport == .http1 { require(!connectionFields.contains(text), "connection field \(text) reported") }
        }
        open[stream] = state
    }

    func headersEnded(_ stream: Int32, endsStream: Bool) {
        events.append("fields-end \(stream) \(endsStream)")
        open[stream]?.fieldsEnded = true
    }

    /// Body bytes in a row count as one event: how the bytes were cut decides the pieces.
    private var bodyBytes: (stream: Int32, count: Int)?

    func data(_ stream: Int32, _ bytes: UnsafeRawBufferPointer) {
        if let last = bodyBytes, last.stream == stream, events.last == "data \(stream) \(last.count)" {
            events.removeLast()
        } else {
            bodyBytes = (stream, 0)
        }
        bodyBytes!.count += bytes.count
        events.append("data \(stream) \(bodyBytes!.count)")
        if transport != .h2c { require(open[stream]?.fieldsEnded == true, "body before the header block on \(stream)") }
    }

    func streamEnded(_ stream: Int32) {
        events.append("end \(stream)")
        if transport != .h2c { require(open.removeValue(forKey: stream) != nil, "stream \(stream) ended, not open") }
        guard let session else { return }
        switch stream % 8 {
        case 1:
            Array("0f0e0d0c-0b0a-4908-8706-050403020100".utf8).withUnsafeBufferPointer { id in
                session.submitAccepted(stream, apnsID: id, uniqueID: stream % 16 == 1 ? id : nil)
            }
        case 3:
            session.submitResponse(
                stream, headers: [(":status", "400"), ("content-type", "application/json"), ("apns-id", "x")],
                body: Array(#"{"reason":"BadDeviceToken"}"#.utf8))
        case 5:
            session.submitReset(stream, errorCode: 7)
        default:
            session.submitResponse(stream, headers: [(":status", "429")], body: [])
            session.submitGoAway(lastStream: stream, errorCode: 0, debugData: [])
        }
    }

    func streamClosed(_ stream: Int32, errorCode: UInt32) {
        events.append("closed \(stream)")
    }

    func transportChosen(_ transport: ConnectionTransport) {
        events.append("transport \(transport)")
        // HTTP/1.1 may become h2c (an upgrade); nothing else changes once chosen.
        require(
            self.transport == .plaintext || (self.transport == .http1 && transport == .h2c),
            "transport \(self.transport) became \(transport)")
        self.transport = transport
    }
}

/// Feeds `pieces` to a new session; the events and whether it wrote HTTP/1.1 answers only.
private func run(_ pieces: [ArraySlice<UInt8>]) -> [String] {
    let recorder = Recorder()
    let session = PlaintextSession(delegate: recorder)
    recorder.session = session
    session.submitSettings([(id: 3, value: 1), (id: 6, value: 8000)])
    var output: [UInt8] = []
    for piece in pieces {
        var failed = false
        do {
            try piece.withUnsafeBytes { try session.receive($0) }
        } catch {
            recorder.events.append("error")
            failed = true
        }
        try? session.takeOutput(appendingTo: &output)
        if failed || !session.isAlive { break }
    }
    if recorder.transport == .http1, !output.isEmpty {
        require(output.starts(with: Array("HTTP/1.1 ".utf8)), "HTTP/1.1 output starts \(output.prefix(16))")
    }
    recorder.session = nil
    return recorder.events
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let input = count > 0 ? Array(UnsafeRawBufferPointer(start: start, count: count)) : []
    let whole = run([input[...]])
    // Cut every `step` bytes, `step` from the first byte: 1 to 64.
    let step = Int(input.first ?? 0) % 64 + 1
    let pieces = stride(from: 0, to: input.count, by: step).map { input[$0..<min($0 + step, input.count)] }
    let cut = run(pieces.isEmpty ? [input[...]] : pieces)
    // When an HTTP/2 stream closes, and whether the bytes after it break the protocol, depends
    // on what was answered before they came: those events are not compared.
    func compared(_ events: [String]) -> [String] {
        events.filter { !$0.hasPrefix("closed ") && $0 != "error" }
    }
    require(compared(whole) == compared(cut), "cut every \(step) bytes, the events differ:\n\(whole)\n\(cut)")
    return 0
}

private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("PlaintextSession invariant: \(message())") }
}
