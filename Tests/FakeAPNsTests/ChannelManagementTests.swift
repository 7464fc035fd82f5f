import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: ProviderAPIClient.exchange/json/serverStreamLimit, and Mailbox.init.
@testable import FakeAPNs

/// The channel management API (`/1/apps/<bundle>/channels`, `…/all-channels`) over real
/// HTTP/2 connections, with the project's client and with curl.
final class ChannelManagementTests: XCTestCase {
    private let fixture = ServerFixture()
    private var server: FakeAPNsServer { fixture.server }
    private static let bundle = "com.example.app"
    private static let path = "/1/apps/\(bundle)/channels"
    private static let createBody = Array(#"{"message-storage-policy": 1, "push-type": "LiveActivity"}"#.utf8)

    override func setUpWithError() throws {
        try fixture.start(for: self)
    }

    private static func create(_ body: [UInt8] = createBody, bundle: String = bundle, headers: [(String, String)] = [])
        -> ProviderAPIClient.Request
    {
        ProviderAPIClient.Request(path: "/1/apps/\(bundle)/channels", headers: headers, body: body)
    }

    private static func request(_ method: String, channel: String?, path: String = path) -> ProviderAPIClient.Request {
        ProviderAPIClient.Request(path: path, headers: channel.map { [("apns-channel-id", $0)] } ?? [], method: method)
    }

    private static func isUUID(_ text: String?) -> Bool {
        guard let text else { return false }
        return UUID(uuidString: text) != nil && text == text.lowercased()
    }

    func testCreateReadListAndDeleteAsApplesTableSays() throws {
        let client = try server.connectHTTP2()
        let requestID = "0f3c8a52-7d7e-4b8e-9e4f-2a1d6c5b4a39"
        let created = try client.send(Self.create(headers: [("apns-request-id", requestID)]))
        XCTAssertEqual(created.status, 201)
        XCTAssertEqual(created.body, [])
        XCTAssertEqual(created.header("apns-request-id"), requestID)
        let id = try XCTUnwrap(created.header("apns-channel-id"))
        XCTAssertEqual(Data(base64Encoded: id)?.count, 16)

        let read = try client.send(Self.request("GET", channel: id))
        XCTAssertEqual(read.status, 200)
        XCTAssertEqual(read.json?["message-storage-policy"]?.intValue, 1)
        XCTAssertEqual(read.json?["push-type"]?.stringValue, "LiveActivity")
        XCTAssertTrue(Self.isUUID(read.header("apns-request-id")), "made up when the client sent none")

        let second = try XCTUnwrap(try client.send(Self.create()).header("apns-channel-id"))
        let list = try client.send(Self.request("GET", channel: nil, path: "/1/apps/\(Self.bundle)/all-channels"))
        XCTAssertEqual(list.status, 200)
        XCTAssertEqual(list.json?["channels"]?.arrayValue?.compactMap(\.stringValue), [id, second])

        let deleted = try client.send(Self.request("DELETE", channel: id))
        XCTAssertEqual(deleted.status, 204)
        XCTAssertEqual(deleted.body, [])
        XCTAssertNotNil(deleted.header("apns-request-id"))
        XCTAssertEqual(try client.send(Self.request("GET", channel: id)).reason, "ChannelNotRegistered")
        XCTAssertEqual(server.channels.list(bundleID: Self.bundle).map(\.id), [second])
        XCTAssertEqual(server.channels.channel(id: second)?.environment, .sandbox)
        XCTAssertEqual(server.channels.channel(id: second)?.storagePolicy, .mostRecentMessage)
    }

    func testTheFormsRealClientsSendAreAccepted() throws {
        let client = try server.connectHTTP2()
        let nodeAPN = try client.send(Self.create(Array(#"{"message-storage-policy":"0","push-type":"liveactivity"}"#.utf8)))
        XCTAssertEqual(nodeAPN.status, 201)
        let id = try XCTUnwrap(nodeAPN.header("apns-channel-id"))
        XCTAssertEqual(server.channels.channel(id: id)?.storagePolicy, .noStorage)
        // node-apn's README sends an upper-case id; the client matches the answer by it.
        let uppercase = try client.send(Self.create(headers: [("apns-request-id", "0F3C8A52-7D7E-4B8E-9E4F-2A1D6C5B4A39")]))
        XCTAssertEqual(uppercase.status, 201)
        XCTAssertEqual(uppercase.header("apns-request-id"), "0F3C8A52-7D7E-4B8E-9E4F-2A1D6C5B4A39", "as sent")
    }

    func testIdsAreNeverGivenTwiceEvenAfterDeletion() throws {
        var seen = Set<String>()
        for _ in 0..<200 {
            let channel = try server.channels.create(bundleID: Self.bundle, storagePolicy: .noStorage)
            XCTAssertTrue(seen.insert(channel.id).inserted)
            XCTAssertTrue(server.channels.delete(id: channel.id))
        }
        XCTAssertFalse(server.channels.delete(id: seen.first!))
    }

    func testEveryRefusalHasItsStatusReasonContentTypeAndRequestID() throws {
        let client = try server.connectHTTP2()
        let unknown = Data((0..<16).map { UInt8($0) }).base64EncodedString()
        let cases: [(ProviderAPIClient.Request, Int, String)] = [
            (Self.request("GET", channel: nil), 400, "MissingChannelId"),
            (Self.request("DELETE", channel: nil), 400, "MissingChannelId"),
            (Self.request("GET", channel: "not base64!"), 400, "BadChannelId"),
            (Self.request("DELETE", channel: unknown), 400, "ChannelNotRegistered"),
            (Self.create(Array(#"{"message-storage-policy":1,"push-type":"LiveActivity","color":"red"}"#.utf8)), 400, "BadRequestParams"),
            (Self.create(Array(#"{"message-storage-policy":2,"push-type":"LiveActivity"}"#.utf8)), 400, "BadRequestParams"),
            (Self.create(Array(#"{"message-storage-policy":"12","push-type":"LiveActivity"}"#.utf8)), 400, "BadRequestParams"),
            (Self.create(Array(#"{"message-storage-policy":1}"#.utf8)), 400, "BadRequestParams"),
            (Self.create(Array(#"{"push-type":"LiveActivity"}"#.utf8)), 400, "BadRequestParams"),
            (Self.create(Array(#"{"message-storage-policy":1,"push-type":"alert"}"#.utf8)), 400, "BadRequestParams"),
            (Self.create(Array("policy one".utf8)), 400, "BadRequestPayload"),
            (Self.create([]), 400, "BadRequestPayload"),
            (Self.create(bundle: "com.example.app.voip"), 400, "TopicDisallowed"),
            (Self.create(bundle: "com.example.app.push-type.liveactivity"), 400, "TopicDisallowed"),
            (Self.request("GET", channel: nil, path: "/1/apps/\(Self.bundle)/channel"), 405, "MethodNotAllowed"),
            (ProviderAPIClient.Request(path: "/1/apps/\(Self.bundle)/subscriptions", body: Self.createBody), 404, "BadPath"),
            (Self.request("PUT", channel: nil), 405, "MethodNotAllowed"),
            (ProviderAPIClient.Request(path: "/1/apps/\(Self.bundle)/all-channels", body: Self.createBody), 405, "MethodNotAllowed"),
        ]
        let responses = try client.exchange(cases.map(\.0))
        for ((request, status, reason), response) in zip(cases, responses) {
            let label = "\(request.method) \(request.path) \(String(decoding: request.body, as: UTF8.self)): \(reason)"
            XCTAssertEqual(response.status, status, label)
            XCTAssertEqual(response.reason, reason, label)
            XCTAssertEqual(response.header("content-type"), "application/json", label)
            XCTAssertTrue(
                response.header("apns-request-id").map(Self.isUUID) == true || response.header("apns-id") != nil, label)
        }
        XCTAssertTrue(Self.isUUID(responses[0].header("apns-request-id")))
        XCTAssertEqual(server.channels.list(bundleID: Self.bundle), [])
    }

    func testTheChannelLimitIsCannotCreateChannelConfig() throws {
        server.channels.maximumChannelsPerBundle = 3
        for _ in 0..<3 { try server.channels.create(bundleID: Self.bundle, storagePolicy: .noStorage) }
        let client = try server.connectHTTP2()
        let refused = try client.send(Self.create())
        XCTAssertEqual(refused.status, 400)
        XCTAssertEqual(refused.reason, "CannotCreateChannelConfig")
        XCTAssertEqual(try client.send(Self.create(bundle: "com.example.other")).status, 201, "the limit is per bundle")
        XCTAssertThrowsError(try server.channels.create(bundleID: Self.bundle, storagePolicy: .noStorage)) { error in
            XCTAssertEqual(error as? ChannelRegistryError, .limitReached(bundleID: Self.bundle, limit: 3))
        }
        server.channels.delete(id: server.channels.list(bundleID: Self.bundle)[0].id)
        XCTAssertEqual(try client.send(Self.create()).status, 201, "a deleted channel frees its place")
    }

    func testTokenAuthenticationAsForDevicePushes() throws {
        try fixture.restart(.init(authentication: .testToken))
        let client = try server.connectHTTP2()
        let missing = try client.send(Self.create())
        XCTAssertEqual(missing.status, 403)
        XCTAssertEqual(missing.reason, "MissingProviderToken")
        XCTAssertEqual(client.serverStreamLimit, 1, "a refusal does not open the streams")
        let old = try ProviderTokenSigner.sign(
            keyID: TestCertificates.jwtKeyID, teamID: TestCertificates.jwtTeamID, issuedAt: Date().addingTimeInterval(-7200))
        XCTAssertEqual(try client.send(Self.create(headers: [("authorization", "bearer \(old)")])).reason, "ExpiredProviderToken")
        let now = Date()
        let token = try ProviderTokenSigner.sign(keyID: TestCertificates.jwtKeyID, teamID: TestCertificates.jwtTeamID, issuedAt: now)
        XCTAssertEqual(try client.send(Self.create(headers: [("authorization", "bearer \(token)")])).status, 201)
        XCTAssertEqual(client.serverStreamLimit, 1000, "a success opens them")
        let soon = try ProviderTokenSigner.sign(
            keyID: TestCertificates.jwtKeyID, teamID: TestCertificates.jwtTeamID, issuedAt: now.addingTimeInterval(60))
        let early = try client.send(Self.request("GET", channel: nil, path: "/1/apps/\(Self.bundle)/all-channels").with(
            header: ("authorization", "bearer \(soon)")))
        XCTAssertEqual(early.status, 429)
        XCTAssertEqual(early.reason, "TooManyProviderTokenUpdates", "the 20-minute refresh rule")
        XCTAssertEqual(try client.send(Self.request("GET", channel: nil, path: "/1/apps/\(Self.bundle)/all-channels").with(
            header: ("authorization", "bearer \(token)"))).status, 200)
    }

    func testCertificateAuthenticationAsForDevicePushes() throws {
        try fixture.restart(.init(authentication: .certificate))
        let response = try server.connectHTTP2().send(Self.create())
        XCTAssertEqual(response.status, 403)
        XCTAssertEqual(response.reason, "MissingProviderToken")
        let client = try server.connectHTTP2(identity: .testClient)
        XCTAssertEqual(try client.send(Self.create()).status, 201)
        let other = try client.send(Self.create(bundle: "com.example.other"))
        XCTAssertEqual(other.status, 403)
        XCTAssertEqual(other.reason, "TopicMismatch")
        try fixture.restart(.init(authentication: .certificate, environment: .production))
        let sandbox = TLSIdentity(
            certificateChainPEM: TestCertificates.sandboxClientCertificatePEM, privateKeyPEM: TestCertificates.sandboxClientKeyPEM)
        XCTAssertEqual(
            try server.connectHTTP2(identity: sandbox).send(Self.create(bundle: "com.example.sandbox")).reason,
            "BadCertificateEnvironment")
    }

    func testCreationAndDeletionAreEvents() throws {
        let events = Mailbox<ServerEvent>(noun: "event")
        try fixture.restart(.init(onEvent: { event in
            switch event {
            case .channelCreated, .channelDeleted: events.append(event)
            default: break
            }
        }))
        let client = try server.connectHTTP2()
        let id = try XCTUnwrap(try client.send(Self.create()).header("apns-channel-id"))
        XCTAssertEqual(try client.send(Self.request("DELETE", channel: id)).status, 204)
        let seen = try events.pop(count: 2, timeout: .seconds(5))
        guard case .channelCreated(let created) = seen[0], case .channelDeleted(let deleted) = seen[1] else {
            return XCTFail("\(seen)")
        }
        XCTAssertEqual(created.id, id)
        XCTAssertEqual(deleted, created)
    }

    func testTheChannelListenerServesManagementOnly() throws {
        var configuration = FakeAPNsServer.Configuration()
        configuration.channelsPort = 0
        try fixture.restart(configuration)
        let port = try XCTUnwrap(server.channelsPort)
        XCTAssertNotEqual(port, server.http2Port)
        let client = try ProviderAPIClient(host: "127.0.0.1", port: port)
        let created = try client.send(Self.create())
        XCTAssertEqual(created.status, 201)
        let id = try XCTUnwrap(created.header("apns-channel-id"))
        XCTAssertEqual(try server.connectHTTP2().send(Self.request("GET", channel: id)).status, 200, "one registry")
        let broadcast = try client.send(ProviderAPIClient.Request(
            path: "/4/broadcasts/apps/\(Self.bundle)",
            headers: [("apns-channel-id", id), ("apns-push-type", "LiveActivity"), ("apns-priority", "10")],
            body: Array(#"{"aps":{"event":"update"}}"#.utf8)))
        XCTAssertEqual(broadcast.status, 404)
        XCTAssertEqual(broadcast.reason, "BadPath")
        let push = try client.send(.push())
        XCTAssertEqual(push.status, 404)
        XCTAssertEqual(push.reason, "BadPath")
        XCTAssertEqual(server.notifications.count, 0)
    }

    func testCurlCreatesListsReadsAndDeletes() throws {
        let base = "https://127.0.0.1:\(fixture.http2Port)/1/apps/\(Self.bundle)"
        func curl(_ arguments: [String]) throws -> String {
            let result = try runTool("/usr/bin/curl", [
                "--silent", "--show-error", "--http2", "--cacert", testCertificatePath("ca.pem"),
            ] + arguments)
            XCTAssertEqual(result.status, 0, result.error)
            return result.output
        }
        let headers = try curl([
            "--dump-header", "-", "--output", "/dev/null", "--data", #"{"message-storage-policy":0,"push-type":"LiveActivity"}"#,
            "\(base)/channels",
        ])
        XCTAssertTrue(headers.hasPrefix("HTTP/2 201"), headers)
        let line = try XCTUnwrap(headers.split(separator: "\r\n").first { $0.hasPrefix("apns-channel-id: ") })
        let id = String(line.dropFirst("apns-channel-id: ".count))
        XCTAssertEqual(try curl(["\(base)/all-channels"]), #"{"channels":["\#(id)"]}"#)
        XCTAssertEqual(
            try curl(["--header", "apns-channel-id: \(id)", "\(base)/channels"]),
            #"{"message-storage-policy":0,"push-type":"LiveActivity"}"#)
        XCTAssertEqual(
            try curl(["--request", "DELETE", "--header", "apns-channel-id: \(id)", "--write-out", "%{http_code}", "\(base)/channels"]),
            "204")
        XCTAssertEqual(
            try curl(["--header", "apns-channel-id: \(id)", "--write-out", " %{http_code} %{content_type}", "\(base)/channels"]),
            #"{"reason":"ChannelNotRegistered"} 400 application/json"#)
    }
}

extension ProviderAPIClient.Request {
    /// The request with one more header.
    fileprivate func with(header: (String, String)) -> ProviderAPIClient.Request {
        var request = self
        request.headers.append(header)
        return request
    }
}
