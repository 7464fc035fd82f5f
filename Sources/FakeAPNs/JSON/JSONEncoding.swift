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
struct JSONWriter {
    let sortedKeys: Bool

    func write(_ value: JSONValue, to output: inout [UInt8]) {
        switch value {
        case .null:
            output.append(contentsOf: "null".utf8)
        case .bool(let bool):
            output.append(contentsOf: bool ? "true".utf8 : "false".utf8)
        case .int(let int):
            output.append(contentsOf: String(int).utf8)
        case .double(let double):
            Self.writeDouble(double, to: &output)
        case .string(let string):
            Self.writeString(string, to: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                write(element, to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            let members = sortedKeys
                ? object.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
                : Array(object)
            for (position, member) in members.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                Self.writeString(member.key, to: &output)
                output.append(UInt8(ascii: ":"))
                write(member.value, to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Writes a quoted, escaped string. Runs of bytes that need no escape are copied at once.
    static func writeString(_ string: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { bytes in
            var runStart = 0
            for (position, byte) in bytes.enumerated() where byte < 0x20 || byte == 0x22 || byte == 0x5C {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<position]))
                runStart = position + 1
                output.append(UInt8(ascii: "\\"))
                switch byte {
                case 0x22: output.append(UInt8(ascii: "\""))
                case 0x5C: output.append(UInt8(ascii: "\\"))
                case 0x0A: output.append(UInt8(ascii: "n"))
                case 0x0D: output.append(UInt8(ascii: "r"))
                case 0x09: output.append(UInt8(ascii: "t"))
                case 0x08: output.append(UInt8(ascii: "b"))
                case 0x0C: output.append(UInt8(ascii: "f"))
                default:
                    let hexDigits: StaticString = "0123456789abcdef"
                    output.append(contentsOf: "u00".utf8)
                    output.append(hexDigits.utf8Start[Int(byte >> 4)])
                    output.append(hexDigits.utf8Start[Int(byte & 0x0F)])
                }
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
        output.append(UInt8(ascii: "\""))
    }

    /// Writes the shortest text that parses back to `double`, always with a `.` or an exponent
    /// so it reads back as a double. Swift's `description` gives that text; its exponent form
    /// (`1e+20`, `1e-07`) is tidied to `1e20`, `1e-7`.
    static func writeDouble(_ double: Double, to output: inout [UInt8]) {
        guard double.isFinite else {
            output.append(contentsOf: "null".utf8)
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
}
