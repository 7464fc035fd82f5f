import FakeAPNs

/// The daemon's counters, fed by server events, rendered in Prometheus text format.
public final class Metrics: Sendable {
    private struct Counts {
        /// Indexed by `formatIndex`: counted per notification, so without hashing a name.
        var accepted = [Int](repeating: 0, count: Metrics.formats.count)
        var rejected: [String: Int] = [:]
        var opened: [String: Int] = [:]
        var open: [String: Int] = [:]
        var handshakeFailures: [String: Int] = [:]
        /// Keyed by the labels, `listener="…",reason="…"`.
        var refused: [String: Int] = [:]
        var connectionRules: [String: Int] = [:]
        var feedbackReads = 0
        var feedbackTuples = 0
        var channelsCreated = 0
        var channelsDeleted = 0
        /// Keyed by the delivery status's words.
        var deviceLogEntries: [String: Int] = [:]
        /// Keyed by the labels, `rule="…",level="…"`.
        var lintFindings: [String: Int] = [:]
    }

    private let counts = Locked(Counts())

    public init() {}

    /// Counts one event.
    public func record(_ event: ServerEvent) {
        counts.withLock { counts in
            switch event {
            case .accepted(let batch):
                for notification in batch {
                    counts.accepted[Self.formatIndex(notification.format)] += 1
                    // Only a push the intake judged, as the log: judging here would parse every payload.
                    for finding in notification.lintFindingsIfJudged ?? [] {
                        counts.lintFindings["rule=\"\(finding.rule.id)\",level=\"\(finding.level)\"", default: 0] += 1
                    }
                }
            case .rejected(let rejection):
                counts.rejected[rejection.reason, default: 0] += 1
            case .connectionOpened(_, let listener):
                counts.opened[listener.rawValue, default: 0] += 1
                counts.open[listener.rawValue, default: 0] += 1
            case .connectionClosed(_, let listener):
                counts.open[listener.rawValue, default: 0] -= 1
            case .connectionRule(_, let listener, let rule):
                counts.connectionRules["listener=\"\(listener.rawValue)\",rule=\"\(rule.name)\"", default: 0] += 1
            case .handshakeFailed(_, let listener, _):
                counts.handshakeFailures[listener.rawValue, default: 0] += 1
            case .connectionRefused(_, let listener, let reason):
                counts.refused["listener=\"\(listener.rawValue)\",reason=\"\(reason.cause)\"", default: 0] += 1
            case .feedbackRead(let tuples, _):
                counts.feedbackReads += 1
                counts.feedbackTuples += tuples.count
            case .channelCreated:
                counts.channelsCreated += 1
            case .channelDeleted:
                counts.channelsDeleted += 1
            case .deviceLog(let entries):
                for entry in entries { counts.deviceLogEntries[entry.status.rawValue, default: 0] += 1 }
            }
        }
    }

