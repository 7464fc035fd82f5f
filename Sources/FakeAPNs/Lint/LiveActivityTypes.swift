#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A Live Activity attributes type an app declares: the fields of its `ActivityAttributes`
/// (what a push-to-start sends as `attributes`) and of its `ContentState` (every push's
/// `content-state`), each with its JSON type. The phone decodes both with `JSONDecoder`'s default
/// strategies, so a push that does not decode as declared is dropped after APNs answered 200.
///
/// ```swift
/// server.apps["com.example.food"] = AppBundle(liveActivityTypes: [
///     "DeliveryAttributes": LiveActivityType(
///         attributes: ["orderID": .string],
///         contentState: ["status": .string, "eta": .date, "courier": .string.optional])
/// ])
/// ```
public struct LiveActivityType: Sendable, Hashable {
    /// The fields of the `ActivityAttributes` type, by JSON key.
    public var attributes: [String: Field]
    /// The fields of its `ContentState`, by JSON key.
    public var contentState: [String: Field]

    /// A type; fields not listed are not checked.
    public init(attributes: [String: Field] = [:], contentState: [String: Field] = [:]) {
        self.attributes = attributes
        self.contentState = contentState
    }

    /// One field: its JSON type and whether it may be absent or `null` (a Swift optional).
    public struct Field: Sendable, Hashable, CustomStringConvertible {
        /// Its JSON type.
        public var kind: Kind
        /// Whether it may be absent or `null`.
        public var isOptional: Bool

        /// A field of `kind`, required unless `isOptional`.
        public init(_ kind: Kind, isOptional: Bool = false) {
            self.kind = kind
            self.isOptional = isOptional
        }

        /// The declaration's text, such as `"date"` or `"string?"`; nil for any other.
        public init?(declaration: String) {
            let optional = declaration.hasSuffix("?")
            guard let kind = Kind(rawValue: optional ? String(declaration.dropLast()) : declaration) else { return nil }
            self.init(kind, isOptional: optional)
        }

        /// A `String`.
        public static let string = Field(.string)
        /// A `Double` (any JSON number).
        public static let number = Field(.number)
        /// An `Int` (a whole JSON number).
        public static let integer = Field(.integer)
        /// A `Bool`.
        public static let boolean = Field(.boolean)
        /// A `Date`: seconds since 1 January 2001, `JSONDecoder`'s default.
        public static let date = Field(.date)
        /// A nested `Codable` struct (a JSON object; its members are not checked).
        public static let object = Field(.object)
        /// An array (its elements are not checked).
        public static let array = Field(.array)

        /// The same field, optional.
        public var optional: Field { Field(kind, isOptional: true) }

        /// The declaration's text: the kind, with `?` when optional.
        public var description: String { kind.rawValue + (isOptional ? "?" : "") }
    }

    /// The JSON type of a field, as Swift's `JSONDecoder` reads it with its default strategies.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A JSON string (`String`).
        case string
        /// A JSON number (`Double`).
        case number
        /// A JSON number with no fraction (`Int`).
        case integer
        /// `true` or `false` (`Bool`).
        case boolean
        /// A JSON number read as seconds since 2001-01-01 (`Date` with the default strategy).
        case date
        /// A JSON object (a nested `Codable` type).
        case object
        /// A JSON array.
        case array

        /// Whether `value` decodes as this kind.
        func accepts(_ value: JSONValue) -> Bool {
            switch (self, value) {
            case (.string, .string), (.boolean, .bool), (.object, .object), (.array, .array): true
            case (.number, .int), (.number, .double), (.date, .int), (.date, .double): true
            case (.integer, .int): true
            case (.integer, .double(let number)): number.rounded() == number && abs(number) < 9.2e18
            default: false
            }
        }
    }
}

// MARK: - Decoding a push as the phone does

extension LiveActivityType {
    /// What the phone finds wrong decoding `aps` with this type: a required field missing, a
    /// field of another JSON type, a `Date` that is a Unix time. A `start` has its `attributes`
    /// decoded too; an `end` may leave `content-state` out. `now`: the server's clock when the
    /// push came. At most one problem per declared field, so the work is bounded by the
    /// declaration.
    func problems(in aps: APS, event: String, now: Date) -> [LiveActivityProblem] {
        var found: [LiveActivityProblem] = []
        if event == "start" {
            found += Self.problems(in: aps.attributes, member: "attributes", fields: attributes, now: now)
        }
        if aps.contentState != nil || event != "end" {
            found += Self.problems(in: aps.contentState, member: "content-state", fields: contentState, now: now)
        }
        return found
    }

    private static func problems(
        in value: JSONValue?, member: String, fields: [String: Field], now: Date
    ) -> [LiveActivityProblem] {
        guard !fields.isEmpty else { return [] }
        guard let value else {
            return [.mismatch(field: "aps.\(member)", "is missing; the phone cannot decode the activity's \(member)")]
        }
        guard let object = value.objectValue else {
            return [.mismatch(field: "aps.\(member)", "is \(value.kindDescription), not an object")]
        }
        var found: [LiveActivityProblem] = []
        for (key, field) in fields.sorted(by: { $0.key < $1.key }) {
            let path = "aps.\(member).\(key)"
            guard let sent = object[key], sent != .null else {
                if !field.isOptional { found.append(.mismatch(field: path, "is missing (declared \(field))")) }
                continue
            }
            guard field.kind.accepts(sent) else {
                found.append(.mismatch(field: path, "is \(sent.kindDescription), declared \(field)"))
                continue
            }
            if field.kind == .date, let seconds = sent.doubleValue, UnixDateRule.looksLikeUnixTime(seconds, now: now) {
                found.append(.unixDate(field: path, seconds: seconds))
            }
        }
        return found
    }
}

