public import FakeAPNs

extension PushNotification {
    /// Records a failure (in XCTest or Swift Testing, whichever runs) listing each push lint
    /// finding of this push at `minimumLevel` or worse; warnings and errors by default.
    ///
    /// ```swift
    /// let push = await server.notifications.expectNext()
    /// push?.expectNoLintFindings()                          // warnings and errors
    /// push?.expectNoLintFindings(minimumLevel: .error)      // errors only
    /// ```
    public func expectNoLintFindings(
        minimumLevel: LintLevel = .warning,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) {
        let findings = lintFindings.filter { $0.level <= minimumLevel }
        guard !findings.isEmpty else { return }
        recordFailure(
            "Expected no lint findings (\(LintLevel.named(atLeast: minimumLevel))) in \(lintLabel); found "
                + LintLevel.listed(findings),
            at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
    }

    /// "push #3 (apns-id …, topic …)": enough to find the push, without its payload.
    fileprivate var lintLabel: String {
        var parts: [String] = []
        if let apnsID { parts.append("apns-id \(apnsID)") }
        if let topic { parts.append("topic \(topic)") }
        if parts.isEmpty { parts.append("token \(deviceToken.hex)") }
        return "push #\(sequenceNumber) (\(parts.joined(separator: ", ")))"
    }
}

extension FakeAPNsServer {
    /// Records one failure (in XCTest or Swift Testing, whichever runs) listing every push in
    /// the notification history, popped or not, after sequence number `since`, that has a push
    /// lint finding at `minimumLevel` or worse (warnings and errors by default), with each
    /// finding. The history keeps what the server's retention keeps.
    ///
    /// ```swift
    /// // ... the code under test sends its pushes ...
    /// server.expectNoLintFindings(minimumLevel: .warning)
    /// ```
    public func expectNoLintFindings(
        minimumLevel: LintLevel = .warning, since: UInt64 = 0,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) {
        let flagged = notificationHistory.list(since: since).compactMap { push in
            let findings = push.lintFindings.filter { $0.level <= minimumLevel }
            return findings.isEmpty ? nil : (push, findings)
        }
        guard !flagged.isEmpty else { return }
        let shown = 20
        var message =
            "Expected no lint findings (\(LintLevel.named(atLeast: minimumLevel))); "
            + "\(flagged.count) push\(flagged.count == 1 ? " has" : "es have") some:"
        for (push, findings) in flagged.prefix(shown) {
            message += "\n\(push.lintLabel): \(LintLevel.listed(findings))"
        }
        if flagged.count > shown { message += "\n… and \(flagged.count - shown) more" }
        recordFailure(message, at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
    }
}

extension LintLevel {
    /// "errors", "warnings or errors", "any level": the findings that `minimum` selects.
    fileprivate static func named(atLeast minimum: LintLevel) -> String {
        switch minimum {
        case .error: "errors"
        case .warning: "warnings or errors"
        case .info: "any level"
        }
    }

    /// "2: error background-priority-10: …; warning unknown-sound: …".
    fileprivate static func listed(_ findings: [LintFinding]) -> String {
        "\(findings.count): " + findings.map(\.description).joined(separator: "; ")
    }
}
