import FakeAPNs
import FakeAPNsTestSupport
import Foundation
import XCTest

/// The fixture the library's tests take their server from: a restart stops the server it
/// replaces, and the ports and clients it hands out are the running server's.
final class ServerFixtureTests: XCTestCase {
    private let fixture = ServerFixture()

    func testRestartStopsTheServerItReplacesAndHandsOutTheNewOnesPortsAndClients() throws {
        let first = try fixture.start(for: self)
        let firstGateway = fixture.gatewayPort
        XCTAssertEqual(firstGateway, first.gatewayPort)

        let second = try fixture.restart(.init(authentication: .testToken))
        XCTAssertFalse(first === second)
        XCTAssertTrue(fixture.server === second)
        XCTAssertNil(
            try? BinaryProviderClient(host: "127.0.0.1", port: firstGateway), "the replaced server still listens")
        XCTAssertEqual(fixture.http2Port, second.http2Port)
        XCTAssertEqual(fixture.feedbackPort, second.feedbackPort)

        let refused = try fixture.http2Client().send(.push())
        XCTAssertEqual(refused.status, 403, "the new configuration asks for a token")
        let client = try fixture.binaryClient()
        try client.send(BinaryEncoder.enhanced(identifier: 7, token: Fixtures.token, payload: Fixtures.alert))
        XCTAssertEqual(try second.notifications.pop(timeout: .seconds(5)).identifier, 7)
    }
}
