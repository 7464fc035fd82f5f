/// The push lint: what in one push Apple's servers accept with a 200 but a phone drops, delays
/// or shows otherwise than its sender meant. A pure function of the push and the app's
/// ``AppBundle``, read through its ``PushFacts``; the rules that need the phone's state (a
/// burst to an offline phone, a stale Live Activity timestamp, the Live Activity budget) are
/// the device model's. The rules are the table of ``LintRuleDefinition/all``.
///
/// Each finding names the field and what the phone will do, on one line. A payload that is not
/// a JSON object gives one finding, ``LintRule/payloadNotJSON`` (with its ``Payload/parseError``):
/// a phone makes nothing of it, so no other rule judges it.
package enum PushLint {
    /// The findings of the request-only rules for `notification`, errors first (then in the
    /// order of ``LintRule/all``); `app` is the bundle of its topic's app, when described.
    package static func findings(for notification: PushNotification, app: AppBundle?) -> [LintFinding] {
        findings(for: PushFacts(notification, app: app))
    }

    /// The findings of the request-only rules for the push `facts` describe, errors first
    /// (then in the order of ``LintRule/all``); for a payload that is not a JSON object, that
    /// rule's alone.
    package static func findings(for facts: PushFacts) -> [LintFinding] {
        let payload = facts.notification.payload
        guard payload.parseError == nil, payload.json != nil else {
            return LintRuleDefinition.all.filter { $0.rule == .payloadNotJSON }.flatMap { $0.findings(in: facts) }
        }
        return errorsFirst(LintRuleDefinition.all.flatMap { $0.findings(in: facts) })
    }

    /// `findings` with errors first, then warnings, then information, each level in the order
    /// given.
    package static func errorsFirst(_ findings: [LintFinding]) -> [LintFinding] {
        findings.enumerated()
            .sorted { ($0.element.level, $0.offset) < ($1.element.level, $1.offset) }
            .map(\.element)
    }
}

extension PushNotification {
    /// What the push lint found in this push, errors first: the request's findings (judged as
    /// it arrived when its app was described or strict lint was on, else from the request
    /// alone), and the device model's, when a test described the phone it was sent to.
    public var lintFindings: [LintFinding] {
        PushLint.errorsFirst((judgedLintFindings ?? PushLint.findings(for: self, app: nil)) + deviceLintFindings)
    }

    /// ``lintFindings`` when anything judged this push as it came (the lint stage, or the
    /// device model with findings); nil when nothing did, so that a reader that must not parse
    /// every payload (the daemon's log and metrics) leaves it out.
    package var lintFindingsIfJudged: [LintFinding]? {
        isLintJudged ? lintFindings : nil
    }

    /// Whether anything judged this push as it came: ``lintFindingsIfJudged`` is not nil.
    package var isLintJudged: Bool { judgedLintFindings != nil || !deviceLintFindings.isEmpty }
}
