import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: TLSClient, to read the feedback service's raw bytes.
@testable import FakeAPNs

/// The feedback service: tuples on connect, each once, then close.
final class FeedbackTests: XCTestCase {
    private let fixture = ServerFixture()
    private var server: FakeAPNsServer { fixture.server }

    override func setUpWithError() throws {
        try fixture.start(for: self)
    }

    private func read(identity: TLSIdentity? = nil) throws -> [FeedbackTuple] {
        try FeedbackClient.read(host: "127.0.0.1", port: fixture.feedbackPort, identity: identity)
    }

    func testFeedbackListensOnItsOwnPort() {
        XCTAssertGreaterThan(try XCTUnwrap(server.feedbackPort), 0)
        XCTAssertNotEqual(server.feedbackPort, server.gatewayPort)
    }

    func testEmptyFeedbackClosesAtOnceWithNothing() throws {
        XCTAssertEqual(try read(), [])
    }

    func testAddedTuplesAreDeliveredOnceWithTheirBytes() throws {
        let short = DeviceToken(bytes: [0xAB, 0xCD])
        server.feedback.add(Fixtures.token, at: Date(timeIntervalSince1970: 1_700_000_000))
        server.feedback.add(FeedbackTuple(timestamp: 42, deviceToken: short))
        let client = try TLSClient(host: "127.0.0.1", port: fixture.feedbackPort)
        let bytes = try client.readToEnd()
        XCTAssertEqual(bytes.count, 38 + 8, "38 bytes for a 32-byte token, 8 for a 2-byte one")
        XCTAssertEqual(Array(bytes[0..<6]), [0x65, 0x53, 0xF1, 0x00, 0x00, 0x20])
        XCTAssertEqual(Array(bytes[6..<38]), Fixtures.token.bytes)
        XCTAssertEqual(Array(bytes[38...]), [0, 0, 0, 42, 0, 2, 0xAB, 0xCD])
        XCTAssertEqual(try read(), [], "a second read finds nothing")
    }

    func testUnregisteringADeviceFeedsTheService() throws {
        server.devices.register(Fixtures.token)
        server.devices.unregister(Fixtures.token, at: Date(timeIntervalSince1970: 1_800_000_000))
        XCTAssertEqual(try read(), [FeedbackTuple(timestamp: 1_800_000_000, deviceToken: Fixtures.token)])
        XCTAssertEqual(server.feedback.pendingTuples, [])
    }

    func testFeedbackAsksForClientCertificatesLikeTheGateway() throws {
        server.stop()
        try fixture.restart(.init(clientCertificates: .required()))
        server.feedback.add(Fixtures.token, at: Date(timeIntervalSince1970: 5))
        XCTAssertThrowsError(try read(identity: nil))
        XCTAssertEqual(server.feedback.pendingTuples.count, 1, "a refused client takes nothing")
        XCTAssertEqual(try read(identity: .testClient).map(\.timestamp), [5])
    }

    func testTupleDecodingKeepsATrailingPartialTuple() {
        let tuple = FeedbackTuple(timestamp: 1, deviceToken: Fixtures.token)
        let (tuples, rest) = FeedbackTuple.decodeAll(tuple.bytes + [0, 0])
        XCTAssertEqual(tuples, [tuple])
        XCTAssertEqual(rest, [0, 0])
    }

    func testServerWithoutFeedbackServiceHasNoFeedbackPort() throws {
        try withFakeAPNs(configuration: .init(feedbackPort: nil)) { plain in
            XCTAssertNil(plain.feedbackPort)
        }
    }
}
