// MARK: - Serialization

extension JSONValue {
    /// The value as compact JSON text (no insignificant whitespace).
    ///
    /// Object members keep their order unless `sortedKeys` is true; then keys are sorted by
    /// their UTF-8 bytes (Unicode code point order), which makes output stable for snapshots.
    /// Strings escape `"`, `\` and control characters (`\n`, `\t`, ... or `\u00XX`); all other
    /// characters, including non-ASCII ones, are written as UTF-8.
    ///
    /// Doubles are written so they parse back to the same `Double` and stay doubles: `1.0`
    /// stays `1.0`, `1e20` is `1e20`, `0.1` is `0.1`. JSON cannot express NaN or infinity;
    /// they are written as `null`, as JavaScript does.
    ///
    /// ```swift
    /// let value: JSONValue = ["aps": ["alert": "Hi\n", "badge": 1], "price": 1.0]
    /// value.serialized()   // {"aps":{"alert":"Hi\n","badge":1},"price":1.0}
    /// ```
    public func serialized(sortedKeys: Bool = false) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(128)
        JSONWriter(sortedKeys: sortedKeys).write(self, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// `string` as a JSON string literal, quotes included, for code that writes JSON by hand.
    ///
    /// ```swift
    /// let body = "{\"reason\":\(JSONValue.quoted(reason))}"
    /// JSONValue.quoted("say \"hi\"")   // "say \"hi\"" (with the quotes and backslashes)
    /// ```
    public static func quoted(_ string: String) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(string.utf8.count + 2)
        JSONWriter.writeString(string, to: &output)
        return String(decoding: output, as: UTF8.self)
    }
}

// MARK: - Writer

/// Writes JSON values as UTF-8 bytes.
package struct JSONWriter {
    let sortedKeys: Bool

    /// A writer that keeps object members in their order, or sorts them by key.
    package init(sortedKeys: Bool) {
        self.sortedKeys = sortedKeys
    }

    /// Writes one value. Containers are written by their own functions so that this one,
    /// which recursion passes through at every level, keeps a small stack frame.
    package func write(_ value: JSONValue, to output: inout [UInt8]) {
        switch value {
        case .null:
            Self.append("null", to: &output)
        case .bool(let bool):
            Self.append(bool ? "true" : "false", to: &output)
        case .int(let int):
            Self.writeInteger(int, to: &output)
        case .double(let double):
            Self.writeDouble(double, to: &output)
        case .string(let string):
            Self.writeString(string, to: &output)
        case .array(let elements):
            writeArray(elements, to: &output)
        case .object(let object):
            writeObject(object, to: &output)
        }
    }

    private func writeArray(_ elements: [JSONValue], to output: inout [UInt8]) {
        output.append(UInt8(ascii: "["))
        for (position, element) in elements.enumerated() {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            write(element, to: &output)
        }
        output.append(UInt8(ascii: "]"))
    }

    private func writeObject(_ object: JSONObject, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "{"))
        if sortedKeys {
            let members = object.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            for (position, member) in members.enumerated() {
                writeMember(member, isFirst: position == 0, to: &output)
            }
        } else {
            for (position, member) in object.enumerated() {
                writeMember(member, isFirst: position == 0, to: &output)
            }
        }
        output.append(UInt8(ascii: "}"))
    }

    private func writeMember(_ member: JSONObject.Element, isFirst: Bool, to output: inout [UInt8]) {
        if !isFirst { output.append(UInt8(ascii: ",")) }
        Self.writeString(member.key, to: &output)
        output.append(UInt8(ascii: ":"))
        write(member.value, to: &output)
    }

    /// Writes a quoted, escaped string. Runs of bytes that need no escape are copied at once.
    package static func writeString(_ string: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { bytes in
            var runStart = 0
            for position in bytes.indices {
                let byte = bytes[position]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<position]))
                runStart = position + 1
                switch byte {
                case UInt8(ascii: "\""): append(#"\""#, to: &output)
                case UInt8(ascii: "\\"): append(#"\\"#, to: &output)
                case 0x0A: append(#"\n"#, to: &output)
                case 0x0D: append(#"\r"#, to: &output)
                case 0x09: append(#"\t"#, to: &output)
                case 0x08: append(#"\b"#, to: &output)
                case 0x0C: append(#"\f"#, to: &output)
                default:
                    let hexDigits: StaticString = "0123456789abcdef"
                    append(#"\u00"#, to: &output)
                    output.append(hexDigits.utf8Start[Int(byte >> 4)])
                    output.append(hexDigits.utf8Start[Int(byte & 0x0F)])
                }
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
        output.append(UInt8(ascii: "\""))
    }

    /// Writes an integer's decimal digits without building a `String`.
    package static func writeInteger(_ int: Int, to output: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maximumIntegerLength) { buffer in
            let count = writeInteger(int, at: buffer.baseAddress!)
            output.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<count]))
        }
    }

    /// The most characters an integer takes: `Int.min` has 19 digits and a sign.
    package static let maximumIntegerLength = 20

    /// Writes an integer's decimal digits at `pointer`, which must have room for
    /// ``maximumIntegerLength`` bytes; returns how many were written. The digits are counted
    /// first, then formed right to left in place, two at a time: the daemon's log writes
    /// several integers per line, hundreds of thousands of lines a second.
    package static func writeInteger(_ value: Int, at pointer: UnsafeMutablePointer<UInt8>) -> Int {
        var start = pointer
        if value < 0 {
            start.initialize(to: UInt8(ascii: "-"))
            start += 1
        }
        var remaining = value.magnitude
        var count = 1
        var bound: UInt = 10
        while remaining >= bound {
            count += 1
            guard count < 20 else { break }
            bound &*= 10
        }
        let pairs: StaticString = """
            00010203040506070809101112131415161718192021222324252627282930313233343536373839\
            40414243444546474849505152535455565758596061626364656667686970717273747576777879\
            8081828384858687888990919293949596979899
            """
        let table = pairs.utf8Start
        var position = count
        while remaining >= 10 {
            let pair = Int(remaining % 100) * 2
            remaining /= 100
            position -= 2
            (start + position).initialize(to: table[pair])
            (start + position + 1).initialize(to: table[pair + 1])
        }
        if position > 0 {
            start.initialize(to: UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: remaining))
        }
        return start + count - pointer
    }

    /// Writes the shortest text that parses back to `double`, always with a `.` or an exponent
    /// so it reads back as a double. Swift's `description` gives that text; its exponent form
    /// (`1e+20`, `1e-07`) is tidied to `1e20`, `1e-7`.
    static func writeDouble(_ double: Double, to output: inout [UInt8]) {
        guard double.isFinite else {
            append("null", to: &output)
            return
        }
        let text = double.description.utf8
        guard let exponentMark = text.firstIndex(of: UInt8(ascii: "e")) else {
            output.append(contentsOf: text)
            return
        }
        output.append(contentsOf: text[...exponentMark])
        var exponent = text[text.index(after: exponentMark)...].drop { $0 == UInt8(ascii: "+") }
        if exponent.first == UInt8(ascii: "-") {
            output.append(UInt8(ascii: "-"))
            exponent = exponent.dropFirst()
        }
        let digits = exponent.drop { $0 == UInt8(ascii: "0") }
        output.append(contentsOf: digits.isEmpty ? exponent.suffix(1) : digits)
    }

    /// Appends ASCII text known at compile time (a key and its punctuation, a literal).
    package static func append(_ text: StaticString, to output: inout [UInt8]) {
        output.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }
}
