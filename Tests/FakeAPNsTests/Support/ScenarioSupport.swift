import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

/// A push as a provider writes it on the wire: the path, the `apns-*` headers and the JSON
/// body, for the clients the project did not write (curl, python3-h2) to send.
struct WirePush: Sendable {
    var path: String
    var headers: [(String, String)]
    var body: String

    /// A device push to `token`; `apnsID` is made up when not given, so the test can read the
    /// push's delivery log by it. Headers left nil are not sent.
    static func device(
        _ token: DeviceToken, _ body: String, topic: String = "com.example.app", pushType: String? = "alert",
        priority: Int? = nil, expiration: Int? = nil, collapseID: String? = nil, apnsID: String = UUID().uuidString
    ) -> WirePush {
        var headers = [("apns-id", apnsID), ("apns-topic", topic)]
        if let pushType { headers.append(("apns-push-type", pushType)) }
        if let priority { headers.append(("apns-priority", String(priority))) }
        if let expiration { headers.append(("apns-expiration", String(expiration))) }
        if let collapseID { headers.append(("apns-collapse-id", collapseID)) }
        return WirePush(path: "/3/device/\(token.hex)", headers: headers, body: body)
    }

    /// A broadcast to `channelID` of `bundleID`'s channels (a Live Activity update).
    static func broadcast(
        _ channelID: String, _ body: String, bundleID: String = "com.example.app", priority: Int = 10,
        expiration: Int? = nil
    ) -> WirePush {
        var headers = [
            ("apns-channel-id", channelID), ("apns-push-type", "liveactivity"), ("apns-priority", String(priority)),
        ]
        if let expiration { headers.append(("apns-expiration", String(expiration))) }
        return WirePush(path: "/4/broadcasts/apps/\(bundleID)", headers: headers, body: body)
    }

    /// The `apns-id` the push carries, when it carries one.
    var apnsID: String? { headers.first { $0.0 == "apns-id" }?.1 }
}

/// How the server answered a push sent from outside.
struct WireAnswer: Decodable, Sendable {
    var status: Int
    var reason: String?
    var apnsID: String?
    var apnsUniqueID: String?
    /// A 410's `timestamp`, in milliseconds (read from curl's answers).
    var timestamp: Int?

    enum CodingKeys: String, CodingKey {
        case status, reason, timestamp
        case apnsID = "apns_id"
        case apnsUniqueID = "apns_unique_id"
    }
}

/// Sends with curl's own HTTP/2 stack, one process per push, trusting the test CA.
enum Curl {
    /// Sends `push` to `server`'s provider API and returns once curl read the whole answer.
    static func send(_ push: WirePush, to server: FakeAPNsServer, file: StaticString = #filePath, line: UInt = #line)
        throws -> WireAnswer
    {
        var arguments = [
            "--silent", "--show-error", "--http2", "--cacert", testCertificatePath("ca.pem"), "--dump-header", "-",
        ]
        for (name, value) in push.headers { arguments += ["--header", "\(name): \(value)"] }
        arguments += ["--data-binary", push.body, "https://\(server.configuration.host):\(server.http2Port!)\(push.path)"]
        let result = try runTool("/usr/bin/curl", arguments)
        XCTAssertEqual(result.status, 0, "curl: \(result.error)", file: file, line: line)
        // The headers, a blank line, then the body (Apple's error JSON, or nothing).
        let parts = result.output.components(separatedBy: "\r\n\r\n")
        let head = parts.first ?? ""
        let body = parts.dropFirst().joined(separator: "\r\n\r\n")
        let lines = head.components(separatedBy: "\r\n")
        XCTAssertTrue(lines.first?.hasPrefix("HTTP/2 ") ?? false, "curl spoke HTTP/2: \(head)", file: file, line: line)
        func header(_ name: String) -> String? {
            lines.dropFirst().first { $0.lowercased().hasPrefix(name + ":") }
                .map { $0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces) }
        }
        let status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        let json = body.isEmpty ? nil : try? JSONValue(parsing: body)
        return WireAnswer(
            status: status, reason: json?["reason"]?.stringValue, apnsID: header("apns-id"),
            apnsUniqueID: header("apns-unique-id"), timestamp: json?["timestamp"]?.intValue)
    }
}

/// Sends with Debian's python3-h2 (`Tests/Clients/apns_push.py`): every push on one
/// connection, each once the one before it is answered, so the server takes them in order.
enum PythonH2 {
    static func send(_ pushes: [WirePush], to server: FakeAPNsServer) throws -> [WireAnswer] {
        var requests: [JSONValue] = []
        for push in pushes {
            let headers = push.headers.map { JSONValue.array([.string($0.0), .string($0.1)]) }
            requests.append(.object(JSONObject([
                (key: "path", value: .string(push.path)), (key: "headers", value: .array(headers)),
                (key: "body", value: .string(push.body)),
            ])))
        }
        let script = repositoryRoot.appendingPathComponent("Tests/Clients/apns_push.py").path
        let result = try runTool("/usr/bin/python3", [
            script, "--host", server.configuration.host, "--port", String(server.http2Port!),
            "--ca", testCertificatePath("ca.pem"), JSONValue.array(requests).serialized(),
        ])
        guard result.status == 0 else {
            throw PythonH2Error(description: "apns_push.py exited with \(result.status): \(result.error)")
        }
        return try JSONDecoder().decode([WireAnswer].self, from: Data(result.output.utf8))
    }

    static func send(_ push: WirePush, to server: FakeAPNsServer) throws -> WireAnswer {
        try send([push], to: server)[0]
    }
}

/// What the scenario tests share: the phone, the app, and a time the clock is set to.
enum Scenario {
    static let token: DeviceToken = "fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2"
    static let bundle = "com.example.app"
    static let liveActivityTopic = "com.example.app.push-type.liveactivity"
    /// 2027-01-15 08:00 UTC: the time the scenarios that reason about dates set the clock to.
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// An alert push's body.
    static func alert(_ text: String) -> String { #"{"aps":{"alert":"\#(text)"}}"# }

    /// A background push's body (`content-available: 1` only, the data beside `aps`).
    static let background = #"{"aps":{"content-available":1},"sync":true}"#
}

/// A scenario: a server of its own for each test, its clock set to ``Scenario/now`` so that
/// every date the test reasons about is fixed, and the phone the pushes go to, described
/// before the first push (a phone no test has touched yet gets every push at once).
class ScenarioTestCase: XCTestCase {
    let fixture = ServerFixture()
    var server: FakeAPNsServer { fixture.server }
    var phone: Phone { server.device(Scenario.token) }

    override func setUpWithError() throws {
        try fixture.start(for: self)
        server.clock.set(to: Scenario.now)
        phone.update { _ in }
    }
}
