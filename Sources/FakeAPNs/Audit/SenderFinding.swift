#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the sender audit found one sender doing against one rule, over the run: how often,
/// and the first few times it happened.
///
/// ```swift
/// let findings = server.senderReport.findings
/// XCTAssertEqual(findings.map(\.rule), [.pushAfterUnregistered])
/// XCTAssertEqual(findings.first?.count, 3)
/// ```
public struct SenderFinding: Sendable, Hashable, CustomStringConvertible {
    /// The rule.
    public let rule: SenderAuditRule
    /// Who did it.
    public let sender: PushSender
    /// How many times.
    public package(set) var count: Int
    /// The first times, at most ``SenderAuditSettings/examplesPerFinding``.
    public package(set) var examples: [Example]

    /// How much it matters (the rule's level).
    public var level: SenderAuditLevel { rule.level }
    /// Where the rule comes from, with its evidence grade (the rule's source).
    public var source: String { rule.source }

    /// One occurrence: where and when, and what happened.
    public struct Example: Sendable, Hashable, CustomStringConvertible {
        /// The connection's number (``ConnectionInfo/id``).
        public let connection: Int
        /// The device token, when the occurrence was a push.
        public let deviceToken: DeviceToken?
        /// The push's `apns-id`, when it had one.
        public let apnsID: String?
        /// When, by the server's clock.
        public let time: Date
        /// One line saying what happened.
        public let detail: String

        package init(
            connection: Int, deviceToken: DeviceToken? = nil, apnsID: String? = nil, time: Date, detail: String
        ) {
            self.connection = connection
            self.deviceToken = deviceToken
            self.apnsID = apnsID
            self.time = time
            self.detail = detail
        }

        /// "connection 3 token fe15… apns-id …: detail".
        public var description: String {
            var text = "connection \(connection)"
            if let deviceToken { text += " token \(deviceToken.hex)" }
            if let apnsID { text += " apns-id \(apnsID)" }
            return text + ": \(detail)"
        }
    }

    package init(rule: SenderAuditRule, sender: PushSender, count: Int = 0, examples: [Example] = []) {
        self.rule = rule
        self.sender = sender
        self.count = count
        self.examples = examples
    }

    /// "error push-after-unregistered by token:TEAM:KEY, 3 times; first: connection 2 …".
    public var description: String {
        var text = "\(level) \(rule) by \(sender), \(count) time\(count == 1 ? "" : "s")"
        if let first = examples.first { text += "; first: \(first)" }
        return text
    }
}

/// The sender audit's findings over the run, worst first (``FakeAPNsServer/senderReport``).
///
/// ```swift
/// let report = server.senderReport.filtered(sender: "token:ABCDE12345")
/// XCTAssertTrue(report.findings.isEmpty, report.description)
/// ```
public struct SenderReport: Sendable, Hashable, CustomStringConvertible {
    /// Every finding: errors first, then by rule (in ``SenderAuditRule/all``'s order) and sender.
    public let findings: [SenderFinding]
    /// Findings not recorded because the audit already tracked as many senders as it keeps
    /// (``SenderAuditSettings/senderLimit``); 0 normally.
    public let unrecordedCount: Int

    package init(findings: [SenderFinding], unrecordedCount: Int = 0) {
        self.findings = findings.sorted { lhs, rhs in
            if lhs.level != rhs.level { return lhs.level < rhs.level }
            let left = SenderAuditRule.all.firstIndex(of: lhs.rule) ?? 0
            let right = SenderAuditRule.all.firstIndex(of: rhs.rule) ?? 0
            if left != right { return left < right }
            return lhs.sender.description < rhs.sender.description
        }
        self.unrecordedCount = unrecordedCount
    }

    /// The findings of the senders `filter` names (``PushSender/matches(_:)``): `token:TEAMID:KEYID`,
    /// `token:TEAMID`, `certificate:SUBJECT` or `address:HOST`.
    public func filtered(sender filter: String) -> SenderReport {
        SenderReport(findings: findings.filter { $0.sender.matches(filter) }, unrecordedCount: unrecordedCount)
    }

    /// The findings at `level` or worse (`.error`: errors only; `.warning`: all).
    public func findings(atLeast level: SenderAuditLevel) -> [SenderFinding] {
        findings.filter { $0.level <= level }
    }

    /// Whether there is no finding at all.
    public var isClean: Bool { findings.isEmpty }

    /// One line per finding; "no sender findings" when there is none.
    public var description: String {
        findings.isEmpty ? "no sender findings" : findings.map(\.description).joined(separator: "\n")
    }
}
