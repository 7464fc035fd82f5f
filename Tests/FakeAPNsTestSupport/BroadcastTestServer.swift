import Foundation
@testable import FakeAPNs

/// `Tests/Clients/apns_broadcast_server.py`: channel management and broadcast answered as
/// Apple's pages describe, on python3-h2, which shares no code with FakeAPNs. It records every
/// request before answering it, so a test reads what its client sent as soon as the answer came.
package final class BroadcastTestServer {
    /// One request as the server received it.
    package struct Recorded: Sendable {
        package var method: String
        package var path: String
        /// Regular headers in order.
        package var headers: [(name: String, value: String)]
        package var body: String

        /// The first value of a header.
        package func header(_ name: String) -> String? {
            headers.first { $0.name == name }?.value
        }
    }

    private let peer: PythonPeer
    private let record: URL
    /// The port it listens on, on 127.0.0.1, for both APIs.
    package var port: Int { peer.port }

    package init() throws {
        record = FileManager.default.temporaryDirectory.appendingPathComponent("broadcast-\(UUID().uuidString).jsonl")
        try Data().write(to: record)
        peer = try PythonPeer(
            [
                repositoryRoot.appendingPathComponent("Tests/Clients/apns_broadcast_server.py").path,
                "--cert", testCertificatePath("server.pem"), "--key", testCertificatePath("server.key"),
                "--record", record.path,
            ], name: "apns_broadcast_server.py")
    }

    /// Every request received so far, in order.
    package func requests() throws -> [Recorded] {
        let text = try String(contentsOf: record, encoding: .utf8)
        return try text.split(separator: "\n").map { line in
            let json = try JSONValue(parsing: String(line))
            let headers = (json["headers"]?.arrayValue ?? []).compactMap { pair -> (name: String, value: String)? in
                guard let name = pair[0]?.stringValue, let value = pair[1]?.stringValue else { return nil }
                return (name, value)
            }
            return Recorded(
                method: json["method"]?.stringValue ?? "", path: json["path"]?.stringValue ?? "", headers: headers,
                body: json["body"]?.stringValue ?? "")
        }
    }

    deinit {
        try? FileManager.default.removeItem(at: record)
    }
}
