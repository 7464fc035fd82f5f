import FakeAPNs
import XCTest

/// The server a test case's tests run against, for cases whose every test needs one: `setUp`
/// starts it for the test, which stops it when it ends; a test that needs another
/// configuration replaces it with `restart(_:)`.
///
/// Unchecked: XCTest runs a test, its `setUp` and its teardown blocks one after another.
package final class ServerFixture: @unchecked Sendable {
    private var current: FakeAPNsServer?

    package init() {}

    /// The running server, between `start(for:)` and the end of the test.
    package var server: FakeAPNsServer {
        guard let current else { preconditionFailure("the fixture's server is used before setUp started it") }
        return current
    }

    /// Starts a server with the default configuration for `test`, stopped when the test ends.
    package func start(for test: XCTestCase) throws {
        test.addTeardownBlock { self.stop() }
        try restart(.init())
    }

    /// Stops the running server and starts one with `configuration`.
    package func restart(_ configuration: FakeAPNsServer.Configuration) throws {
        stop()
        current = try FakeAPNsServer.started(configuration: configuration)
    }

    private func stop() {
        current?.stop()
        current = nil
    }
}
