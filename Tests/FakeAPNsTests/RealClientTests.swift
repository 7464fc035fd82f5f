import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

/// The servers driven by clients users already have: curl, h2load, openssl s_client, python3-h2.
final class RealClientTests: XCTestCase {
    private let fixture = ServerFixture()
    private var server: FakeAPNsServer { fixture.server }

    private func url(_ token: DeviceToken = Fixtures.token) -> String {
        "https://127.0.0.1:\(fixture.http2Port)/3/device/\(token.hex)"
    }

    private func curl(_ arguments: [String]) throws -> (status: Int, body: String) {
        let result = try runTool("/usr/bin/curl", [
            "--silent", "--show-error", "--http2", "--cacert", testCertificatePath("ca.pem"),
            "--write-out", "\n%{http_code} %{http_version}",
        ] + arguments)
        XCTAssertEqual(result.status, 0, result.error)
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false)
        let last = lines.last.map(String.init) ?? ""
        XCTAssertTrue(last.hasSuffix(" 2"), "curl spoke HTTP/2: \(last)")
        return (Int(last.split(separator: " ").first ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    func testCurlWithAProviderCertificate() throws {
        try fixture.start(.init(authentication: .certificate), for: self)
        let answer = try curl([
            "--cert", testCertificatePath("client.pem"),
            "--key", testCertificatePath("client.key"),
            "--header", "apns-topic: com.example.app", "--header", "apns-push-type: alert",
            "--data", #"{"aps":{"alert":"from curl"}}"#, url(),
        ])
        XCTAssertEqual(answer.status, 200)
        let notification = try server.notifications.pop(timeout: .seconds(5))
        XCTAssertEqual(notification.payload.aps.alert?.body, "from curl")
        XCTAssertEqual(notification.connection.clientCertificate?.topic, "com.example.app")
    }

    func testCurlWithAProviderToken() throws {
        try fixture.start(.init(authentication: .testToken), for: self)
        let token = try ProviderTokenSigner.sign(keyID: TestCertificates.jwtKeyID, teamID: TestCertificates.jwtTeamID)
        let answer = try curl([
            "--header", "authorization: bearer \(token)", "--header", "apns-topic: com.example.app",
            "--header", "apns-push-type: alert", "--data", #"{"aps":{"alert":"token"}}"#, url(),
        ])
        XCTAssertEqual(answer.status, 200)
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).providerToken?.keyID, TestCertificates.jwtKeyID)
    }

    /// curl's own HTTP/2 stack sends upper-case ids (as node-apn's README does) and reads the
    /// answers' headers: `apns-id` and `apns-request-id` come back exactly as sent.
    func testCurlGetsUpperCaseIDsBackAsSent() throws {
        try fixture.start(for: self)
        let apnsID = "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"
        let push = try curl([
            "--dump-header", "-", "--header", "apns-id: \(apnsID)", "--header", "apns-topic: com.example.app",
            "--data", #"{"aps":{"alert":"upper"}}"#, url(),
        ])
        XCTAssertEqual(push.status, 200)
        XCTAssertEqual(headerValues("apns-id", in: push.body), [apnsID])
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).apnsID, apnsID)

        let requestID = "0F3C8A52-7D7E-4B8E-9E4F-2A1D6C5B4A39"
        let create = try curl([
            "--dump-header", "-", "--header", "apns-request-id: \(requestID)",
            "--data", #"{"message-storage-policy":0,"push-type":"LiveActivity"}"#,
            "https://127.0.0.1:\(fixture.http2Port)/1/apps/com.example.app/channels",
        ])
        XCTAssertEqual(create.status, 201)
        XCTAssertEqual(headerValues("apns-request-id", in: create.body), [requestID])
    }

    /// The values of the header `name` in what curl's `--dump-header -` printed.
    private func headerValues(_ name: String, in output: String) -> [String] {
        // Lines end in CRLF, one Character to Swift: split on any newline.
        output.split(whereSeparator: \.isNewline).compactMap { line in
            let line = line.trimmingCharacters(in: .whitespaces)
            guard line.lowercased().hasPrefix(name + ":") else { return nil }
            return line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces)
        }
    }

    func testCurlSeesAppleErrorBodies() throws {
        try fixture.start(for: self)
        let answer = try curl(["--header", "apns-topic: com.example.app", "--data", "{}", "https://127.0.0.1:\(fixture.http2Port)/3/device/xyz"])
        XCTAssertEqual(answer.status, 400)
        XCTAssertEqual(answer.body, #"{"reason":"BadDeviceToken"}"#)
    }

    func testH2loadRequestsAllSucceedAndAllArrive() throws {
        try fixture.start(for: self)
        let body = FileManager.default.temporaryDirectory.appendingPathComponent("h2load-\(UUID().uuidString).json")
        try Data(Fixtures.alert).write(to: body)
        defer { try? FileManager.default.removeItem(at: body) }
        let result = try runTool("/usr/bin/h2load", [
            "-n", "2000", "-c", "4", "-m", "50", "-d", body.path,
            "-H", "apns-topic: com.example.app", "-H", "apns-push-type: alert", url(),
        ])
        XCTAssertEqual(result.status, 0, result.error)
        XCTAssertTrue(result.output.contains("2000 succeeded"), result.output)
        XCTAssertTrue(result.output.contains("status codes: 2000 2xx"), result.output)
        XCTAssertEqual(try server.notifications.pop(count: 2000, timeout: .seconds(20)).count, 2000)
    }

    /// After a connection's first answer the ids' names go by HPACK index and their values as
    /// never-indexed literals: another HPACK decoder reads every answer's ids, and they are the
    /// ids the notifications were queued with.
    func testPythonH2ReadsEveryAnswersIDsOnOneConnection() throws {
        try fixture.start(for: self)
        let run = try PythonH2Run.run("pipeline", against: server, ["--count", "60"])
        XCTAssertEqual(run.requests.count, 60)
        for request in run.requests {
            XCTAssertEqual(request.status, 200, "\(request)")
            XCTAssertEqual(request.apnsId, PythonH2Run.apnsID(request.index), "\(request)")
        }
        let uniqueIDs = run.requests.compactMap(\.apnsUniqueId)
        XCTAssertEqual(uniqueIDs.count, 60, "a sandbox answer carries apns-unique-id")
        XCTAssertEqual(Set(uniqueIDs).count, 60, "each one new")
        for id in uniqueIDs {
            XCTAssertNotNil(UUID(uuidString: id), "8-4-4-4-12")
            XCTAssertEqual(id, id.lowercased())
        }
        let queued = try server.notifications.pop(count: 60, timeout: .seconds(10))
        XCTAssertEqual(Set(queued.compactMap(\.apnsID)), Set(run.requests.map { PythonH2Run.apnsID($0.index) }))
    }
}