/// What is wrong with a Live Activity push's `attributes` or `content-state`, by field.
package enum LiveActivityProblem: Sendable, Hashable {
    /// The field does not decode as declared (missing, or another JSON type).
    case mismatch(field: String, String)
    /// A `Date` field holds what reads as a Unix time (``UnixDateRule``).
    case unixDate(field: String, seconds: Double)

    /// The field's path, such as `aps.content-state.eta`.
    package var field: String {
        switch self {
        case .mismatch(let field, _), .unixDate(let field, _): field
        }
    }
}

/// The rule for "a `Date` that looks like a Unix time". The phone reads a `Date` as seconds
/// since 1 January 2001 (`JSONDecoder`'s default); a sender that writes a Unix time (seconds
/// since 1970) puts the date 978,307,200 seconds (31 years) later. A value is taken for a Unix
/// time when, read as seconds since 1970, it lies within a year of the server's clock: read as
/// the phone reads it, it then lies more than 30 years ahead, which no Live Activity means.
package enum UnixDateRule {
    /// Seconds from 1970 to 2001.
    package static let referenceOffset: Double = 978_307_200
    /// How near the server's clock a Unix reading must be: 366 days.
    package static let window: Double = 366 * 86_400

    /// Whether `seconds`, sent for a `Date`, is a Unix time, judged at `now` (the server's clock).
    package static func looksLikeUnixTime(_ seconds: Double, now: Date) -> Bool {
        guard seconds.isFinite else { return false }
        return abs(seconds - now.timeIntervalSince1970) <= window
    }
}

// MARK: - Bounds

extension LiveActivityType {
    /// The most attributes types one app declares: real apps have a few.
    public static let maximumTypesPerApp = 32
    /// The most fields one type declares, `attributes` and `content-state` together: the 4 KB
    /// a content state may take holds a few dozen.
    public static let maximumFields = 128
}

// MARK: - A push's Live Activity facts

/// What a Live Activity push is to the phone, read once from its `aps` and its app's declared
/// types (``PushFacts/liveActivity``): its `event`, the type it decodes with from the request
/// alone, and what decoding found. The device model decodes an update again only when the
/// test started the activity with another type (``LiveActivityType``).
package struct LiveActivityFacts: Sendable {
    /// The `event` as sent, when one of `start`, `update` and `end`; nil otherwise.
    package let event: String?
    /// Why the `event` is none the phone knows (missing, not a string, unknown); nil when it is.
    package let eventProblem: String?
    /// The name of the type the push was decoded with: a start's `attributes-type`, else the
    /// app's only declared type; nil when none applies.
    package let typeName: String?
    /// A start's `attributes-type` that the app, which declares its types, does not declare.
    package let undeclaredType: String?
    /// What decoding with ``typeName`` found.
    package let problems: [LiveActivityProblem]

    /// The events a phone knows.
    package static let events: Set<String> = ["start", "update", "end"]

    /// The facts of a Live Activity push's `aps`, for the app `app` describes, received at `now`.
    init(aps: APS, app: AppBundle?, now: Date) {
        let sent = aps["event"]
        switch sent {
        case nil:
            eventProblem = "aps.event is missing"
        case .string(let name) where Self.events.contains(name):
            eventProblem = nil
        case .some(let value):
            eventProblem = "aps.event \(value.serialized().prefix(32)) is not start, update or end"
        }
        let event = eventProblem == nil ? aps.event : nil
        self.event = event
        let types = app?.liveActivityTypes ?? [:]
        var name: String?
        if event == "start" {
            name = aps.attributesType
        } else if event != nil, types.count == 1 {
            name = types.first?.key
        }
        let type = name.flatMap { types[$0] }
        undeclaredType = app?.liveActivityTypes != nil && type == nil && event == "start" ? name : nil
        typeName = type == nil ? nil : name
        problems = event.flatMap { event in type?.problems(in: aps, event: event, now: now) } ?? []
    }

    /// What decoding with `type` finds in `aps`, for an activity the test started with it.
    package static func problems(
        in aps: APS, event: String, type: LiveActivityType, now: Date
    ) -> [LiveActivityProblem] {
        type.problems(in: aps, event: event, now: now)
    }
}

extension LiveActivityProblem {
    /// The finding's message: the field, what is wrong, and what the phone does.
    package var message: String {
        switch self {
        case .mismatch(let field, let what):
            "\(field) \(what); the phone cannot decode it and ignores the push"
        case .unixDate(let field, let seconds):
            "\(field) \(Int(exactly: seconds.rounded(.down)).map(String.init) ?? String(seconds)) is a Unix time;"
                + " the phone reads a Date as seconds since 2001, 31 years later (send timeIntervalSinceReferenceDate)"
        }
    }
}
