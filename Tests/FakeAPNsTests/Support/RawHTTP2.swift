import Foundation
// Reads internals on purpose: TLSClient, to write HTTP/2 frames by hand.
@testable import FakeAPNs

/// One HTTP/2 frame as bytes on the wire, written and read by hand: for what no client library
/// sends (a stream id used again, a header block of any size) and for checking frame order.
struct RawFrame: CustomStringConvertible {
    static let data: UInt8 = 0
    static let headers: UInt8 = 1
    static let rstStream: UInt8 = 3
    static let settings: UInt8 = 4
    static let ping: UInt8 = 6
    static let goAway: UInt8 = 7
    static let continuation: UInt8 = 9

    static let endStream: UInt8 = 0x1
    static let endHeaders: UInt8 = 0x4

    var type: UInt8
    var flags: UInt8 = 0
    var stream: Int32
    var payload: ArraySlice<UInt8>

    var goAwayLastStream: Int32 { Int32(bitPattern: Self.word(payload, 0) & 0x7FFF_FFFF) }
    var goAwayErrorCode: UInt32 { Self.word(payload, 4) }
    var goAwayDebugData: ArraySlice<UInt8> { payload.dropFirst(8) }
    var resetErrorCode: UInt32 { Self.word(payload, 0) }
    var description: String { "\(type)/\(stream)" }

    /// The last frame of `frames` but the PING a server sends after its GOAWAY (to learn when
    /// the client has read it).
    static func lastBeforePing(_ frames: [RawFrame]) -> RawFrame? {
        frames.last { $0.type != ping }
    }

    /// The frame as sent: the 9-byte header, then the payload.
    var bytes: [UInt8] {
        let length = payload.count
        let stream = UInt32(bitPattern: stream)
        return [
            UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags,
            UInt8(stream >> 24), UInt8(stream >> 16 & 0xFF), UInt8(stream >> 8 & 0xFF), UInt8(stream & 0xFF),
        ] + payload
    }

    static func word(_ bytes: ArraySlice<UInt8>, _ offset: Int) -> UInt32 {
        bytes.dropFirst(offset).prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// The whole frames at the start of `bytes`, and how many bytes they take.
    static func parse(_ bytes: [UInt8]) -> (frames: [RawFrame], length: Int) {
        var frames: [RawFrame] = []
        var offset = 0
        while offset + 9 <= bytes.count {
            let length = Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
            guard offset + 9 + length <= bytes.count else { break }
            let stream = Int32(bitPattern: word(bytes[offset + 5..<offset + 9], 0) & 0x7FFF_FFFF)
            frames.append(RawFrame(
                type: bytes[offset + 3], flags: bytes[offset + 4], stream: stream,
                payload: bytes[offset + 9..<offset + 9 + length]))
            offset += 9 + length
        }
        return (frames, offset)
    }

    /// A header block for `fields`: HEADERS, then CONTINUATION frames when it is over the
    /// 16,384 bytes a frame may carry. Fields are HPACK literals without indexing, so a
    /// block's size is what the test makes it.
    static func headerBlock(stream: Int32, _ fields: [(String, String)], endStream: Bool) -> [RawFrame] {
        var block: [UInt8] = []
        for (name, value) in fields {
            block.append(0)
            appendLiteral(Array(name.utf8), to: &block)
            appendLiteral(Array(value.utf8), to: &block)
        }
        var frames: [RawFrame] = []
        var offset = 0
        repeat {
            let end = min(offset + 16_384, block.count)
            frames.append(RawFrame(
                type: frames.isEmpty ? headers : continuation,
                flags: (end == block.count ? endHeaders : 0) | (frames.isEmpty && endStream ? Self.endStream : 0),
                stream: stream, payload: block[offset..<end]))
            offset = end
        } while offset < block.count
        return frames
    }

    /// A request as clients send it: `fields` after the pseudo-headers, then `body`.
    static func request(stream: Int32, path: String, _ fields: [(String, String)] = [], body: [UInt8]) -> [RawFrame] {
        let pseudo = [(":method", "POST"), (":scheme", "https"), (":authority", "localhost"), (":path", path)]
        return headerBlock(stream: stream, pseudo + fields, endStream: body.isEmpty)
            + (body.isEmpty ? [] : [RawFrame(type: data, flags: Self.endStream, stream: stream, payload: body[...])])
    }

    /// An HPACK string literal (no Huffman coding): its length as a 7-bit-prefix integer, then
    /// its bytes.
    private static func appendLiteral(_ bytes: [UInt8], to block: inout [UInt8]) {
        if bytes.count < 127 {
            block.append(UInt8(bytes.count))
        } else {
            block.append(127)
            var rest = bytes.count - 127
            while rest >= 128 {
                block.append(UInt8(rest & 0x7F) | 0x80)
                rest >>= 7
            }
            block.append(UInt8(rest))
        }
        block += bytes
    }
}

/// A TLS connection to the provider API that sends frames as given and reads the server's
/// frames one by one.
final class RawHTTP2Connection {
    private let tls: TLSClient
    private var unread: [UInt8] = []
    /// Every frame the server sent so far, in order.
    private(set) var frames: [RawFrame] = []
    /// Whether the server closed the connection.
    private(set) var closed = false

    /// Connects, offering ALPN h2, and sends the connection preface with an empty SETTINGS.
    init(to server: FakeAPNsServer) throws {
        tls = try TLSClient(host: server.configuration.host, port: server.http2Port!, offerHTTP2: true)
        try tls.send(Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + RawFrame(type: RawFrame.settings, stream: 0, payload: []).bytes)
    }

    deinit {
        tls.close()
    }

    func send(_ frames: [RawFrame]) throws {
        try tls.send(frames.flatMap(\.bytes))
    }

    /// Reads until `done` holds for a frame the server sent, or the server closes the
    /// connection; the first frame `done` holds for, or nil when the connection closed first.
    /// A read that waits more than ten seconds throws.
    @discardableResult
    func read(until done: (RawFrame) -> Bool) throws -> RawFrame? {
        var checked = 0
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            if let found = frames[checked...].first(where: done) { return found }
            checked = frames.count
            if closed { return nil }
            let count = try buffer.withUnsafeMutableBytes { try tls.stream.read(into: $0) }
            if count == 0 {
                closed = true
                continue
            }
            unread += buffer[0..<count]
            let parsed = RawFrame.parse(unread)
            frames += parsed.frames
            unread.removeFirst(parsed.length)
        }
    }

    /// Reads everything until the server closes the connection.
    func readToEnd() throws {
        try read { _ in false }
    }
}
