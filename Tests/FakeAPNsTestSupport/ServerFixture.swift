import FakeAPNs
import XCTest

/// The server a test runs against, stopped when the test ends. A case whose every test needs
/// one starts it in `setUp`; a test that needs another configuration starts it itself, or
/// replaces the running one with `restart(_:)`.
///
/// ```swift
/// private let fixture = ServerFixture()
/// private var server: FakeAPNsServer { fixture.server }
///
/// override func setUpWithError() throws {
///     try fixture.start(for: self)
/// }
///
/// func testTokens() throws {
///     try fixture.restart(.init(authentication: .testToken))
///     let client = try fixture.http2Client()
///     …
/// }
/// ```
///
/// Unchecked: XCTest runs a test, its `setUp` and its teardown blocks one after another.
package final class ServerFixture: @unchecked Sendable {
    private var current: FakeAPNsServer?
    private var stopsWithTest = false

    package init() {}

    /// The running server, between `start` and the end of the test.
    package var server: FakeAPNsServer {
        guard let current else { preconditionFailure("the fixture's server is used before it was started") }
        return current
    }

    /// Starts a server with `configuration` for `test`, stopped when the test ends; one already
    /// running is stopped first.
    @discardableResult
    package func start(_ configuration: FakeAPNsServer.Configuration = .init(), for test: XCTestCase) throws
        -> FakeAPNsServer
    {
        if !stopsWithTest {
            stopsWithTest = true
            test.addTeardownBlock { self.stop() }
        }
        return try restart(configuration)
    }

    /// Stops the running server and starts one with `configuration`.
    @discardableResult
    package func restart(_ configuration: FakeAPNsServer.Configuration) throws -> FakeAPNsServer {
        stop()
        let started = try FakeAPNsServer.started(configuration: configuration)
        current = started
        return started
    }

    // MARK: - Ports

    /// The binary gateway's port.
    package var gatewayPort: Int { server.gatewayPort }

    /// The feedback service's port; the test fails at once when the configuration has none.
    package var feedbackPort: Int { port(server.feedbackPort, "feedback") }

    /// The HTTP/2 provider API's port; the test fails at once when the configuration has none.
    package var http2Port: Int { port(server.http2Port, "HTTP/2") }

    /// The plaintext listener's port; the test fails at once when the configuration has none.
    package var plaintextPort: Int { port(server.plaintextPort, "plaintext") }

    private func port(_ port: Int?, _ listener: String) -> Int {
        guard let port else { preconditionFailure("the fixture's server has no \(listener) listener") }
        return port
    }

    // MARK: - Clients

    /// A binary provider client connected to the gateway.
    package func binaryClient(identity: TLSIdentity? = nil, timeout: Duration = .seconds(10)) throws
        -> BinaryProviderClient
    {
        try BinaryProviderClient(
            host: server.configuration.host, port: gatewayPort, identity: identity, timeout: timeout)
    }

    /// An HTTP/2 provider client connected to the provider API.
    package func http2Client(identity: TLSIdentity? = nil, offerALPN: Bool = true) throws -> ProviderAPIClient {
        try server.connectHTTP2(identity: identity, offerALPN: offerALPN)
    }

    private func stop() {
        current?.stop()
        current = nil
    }
}
