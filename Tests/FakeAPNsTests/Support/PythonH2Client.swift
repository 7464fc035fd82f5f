import FakeAPNsTestSupport
import Foundation
import FakeAPNs

/// What `Tests/Clients/h2_client.py` saw: an HTTP/2 client on Debian's python3-h2, which
/// shares no code with FakeAPNs's nghttp2 layer and, like many stacks, stops reading at GOAWAY.
struct PythonH2Run: Decodable, Sendable {
    struct Request: Decodable, Sendable {
        /// The request's number from 0; its `apns-id` is ``PythonH2Run/apnsID(_:)``.
        var index: Int
        var stream: Int32
        var status: Int?
        var reason: String?
        /// The answer's `apns-id` and `apns-unique-id`, as python3-h2's HPACK decoder read them.
        var apnsId: String?
        var apnsUniqueId: String?
        /// RST_STREAM's error code, when the server reset the stream.
        var reset: UInt32?
        /// The answer on a second connection, for a request the server said it did not process.
        var retry: Retry?
    }

    struct Retry: Decodable, Sendable {
        var status: Int?
        var reason: String?
        var reset: UInt32?
    }

    struct GoAway: Decodable, Sendable {
        var lastStreamId: Int32
        var errorCode: UInt32
        var debug: String
    }

    var requests: [Request]
    var goaway: GoAway?
    /// "TYPE stream" of every frame read, in order, GOAWAY included.
    var frames: [String]
    /// Whether the server closed the connection.
    var ended: Bool

    /// The `apns-id` of request `index`.
    static func apnsID(_ index: Int) -> String {
        "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - String(index).count) + String(index)
    }

    /// Runs the client against `server`'s provider API in `mode` (pipeline, rapid-reset,
    /// keep-sending) with the script's `arguments`, to its end.
    static func run(
        _ mode: String, against server: FakeAPNsServer, _ arguments: [String] = [], timeout: Duration = .seconds(120)
    ) throws -> PythonH2Run {
        let script = repositoryRoot.appendingPathComponent("Tests/Clients/h2_client.py").path
        let ca = testCertificatePath("ca.pem")
        let result = try runTool(
            "/usr/bin/python3",
            [script, mode, "--host", server.configuration.host, "--port", String(server.http2Port!), "--ca", ca]
                + arguments,
            timeout: timeout)
        guard result.status == 0 else {
            throw PythonH2Error(description: "h2_client.py exited with \(result.status): \(result.error)")
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(PythonH2Run.self, from: Data(result.output.utf8))
    }

    /// Starts ``run(_:against:_:timeout:)`` on a thread; the mailbox gets its outcome.
    static func start(
        _ mode: String, against server: FakeAPNsServer, _ arguments: [String] = []
    ) -> Mailbox<Result<PythonH2Run, any Error>> {
        inBackground("h2_client.py") { try run(mode, against: server, arguments) }
    }

    /// The request numbers of queued notifications, from their `apns-id`s, in queue order.
    static func indexes(of notifications: [PushNotification]) -> [Int] {
        notifications.compactMap { notification in
            guard let id = notification.apnsID, id.hasPrefix("00000000-0000-4000-8000-") else { return nil }
            return Int(id.suffix(12))
        }
    }
}

struct PythonH2Error: Error, Sendable, CustomStringConvertible {
    let description: String
}
