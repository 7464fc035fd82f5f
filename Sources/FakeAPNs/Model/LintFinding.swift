/// How much a lint finding matters.
public enum LintLevel: String, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    /// Apple calls it an error, or the phone drops or ignores the push.
    case error
    /// The phone shows or does something other than the payload suggests.
    case warning
    /// Worth knowing; often intended.
    case info

    private var rank: Int {
        switch self {
        case .error: 0
        case .warning: 1
        case .info: 2
        }
    }

    /// Errors first.
    public static func < (lhs: LintLevel, rhs: LintLevel) -> Bool { lhs.rank < rhs.rank }

    public var description: String { rawValue }
}

/// One of the push lint's rules: a push that Apple's servers accept with a 200 but that a
/// phone drops, delays or shows otherwise than its sender meant. The identifier is stable:
/// tests, logs and the daemon's JSON name a rule by it.
public struct LintRule: Hashable, Sendable, CustomStringConvertible {
    /// The stable identifier, such as `background-priority-10`.
    public let id: String
    /// How much a finding of this rule matters.
    public let level: LintLevel
    /// Where the rule comes from: the Apple page (or forum thread, or report) it rests on.
    public let source: String

    package init(_ id: String, level: LintLevel, source: String) {
        self.id = id
        self.level = level
        self.source = source
    }

    public var description: String { id }
}

/// What the push lint found in one accepted push.
///
/// ```swift
/// let notification = try server.notifications.pop(timeout: .seconds(2))
/// XCTAssertEqual(notification.lintFindings.map(\.rule), [.backgroundAtPriority10])
/// ```
public struct LintFinding: Sendable, Hashable, CustomStringConvertible {
    /// The rule.
    public let rule: LintRule
    /// One line naming the field and what the phone will do.
    public let message: String

    /// How much it matters (the rule's level).
    public var level: LintLevel { rule.level }
    /// Where the rule comes from (the rule's source).
    public var source: String { rule.source }

    /// A finding of `rule`.
    public init(_ rule: LintRule, _ message: String) {
        self.rule = rule
        self.message = message
    }

    /// "warning unknown-sound: sound "chime.caf" is not in the app; the phone plays the default sound".
    public var description: String { "\(level) \(rule): \(message)" }
}
