extension LintRule {
    /// A Live Activity `timestamp`, `stale-date` or `dismissal-date` that is no date a phone
    /// can use (not a whole number of seconds from 1970 to the end of year 9999): the phone
    /// ignores the push.
    public static let liveActivityDate = LintRule(
        "live-activity-date", level: .error,
        source: "Apple: Starting and updating Live Activities with ActivityKit push notifications (dates in seconds)")
}
