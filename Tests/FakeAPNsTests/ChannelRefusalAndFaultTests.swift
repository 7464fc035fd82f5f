import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: ProviderAPIClient.exchange and goAway, to see the raw answers.
@testable import FakeAPNs

/// Refusals of the channel management and broadcast APIs on `server.rejections`, fault rules
/// on those paths, and bundles without the broadcast capability.
final class ChannelRefusalAndFaultTests: XCTestCase {
    private let fixture = ServerFixture()
    private var server: FakeAPNsServer { fixture.server }
    private static let bundle = "com.example.app"
    private static let payload = Array(#"{"aps":{"event":"update","timestamp":1750000000,"content-state":{"score":"2-1"}}}"#.utf8)
    private static let createBody = Array(#"{"message-storage-policy": 0, "push-type": "LiveActivity"}"#.utf8)

    override func setUpWithError() throws {
        try fixture.start(for: self)
    }

    private static func broadcast(_ channel: String, bundle: String = bundle, requestID: String? = nil) -> ProviderAPIClient.Request {
        var headers = [("apns-channel-id", channel), ("apns-push-type", "LiveActivity"), ("apns-priority", "10")]
        if let requestID { headers.append(("apns-request-id", requestID)) }
        return ProviderAPIClient.Request(path: "/4/broadcasts/apps/\(bundle)", headers: headers, body: payload)
    }

    private static func create(bundle: String = bundle, body: [UInt8] = createBody) -> ProviderAPIClient.Request {
        ProviderAPIClient.Request(path: "/1/apps/\(bundle)/channels", body: body)
    }

    private static func read(_ channel: String?, method: String = "GET") -> ProviderAPIClient.Request {
        ProviderAPIClient.Request(
            path: "/1/apps/\(bundle)/channels", headers: channel.map { [("apns-channel-id", $0)] } ?? [], method: method)
    }

    private static let list = ProviderAPIClient.Request(path: "/1/apps/\(bundle)/all-channels", method: "GET")

    func testEveryRefusalIsRecordedWithItsOperationBundleChannelAndRequestID() throws {
        let channel = try server.channels.create(bundleID: Self.bundle, storagePolicy: .noStorage).id
        let unknown = Data((0..<16).map { UInt8($0) }).base64EncodedString()
        let requestID = "0f3c8a52-7d7e-4b8e-9e4f-2a1d6c5b4a39"
        // (request, reason, operation, channel sent, cause)
        let cases: [(ProviderAPIClient.Request, String, ChannelOperation?, String?, Rejection.Cause)] = [
            (Self.create(body: Array(#"{"message-storage-policy": 7}"#.utf8)), "BadRequestParams", .create, nil, .malformed),
            (Self.read(nil), "MissingChannelId", .read, nil, .malformed),
            (Self.read(unknown, method: "DELETE"), "ChannelNotRegistered", .delete, unknown, .registry),
            (Self.read(channel, method: "PUT"), "MethodNotAllowed", nil, channel, .malformed),
            (Self.broadcast(unknown, requestID: requestID), "ChannelNotRegistered", .broadcast, unknown, .registry),
            (Self.broadcast("%%%"), "BadChannelId", .broadcast, "%%%", .malformed),
        ]
        let responses = try server.connectHTTP2().exchange(cases.map(\.0))
        // Requests with a body end after those without: the records are matched by request id.
        let rejections = try server.rejections.pop(count: cases.count, timeout: .seconds(10))
        let byRequestID = Dictionary(rejections.map { ($0.requestID ?? "", $0) }, uniquingKeysWith: { first, _ in first })
        XCTAssertEqual(byRequestID.count, cases.count, "one record per refusal, each with its own request id")
        for ((request, reason, operation, channelID, cause), response) in zip(cases, responses) {
            let label = "\(request.method) \(request.path): \(reason)"
            guard let rejection = byRequestID[response.header("apns-request-id") ?? "-"] else {
                XCTFail("no rejection recorded for \(label)")
                continue
            }
            XCTAssertEqual(response.reason, reason, label)
            XCTAssertEqual(rejection.answer, .reason(APNsReason(rawValue: reason)), label)
            XCTAssertEqual(rejection.channelOperation, operation, label)
            XCTAssertEqual(rejection.topic, Self.bundle, label)
            XCTAssertEqual(rejection.channelID, channelID, label)
            XCTAssertEqual(rejection.requestID, response.header("apns-request-id"), label)
            XCTAssertEqual(rejection.cause, cause, label)
            XCTAssertEqual(rejection.format, operation == .broadcast ? .broadcast : nil, label)
            XCTAssertTrue(rejection.responseSent, label)
            XCTAssertNil(rejection.deviceToken, label)
        }
        let broadcast = try XCTUnwrap(byRequestID[requestID], "the client's request id is recorded")
        XCTAssertEqual(broadcast.payload?.bytes, Self.payload, "a refused broadcast keeps its payload")
        XCTAssertTrue(broadcast.description.contains("broadcast \(Self.bundle) channel \(unknown)"), broadcast.description)
    }

    func testARuleForAChannelHitsItsBroadcastsReadsAndDeletesOnly() throws {
        let busy = try server.channels.create(bundleID: Self.bundle, storagePolicy: .noStorage).id
        let quiet = try server.channels.create(bundleID: Self.bundle, storagePolicy: .noStorage).id
        server.faults.add(FaultRule(match: .channel(busy), action: .respond(.tooManyRequests), times: .always))
        let client = try server.connectHTTP2()
        let answers = try client.exchange([
            Self.broadcast(busy), Self.broadcast(quiet), Self.read(busy), Self.read(quiet), Self.list,
            Self.read(busy, method: "DELETE"),
        ]).map { "\($0.status) \($0.reason ?? "")" }
        XCTAssertEqual(answers, ["429 TooManyRequests", "200 ", "429 TooManyRequests", "200 ", "200 ", "429 TooManyRequests"])
        XCTAssertNotNil(server.channels.channel(id: busy), "the refused delete deleted nothing")
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).channelID, quiet)
        let rejection = try server.rejections.pop(timeout: .seconds(5))
        XCTAssertEqual(rejection.cause, .fault)
        XCTAssertEqual(rejection.channelID, busy)
        XCTAssertTrue(rejection.detail.contains("channel \(busy)"), rejection.detail)
        XCTAssertEqual(server.faults.rules.first?.hits, 3)
        // A device push names no channel: the rule leaves it alone.
        XCTAssertEqual(try client.send(.push()).status, 200)
    }

    func testATopicRuleMatchesTheBundleAndEveryRuleCountsChannelRequests() throws {
        server.faults.add(FaultRule(match: .topic("com.example.down"), action: .respond(.internalServerError), times: .always))
        server.faults.add(FaultRule(match: .nth(3), action: .reject(.shutdown)))
        let client = try server.connectHTTP2()
        // One at a time, so that the order judged is the order sent.
        let answers = try [Self.create(bundle: "com.example.down"), Self.create(), Self.create(), Self.list].map {
            let response = try client.send($0)
            return "\(response.status) \(response.reason ?? "")"
        }
        XCTAssertEqual(answers, ["500 InternalServerError", "201 ", "503 Shutdown", "200 "])
        XCTAssertEqual(server.channels.list(bundleID: Self.bundle).count, 1, "the refused create made no channel")
        XCTAssertTrue(server.channels.list(bundleID: "com.example.down").isEmpty)
    }

    func testATokenRuleNeverMatchesAChannelRequest() throws {
        server.faults.add(FaultRule(match: .token(DeviceToken(bytes: [])), action: .respond(.serviceUnavailable), times: .always))
        XCTAssertEqual(try server.connectHTTP2().send(Self.create()).status, 201)
    }

    func testResetCloseAndGoAwayActOnChannelRequestsAsOnDevicePushes() throws {
        let channel = try server.channels.create(bundleID: Self.bundle, storagePolicy: .noStorage).id
        server.faults.add(FaultRule(match: .channel(channel), action: .resetStream))
        let client = try server.connectHTTP2()
        let reset = try client.send(Self.broadcast(channel))
        XCTAssertEqual(reset.resetCode, 7)
        XCTAssertEqual(reset.status, 0)
        XCTAssertEqual(try client.send(Self.broadcast(channel)).status, 200, "the connection goes on")
        let resetRecord = try server.rejections.pop(timeout: .seconds(5))
        XCTAssertEqual(resetRecord.reason, "Stream reset")
        XCTAssertFalse(resetRecord.responseSent)
        XCTAssertEqual(resetRecord.channelOperation, .broadcast)

        server.faults.add(FaultRule(match: .every, action: .goAway(.shutdown)))
        let goingAway = try server.connectHTTP2()
        let answer = try goingAway.send(Self.create())
        XCTAssertEqual(answer.status, 503)
        XCTAssertEqual(answer.reason, "Shutdown")
        XCTAssertNotNil(answer.header("apns-request-id"))
        XCTAssertEqual(String(decoding: try XCTUnwrap(goingAway.goAway).debugData, as: UTF8.self), #"{"reason":"Shutdown"}"#)
        let goAwayRecord = try server.rejections.pop(timeout: .seconds(5))
        XCTAssertTrue(goAwayRecord.connectionClosed)
        XCTAssertEqual(goAwayRecord.channelOperation, .create)

        server.faults.add(FaultRule(match: .every, action: .closeConnection))
        XCTAssertEqual(try server.connectHTTP2().exchange(Self.list).status, 0)
        let closeRecord = try server.rejections.pop(timeout: .seconds(5))
        XCTAssertEqual(closeRecord.reason, "Connection closed")
        XCTAssertEqual(closeRecord.channelOperation, .list)
    }

    func testADelayedBroadcastIsQueuedAfterTheDelay() throws {
        let channel = try server.channels.create(bundleID: Self.bundle, storagePolicy: .noStorage).id
        server.faults.add(FaultRule(match: .channel(channel), action: .delay(.milliseconds(300))))
        let started = ContinuousClock.now
        XCTAssertEqual(try server.connectHTTP2().send(Self.broadcast(channel)).status, 200)
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - started, .milliseconds(300))
        XCTAssertEqual(try server.notifications.pop(timeout: .seconds(5)).channelID, channel)
    }

    func testABundleWithoutTheBroadcastCapabilityIsFeatureNotEnabled() throws {
        server.channels.broadcastBundleIDs = [Self.bundle]
        let enabled = try server.channels.create(bundleID: Self.bundle, storagePolicy: .noStorage).id
        let client = try server.connectHTTP2()
        let answers = try client.exchange([
            Self.create(bundle: "com.example.other"), Self.broadcast(enabled, bundle: "com.example.other"),
            Self.create(), Self.broadcast(enabled),
        ]).map { "\($0.status) \($0.reason ?? "")" }
        XCTAssertEqual(answers, ["400 FeatureNotEnabled", "400 FeatureNotEnabled", "201 ", "200 "])
        server.reset()
        XCTAssertNil(server.channels.broadcastBundleIDs, "a reset restores the configuration's bundles")
        XCTAssertEqual(try client.send(Self.create(bundle: "com.example.other")).status, 201)
    }

    func testTheConfigurationNamesTheBundlesWithTheCapability() throws {
        var configuration = FakeAPNsServer.Configuration()
        configuration.broadcastBundleIDs = ["com.example.live"]
        try fixture.restart(configuration)
        let client = try server.connectHTTP2()
        XCTAssertEqual(try client.send(Self.create()).reason, "FeatureNotEnabled")
        XCTAssertEqual(try client.send(Self.create(bundle: "com.example.live")).status, 201)
        XCTAssertEqual(try server.rejections.pop(timeout: .seconds(5)).reason, "FeatureNotEnabled")
    }
}
