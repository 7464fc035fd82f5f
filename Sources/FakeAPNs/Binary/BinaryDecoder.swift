/// Decodes the binary provider API's notification commands (0 simple, 1 enhanced, 2 frame)
/// from a byte buffer, one notification at a time, and decides Apple's status for malformed
/// ones. It never reads past what it was given and never buffers more than a valid
/// notification can need, so hostile lengths cost nothing.
struct BinaryDecoder: Sendable {
    /// The largest payload accepted (Apple's binary gateway: 2048 bytes).
    var maximumPayloadSize: Int
    /// The largest token accepted (Apple's 2018 documentation: "up to 100 bytes").
    static let maximumTokenSize = DeviceToken.maximumByteCount
    /// The largest command-2 frame that can be valid: each of the five items at most once, a
    /// token of at most 100 bytes, a payload within the limit, the 4-byte identifier and expiry
    /// and the 1-byte priority, each after its 3-byte item header. Longer frames are refused as
    /// soon as their length is read, so a client cannot make the gateway hold more than that.
    var maximumFrameLength: Int {
        5 * 3 + Self.maximumTokenSize + maximumPayloadSize + 4 + 4 + 1
    }

    /// A decoded notification: where its parts sit in the buffer given to `decode`.
    struct Frame {
        let format: PushNotification.Format
        let identifier: UInt32
        let expiration: UInt32?
        let priority: UInt8
        let token: Range<Int>
        let payload: Range<Int>
        /// Bytes the command takes in the buffer, header included.
        let length: Int
    }

    /// Why a notification was refused, and what is known about it.
    struct Failure: Error, Equatable {
        let status: BinaryStatus
        let identifier: UInt32
        let format: PushNotification.Format?
        /// A sentence for logs and the rejection record ("token length 101 is over 100 bytes").
        let reason: String
        /// The token and payload, when they were read before the problem was found.
        var token: [UInt8]? = nil
        var payload: [UInt8]? = nil

        /// Command 0 has no identifier to report: Apple closes without a response.
        var sendsResponse: Bool { format != .simple }
    }

    enum Step {
        case frame(Frame)
        /// More bytes are needed; nothing is wrong yet.
        case incomplete
        case failure(Failure)
    }

    init(maximumPayloadSize: Int = 2048) {
        self.maximumPayloadSize = maximumPayloadSize
    }

    /// Decodes the command at the start of `buffer`.
    func decode(_ buffer: UnsafeRawBufferPointer) -> Step {
        guard let command = buffer.first else { return .incomplete }
        switch command {
        case 0: return decodeSimple(buffer)
        case 1: return decodeEnhanced(buffer)
        case 2: return decodeFrame(buffer)
        default:
            return .failure(Failure(
                status: .unknown, identifier: 0, format: nil,
                reason: "unknown command \(command); the gateway knows 0, 1 and 2"))
        }
    }

    /// What to say when the stream ends with `buffer` holding part of a command, or when no
    /// byte of the rest came for `stalledFor`.
    func truncated(_ buffer: UnsafeRawBufferPointer, stalledFor stall: Duration? = nil) -> Failure {
        let format: PushNotification.Format? = switch buffer.first {
        case 0: .simple
        case 1: .enhanced
        case 2: .frame
        default: nil
        }
        var identifier: UInt32 = 0
        if format == .enhanced, buffer.count >= 5 { identifier = buffer.readUInt32(at: 1) }
        if format == .frame, buffer.count > 5 {
            identifier = scanIdentifier(buffer, itemsAt: 5, end: buffer.count) ?? 0
        }
        return Failure(
            status: .unknown, identifier: identifier, format: format,
            reason: stall.map {
                "no byte came for \($0.secondsText) s inside a notification (\(buffer.count) bytes of it arrived)"
            } ?? "the connection ended inside a notification (\(buffer.count) bytes of it arrived)")
    }

