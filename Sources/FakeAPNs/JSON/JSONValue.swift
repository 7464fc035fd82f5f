// MARK: - JSONValue

/// A JSON value, as parsed from a notification payload or built by a test.
///
/// Numbers written without a fraction or an exponent that fit in `Int` are ``int(_:)``;
/// every other number is ``double(_:)``. So `1` is `.int(1)` and `1.0` is `.double(1.0)`,
/// and the two are not equal: a payload checker can tell how a client wrote a number.
///
/// The literal conformances let tests write expected values the way JSON reads:
///
/// ```swift
/// let expected: JSONValue = ["aps": ["alert": "Hello", "badge": 3], "id": nil]
/// XCTAssertEqual(try JSONValue(parsing: #"{"aps":{"alert":"Hello","badge":3},"id":null}"#), expected)
/// ```
public enum JSONValue: Sendable, Hashable {
    /// The JSON literal `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number written without fraction or exponent that fits in `Int`.
    case int(Int)
    /// Any other number: with a fraction or an exponent, or an integer too large for `Int`.
    case double(Double)
    /// A string, with escapes already decoded.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object, with its members in the order they were written.
    case object(JSONObject)
}

// MARK: - Accessors

extension JSONValue {
    /// The string, if this is ``string(_:)``; otherwise `nil`.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer, if this is ``int(_:)``; otherwise `nil`.
    ///
    /// A ``double(_:)`` is never converted, so `1.0` gives `nil`: APNs keys such as `badge`
    /// are integers and a checker should see what the client actually sent.
    public var intValue: Int? {
        if case .int(let value) = self { return value }
        return nil
    }

    /// The number as a `Double`, if this is ``double(_:)`` or ``int(_:)``; otherwise `nil`.
    ///
    /// ```swift
    /// JSONValue.int(1).doubleValue      // 1.0
    /// JSONValue.double(0.5).doubleValue // 0.5
    /// ```
    public var doubleValue: Double? {
        switch self {
        case .double(let value): value
        case .int(let value): Double(value)
        default: nil
        }
    }

    /// The Boolean, if this is ``bool(_:)``; otherwise `nil`. Numbers are not converted.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements, if this is ``array(_:)``; otherwise `nil`.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The object, if this is ``object(_:)``; otherwise `nil`.
    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// Whether this is ``null``.
    public var isNull: Bool {
        self == .null
    }

    /// What kind of value this is, as an error message says it: "null", "a boolean",
    /// "a number", "a string", "an array" or "an object".
    public var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// The member named `key`, if this is an object that has one; otherwise `nil`.
    ///
    /// Subscripts chain through optionals, so a deep lookup reads like a path:
    ///
    /// ```swift
    /// let title = json["aps"]?["alert"]?["title"]?.stringValue
    /// ```
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }

    /// The element at `index`, if this is an array and `index` is in range; otherwise `nil`.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }
}

// MARK: - Literals

extension JSONValue: ExpressibleByNilLiteral {
    /// Creates ``null`` from `nil`.
    ///
    /// Where the expected type is `JSONValue?`, `nil` means "absent", not `null`;
    /// write `.null` (or `JSONValue.null`) to mean the JSON literal there.
    public init(nilLiteral: ()) {
        self = .null
    }
}

extension JSONValue: ExpressibleByBooleanLiteral {
    /// Creates ``bool(_:)`` from `true` or `false`.
    public init(booleanLiteral value: Bool) {
        self = .bool(value)
    }
}

extension JSONValue: ExpressibleByIntegerLiteral {
    /// Creates ``int(_:)`` from an integer literal.
    public init(integerLiteral value: Int) {
        self = .int(value)
    }
}

extension JSONValue: ExpressibleByFloatLiteral {
    /// Creates ``double(_:)`` from a floating-point literal such as `0.5` or `1.0`.
    public init(floatLiteral value: Double) {
        self = .double(value)
    }
}

extension JSONValue: ExpressibleByStringLiteral {
    /// Creates ``string(_:)`` from a string literal.
    public init(stringLiteral value: String) {
        self = .string(value)
    }
}

extension JSONValue: ExpressibleByArrayLiteral {
    /// Creates ``array(_:)`` from an array literal.
    public init(arrayLiteral elements: JSONValue...) {
        self = .array(elements)
    }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
    /// Creates ``object(_:)`` from a dictionary literal, keeping the members in written order.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements.lazy.map { (key: $0.0, value: $0.1) }))
    }
}

extension JSONValue: CustomStringConvertible {
    /// The value as compact JSON, so test failures print readable JSON.
    public var description: String {
        serialized()
    }
}

// MARK: - JSONObject

/// A JSON object that keeps its members in the order they were written.
///
/// When a key appears more than once, lookup and iteration see only its first occurrence,
/// and ``duplicateKeys`` remembers the key so a payload linter can report it.
///
/// Equality follows JSON's meaning, not its spelling: two objects are equal when they have the
/// same keys with equal values, in any order. Duplicates and member order do not count.
///
/// ```swift
/// let object: JSONObject = ["b": 1, "a": 2]
/// object.keys     // ["b", "a"]
/// object["a"]     // .int(2)
/// ```
public struct JSONObject: Sendable, Hashable, Sequence {
    /// One member: a key and its value.
    public typealias Element = (key: String, value: JSONValue)

