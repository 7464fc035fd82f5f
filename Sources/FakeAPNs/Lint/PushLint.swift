/// The push lint: what in one push Apple's servers accept with a 200 but a phone drops, delays
/// or shows otherwise than its sender meant. A pure function of the push and the app's
/// ``AppBundle``; the rules that need the phone's state (a burst to an offline phone, a stale
/// Live Activity timestamp, the Live Activity budget) are the device model's.
package enum PushLint {
    /// The findings of the request-only rules for `notification`, errors first; `app` is the
    /// bundle of its topic's app, when described.
    package static func findings(for notification: PushNotification, app: AppBundle?) -> [LintFinding] {
        []
    }
}

extension PushNotification {
    /// What the push lint found in this push, errors first: judged as it arrived when its
    /// app or phone was described (or strict lint was on), else from the request alone.
    public var lintFindings: [LintFinding] {
        judgedLintFindings ?? PushLint.findings(for: self, app: nil)
    }
}
