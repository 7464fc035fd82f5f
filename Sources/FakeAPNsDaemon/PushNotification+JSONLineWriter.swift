import FakeAPNs

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension PushNotification {
    /// Writes the log lines of many notifications into one byte buffer, each line the record
    /// of ``PushNotification/writeRecord(to:)`` with `"event":event` first, and a line feed.
    ///
    /// The daemon's log writes hundreds of thousands of lines a second through one of these,
    /// so what repeats from line to line is formatted once: the event member, the timestamp's
    /// date and time down to the second, and the members that describe the connection. A
    /// valid one-line payload is copied into the line as it came, without being parsed
    /// (checking it is many times faster than parsing and writing it again). Keep one writer
    /// per output (it is not shared between threads) and reuse the buffer.
    ///
    /// ```swift
    /// var writer = PushNotification.JSONLineWriter(event: "notification")
    /// var buffer: [UInt8] = []
    /// for notification in batch { writer.append(notification, to: &buffer) }
    /// write(descriptor, buffer, buffer.count)
    /// ```
    ///
    /// A line takes two passes over the schema: the first sizes it, formats what changes
    /// rarely and writes what is not the usual case (strings, a payload that is not a one-line
    /// object) the ordinary way; the second puts the line together with plain memory copies in
    /// space sized for it, and appends it to the output at once.
    struct JSONLineWriter {
        /// `{"event":"…"`.
        private let opening: [UInt8]
        private var preparation = LinePreparation()

        /// A writer of lines whose first member is `"event":event`.
        init(event: String) {
            var opening: [UInt8] = []
            JSONWriter.append(#"{"event":"#, to: &opening)
            JSONWriter.writeString(event, to: &opening)
            self.opening = opening
        }

        /// Appends the notification's line and a line feed to `output`.
        mutating func append(_ notification: PushNotification, to output: inout [UInt8]) {
            preparation.start()
            notification.writeRecord(to: &preparation)
            let capacity = opening.count + preparation.count + 2
            // The closure uses no stored property: one would have the preparation copied (its
            // buffers retained and released) for every line.
            let opening = opening
            preparation.withCursorParts { parts in
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer in
                    var line = LineCursor(buffer.baseAddress!, parts)
                    line.write(opening)
                    notification.writeRecord(to: &line)
                    line.write("}\n")
                    let count = line.pointer - buffer.baseAddress!
                    precondition(count <= capacity, "a log line overran the space sized for it")
                    output.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<count]))
                }
            }
        }
    }
}

/// The first pass over a line: counts its bytes, formats the timestamp's second and the
/// connection's members when they change, and writes the members of unknown length (and a
/// payload that cannot be copied) into `rare`, one segment each.
private struct LinePreparation: NotificationRecordWriter {
    /// The bytes the line takes after the opening and before the closing brace, at most.
    private(set) var count = 0
    private(set) var timestamps = Timestamp.Writer()
    private(set) var micros = 0
    /// Whether the payload is copied into the line as it came.
    private(set) var copiesPayload = false
    /// The connection whose members `connectionMembers` holds.
    private var connection: ConnectionInfo?
    private(set) var connectionMembers = RecordMemberBytes()
    /// Members written the ordinary way, in the order of the record.
    private(set) var rare = RecordMemberBytes()
    /// Where each of `rare`'s segments ends.
    private(set) var rareEnds: [Int] = []

    /// Forgets the previous line's sizes and segments.
    mutating func start() {
        count = 0
        copiesPayload = false
        rare.bytes.removeAll(keepingCapacity: true)
        rareEnds.removeAll(keepingCapacity: true)
    }

    /// Calls `body` with what the second pass copies.
    func withCursorParts<T>(_ body: (LineCursor.Parts) -> T) -> T {
        rare.bytes.withUnsafeBufferPointer { rare in
            rareEnds.withUnsafeBufferPointer { rareEnds in
                connectionMembers.bytes.withUnsafeBufferPointer { connectionMembers in
                    timestamps.prefix.withUnsafeBufferPointer { timestampPrefix in
                        body(LineCursor.Parts(
                            rare: rare, rareEnds: rareEnds, connectionMembers: connectionMembers,
                            timestampPrefix: timestampPrefix, micros: micros, copiesPayload: copiesPayload))
                    }
                }
            }
        }
    }

    /// `,"name":` and a value of at most `value` bytes.
    private mutating func reserve(_ name: StaticString, valueAtMost value: Int) {
        count += name.utf8CodeUnitCount + 4 + value
    }

    /// A member written the ordinary way into its own segment.
    private mutating func rare(_ write: (inout RecordMemberBytes) -> Void) {
        let start = rare.bytes.count
        write(&rare)
        rareEnds.append(rare.bytes.count)
        count += rare.bytes.count - start
    }

    mutating func integer(_ name: StaticString, _ value: Int) {
        reserve(name, valueAtMost: JSONWriter.maximumIntegerLength)
    }

    mutating func optionalInteger(_ name: StaticString, _ value: Int?) {
        reserve(name, valueAtMost: JSONWriter.maximumIntegerLength)
    }

    mutating func string(_ name: StaticString, _ value: String?) {
        rare { $0.string(name, value) }
    }

    mutating func keyword(_ name: StaticString, _ value: String) {
        reserve(name, valueAtMost: value.utf8.count + 2)
    }

