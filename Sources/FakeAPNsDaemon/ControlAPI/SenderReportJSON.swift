import FakeAPNs

extension ControlJSON {
    /// `{"findings":[{"rule":…,"level":…,"count":…,"sender":…,"examples":[…],"source":…}],
    /// "unrecorded":0}`, worst first; each example `{"connection":3,"token":…|null,
    /// "apnsID":…|null,"time":"2027-01-15T08:00:00Z","unix":1800000000,"detail":…}`.
    static func senderReport(_ report: SenderReport) -> JSONValue {
        let findings: [JSONValue] = report.findings.map { finding in
            .object(JSONObject([
                ("rule", .string(finding.rule.id)), ("level", .string(finding.level.rawValue)),
                ("count", .int(finding.count)), ("sender", .string(finding.sender.description)),
                ("examples", .array(finding.examples.map(senderExample))), ("source", .string(finding.source)),
            ]))
        }
        return .object(JSONObject([("findings", .array(findings)), ("unrecorded", .int(report.unrecordedCount))]))
    }

    private static func senderExample(_ example: SenderFinding.Example) -> JSONValue {
        .object(JSONObject([
            ("connection", .int(example.connection)), ("token", example.deviceToken.map { .string($0.hex) } ?? .null),
            ("apnsID", example.apnsID.map { .string($0) } ?? .null), ("time", .string(Timestamp.rfc3339(example.time))),
            ("unix", seconds(example.time)), ("detail", .string(example.detail)),
        ]))
    }
}