    // MARK: - Commands 0 and 1

    private func decodeSimple(_ buffer: UnsafeRawBufferPointer) -> Step {
        decodeTokenAndPayload(buffer, at: 1, format: .simple, identifier: 0, expiration: nil)
    }

    private func decodeEnhanced(_ buffer: UnsafeRawBufferPointer) -> Step {
        guard buffer.count >= 9 else { return .incomplete }
        return decodeTokenAndPayload(
            buffer, at: 9, format: .enhanced,
            identifier: buffer.readUInt32(at: 1), expiration: buffer.readUInt32(at: 5))
    }

    /// The shared tail of commands 0 and 1: token length, token, payload length, payload.
    private func decodeTokenAndPayload(
        _ buffer: UnsafeRawBufferPointer, at start: Int, format: PushNotification.Format,
        identifier: UInt32, expiration: UInt32?
    ) -> Step {
        guard buffer.count >= start + 2 else { return .incomplete }
        let tokenLength = Int(buffer.readUInt16(at: start))
        if let failure = checkToken(length: tokenLength, format: format, identifier: identifier) {
            return .failure(failure)
        }
        let tokenStart = start + 2
        let payloadLengthAt = tokenStart + tokenLength
        guard buffer.count >= payloadLengthAt + 2 else { return .incomplete }
        let token = tokenStart..<payloadLengthAt
        let payloadLength = Int(buffer.readUInt16(at: payloadLengthAt))
        if var failure = checkPayload(length: payloadLength, format: format, identifier: identifier) {
            failure.token = Array(buffer[token])
            return .failure(failure)
        }
        let payloadStart = payloadLengthAt + 2
        let end = payloadStart + payloadLength
        guard buffer.count >= end else { return .incomplete }
        return .frame(Frame(
            format: format, identifier: identifier, expiration: expiration, priority: 10,
            token: token, payload: payloadStart..<end, length: end))
    }

    // MARK: - Command 2

    private enum Item: UInt8 {
        case deviceToken = 1, payload = 2, identifier = 3, expiration = 4, priority = 5

        var name: String {
            switch self {
            case .deviceToken: "device token"
            case .payload: "payload"
            case .identifier: "notification identifier"
            case .expiration: "expiration date"
            case .priority: "priority"
            }
        }

        /// The only length the item may have, where the protocol fixes one.
        var fixedLength: Int? {
            switch self {
            case .identifier, .expiration: 4
            case .priority: 1
            case .deviceToken, .payload: nil
            }
        }
    }