    mutating func token(_ name: StaticString, _ value: DeviceToken) {
        reserve(name, valueAtMost: 2 * value.count + 2)
    }

    mutating func timestamp(_ name: StaticString, _ value: Date) {
        micros = timestamps.prepare(value)
        reserve(name, valueAtMost: timestamps.prefix.count + Timestamp.fractionCount + 2)
    }

    mutating func json(_ name: StaticString, _ value: JSONValue) {
        rare { $0.json(name, value) }
    }

    mutating func payload(_ payload: Payload) {
        // A Bool, not a tuple, from the engine's generic `withBytes`: across the module
        // boundary it runs unspecialized, and a tuple's type would be looked up every line.
        if payload.withBytes({ JSONValidator.isSingleLineObject($0) }) {
            copiesPayload = true
            reserve(PushNotification.payloadMember, valueAtMost: payload.count)
        } else {
            PushNotification.writePayload(payload, to: &self)
        }
    }

    mutating func connection(_ connection: ConnectionInfo) {
        if self.connection !== connection {
            self.connection = connection
            connectionMembers.bytes.removeAll(keepingCapacity: true)
            PushNotification.writeConnection(connection, to: &connectionMembers)
        }
        count += connectionMembers.bytes.count
    }

    /// Only a push the intake judged (the lint stage, or the device model with findings):
    /// judging each push here would parse every payload the writer otherwise copies unparsed.
    mutating func lint(of notification: PushNotification) {
        if let findings = notification.lintFindingsIfJudged { PushNotification.writeLint(findings, to: &self) }
    }
}

/// The second pass over a line: a write position in memory sized for the whole line, which
/// copies what the first pass prepared.
private struct LineCursor: NotificationRecordWriter {
    /// What the first pass prepared.
    struct Parts {
        let rare: UnsafeBufferPointer<UInt8>
        let rareEnds: UnsafeBufferPointer<Int>
        let connectionMembers: UnsafeBufferPointer<UInt8>
        let timestampPrefix: UnsafeBufferPointer<UInt8>
        let micros: Int
        let copiesPayload: Bool
    }

    var pointer: UnsafeMutablePointer<UInt8>
    private let parts: Parts
    /// The next of `parts.rare`'s segments.
    private var segment = 0

    init(_ pointer: UnsafeMutablePointer<UInt8>, _ parts: Parts) {
        self.pointer = pointer
        self.parts = parts
    }

    mutating func write(_ text: StaticString) {
        pointer.initialize(from: text.utf8Start, count: text.utf8CodeUnitCount)
        pointer += text.utf8CodeUnitCount
    }

    mutating func write(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress else { return }
        pointer.initialize(from: base, count: bytes.count)
        pointer += bytes.count
    }

    mutating func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { write($0) }
    }

    /// `,"name":`, the punctuation stored byte by byte: every member starts with one.
    private mutating func name(_ name: StaticString) {
        pointer[0] = UInt8(ascii: ",")
        pointer[1] = UInt8(ascii: "\"")
        pointer += 2
        write(name)
        pointer[0] = UInt8(ascii: "\"")
        pointer[1] = UInt8(ascii: ":")
        pointer += 2
    }

    private mutating func quote() {
        pointer.pointee = UInt8(ascii: "\"")
        pointer += 1
    }

    /// Copies the next member the first pass wrote the ordinary way.
    private mutating func copySegment() {
        let start = segment == 0 ? 0 : parts.rareEnds[segment - 1]
        write(UnsafeBufferPointer(rebasing: parts.rare[start..<parts.rareEnds[segment]]))
        segment += 1
    }

    mutating func integer(_ name: StaticString, _ value: Int) {
        self.name(name)
        pointer += JSONWriter.writeInteger(value, at: pointer)
    }

    mutating func optionalInteger(_ name: StaticString, _ value: Int?) {
        if let value {
            integer(name, value)
        } else {
            self.name(name)
            write("null")
        }
    }

    mutating func string(_ name: StaticString, _ value: String?) {
        copySegment()
    }

    mutating func keyword(_ name: StaticString, _ value: String) {
        self.name(name)
        quote()
        var value = value
        value.withUTF8 { bytes in
            assert(!bytes.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }, "a keyword to escape")
            write(bytes)
        }
        quote()
    }

    mutating func token(_ name: StaticString, _ value: DeviceToken) {
        self.name(name)
        quote()
        pointer += value.writeHex(at: pointer)
        quote()
    }

    mutating func timestamp(_ name: StaticString, _ value: Date) {
        self.name(name)
        quote()
        write(parts.timestampPrefix)
        Timestamp.writeFraction(parts.micros, to: pointer)
        pointer += Timestamp.fractionCount
        quote()
    }

    mutating func json(_ name: StaticString, _ value: JSONValue) {
        copySegment()
    }

    mutating func payload(_ payload: Payload) {
        if parts.copiesPayload {
            name(PushNotification.payloadMember)
            payload.withBytes { write($0) }
        } else {
            PushNotification.writePayload(payload, to: &self)
        }
    }

    mutating func connection(_ connection: ConnectionInfo) {
        write(parts.connectionMembers)
    }

    mutating func lint(of notification: PushNotification) {
        if notification.isLintJudged { copySegment() }
    }
}
