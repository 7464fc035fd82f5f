public import FakeAPNs

extension FakeAPNsServer {
    /// Records one failure (in XCTest or Swift Testing, whichever runs) listing every sender
    /// audit finding at `minimumLevel` or worse (warnings and errors by default), with its
    /// count and first example: what the code under test did that Apple punishes over a run
    /// (a push after 410, a retried refusal, no back-off, a connection per push …). With
    /// `sender`, only that sender's findings count (`token:TEAMID:KEYID`, `token:TEAMID`,
    /// `certificate:SUBJECT` or `address:HOST`), so another job's on a shared server do not.
    ///
    /// ```swift
    /// // ... the code under test sends its pushes ...
    /// server.expectNoSenderFindings()                          // warnings and errors
    /// server.expectNoSenderFindings(minimumLevel: .error)      // errors only
    /// server.expectNoSenderFindings(sender: "token:ABCDE12345")
    /// ```
    public func expectNoSenderFindings(
        minimumLevel: SenderAuditLevel = .warning, sender: String? = nil,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) {
        let report = sender.map { senderReport(sender: $0) } ?? senderReport
        let findings = report.findings(atLeast: minimumLevel)
        guard !findings.isEmpty else { return }
        let levels = minimumLevel == .error ? "errors" : "warnings or errors"
        var message =
            "Expected no sender findings (\(levels)\(sender.map { " of \($0)" } ?? "")); found \(findings.count):"
        for finding in findings {
            message += "\n\(finding)"
        }
        recordFailure(message, at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
    }
}