    /// A stored member. A struct rather than a tuple so the compiler specializes copying
    /// and destroying arrays of members, which the parser does a lot.
    struct Member: Sendable {
        let key: String
        let value: JSONValue
    }

    /// Objects with more members than this get a hash index; smaller ones are searched
    /// linearly, which is faster for the handful of keys a typical payload has.
    private static let indexThreshold = 12

    /// The members in written order, first occurrence of each key only.
    private let members: [Member]
    /// Key to position in `members`; `nil` for small objects.
    private let index: [String: Int]?

    /// Keys that occurred more than once where this object was written, each listed once,
    /// in the order their first repetition appeared. Empty for a well-formed object.
    ///
    /// ```swift
    /// let object = try JSONValue(parsing: #"{"a":1,"a":2}"#).objectValue!
    /// object["a"]            // .int(1): the first occurrence wins
    /// object.duplicateKeys   // ["a"]
    /// ```
    public let duplicateKeys: [String]

    /// Creates an empty object.
    public init() {
        members = []
        index = nil
        duplicateKeys = []
    }

    /// Creates an object from key-value pairs in the given order.
    ///
    /// If a key repeats, the first pair wins and the key is recorded in ``duplicateKeys``.
    ///
    /// ```swift
    /// let object = JSONObject([(key: "badge", value: 1), (key: "sound", value: "default")])
    /// ```
    public init(_ members: some Sequence<Element>) {
        self.init(members: members.map { Member(key: $0.key, value: $0.value) })
    }

    /// Creates an object from members in written order, removing (and recording) duplicate keys.
    init(members candidates: [Member]) {
        var duplicates: [String] = []
        if candidates.count <= Self.indexThreshold {
            var unique = candidates
            var position = 1
            while position < unique.count {
                let key = unique[position].key
                // Comparing lengths first (O(1) for native strings) skips most full comparisons.
                let length = key.utf8.count
                if unique[..<position].contains(where: { $0.key.utf8.count == length && $0.key == key }) {
                    if !duplicates.contains(key) { duplicates.append(key) }
                    unique.remove(at: position)
                } else {
                    position += 1
                }
            }
            members = unique
            index = nil
        } else {
            var unique: [Member] = []
            unique.reserveCapacity(candidates.count)
            var positions: [String: Int] = [:]
            positions.reserveCapacity(candidates.count)
            for member in candidates {
                if positions[member.key] == nil {
                    positions[member.key] = unique.count
                    unique.append(member)
                } else if !duplicates.contains(member.key) {
                    duplicates.append(member.key)
                }
            }
            members = unique
            index = positions
        }
        duplicateKeys = duplicates
    }

    private init(members: [Member], index: [String: Int]?, duplicateKeys: [String]) {
        self.members = members
        self.index = index
        self.duplicateKeys = duplicateKeys
    }

    /// The value for `key`, or `nil` when the object has no such member.
    public subscript(key: String) -> JSONValue? {
        if let index {
            return index[key].map { members[$0].value }
        }
        return members.first(where: { $0.key == key })?.value
    }

    /// The keys in written order (each key once).
    public var keys: [String] {
        members.map(\.key)
    }

    /// The number of distinct keys.
    public var count: Int {
        members.count
    }

    /// Whether the object has no members.
    public var isEmpty: Bool {
        members.isEmpty
    }

    /// Iterates over the members of an object in written order.
    public struct Iterator: IteratorProtocol {
        private var base: IndexingIterator<[Member]>

        fileprivate init(_ members: [Member]) {
            base = members.makeIterator()
        }

        /// The next member, or `nil` after the last.
        public mutating func next() -> Element? {
            base.next().map { (key: $0.key, value: $0.value) }
        }
    }

    /// Returns an iterator over the members in written order.
    public func makeIterator() -> Iterator {
        Iterator(members)
    }

    /// The number of members; iteration yields exactly this many.
    public var underestimatedCount: Int {
        members.count
    }

    /// Returns a copy without the member named `key`; other duplicates stay recorded.
    func removing(_ key: String) -> JSONObject {
        let remaining = JSONObject(members: members.filter { $0.key != key })
        return JSONObject(
            members: remaining.members,
            index: remaining.index,
            duplicateKeys: duplicateKeys.filter { $0 != key }
        )
    }

    /// Two objects are equal when they have the same keys with equal values, in any order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.members.allSatisfy { rhs[$0.key] == $0.value }
    }

    /// Hashes the members without regard to their order, consistent with `==`.
    public func hash(into hasher: inout Hasher) {
        var combined = 0
        for member in members {
            var memberHasher = Hasher()
            memberHasher.combine(member.key)
            memberHasher.combine(member.value)
            combined &+= memberHasher.finalize()
        }
        hasher.combine(members.count)
        hasher.combine(combined)
    }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// Creates an object from a dictionary literal, keeping the members in written order.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements.lazy.map { (key: $0.0, value: $0.1) })
    }
}

extension JSONObject: CustomStringConvertible {
    /// The object as compact JSON.
    public var description: String {
        JSONValue.object(self).serialized()
    }
}
