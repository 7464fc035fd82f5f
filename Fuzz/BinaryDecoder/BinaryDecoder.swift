// libFuzzer target: the binary provider API's decoder (commands 0, 1 and 2).
//
// The input is the byte stream a client sends. It is decoded step by step as GatewaySession
// does (each frame, then the next from where it ended), by a decoder with Apple's 2048-byte
// payload limit and by one with a 16-byte limit; a stream that ends inside a command goes
// through `truncated`. Invariants: a frame's ranges lie inside the buffer it was decoded from,
// its length is > 0, its token is 1...100 bytes and its payload 1...limit bytes; decoding a
// prefix of a buffer never disagrees with decoding the whole of it (the gateway decodes as bytes
// arrive); a buffer decodes to "incomplete" only while it is shorter than the longest valid
// command, and a frame header claiming more than any valid frame is refused from its 5 bytes
// (the gateway never holds more than a valid notification needs); failures never report
// success. Built by Scripts/fuzz.sh (Package.swift's fuzzTargets); nothing here may trap but a broken
// invariant.

@testable import FakeAPNs

private let decoders = [BinaryDecoder(), BinaryDecoder(maximumPayloadSize: 16)]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: count > 0 ? start : nil, count: count)
    for decoder in decoders {
        checkStream(input, decoder: decoder)
    }
    return 0
}

/// Decodes every command of `stream` in turn, as the gateway does.
private func checkStream(_ stream: UnsafeRawBufferPointer, decoder: BinaryDecoder) {
    var offset = 0
    while offset < stream.count {
        let rest = UnsafeRawBufferPointer(rebasing: stream[offset...])
        let step = decoder.decode(rest)
        checkPrefixes(of: rest, agreeWith: step, decoder: decoder)
        checkBound(rest, step, decoder: decoder)
        switch step {
        case .frame(let frame):
            check(frame, in: rest, decoder: decoder)
            // What the gateway builds from a frame.
            let token = DeviceToken(copying: UnsafeRawBufferPointer(rebasing: rest[frame.token]))
            let payload = Payload(copying: UnsafeRawBufferPointer(rebasing: rest[frame.payload]))
            require(token.count == frame.token.count && payload.count == frame.payload.count, "copied sizes differ")
            offset += frame.length
        case .incomplete:
            check(decoder.truncated(rest), in: rest, decoder: decoder)
            return
        case .failure(let failure):
            check(failure, in: rest, decoder: decoder)
            return
        }
    }
}

private func check(_ frame: BinaryDecoder.Frame, in buffer: UnsafeRawBufferPointer, decoder: BinaryDecoder) {
    require(frame.length > 0 && frame.length <= buffer.count, "frame length \(frame.length) of \(buffer.count)")
    for (name, range) in [("token", frame.token), ("payload", frame.payload)] {
        require(range.lowerBound >= 1 && range.upperBound <= frame.length, "\(name) \(range) outside \(frame.length)")
    }
    require(!frame.token.overlaps(frame.payload), "token \(frame.token) overlaps payload \(frame.payload)")
    require((1...BinaryDecoder.maximumTokenSize).contains(frame.token.count), "token of \(frame.token.count) bytes")
    require((1...decoder.maximumPayloadSize).contains(frame.payload.count), "payload of \(frame.payload.count) bytes")
    switch buffer[0] {
    case 0:
        require(frame.format == .simple && frame.identifier == 0 && frame.expiration == nil, "command 0 fields")
        require(frame.priority == 10, "command 0 priority \(frame.priority)")
    case 1:
        require(frame.format == .enhanced && frame.identifier == buffer.readUInt32(at: 1), "command 1 fields")
        require(frame.expiration == buffer.readUInt32(at: 5) && frame.priority == 10, "command 1 expiry/priority")
    case 2:
        require(frame.format == .frame && frame.expiration != nil, "command 2 fields")
        require(frame.priority == 10 || frame.priority == 5, "command 2 priority \(frame.priority)")
        require(frame.length == 5 + Int(buffer.readUInt32(at: 1)), "command 2 length")
    default:
        require(false, "command \(buffer[0]) decoded as a frame")
    }
}

private func check(_ failure: BinaryDecoder.Failure, in buffer: UnsafeRawBufferPointer, decoder: BinaryDecoder) {
    require(failure.status != .noErrors, "a failure with status 0")
    require(!failure.reason.isEmpty, "a failure without a reason")
    require((failure.token?.count ?? 0) <= min(BinaryDecoder.maximumTokenSize, buffer.count), "failure token size")
    require((failure.payload?.count ?? 0) <= min(decoder.maximumPayloadSize, buffer.count), "failure payload size")
    let format: PushNotification.Format? = switch buffer.first {
    case 0: .simple
    case 1: .enhanced
    case 2: .frame
    default: nil
    }
    require(failure.format == format, "failure format \(String(describing: failure.format)) for \(format as Any)")
    if format == .simple { require(failure.identifier == 0 && !failure.sendsResponse, "command 0 failure") }
}

/// "Incomplete" only below the longest valid command (a frame: its 5-byte header and the
/// longest valid frame); a frame header that claims more is refused at once.
private func checkBound(_ buffer: UnsafeRawBufferPointer, _ step: BinaryDecoder.Step, decoder: BinaryDecoder) {
    if case .incomplete = step {
        require(buffer.count < 5 + decoder.maximumFrameLength, "incomplete after \(buffer.count) bytes")
    }
    if buffer.count >= 5 && buffer[0] == 2 && Int(buffer.readUInt32(at: 1)) > decoder.maximumFrameLength {
        let header = UnsafeRawBufferPointer(rebasing: buffer[..<5])
        guard case .failure(let failure) = decoder.decode(header), failure.status == .unknown else {
            return require(false, "a frame header claiming \(buffer.readUInt32(at: 1)) bytes is not refused")
        }
    }
}

/// Decoding a prefix of `buffer` gives either "incomplete" or exactly what the whole buffer
/// gives. Each prefix is copied into its own allocation, so an over-read is an ASan report.
private func checkPrefixes(
    of buffer: UnsafeRawBufferPointer, agreeWith whole: BinaryDecoder.Step, decoder: BinaryDecoder
) {
    var lengths: Set = [0, 1, min(buffer.count, 9), buffer.count / 2, buffer.count - 1]
    if case .frame(let frame) = whole { lengths.formUnion([frame.length - 1, frame.length]) }
    for length in lengths where length >= 0 && length <= buffer.count {
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(length, 1), alignment: 1)
        defer { copy.deallocate() }
        let prefix = UnsafeRawBufferPointer(rebasing: copy[..<length])
        copy.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[..<length]))
        let step = decoder.decode(prefix)
        switch (step, whole) {
        case (.incomplete, _):
            _ = decoder.truncated(prefix)
        case (.frame(let part), .frame(let full)):
            require(
                part.format == full.format && part.identifier == full.identifier
                    && part.expiration == full.expiration && part.priority == full.priority
                    && part.token == full.token && part.payload == full.payload && part.length == full.length,
                "a \(length)-byte prefix decodes to another frame than \(buffer.count) bytes")
        case (.failure(let part), .failure(let full)):
            require(part == full, "a \(length)-byte prefix fails otherwise: \(part) vs \(full)")
        default:
            require(false, "a \(length)-byte prefix gives \(step), the whole \(buffer.count) bytes \(whole)")
        }
    }
}

private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("BinaryDecoder invariant: \(message())") }
}