    private func decodeFrame(_ buffer: UnsafeRawBufferPointer) -> Step {
        guard buffer.count >= 5 else { return .incomplete }
        let frameLength = Int(buffer.readUInt32(at: 1))
        guard frameLength <= maximumFrameLength else {
            return .failure(Failure(
                status: .unknown, identifier: 0, format: .frame,
                reason: "frame length \(frameLength) is longer than any valid frame (\(maximumFrameLength) bytes with a \(maximumPayloadSize)-byte payload limit)"))
        }
        let end = 5 + frameLength
        guard buffer.count >= end else { return .incomplete }

        var ranges: [Range<Int>?] = [nil, nil, nil, nil, nil, nil]
        var structural: String?
        var offset = 5
        while offset < end {
            guard offset + 3 <= end else {
                structural = "an item header at byte \(offset - 5) of the frame runs past the frame's end"
                break
            }
            let id = buffer[offset]
            let length = Int(buffer.readUInt16(at: offset + 1))
            let data = offset + 3..<offset + 3 + length
            guard data.upperBound <= end else {
                structural = "item \(id) (\(length) bytes) runs past the frame's end"
                break
            }
            guard let item = Item(rawValue: id) else {
                structural = "unknown item \(id); frames carry items 1 to 5"
                break
            }
            if ranges[Int(id)] != nil {
                structural = "duplicate \(item.name) item"
                break
            }
            if let fixed = item.fixedLength, length != fixed {
                structural = "\(item.name) item of \(length) bytes; it must be \(fixed)"
                break
            }
            ranges[Int(id)] = data
            offset = data.upperBound
        }

        let identifier = ranges[3].map { buffer.readUInt32(at: $0.lowerBound) }
            ?? scanIdentifier(buffer, itemsAt: 5, end: end) ?? 0
        if let structural {
            return .failure(Failure(status: .unknown, identifier: identifier, format: .frame, reason: structural))
        }
        guard let token = ranges[1] else {
            return .failure(Failure(
                status: .missingDeviceToken, identifier: identifier, format: .frame,
                reason: "the frame has no device token item"))
        }
        if let failure = checkToken(length: token.count, format: .frame, identifier: identifier) {
            return .failure(failure)
        }
        guard let payload = ranges[2] else {
            var failure = Failure(
                status: .missingPayload, identifier: identifier, format: .frame,
                reason: "the frame has no payload item")
            failure.token = Array(buffer[token])
            return .failure(failure)
        }
        if var failure = checkPayload(length: payload.count, format: .frame, identifier: identifier) {
            failure.token = Array(buffer[token])
            return .failure(failure)
        }
        let priority = ranges[5].map { buffer[$0.lowerBound] } ?? 10
        guard priority == 10 || priority == 5 else {
            return .failure(Failure(
                status: .unknown, identifier: identifier, format: .frame,
                reason: "priority \(priority); the binary gateway knows 10 and 5",
                token: Array(buffer[token]), payload: Array(buffer[payload])))
        }
        return .frame(Frame(
            format: .frame, identifier: identifier,
            expiration: ranges[4].map { buffer.readUInt32(at: $0.lowerBound) } ?? 0,
            priority: priority, token: token, payload: payload, length: end))
    }

    /// Finds an identifier item among well-formed items, for reporting a frame that is
    /// otherwise broken.
    private func scanIdentifier(_ buffer: UnsafeRawBufferPointer, itemsAt start: Int, end: Int) -> UInt32? {
        var offset = start
        while offset + 3 <= end {
            let length = Int(buffer.readUInt16(at: offset + 1))
            if buffer[offset] == Item.identifier.rawValue && length == 4 && offset + 7 <= end {
                return buffer.readUInt32(at: offset + 3)
            }
            offset += 3 + length
        }
        return nil
    }

    // MARK: - Shared checks

    private func checkToken(length: Int, format: PushNotification.Format, identifier: UInt32) -> Failure? {
        if length == 0 {
            return Failure(
                status: .missingDeviceToken, identifier: identifier, format: format,
                reason: "the device token is empty")
        }
        if length > Self.maximumTokenSize {
            return Failure(
                status: .invalidTokenSize, identifier: identifier, format: format,
                reason: "token length \(length) is over \(Self.maximumTokenSize) bytes")
        }
        return nil
    }

    private func checkPayload(length: Int, format: PushNotification.Format, identifier: UInt32) -> Failure? {
        if length == 0 {
            return Failure(
                status: .missingPayload, identifier: identifier, format: format,
                reason: "the payload is empty")
        }
        if length > maximumPayloadSize {
            return Failure(
                status: .invalidPayloadSize, identifier: identifier, format: format,
                reason: "payload of \(length) bytes is over the \(maximumPayloadSize)-byte limit")
        }
        return nil
    }
}

extension UnsafeRawBufferPointer {
    @inline(__always)
    func readUInt16(at offset: Int) -> UInt16 {
        UInt16(self[offset]) << 8 | UInt16(self[offset + 1])
    }

    @inline(__always)
    func readUInt32(at offset: Int) -> UInt32 {
        UInt32(self[offset]) << 24 | UInt32(self[offset + 1]) << 16 | UInt32(self[offset + 2]) << 8
            | UInt32(self[offset + 3])
    }
}