    /// The Prometheus exposition, with the queue depths of `server` read now.
    public func render(server: FakeAPNsServer) -> String {
        let counts = counts.withLock { $0 }
        var text = ""
        func family(_ name: String, _ type: String, _ help: String, _ samples: [(String, Int)]) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for (labels, value) in samples {
                text += labels.isEmpty ? "\(name) \(value)\n" : "\(name){\(labels)} \(value)\n"
            }
        }
        func labelled(_ label: String, _ values: [String: Int], all keys: [String] = []) -> [(String, Int)] {
            let names = Set(values.keys).union(keys).sorted()
            return names.map { ("\(label)=\"\(Self.escape($0))\"", values[$0] ?? 0) }
        }
        let accepted = Dictionary(uniqueKeysWithValues: zip(Self.formats.map(\.rawValue), counts.accepted))
        let listeners = ListenerKind.allCases.map(\.rawValue)
        family("fakeapns_notifications_accepted_total", "counter", "Notifications accepted, by wire format.",
               labelled("format", accepted))
        family("fakeapns_notifications_rejected_total", "counter", "Notifications refused, by reason.",
               labelled("reason", counts.rejected))
        family("fakeapns_connections_opened_total", "counter", "Connections that completed the TLS handshake, by listener.",
               labelled("listener", counts.opened, all: listeners))
        family("fakeapns_connections_open", "gauge", "Connections open now, by listener.",
               labelled("listener", counts.open, all: listeners))
        family("fakeapns_handshake_failures_total", "counter", "Connections whose TLS handshake failed, by listener.",
               labelled("listener", counts.handshakeFailures, all: listeners))
        family("fakeapns_connections_refused_total", "counter",
               "Connections closed as soon as accepted, by listener and reason (a connection limit, or no descriptor, thread or TLS state).",
               counts.refused.sorted { $0.key < $1.key })
        family("fakeapns_connection_rules_total", "counter",
               "Provider API connections a connection rule throttled (a stream limit of 1 after a refusal), ended after refusals or retired, by listener and rule.",
               counts.connectionRules.sorted { $0.key < $1.key })
        family("fakeapns_feedback_reads_total", "counter", "Connections that read the feedback service.",
               [("", counts.feedbackReads)])
        family("fakeapns_feedback_tuples_delivered_total", "counter", "Feedback tuples delivered.",
               [("", counts.feedbackTuples)])
        family("fakeapns_channels_created_total", "counter", "Broadcast channels created, but not those of --devices at start (which a reset creates again, counted).",
               [("", counts.channelsCreated)])
        family("fakeapns_channels_deleted_total", "counter", "Broadcast channels deleted (a reset deletes without counting).",
               [("", counts.channelsDeleted)])
        family("fakeapns_channels_open", "gauge", "Broadcast channels that exist now.", [("", server.channels.count)])
        family("fakeapns_broadcasts_received_total", "counter", "Broadcasts accepted (as format=\"broadcast\" above).",
               [("", counts.accepted[Self.formatIndex(.broadcast)])])
        family("fakeapns_broadcast_deliveries_total", "counter",
               "Deliveries of a broadcast to a subscribed device, stored messages included.",
               [("", Int(server.channels.deliveryCount))])
        family("fakeapns_device_log_entries_total", "counter",
               "Steps of pushes on their way to phones (the device model's delivery log), by status.",
               labelled("status", counts.deviceLogEntries))
        family("fakeapns_lint_findings_total", "counter",
               "Push lint findings on notifications judged as they came (an app or a phone described, or --lint strict), the request's and the device model's, by rule and level.",
               counts.lintFindings.sorted { $0.key < $1.key })
        family("fakeapns_queue_depth", "gauge", "Items waiting in the queues the API's next endpoints pop.",
               [("queue=\"notifications\"", server.notifications.count), ("queue=\"rejections\"", server.rejections.count)])
        family("fakeapns_stored", "gauge", "Items kept in the histories the API lists.",
               [("kind=\"notifications\"", server.notificationHistory.count), ("kind=\"rejections\"", server.rejectionHistory.count)])
        family("fakeapns_dropped_total", "counter", "Items dropped, oldest first, to honour the retention limit.",
               [("kind=\"notifications\"", server.notificationHistory.droppedCount),
                ("kind=\"rejections\"", server.rejectionHistory.droppedCount)])
        return text
    }

    /// Every wire format, each with a place in `Counts.accepted`.
    private static let formats: [PushNotification.Format] = [.simple, .enhanced, .frame, .http2, .broadcast]

    private static func formatIndex(_ format: PushNotification.Format) -> Int {
        switch format {
        case .simple: 0
        case .enhanced: 1
        case .frame: 2
        case .http2: 3
        case .broadcast: 4
        }
    }

    private static func escape(_ value: String) -> String {
        var escaped = String.UnicodeScalarView()
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": escaped.append(contentsOf: #"\\"#.unicodeScalars)
            case "\"": escaped.append(contentsOf: #"\""#.unicodeScalars)
            case "\n": escaped.append(contentsOf: #"\n"#.unicodeScalars)
            default: escaped.append(scalar)
            }
        }
        return String(escaped)
    }
}
