import FakeAPNsTestSupport
import XCTest
import FakeAPNs

/// `withFakeAPNs`: the server is running inside the body and stopped after it, however the
/// body ends.
final class WithFakeAPNsTests: XCTestCase {
    private struct Failure: Error {}

    /// Whether a TLS client can connect to the port (a stopped server's port refuses).
    private func accepts(_ port: Int) -> Bool {
        (try? BinaryProviderClient(host: "127.0.0.1", port: port)) != nil
    }

    func testTheServerRunsInsideAndTheBodysValueComesBack() throws {
        let (port, value) = try withFakeAPNs { server in
            XCTAssertTrue(accepts(server.gatewayPort))
            return (server.gatewayPort, 42)
        }
        XCTAssertEqual(value, 42)
        XCTAssertFalse(accepts(port), "stopped once the body returned")
    }

    func testTheServerIsStoppedWhenTheBodyThrows() throws {
        var port = 0
        XCTAssertThrowsError(try withFakeAPNs { server in
            port = server.gatewayPort
            XCTAssertTrue(accepts(port))
            throw Failure()
        }) { XCTAssertTrue($0 is Failure) }
        XCTAssertNotEqual(port, 0)
        XCTAssertFalse(accepts(port), "stopped although the body threw")
    }

    func testTheAsyncFormStopsTheServerWhenTheBodyThrows() async throws {
        var port = 0
        do {
            try await withFakeAPNs(configuration: .init(feedbackPort: nil)) { server in
                XCTAssertNil(server.feedbackPort)
                port = try XCTUnwrap(server.http2Port)
                XCTAssertTrue(accepts(port))
                await Task.yield()
                throw Failure()
            }
            XCTFail("expected the body's error")
        } catch {
            XCTAssertTrue(error is Failure, "\(error)")
        }
        XCTAssertNotEqual(port, 0)
        XCTAssertFalse(accepts(port), "stopped although the body threw")
    }

    func testTheAsyncFormHandsOverARunningServer() async throws {
        let notification = try await withFakeAPNs { server in
            let client = try BinaryProviderClient(host: "127.0.0.1", port: server.gatewayPort)
            try client.send(BinaryEncoder.enhanced(identifier: 5, token: Fixtures.token, payload: Fixtures.alert))
            return try await server.notifications.next(timeout: .seconds(10))
        }
        XCTAssertEqual(notification.identifier, 5)
    }

    func testPortsOfListenersThatAreOffOrNotStartedAreNil() throws {
        let idle = FakeAPNsServer()
        XCTAssertNil(idle.http2Port)
        XCTAssertNil(idle.feedbackPort)
        try withFakeAPNs(configuration: .init(feedbackPort: nil, http2Port: nil)) { server in
            XCTAssertNil(server.http2Port)
            XCTAssertNil(server.feedbackPort)
            XCTAssertNotEqual(server.gatewayPort, 0)
        }
    }
}
